/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * When to read the node signals next: earlyoom's adaptive sleep (oom-daemons.md §4.1),
 * generalised to every thresholded signal and kept per signal. After each read of a signal, its
 * next read is due when its nearest threshold could be reached if it fell at its fastest
 * plausible rate:
 *
 *   due = clamp((available - threshold) / max_rate, CADENCE_MIN_USEC, max(interval, CADENCE_RATE_MAX_USEC))
 *
 * and the daemon sleeps until the earliest due signal, reading only the signals due then. So a
 * node far from every threshold wakes a few times a minute, and a signal closing in is read ever
 * more often, down to CADENCE_MIN_USEC: a crossing at a plausible rate is noticed within about
 * that much. A signal far from its threshold costs nothing while another one is polled fast.
 *
 *   - a signal with no rate model (the PSI averages) and a thresholded signal that cannot be read
 *     now (say nodefs-path not mounted yet): every `interval` — the longest a change in a signal
 *     without an event source or a rate bound goes unseen;
 *   - a rate-modelled signal is read at least every max(interval, CADENCE_RATE_MAX_USEC): a jump
 *     faster than any rate (one fallocate() of many GiB) is seen no later than the kubelet's own
 *     10 s housekeeping would see it;
 *   - a soft threshold met but still in its grace period: due when the grace ends (or earlier,
 *     through the other thresholds);
 *   - a threshold met and actionable (evictions under way): every CADENCE_MET_USEC, the full scan
 *     follows the reclaim.
 * Early wake-ups (evictd-daemon.c): PSI triggers on memory stalls, inotify on the pods' memory.events, a
 * reload, an eviction's events. They read every thresholded signal.
 */

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "snapshot.h"
#include "thresholds.h"

#define CADENCE_MIN_USEC 10000ULL /* 10 ms: a read costs tens of µs; finer buys nothing measurable */
#define CADENCE_MET_USEC 20000ULL /* while acting on a threshold */
/* The longest sleep on a rate model alone: the kubelet's housekeeping period. */
#define CADENCE_RATE_MAX_USEC (10ULL * 1000000ULL)

/*
 * The node-scaled fall-rate defaults: one core's page-allocation rate (earlyoom's 6000 MiB/s)
 * times the online CPUs, capped by the memory write bandwidth of a large two-socket server (page
 * allocation zeroes every page: it cannot outrun the memory bus); a fork bomb's ~10k tasks/s per
 * core, capped where the kernel's task-list lock serialises forks. Disk rates are device figures,
 * not scaled.
 */
#define CADENCE_MEMORY_RATE_PER_CPU (6LL << 30)
#define CADENCE_MEMORY_BANDWIDTH (256LL << 30)
#define CADENCE_PID_RATE_PER_CPU 10000LL
#define CADENCE_PID_RATE_MAX 1000000LL

/* Fills memory-max-rate and pid-max-rate from the online CPUs where no key set them. */
void cadence_derive_rates(evictd_config *c, unsigned online_cpus);

/* The fastest plausible fall of s per second from c; 0 when the rate model does not apply (PSI). */
int64_t cadence_max_rate(const evictd_config *c, evictd_signal s);

/* Microseconds until each thresholded signal must be read again; UINT64_MAX: no threshold. Pure. */
void cadence_plan(const evictd_config *c, const node_signals *n, const evaluation *ev, uint64_t now_usec,
                  uint64_t ret_due[_SIGNAL_MAX]);

/* Microseconds until the next node-signal poll: the earliest of cadence_plan(). Pure. */
uint64_t cadence_next_usec(const evictd_config *c, const node_signals *n, const evaluation *ev, uint64_t now_usec);

/* When each signal is due (monotonic µs); all zero: everything due now. */
typedef struct cadence_state {
	uint64_t due_at[_SIGNAL_MAX];
} cadence_state;

/*
 * The signals of want[] to read at now: those due by now + slack (the timer's own accuracy), at
 * least the earliest due (the tick was armed for it), or all of them when all is set (a wake-up by
 * an event: something moved). Returns how many.
 */
unsigned cadence_due(const cadence_state *st, const bool want[_SIGNAL_MAX], uint64_t now_usec, uint64_t slack_usec,
                     bool all, bool ret_read[_SIGNAL_MAX]);

/*
 * After an evaluation at now: a signal read then is due again after its plan; one not read keeps
 * the due time of its last read (its headroom was measured then), unless the plan is sooner (a
 * threshold became met). Returns the microseconds until the earliest, at least CADENCE_MIN_USEC.
 */
uint64_t cadence_update(cadence_state *st, const evictd_config *c, const node_signals *n, const evaluation *ev,
                        const bool read[_SIGNAL_MAX], uint64_t now_usec);

/*
 * The timer for a wait: fire at *ret_at (relative) within *ret_accuracy, never after the wait.
 * A long sleep lets the kernel and sd-event coalesce it with other wake-ups (1/16 of it); short
 * ones keep 1 ms.
 */
void cadence_timer(uint64_t wait_usec, uint64_t *ret_at, uint64_t *ret_accuracy);
