/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what preemptd --pdb strict reads from the API server's answer to an eviction
 * (controller/act/eviction.c, eviction_answer_read, eviction_answer_refuses). Input: the HTTP status on
 * the first line, the body after it.
 * Invariants: a known refusal kind; the budget named is "" or a DNS subdomain, within its buffer;
 * the message NUL-terminated within its buffer; only a 429, a 500, a 403 and other 4xx are
 * refusals (a 429 only with a DisruptionBudget cause); eviction_answer_refuses agrees; reading the same
 * bytes again gives the same answer.
 */
#include <stdlib.h>
#include <string.h>

#include <preempt.h>

#include "eviction.h"
#include "fuzz-common.h"

/* fuzz-links: controller */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t head = nl ? (size_t)(nl - data) : size;
	long status = 0;
	eviction_answer a, b;

	for (size_t i = 0; i < head && i < 4; i++)
		if (data[i] >= '0' && data[i] <= '9')
			status = status * 10 + (data[i] - '0');
	const char *body = nl ? (const char *)nl + 1 : NULL;
	size_t len = nl ? size - head - 1 : 0;

	eviction_answer_read(status, body, len, &a);
	FUZZ_CHECK((unsigned)a.refusal < EVICTION_REFUSALS, "refusal %d", (int)a.refusal);
	FUZZ_ASSERT(memchr(a.pdb, 0, sizeof(a.pdb)) && memchr(a.message, 0, sizeof(a.message)));
	FUZZ_ASSERT(!a.pdb[0] || pp_is_dns_subdomain(a.pdb));
	FUZZ_ASSERT(a.refusal == EVICTION_NOT_REFUSED || (status >= 400 && status < 600));
	FUZZ_ASSERT(a.refusal != EVICTION_NOT_REFUSED || status == 429 || status < 400 || status >= 500);
	FUZZ_ASSERT(a.refusal != EVICTION_BUDGET && a.refusal != EVICTION_BUDGET_PENDING ? 1 : status == 429);
	FUZZ_ASSERT(a.refusal != EVICTION_MULTIPLE_BUDGETS || status == 500);
	if (status == 429 || status >= 500)
		FUZZ_ASSERT(eviction_answer_refuses(status, body, len) == (a.refusal != EVICTION_NOT_REFUSED));
	eviction_answer_read(status, body, len, &b);
	FUZZ_ASSERT(a.refusal == b.refusal && !strcmp(a.pdb, b.pdb) && !strcmp(a.message, b.message));
	return 0;
}
