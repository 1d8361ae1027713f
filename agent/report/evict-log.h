/* SPDX-License-Identifier: MIT */
#pragma once

/* Journal entries for the eviction actions: started, escalated, command done, finished/failed. */

#include "evictor.h"

#define FIELD_EXEC_STATUS "EVICTD_EXEC_STATUS"
#define FIELD_EXEC_STDERR "EVICTD_EXEC_STDERR"
#define FIELD_OUTCOME     "EVICTD_OUTCOME"

void evict_log(evict_event what, const evict_info *info);
