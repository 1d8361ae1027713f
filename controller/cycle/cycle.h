/* SPDX-License-Identifier: MIT */
/*
 * One scheduling cycle (kube-scheduler's scheduleOne up to the point where it would call the API):
 * pop the head of activeQ, filter with the nominated pods (two passes), score, or run
 * DefaultPreemption on a FitError — all of it libpreempt's pp_sched_schedule_one — and hand back a
 * decision (decision.h). The decision is also recorded in the model as assumed, so that the next
 * cycle sees the pod bound, the preemptor nominated and its victims terminating before the API
 * server says so. A pure function of the model: no I/O, no clock of its own.
 */
#ifndef CTL_CYCLE_H
#define CTL_CYCLE_H

#include <stdbool.h>

#include <preempt.h>

#include "victim-budget.h"
#include "model-cluster.h"
#include "decision.h"
#include "queue.h"

typedef struct cycle cycle;

int cycle_new(queue *q, cluster *c, cycle **ret);
cycle *cycle_free(cycle *cy);

/*
 * Runs one cycle at the queue's clock. d (initialised with cycle_decision_init) is overwritten.
 * Returns 1 when a pod was tried (d says what was decided), 0 when activeQ is empty, -errno with
 * err set when the library failed.
 */
int cycle_run_one(cycle *cy, decision *d, pp_err *err);

/* Preemption decisions explained in decision.explanation (costs memory per node per decision). */
void cycle_set_explain(cycle *cy, bool explain);

/*
 * Reservations that end (pp_sched_set_nomination_timeout): timeout_ns > 0 a fixed time after the
 * preemption, else after_grace_ns after its victims' grace periods; both 0: never (the default).
 * -EINVAL negative.
 */
int cycle_set_nomination_timeout(cycle *cy, int64_t timeout_ns, int64_t after_grace_ns);
/* Young pods spared while an older victim will do (pp_sched_set_min_runtime); 0: off. */
int cycle_set_min_runtime(cycle *cy, int64_t min_runtime_ns);
/* Preemptions go through the budget (cycle/victim-budget.h; NULL: none): one it holds is postponed
 * (DECISION_POSTPONED) and tried again when the budget allows. b must outlive the cycle. */
void cycle_set_budget(cycle *cy, budget *b);
/* The budget's last minute as the cluster shows it (after a start: our victims still terminating,
 * counted when they were deleted; those already gone are not seen). 0 or -ENOMEM. */
int cycle_restore_budget(cycle *cy, int64_t now_ns);

/*
 * Moves the queue's clock (queue_advance); what ends on the way — a nomination past its deadline —
 * becomes a decision handed to fn (d is valid during the call only). 0 or -errno with err set.
 */
int cycle_advance(cycle *cy, int64_t now_ns, void (*fn)(const decision *d, void *userdata), void *userdata,
                  pp_err *err);

#endif
