/* SPDX-License-Identifier: MIT */
#pragma once

/* Journal entries for the eviction actions: started, escalated, command done, finished/failed,
 * and what follows: reclaimed, reclaim timed out, killed again after a restart. */

#include <stdbool.h>
#include <stdint.h>

#include "evictor.h"
#include "reclaim.h"

#define FIELD_EXEC_STATUS "EVICTD_EXEC_STATUS"
#define FIELD_EXEC_STDERR "EVICTD_EXEC_STDERR"
#define FIELD_OUTCOME     "EVICTD_OUTCOME"

void evict_log(evict_event what, const evict_info *info);

/*
 * A reclaiming pod's news (reclaim.h). now_value: the signal that chose it, read this cycle
 * (now_known false: not readable); now_usec: CLOCK_MONOTONIC.
 */
void evict_log_reclaim(reclaim_event what, const reclaim_entry *e, bool now_known, int64_t now_value, uint64_t now_usec);

/* Processes reappeared in an evicted pod's cgroup and were killed again (error: -errno of that kill). */
void evict_log_restarted(const char *pod, const char *uid, const char *cgroup, int error);
