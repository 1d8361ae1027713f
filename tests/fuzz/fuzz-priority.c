/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: PriorityClass validation and Priority admission, driven by a small command
 * language (one command per line) so that sequences of adds, updates and removals are explored:
 *   a NAME VALUE DEFAULT POLICY [DESCRIPTION]   pp_pcset_add_full
 *   u NAME VALUE DEFAULT POLICY [DESCRIPTION]   pp_pcset_update
 *   r NAME                                      pp_pcset_remove
 *   p CLASS|- PRIORITY|- POLICY|-               pp_pcset_admit
 *   d NAME                                      pp_is_dns_subdomain
 * DEFAULT is 0/1, POLICY is a string given to pp_preemption_policy_parse.
 * Invariants checked after every command: the system classes keep their values, at most one
 * globalDefault exists (the admission race is not reachable through this API), user classes stay
 * <= 1e9 with DNS-subdomain names, admission returns the class's own value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preempt.h"
#include "fuzz-common.h"

/* fuzz-links: lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int32_t to_i32(const char *s)
{
	/* Wrap deliberately: the library must cope with every int32. */
	return (int32_t)(uint32_t)strtoull(s ? s : "0", NULL, 0);
}

static void check_set(const pp_pcset *s)
{
	size_t defaults = 0, n = pp_pcset_count(s);
	const pp_priority_class *c;

	c = pp_pcset_find(s, "system-cluster-critical");
	FUZZ_ASSERT(c && c->value == PP_SYSTEM_CLUSTER_CRITICAL && !c->global_default);
	c = pp_pcset_find(s, "system-node-critical");
	FUZZ_ASSERT(c && c->value == PP_SYSTEM_NODE_CRITICAL && !c->global_default);
	for (size_t i = 0; i < n; i++) {
		c = pp_pcset_get(s, i);
		FUZZ_ASSERT(c && c->name && c->description);
		FUZZ_ASSERT(pp_is_dns_subdomain(c->name));
		FUZZ_ASSERT(pp_pcset_find(s, c->name) == c); /* names unique */
		if (strncmp(c->name, "system-", 7) != 0)
			FUZZ_CHECK(c->value <= PP_HIGHEST_USER_PRIORITY, "user class %s has value %d", c->name,
			           (int)c->value);
		defaults += c->global_default;
	}
	FUZZ_CHECK(defaults <= 1, "%zu globalDefault classes", defaults);
	FUZZ_ASSERT(pp_pcset_get(s, n) == NULL);
}

static void run_line(pp_pcset *s, char *line)
{
	char *save = NULL, *op = strtok_r(line, " \t", &save);
	char *a1 = strtok_r(NULL, " \t", &save), *a2 = strtok_r(NULL, " \t", &save);
	char *a3 = strtok_r(NULL, " \t", &save), *a4 = strtok_r(NULL, " \t", &save);
	char *a5 = strtok_r(NULL, "", &save);
	pp_err err = { "" };
	pp_preemption_policy pol = PP_PREEMPT_LOWER_PRIORITY;
	int r;

	if (!op)
		return;
	switch (op[0]) {
	case 'a':
	case 'u':
		if (a4 && pp_preemption_policy_parse(a4, &pol, &err) < 0)
			pol = (pp_preemption_policy)(to_i32(a4) & 7); /* out-of-range enum values too */
		r = op[0] == 'a' ? pp_pcset_add_full(s, a1, to_i32(a2), a3 && a3[0] == '1', pol, a5, &err)
		                 : pp_pcset_update(s, a1, to_i32(a2), a3 && a3[0] == '1', pol, a5, &err);
		if (r < 0)
			FUZZ_ASSERT(memchr(err.msg, 0, sizeof(err.msg)));
		if (r == 0 && a1) {
			const pp_priority_class *c = pp_pcset_find(s, a1);
			FUZZ_ASSERT(c && c->value == to_i32(a2));
		}
		break;
	case 'r':
		r = pp_pcset_remove(s, a1, &err);
		if (r == 0)
			FUZZ_ASSERT(!pp_pcset_find(s, a1));
		break;
	case 'p': {
		int32_t prio = a2 && strcmp(a2, "-") ? to_i32(a2) : 0, got = -1;
		pp_preemption_policy spol = PP_PREEMPT_LOWER_PRIORITY, gotp = PP_PREEMPT_NEVER;
		bool has_spol = a3 && strcmp(a3, "-") && pp_preemption_policy_parse(a3, &spol, NULL) == 0;
		const char *cls = a1 && strcmp(a1, "-") ? a1 : NULL, *used = NULL;
		r = pp_pcset_admit(s, cls, a2 && strcmp(a2, "-") ? &prio : NULL, has_spol ? &spol : NULL, &got,
		                   &gotp, &used, &err);
		if (r == 0) {
			const pp_priority_class *c = cls ? pp_pcset_find(s, cls) : pp_pcset_default(s);
			FUZZ_ASSERT(c == NULL ? (got == 0 && used == NULL) : (got == c->value && used == c->name));
			if (cls)
				FUZZ_ASSERT(c != NULL); /* an unknown class is never admitted */
		} else {
			FUZZ_ASSERT(r == -ENOENT || r == -EINVAL);
			FUZZ_ASSERT(got == -1);
		}
		break;
	}
	case 'd':
		(void)pp_is_dns_subdomain(a1);
		break;
	default:
		break;
	}
	check_set(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pp_pcset *s = NULL;
	char *text = fuzz_strndup(data, size), *save = NULL;

	if (!text || pp_pcset_new(&s) < 0) {
		free(text);
		return 0;
	}
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		run_line(s, line);
	pp_pcset_free(s);
	free(text);
	return 0;
}
