/* SPDX-License-Identifier: MIT */
/*
 * What a reservation's deadline asks of the cluster model (sched_reserve.c, on the cluster's
 * internals): when victims are due to be gone, and the marking of those that did not go.
 * The scheduler (sched_cycle.c) keeps the deadlines themselves.
 */
#ifndef PP_SCHED_RESERVE_H
#define PP_SCHED_RESERVE_H

#include <stddef.h>
#include <stdint.h>

#include "preempt.h"

/* When pod ns/name is due to be gone: its deletion time (metadata.deletionTimestamp) when it is
 * terminating, else now plus its grace period (30 s when unset). INT64_MIN: no such pod. */
int64_t pp__resv_due(const pp_cluster *c, const char *ns, const char *name, int64_t now);

/* The latest deletion time of the pods on node that a preemptor of priority prio waits for:
 * lower priority, terminating with the preemption condition, not stuck. INT64_MIN: none. */
int64_t pp__resv_node_due(const pp_cluster *c, const char *node, int32_t prio);

/* Marks those pods stuck; *ret (malloc'ed, strings borrowed from the cluster until its pods change)
 * receives them. 0 or -ENOMEM (nothing marked). */
int pp__resv_mark_stuck(pp_cluster *c, const char *node, int32_t prio, pp_victim **ret, size_t *ret_n);

#endif
