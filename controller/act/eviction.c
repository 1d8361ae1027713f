/* SPDX-License-Identifier: MIT */
#include "eviction.h"

#include <stdio.h>
#include <string.h>

#include <preempt.h>

#include "answer.h"

const char *eviction_refusal_name(eviction_refusal r)
{
	static const char *const names[EVICTION_REFUSALS] = { "none", "disruption_budget", "budget_not_processed",
		                                              "multiple_budgets", "budget_forbidden", "other" };
	return (unsigned)r < EVICTION_REFUSALS ? names[r] : "?";
}

/* The NAME of "The disruption budget NAME needs ..." / "... NAME is still being processed ...". */
static void budget_named(const char *text, size_t len, char *pdb, size_t size)
{
	static const char lead[] = "The disruption budget ";
	const char *end;

	if (len < sizeof(lead) || strncmp(text, lead, sizeof(lead) - 1) != 0)
		return;
	text += sizeof(lead) - 1;
	len -= sizeof(lead) - 1;
	end = memchr(text, ' ', len);
	if (!end || (size_t)(end - text) >= size)
		return;
	memcpy(pdb, text, (size_t)(end - text));
	pdb[end - text] = '\0';
	if (!pp_is_dns_subdomain(pdb))
		pdb[0] = '\0';
}

struct reading {
	long status;
	eviction_answer *a;
};

static bool is_str(const kval *v)
{
	return kval_type_of(v) == KVAL_STRING;
}

static void read_status(void *userdata, const kval *obj)
{
	struct reading *rd = userdata;
	eviction_answer *a = rd->a;
	const kval *msg = kval_get(obj, "message"), *details = kval_get(obj, "details");
	const kval *causes = kval_get(details, "causes");

	if (is_str(msg))
		snprintf(a->message, sizeof(a->message), "%s", kval_str(msg));
	if (rd->status == 429) {
		for (size_t i = 0; i < kval_count(causes); i++) {
			const kval *c = kval_at(causes, i), *reason = kval_get(c, "reason"), *cm = kval_get(c, "message");
			if (!is_str(reason) || strcmp(kval_str(reason), "DisruptionBudget") != 0)
				continue;
			a->refusal = EVICTION_BUDGET;
			if (!is_str(cm))
				break;
			budget_named(kval_str(cm), kval_len(cm), a->pdb, sizeof(a->pdb));
			if (strstr(kval_str(cm), " is still being processed"))
				a->refusal = EVICTION_BUDGET_PENDING;
			size_t n = strlen(a->message);
			snprintf(a->message + n, sizeof(a->message) - n, "%s%s", n ? " " : "", kval_str(cm));
			break;
		}
	} else if (rd->status == 500) {
		if (is_str(msg) && strstr(kval_str(msg), "more than one PodDisruptionBudget"))
			a->refusal = EVICTION_MULTIPLE_BUDGETS;
	} else if (rd->status == 403) {
		const kval *kind = kval_get(details, "kind"), *name = kval_get(details, "name");
		if (is_str(kind) && !strcmp(kval_str(kind), "poddisruptionbudget")) {
			a->refusal = EVICTION_BUDGET_FORBIDDEN;
			if (is_str(name) && kval_len(name) < sizeof(a->pdb) && pp_is_dns_subdomain(kval_str(name)))
				snprintf(a->pdb, sizeof(a->pdb), "%s", kval_str(name));
		}
	}
}

bool eviction_answer_refuses(long status, const char *body, size_t len)
{
	eviction_answer a = { 0 }; /* eviction_answer_read sets it whole; cppcheck cannot tell */

	if (status != 429 && status < 500)
		return false;
	eviction_answer_read(status, body, len, &a);
	return a.refusal != EVICTION_NOT_REFUSED;
}

void eviction_answer_read(long status, const char *body, size_t len, eviction_answer *ret)
{
	struct reading rd = { status, ret };

	memset(ret, 0, sizeof(*ret));
	if (body && len)
		(void)answer_object(body, len, read_status, &rd);
	if (ret->refusal == EVICTION_NOT_REFUSED && status >= 400 && status < 500 && status != 429)
		ret->refusal = EVICTION_OTHER;
}
