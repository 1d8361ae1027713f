/* SPDX-License-Identifier: MIT */
/*
 * One scheduling cycle's outcome as data: what the cycle decided, nothing of how it is carried
 * out. The act stage turns it into API writes; a shadow mode, an explanation or a budget check
 * can read it instead (the cycle neither knows nor cares).
 */
#ifndef CTL_DECISION_H
#define CTL_DECISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "karena.h"

typedef enum decision_kind {
	DECISION_NONE = 0,      /* the popped pod was gone or bound meanwhile: nothing to do */
	DECISION_BIND,          /* bind pod to node */
	DECISION_PREEMPT,       /* nominate pod to node; delete the victims */
	DECISION_UNSCHEDULABLE, /* fits nowhere, preemption does not help (message says why) */
	DECISION_POSTPONED,     /* would preempt on node, but the budget holds it (message says why) */
	DECISION_NOMINATION_EXPIRED, /* the pod's nomination to node is withdrawn (message says why) */
} decision_kind;

/* A pod named in a decision. uid: NULL when the model does not know it (the write is then
 * guarded by nothing and is not sent). */
typedef struct decision_pod {
	const char *namespace_, *name, *uid;
	int32_t priority;
} decision_pod;

typedef struct decision_victim {
	decision_pod pod;
	bool terminating; /* already being deleted: kube-scheduler sends nothing for it */
	const char *reason; /* why it is one (cycle/explain.c): for its Preempted Event */
} decision_victim;

typedef struct decision {
	decision_kind kind;
	decision_pod pod;      /* the pod of the cycle */
	const char *node;      /* bind, preempt */
	/* preempt, unschedulable: kube's FitError message for the PodScheduled condition and the
	 * FailedScheduling Event */
	const char *message;
	/* unschedulable: the pod's own nomination was dropped (preemption no longer helps there) */
	bool clear_nomination;
	/* preempt, postponed; nomination expired: the pods still terminating there, now deemed stuck */
	decision_victim *victims; /* descending importance */
	size_t n_victims;
	decision_pod *cleared;    /* lower-priority pods that lost their nomination to node */
	size_t n_cleared;
	/* preempt, unschedulable, when the cycle explains (cycle_set_explain): preemptctl preempt
	 * --explain's account of the decision, the same words (cycle/explain.c); NULL otherwise */
	const char *explanation;
	/* preempt, unschedulable (after a preemption attempt): the facts that decided, the words of
	 * preemptctl preempt --explain's "why:" line (NULL: nothing to add to message); note: the
	 * FailedScheduling Event's, message first and unchanged, then those facts, within the limit;
	 * preempt: criterion, the one that picked the node, and the runner-up it beat (NULL: none) */
	const char *summary, *note, *criterion, *runner_up;
	int64_t time_ns;     /* the queue's clock when decided */
	int64_t duration_ns; /* the cycle's own time (metrics) */
	int64_t started_mono_ns; /* CLOCK_MONOTONIC when the cycle began: a binding's attempt ends at its answer */
	unsigned attempts;   /* how many cycles the pod had (this one included) */
	karena arena;        /* the strings and arrays above, until the next cycle */
} decision;

void cycle_decision_init(decision *d);
void cycle_decision_done(decision *d);
/* "none" "bind" "preempt" "unschedulable" "postponed" "nomination-expired" */
const char *cycle_decision_kind_name(decision_kind k);

#endif
