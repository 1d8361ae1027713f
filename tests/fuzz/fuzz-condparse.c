/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what evictd-kube reads to keep evictd's Node conditions (condparse.h) — evictd's
 * status file (its liveness: pid, state, heartbeat) and a Node object from the API server (evictd's
 * three conditions in it). The same input goes to both parsers.
 * Invariants: a rejected input leaves the output untouched (status) or empty (Node); an accepted
 * status has a pid > 0 and NUL-terminated fields, its condition list single-spaced words; every
 * condition found is one of evictd's types with NUL-terminated, bounded fields.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "condparse.h"
#include "fuzz-common.h"

/* fuzz-links: evictd-kube */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_bounded(const char *s, size_t size)
{
	FUZZ_ASSERT(memchr(s, '\0', size) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size);
	evictd_status st, untouched;
	nodecond_value v[NODECOND_TYPES];

	if (!text)
		return 0;
	memset(&st, 0x5a, sizeof(st));
	untouched = st;
	int r = condparse_status(text, &st);
	if (r < 0) {
		FUZZ_ASSERT(r == -EBADMSG);
		FUZZ_ASSERT(memcmp(&st, &untouched, sizeof(st)) == 0);
	} else {
		FUZZ_ASSERT(r == 0);
		FUZZ_ASSERT(st.pid > 0);
		check_bounded(st.state, sizeof(st.state));
		check_bounded(st.conditions, sizeof(st.conditions));
		FUZZ_ASSERT(st.conditions[0] != ' ' && !strstr(st.conditions, "  "));
		size_t l = strlen(st.conditions);
		FUZZ_ASSERT(l == 0 || st.conditions[l - 1] != ' ');
	}

	memset(v, 0x5a, sizeof(v));
	r = condparse_node(text, v);
	FUZZ_ASSERT(r == 0 || r == -EBADMSG);
	for (int i = 0; i < NODECOND_TYPES; i++) {
		FUZZ_ASSERT(v[i].present == true || v[i].present == false);
		if (r < 0)
			FUZZ_ASSERT(!v[i].present);
		if (!v[i].present)
			continue;
		check_bounded(v[i].status, sizeof(v[i].status));
		check_bounded(v[i].reason, sizeof(v[i].reason));
		check_bounded(v[i].message, sizeof(v[i].message));
		check_bounded(v[i].time, sizeof(v[i].time));
		FUZZ_ASSERT(condparse_type_index(condparse_type_name(i)) == i);
	}
	free(text);
	return 0;
}
