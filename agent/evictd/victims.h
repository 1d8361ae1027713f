/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The victims' records (act/inflight.h) kept true to what the daemon knows about each pod it
 * evicted, and read back at start. While the eviction runs, the evictor writes the record (with
 * the pod's reclaim entry and failure count in it); from its end on, victims_sync() replaces it
 * after every change of that pod's state — reclaiming (with the parts still outstanding and the
 * signals' values once it was gone), evicted, backoff — and removes it once nothing is left to
 * remember (its cgroup gone and its reclaim over). Dry runs record nothing.
 */

#include "evictd-state.h"

/* Writes or removes uid's record from the evictor, the reclaim tracker and the memo. */
void victims_sync(evictd_daemon *d, const char *uid);

/* The same when uid's reclaim is over (done or timed out; the tracker drops it after the call). */
void victims_sync_reclaim_over(evictd_daemon *d, const char *uid);

/* The same for every reclaiming pod (after their bounds were taken or a signal relieved). */
void victims_sync_reclaiming(evictd_daemon *d);

/*
 * At start, before the first evaluation: evictions in flight are resumed (and tracked for reclaim
 * with what their record holds), reclaims go on toward their original deadline, evicted and
 * backing-off pods are remembered with their failure count and retry time.
 */
void victims_resume(evictd_daemon *d);
