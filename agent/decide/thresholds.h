/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Threshold evaluation, as the kubelet's synchronize() does it (reference §4), with time passed
 * in (tests inject a clock):
 *   - met:        available < threshold (PSI: stall share > threshold);
 *   - hysteresis: a threshold that was actionable stays met until available >= threshold +
 *                 minimum reclaim;
 *   - grace:      a soft threshold becomes actionable once met continuously for its grace period
 *                 (one good sample resets it); a hard one (or soft with 0 s grace) at once;
 *   - conditions: MemoryPressure / DiskPressure / PIDPressure are true while any of their
 *                 thresholds is met (grace ignored) and for pressure-transition-period after.
 * Deviation: a pressure-transition-period of 0 means "no hold" (the kubelet would never report).
 */

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "snapshot.h"

typedef enum threshold_kind {
	THRESHOLD_HARD = 0,
	THRESHOLD_SOFT,
	_THRESHOLD_KIND_MAX,
} threshold_kind;

/* What survives between evaluations. Zero-initialise it ({0}) before the first one. */
typedef struct threshold_state {
	uint64_t first_met_usec[_THRESHOLD_KIND_MAX][_SIGNAL_MAX]; /* valid while met[][] */
	bool met[_THRESHOLD_KIND_MAX][_SIGNAL_MAX];
	bool actionable[_THRESHOLD_KIND_MAX][_SIGNAL_MAX];
	bool condition_seen[_CONDITION_MAX];
	uint64_t condition_last_usec[_CONDITION_MAX];
	bool condition[_CONDITION_MAX];
} threshold_state;

typedef struct threshold_eval {
	bool configured;
	bool observed;       /* the signal has an observation */
	int64_t threshold;   /* resolved against the capacity */
	int64_t min_reclaim; /* resolved */
	bool met;            /* including hysteresis */
	bool actionable;     /* met for at least grace */
	bool newly_met, cleared;
	uint64_t met_since_usec;
	uint64_t grace_usec; /* 0 for hard */
} threshold_eval;

typedef struct evaluation {
	threshold_eval t[_THRESHOLD_KIND_MAX][_SIGNAL_MAX];
	bool conditions[_CONDITION_MAX];
	bool condition_changed[_CONDITION_MAX];
} evaluation;

/* Updates st and fills ret. Pure: no I/O, no clock reads. */
void thresholds_evaluate(const evictd_config *c, const node_signals *obs, threshold_state *st, uint64_t now_usec,
                         evaluation *ret);

/* met = available < threshold, or > for PSI signals. */
bool threshold_crossed(evictd_signal s, int64_t available, int64_t threshold);

const char *threshold_kind_name(threshold_kind k); /* "hard", "soft" */
