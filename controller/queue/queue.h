/* SPDX-License-Identifier: MIT */
/*
 * The scheduling queue as preemptd runs it: libpreempt's pp_sched (activeQ by priority then
 * time, backoffQ 1 s doubling to 10 s, unschedulable pods moved back by the cluster events that
 * may help them and flushed after 5 minutes, nominated pods in the two-pass filter) over a live
 * cluster, on the wall clock. Victims are removed when the API server says they are gone
 * (external termination), never on a timer of ours.
 *
 * The queue owns the pp_sched; the model (model/model-cluster.c) changes the cluster through it so that
 * every change is also a queue event, and the cycle (cycle/) pops from it.
 */
#ifndef CTL_QUEUE_H
#define CTL_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include <preempt.h>

typedef struct queue queue;

typedef struct queue_opts {
	int64_t initial_backoff_ns;   /* 0: 1 s */
	int64_t max_backoff_ns;       /* 0: 10 s */
	int64_t max_unschedulable_ns; /* 0: 5 min */
	bool pop_from_backoff;        /* kube 1.33+'s SchedulerPopFromBackoffQ */
} queue_opts;

/* now_ns: the wall clock (pods without status.startTime count as started now). */
int queue_new(const queue_opts *o, int64_t now_ns, queue **ret);
queue *queue_free(queue *q);

/* The library's scheduler: cluster changes go through pp_sched_* on it. */
pp_sched *queue_sched(queue *q);
const pp_cluster *queue_cluster(const queue *q);

/* Where the scheduling cycle's events go (cycle/ sets it while it runs one). */
void queue_set_sink(queue *q, pp_sched_event_fn fn, void *userdata);

/* Moves the clock (a clock that went backwards counts as not moved): expired backoffs and the
 * unschedulable pods due for the flush go to activeQ. */
int queue_advance(queue *q, int64_t now_ns, pp_err *err);
int64_t queue_now(const queue *q);
/* The next time queue_advance() has something to do (INT64_MAX: nothing). */
int64_t queue_next_due(const queue *q);

/* scheduler_pending_pods{queue=active|backoff|unschedulable}; postponed: of those, the pods
 * waiting for a preemption the budget postponed */
typedef struct queue_counts {
	size_t active, backoff, unschedulable;
	size_t postponed;
} queue_counts;
void queue_get_counts(const queue *q, queue_counts *ret);
/* scheduler_queue_incoming_pods_total{queue, event}: entries into a queue by the event that moved
 * the pod (pp_sched_incoming_pods). */
uint64_t queue_incoming(const queue *q, pp_sched_queue which, pp_sched_queue_event event);
/* Whether a cycle has a pod to pop now: activeQ's, or with pop_from_backoff backoffQ's. */
bool queue_has_active(const queue *q);

#endif
