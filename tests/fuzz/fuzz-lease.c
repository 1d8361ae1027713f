/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the Lease reader of preemptd's leader election (controller/act/lease.c,
 * lease_record_parse) on whatever an API server (or something posing as one) answers.
 * Invariants: 0 or -EINVAL (or -ENOMEM) only; on success every field is a NUL-terminated string
 * within its buffer, the resourceVersion is non-empty, and parsing the same bytes again gives the
 * same record.
 */
#include <errno.h>
#include <string.h>

#include "lease.h"
#include "fuzz-common.h"

/* fuzz-links: controller */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lease_record a, b;
	int r = lease_record_parse((const char *)data, size, &a);

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM, "return %d", r);
	if (r != 0)
		return 0;
	FUZZ_ASSERT(memchr(a.resource_version, 0, sizeof(a.resource_version)) && a.resource_version[0]);
	FUZZ_ASSERT(memchr(a.holder, 0, sizeof(a.holder)));
	FUZZ_ASSERT(memchr(a.acquire_time, 0, sizeof(a.acquire_time)));
	FUZZ_ASSERT(memchr(a.renew_time, 0, sizeof(a.renew_time)));
	FUZZ_ASSERT(lease_record_parse((const char *)data, size, &b) == 0);
	FUZZ_ASSERT(!strcmp(a.resource_version, b.resource_version) && !strcmp(a.holder, b.holder) &&
	            a.duration_s == b.duration_s && a.transitions == b.transitions);
	return 0;
}
