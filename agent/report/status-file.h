/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * /run/evictd/status.json: node signals, conditions, evictions in progress and the last
 * decisions, for controllers and humans (`evictd --status`). Replaced atomically (atomic-file.h),
 * so a reader never sees a half-written file.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic-file.h"

#define STATUS_FILE_DEFAULT "/run/evictd/status.json"
#define STATUS_MAX_BYTES (1024 * 1024)

/* Copies path to fd (for `evictd --status`). Returns 0, -ENOENT when no daemon wrote it, or -errno. */
int status_print(const char *path, int fd);

/* One finished (or started, for dry runs) eviction, kept for status.json. */
typedef struct status_decision {
	uint64_t realtime_usec;
	char pod[320];      /* "namespace/name", or the uid */
	char uid[80];
	char signal[48];
	char action[16];    /* "kill", "exec", "dry-run" */
	char outcome[16];   /* evict_outcome_to_string() */
	bool hard;
	int32_t priority;
	uint64_t grace_sec;
	uint64_t duration_usec;
	int64_t reclaimed_bytes; /* -1 unknown */
	int exec_status;         /* -1: no command */
} status_decision;

#define STATUS_HISTORY 32

/* The last STATUS_HISTORY decisions, oldest dropped first. */
typedef struct status_history {
	status_decision items[STATUS_HISTORY];
	size_t next, count;
} status_history;

void status_history_add(status_history *h, const status_decision *d);
/* i = 0 is the newest. NULL past the end. */
const status_decision *status_history_get(const status_history *h, size_t i);
