/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Pending reclaim, per signal: what the node is about to get back without another eviction — the
 * one interface between what is owed to it and the decision (decide.h; DESIGN §5 "Reclaim").
 *
 * Sources: evicted pods still reclaiming (act/reclaim.h: each counted part of a victim — its
 * cgroup, its emptyDir volumes, its container logs — until it is back). The kubelet's node-level
 * reclaim (dead containers, unused images, reference/kubelet-eviction.md §6) comes beside it as
 * decide_input.node (decide.h): a pending amount without a bound, and a hold while it runs — the
 * kubelet measures again after its own reclaim, whatever the signal does meanwhile. A source that
 * should be held to "new pressure only" (a bound) belongs here, one pending_reclaim_add() per
 * signal it will relieve, for as long as it runs.
 *
 * The decision reads it as: while a signal has sources, it is held unless it falls below the
 * worst value it had once those sources were under way (bound): only then is there new pressure,
 * acted on at once for what the pending amount does not cover. A known amount counts as if it were
 * available already; an unknown one covers nothing beyond the bound.
 */

#include <stdbool.h>
#include <stdint.h>

#include "signals.h"

typedef struct pending_reclaim {
	int64_t amount[_SIGNAL_MAX];  /* sum of the known amounts, in the signal's unit */
	unsigned sources[_SIGNAL_MAX];/* what is counted for the signal (reclaiming pods, ...) */
	bool unknown[_SIGNAL_MAX];    /* one source's amount is not known */
	int64_t bound[_SIGNAL_MAX];   /* the signal's worst value once one of them was under way */
} pending_reclaim;

void pending_reclaim_init(pending_reclaim *p);

/*
 * One source for signal s: amount in the signal's unit (< 0: unknown), bound_known/bound: the
 * signal's value once the source was under way (unknown: any reading counts as new pressure).
 */
void pending_reclaim_add(pending_reclaim *p, evictd_signal s, int64_t amount, bool bound_known, int64_t bound);
