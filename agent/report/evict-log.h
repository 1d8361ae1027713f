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
/* The parts of an evicted pod (reclaim.h) still holding what was counted, and the one just back. */
#define FIELD_RECLAIM_OUTSTANDING "EVICTD_RECLAIM_OUTSTANDING" /* "emptyDir volumes, container logs" */
#define FIELD_RECLAIM_BACK        "EVICTD_RECLAIM_BACK"        /* "pod cgroup, emptyDir volumes" */

/* Part of an evicted pod's resources is back (its cgroup, volumes or logs); others are not yet. */
#define MSGID_RECLAIM_PROGRESS "6c046409ff8945c7a0e7ed531fa9c92d"
/* A reclaim recorded by a previous evictd process (restart, crash) was taken over. */
#define MSGID_RECLAIM_RESUMED  "d5cc88c02fbe439ebdd71c424809cffc"

void evict_log(evict_event what, const evict_info *info);

/*
 * A reclaiming pod's news (reclaim.h). now_value: the signal that chose it, read this cycle
 * (now_known false: not readable); now_usec: CLOCK_MONOTONIC.
 */
void evict_log_reclaim(reclaim_event what, const reclaim_entry *e, bool now_known, int64_t now_value, uint64_t now_usec);

/* A reclaiming pod taken over from a previous evictd process (now_usec: CLOCK_MONOTONIC). */
void evict_log_reclaim_resumed(const reclaim_entry *e, uint64_t now_usec);

/* Processes reappeared in an evicted pod's cgroup and were killed again (error: -errno of that kill). */
void evict_log_restarted(const char *pod, const char *uid, const char *cgroup, int error);
