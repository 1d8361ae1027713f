/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * In-flight evictions on disk: evictd's crash recovery. One file per pod,
 * <run-directory>/inflight/<uid>.json, written atomically (tmp + rename) before the pod is first
 * signalled and again when the eviction escalates, removed when it finishes. A restarted daemon
 * resumes each one with its original deadline (stored as CLOCK_REALTIME: the monotonic clock
 * does not survive the process) and never sends a signal twice. Records of another boot (the
 * boot id differs) are discarded: their processes are gone with the kernel that ran them.
 */

#include <stdbool.h>
#include <stdint.h>

typedef enum inflight_phase {
	INFLIGHT_TERMINATING, /* SIGTERM being sent or sent; cgroup.kill at deadline */
	INFLIGHT_KILLING,     /* cgroup.kill written (or the SIGKILL fallback running) */
	INFLIGHT_EXEC,        /* the eviction command was started: it is never run again */
} inflight_phase;

typedef struct inflight_record {
	char uid[128];
	char namespace_[256];
	char name[256];
	char cgroup[4096];
	char signal[64];
	bool hard, exec;
	int32_t priority;
	uint64_t grace_usec;
	int64_t usage, expected_reclaim;
	inflight_phase phase;
	uint64_t started_real_usec;  /* CLOCK_REALTIME */
	uint64_t deadline_real_usec; /* CLOCK_REALTIME: end of grace, or of the command's wait */
} inflight_record;

/* A uid usable as a file name: [A-Za-z0-9_-], 1-127 characters. */
bool inflight_uid_valid(const char *uid);

/* Creates dir (last component) when missing. */
int inflight_save(const char *dir, const inflight_record *r);
/* Missing is fine. */
int inflight_remove(const char *dir, const char *uid);

/*
 * Calls fn for every valid record of this boot. Records that are unreadable, malformed or of
 * another boot are logged and removed. Returns the number of records passed to fn, or -errno
 * when dir cannot be read (-ENOENT: none).
 */
int inflight_load(const char *dir, void (*fn)(const inflight_record *r, void *userdata), void *userdata);

const char *inflight_phase_to_string(inflight_phase p);
