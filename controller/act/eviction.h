/* SPDX-License-Identifier: MIT */
/*
 * What the API server answers when it refuses an eviction (POST pods/NAME/eviction,
 * pkg/registry/core/pod/storage/eviction.go): a PodDisruptionBudget that allows no disruption now
 * (429 TooManyRequests with a DisruptionBudget cause "The disruption budget NAME needs D healthy
 * pods and has C currently"), one whose status is not processed yet (429, "The disruption budget
 * NAME is still being processed by the server."), two budgets over one pod (500 "This pod has
 * more than one PodDisruptionBudget, which the eviction subresource does not support."), or a
 * budget the handler forbids (403 on poddisruptionbudget NAME: negative disruptionsAllowed, too
 * many disruptions not confirmed). A 429 without a DisruptionBudget cause is API Priority and
 * Fairness' (load, to be retried), not a refusal.
 */
#ifndef CTL_EVICTION_H
#define CTL_EVICTION_H

#include <stdbool.h>
#include <stddef.h>

typedef enum eviction_refusal {
	EVICTION_NOT_REFUSED = 0,  /* accepted, or a failure that is no refusal */
	EVICTION_BUDGET,           /* 429: the budget allows no disruption now */
	EVICTION_BUDGET_PENDING,   /* 429: the budget's status is not processed yet */
	EVICTION_MULTIPLE_BUDGETS, /* 500: more than one budget covers the pod */
	EVICTION_BUDGET_FORBIDDEN, /* 403 from a budget */
	EVICTION_OTHER,            /* refused otherwise (RBAC's 403, a 400...): not a budget's word */
	EVICTION_REFUSALS
} eviction_refusal;

typedef struct eviction_answer {
	eviction_refusal refusal;
	char pdb[254];     /* the budget the answer names (in the pod's namespace), "" when none */
	char message[600]; /* the Status message, then the cause's, for the log */
} eviction_answer;

/* Reads the answer (status, body) to an eviction that was not accepted. Never fails: what cannot
 * be read is EVICTION_OTHER for a 4xx, EVICTION_NOT_REFUSED for anything else. */
void eviction_answer_read(long status, const char *body, size_t len, eviction_answer *ret);
/* Whether a 429 or 5xx answer is a budget's refusal (ends the eviction), not load to wait out. */
bool eviction_answer_refuses(long status, const char *body, size_t len);
/* "disruption_budget", "budget_not_processed", "multiple_budgets", "budget_forbidden", "other"
 * (metric labels); "none" for EVICTION_NOT_REFUSED. */
const char *eviction_refusal_name(eviction_refusal r);

#endif
