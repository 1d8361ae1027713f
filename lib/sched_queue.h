/* SPDX-License-Identifier: MIT */
/*
 * The scheduling queue (kube-scheduler's PriorityQueue), internal to libpreempt: the scheduler
 * object (sched_cycle.c) drives it, unit tests reach it through the static archive.
 *
 * Pods are identified by an opaque pointer the caller owns (one queue entry per pointer).
 * Three places a queued pod can be, as in kube-scheduler:
 *   activeQ        ready to be tried: higher priority first, then earlier queue timestamp (time
 *                  the pod was added, or re-added after a failed attempt), then arrival order;
 *   backoffQ       failed and moved by an event, but still backing off: initial × 2^(n−1)
 *                  capped at max, n = number of failed attempts; ordered by expiry;
 *   unschedulable  failed in its last attempt; leaves when an event that may help arrives
 *                  (its mask intersects the pod's rejector mask, or a hint judged it for
 *                  this pod: pp__sq_move_on_hint), or after max_unschedulable.
 * A popped pod is "in flight" until pp__sq_done() or pp__sq_add_unschedulable(); events seen meanwhile
 * are remembered so that the failure is retried instead of parked (kube replays them too).
 *
 * Time is simulated, in nanoseconds, always passed in; the queue never reads a clock. It must not
 * go backwards: an earlier `now` is treated as the latest one seen.
 */
#ifndef PP_SCHED_QUEUE_H
#define PP_SCHED_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "preempt.h"

#define PP_SQ_NSEC_PER_SEC 1000000000LL

/* Defaults of KubeSchedulerConfiguration: podInitialBackoffSeconds, podMaxBackoffSeconds, and
 * podMaxInUnschedulablePodsDuration. */
#define PP_SQ_DEFAULT_INITIAL_BACKOFF (1 * PP_SQ_NSEC_PER_SEC)
#define PP_SQ_DEFAULT_MAX_BACKOFF (10 * PP_SQ_NSEC_PER_SEC)
#define PP_SQ_DEFAULT_MAX_UNSCHEDULABLE (300 * PP_SQ_NSEC_PER_SEC)

typedef struct pp_sq_opts {
	int64_t initial_backoff; /* ns; 0 = default */
	int64_t max_backoff;     /* ns; 0 = default */
	int64_t max_unschedulable; /* ns; 0 = default */
	/* SchedulerPopFromBackoffQ (kube 1.33+, on by default there): with activeQ empty, pop the
	 * pod whose backoff expires first rather than wait for it (not one backing off after an
	 * error). Off: kube before 1.33, which the simulations reproduce. */
	bool pop_from_backoff;
} pp_sq_opts;

typedef enum pp_sq_state {
	PP_SQ_NONE = 0, /* not in the queue */
	PP_SQ_ACTIVE,
	PP_SQ_BACKOFF,
	PP_SQ_UNSCHEDULABLE,
	PP_SQ_IN_FLIGHT,
} pp_sq_state;

typedef struct pp_sq_stats {
	size_t active, backoff, unschedulable, in_flight;
} pp_sq_stats;

typedef struct pp_sq_queue pp_sq_queue;

int pp__sq_new(const pp_sq_opts *opts, pp_sq_queue **ret);
pp_sq_queue *pp__sq_free(pp_sq_queue *q);

/* A new pending pod goes to activeQ. -EEXIST if already queued (or in flight). */
int pp__sq_add(pp_sq_queue *q, void *pod, int32_t priority, int64_t now);

/* A pod whose attempt failed outside the cycle (its binding was refused): to backoffQ, as after
 * one failed attempt. -EEXIST if already queued. */
int pp__sq_add_backing_off(pp_sq_queue *q, void *pod, int32_t priority, int64_t now);

/* Forgets a pod wherever it is (also in flight). -ENOENT if unknown. */
int pp__sq_remove(pp_sq_queue *q, void *pod);

/* Priority is immutable in Kubernetes, but a controller may re-add a pod under a new spec; the
 * entry is re-sorted where it is. -ENOENT if unknown. */
int pp__sq_update_priority(pp_sq_queue *q, void *pod, int32_t priority);

/*
 * Moves expired backoff pods and unschedulable leftovers to activeQ, then pops the head of
 * activeQ (or of backoffQ with pop_from_backoff), which becomes in flight. ret_attempts receives how many times it has been popped
 * (this one included). -EAGAIN when activeQ is empty.
 */
int pp__sq_pop(pp_sq_queue *q, int64_t now, void **ret_pod, unsigned *ret_attempts);

/* Whether pp__sq_pop() would pop something now (what is due not counted). */
bool pp__sq_poppable(const pp_sq_queue *q);
void pp__sq_set_pop_from_backoff(pp_sq_queue *q, bool on);

/* Moves what is due (expired backoff, unschedulable leftovers) without popping. */
void pp__sq_flush(pp_sq_queue *q, int64_t now);

/* The in-flight pod was bound (or otherwise handled): forget it. -ENOENT / -EINVAL (not in flight). */
int pp__sq_done(pp_sq_queue *q, void *pod);

/*
 * The in-flight pod failed its attempt. rejectors: a mask of the reasons (caller-defined bits,
 * matched against event masks). It goes to unschedulable — or, if an event that may help arrived
 * while it was in flight, straight back to backoffQ/activeQ. Its queue timestamp becomes now.
 */
int pp__sq_add_unschedulable(pp_sq_queue *q, void *pod, uint32_t rejectors, int64_t now);

/* A cluster event that may resolve failures in `mask`: matching unschedulable pods move to
 * backoffQ (still backing off) or activeQ, counted under `event`. except (may be NULL): a pod the
 * event is not news to (the one whose own cycle caused it). Returns how many moved. */
size_t pp__sq_move_on_event(pp_sq_queue *q, uint32_t mask, const void *except, pp_sched_queue_event event,
                            int64_t now);

/*
 * kube's QueueingHints (isPodWorthRequeuing): an event judged pod by pod. fn(pod, before, ud)
 * returns the rejector bits whose plugin says the event may help that pod (QueueingHint Queue);
 * an unschedulable pod with one of them among its rejectors moves as with pp__sq_move_on_event,
 * an in-flight pod remembers them. before: what fn answered for the pod in
 * pp__sq_hint_prepare() (called with before 0, ahead of a change, to see the old state), else 0.
 */
typedef uint32_t (*pp_sq_hint_fn)(void *pod, uint32_t before, void *ud);
void pp__sq_hint_prepare(pp_sq_queue *q, pp_sq_hint_fn fn, void *ud);
size_t pp__sq_move_on_hint(pp_sq_queue *q, pp_sq_hint_fn fn, void *ud, pp_sched_queue_event event, int64_t now);

/* Moves one unschedulable or backing-off pod to activeQ now (kube's Activate; used when a pod's
 * nomination is cleared). No-op for pods in activeQ or in flight; -ENOENT if unknown. */
int pp__sq_activate(pp_sq_queue *q, void *pod, pp_sched_queue_event event, int64_t now);

pp_sq_state pp__sq_state_of(const pp_sq_queue *q, const void *pod);

/* When the earliest backoff expires (INT64_MAX if none). */
int64_t pp__sq_next_backoff_expiry(const pp_sq_queue *q);
/* When the oldest unschedulable pod is flushed (INT64_MAX if none). */
int64_t pp__sq_next_leftover_flush(const pp_sq_queue *q);

void pp__sq_get_stats(const pp_sq_queue *q, pp_sq_stats *ret);

/* scheduler_queue_incoming_pods_total: entries into activeQ, backoffQ and unschedulablePods
 * (moves within one, such as a priority re-sort, are none), by the event that caused them.
 * PodAdd for pp__sq_add, ScheduleAttemptFailure for pp__sq_add_backing_off and
 * pp__sq_add_unschedulable, BackoffComplete and UnschedulableTimeout for what falls due. */
uint64_t pp__sq_incoming(const pp_sq_queue *q, pp_sched_queue queue, pp_sched_queue_event event);

/* The backoff a pod gets after its n-th failed attempt (n >= 1). */
int64_t pp__sq_backoff_duration(const pp_sq_queue *q, unsigned failures);

#endif
