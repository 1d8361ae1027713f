/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * When to read the node signals next: earlyoom's adaptive sleep (oom-daemons.md §4.1),
 * generalised to every thresholded signal. After each read, the next cheap poll is due when the
 * nearest threshold could be reached if the signal fell at its fastest plausible rate:
 *
 *   wait = clamp((available - threshold) / max_rate, CADENCE_MIN_USEC, interval)
 *
 * minimised over the hard and soft thresholds of every observed signal. So a node far from every
 * threshold costs one read per interval, and a signal closing in is read ever more often, down to
 * CADENCE_MIN_USEC: a crossing at a plausible rate is noticed within about that much, instead of
 * up to a whole interval later.
 *
 *   - a soft threshold met but still in its grace period: due when the grace ends (or earlier,
 *     through the other thresholds);
 *   - a threshold met and actionable (evictions under way): every CADENCE_MET_USEC, the full scan
 *     follows the reclaim;
 *   - PSI signals: their avg10 only changes every 2 s and PSI triggers wake the daemon anyway;
 *     they add no deadline of their own while not met.
 */

#include <stdint.h>

#include "config.h"
#include "snapshot.h"
#include "thresholds.h"

#define CADENCE_MIN_USEC 10000ULL /* 10 ms: a read costs tens of µs; finer buys nothing measurable */
#define CADENCE_MET_USEC 20000ULL /* while acting on a threshold */

/* The fastest plausible fall of s per second from c; 0 when the rate model does not apply (PSI). */
int64_t cadence_max_rate(const evictd_config *c, evictd_signal s);

/* Microseconds until the next node-signal poll, in [CADENCE_MIN_USEC, c->interval_usec]. Pure. */
uint64_t cadence_next_usec(const evictd_config *c, const node_signals *n, const evaluation *ev, uint64_t now_usec);
