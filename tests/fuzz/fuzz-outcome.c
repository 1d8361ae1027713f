/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: eviction outcome records (<spool-dir>.outcome/<uid>.outcome), the way back from
 * evictd-kube — the less privileged process, which holds the network and the credentials — to
 * evictd, through outcome_parse() exactly as evictd reads them (outcome.h).
 * Invariants: a rejected record says why and leaves the output untouched; an accepted one has a
 * valid uid and a 4xx/5xx status, and is exactly what outcome_write() would have written for them
 * (one accepted form per record: nothing else gets through).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "outcome.h"
#include "fuzz-common.h"

/* fuzz-links: agent lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	outcome_record o, untouched;
	char why[160] = "", canon[OUTCOME_MAX + 1];

	memset(&o, 0x5a, sizeof(o));
	untouched = o;
	int r = outcome_parse((const char *)data, size, &o, why, sizeof(why));
	if (r < 0) {
		FUZZ_ASSERT(r == -EBADMSG);
		FUZZ_ASSERT(why[0] != '\0');
		FUZZ_ASSERT(memcmp(&o, &untouched, sizeof(o)) == 0);
		return 0;
	}
	FUZZ_ASSERT(r == 0);
	FUZZ_ASSERT(o.status >= 400 && o.status <= 599);
	size_t ul = strlen(o.uid);
	FUZZ_ASSERT(ul >= 1 && ul <= 63 && strspn(o.uid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == ul);
	int n = snprintf(canon, sizeof(canon), "uid=%s\noutcome=refused\nstatus=%d\n", o.uid, o.status);
	FUZZ_ASSERT(n > 0 && (size_t)n == size && memcmp(canon, data, size) == 0);
	return 0;
}
