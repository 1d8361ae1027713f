/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Victim records on disk: evictd's crash recovery. One file per pod,
 * <run-directory>/inflight/<uid>.json, from the moment the pod is first signalled until evictd has
 * nothing left to remember about it, replaced atomically (tmp + rename, fsync off tmpfs) at each
 * step, so that a restart or a kill -9 at any moment finds the last complete step:
 *   terminating, killing, exec  the eviction runs (the evictor writes these: before the pod is
 *                               first signalled, again when it escalates or the command starts);
 *   reclaiming                  its processes are gone, what it was expected to free is pending
 *                               until its cgroup, volumes and logs are back (reclaim.h);
 *   evicted                     done (reclaimed, or its reclaim timed out): never chosen again
 *                               while its cgroup stays;
 *   backoff                     its eviction failed or the API server refused it: not chosen
 *                               before its retry time; the failure count doubles the next wait.
 * Every record of version 2 carries the victim's reclaim state (reclaim.h) from the eviction's
 * start and its failure count (and, while the eviction runs, whether the API server refused it
 * already: evictor_note_refusal), so that whatever step a restart lands in, the next evictd process
 * counts the same pending reclaim, credits it to the same pod and keeps the same back-off. The
 * file goes when the pod's cgroup is gone and its reclaim is over.
 *
 * Times: the eviction's start and deadline are written twice, CLOCK_BOOTTIME (what a resume reads:
 * the same clock for every process of one boot, suspend included, and no clock step moves it) and
 * CLOCK_REALTIME (as version 1 wrote them; what a record without the former is resumed from, the
 * time left then capped at the most the step can take, so that a wall clock stepped back since the
 * write never stretches a grace period); the reclaim's and the back-off's are CLOCK_MONOTONIC,
 * also the same clock for every process of one boot — and a record of another boot (the boot id
 * differs) is discarded: its processes are gone with the kernel that ran them.
 *
 * Versions: version 1 records (no "version" key: evictd before issue 29) are read as before and
 * resumed; their reclaim is tracked from what they hold (the expected reclaim of the signal that
 * chose the pod, the pod cgroup as its only part). A record of a later version is read for the
 * keys this version knows (later versions only add keys). A record that is unreadable, malformed
 * or of another boot is logged with what is wrong and removed: nothing in it can be trusted, and
 * its pod is then treated as evictd before issue 29 did after a restart (an empty cgroup is not
 * chosen again; a pod with processes may be).
 */

#include <stdbool.h>
#include <stdint.h>

#include "reclaim.h"

#define INFLIGHT_VERSION 2

typedef enum inflight_phase {
	INFLIGHT_TERMINATING, /* SIGTERM being sent or sent; cgroup.kill at deadline */
	INFLIGHT_KILLING,     /* cgroup.kill written (or the SIGKILL fallback running) */
	INFLIGHT_EXEC,        /* the eviction command was started: it is never run again */
	INFLIGHT_RECLAIMING,  /* processes gone; its reclaim is pending (reclaim) */
	INFLIGHT_EVICTED,     /* evicted: not chosen again while its cgroup stays */
	INFLIGHT_BACKOFF,     /* failed or refused: not chosen before retry_mono_usec */
	_INFLIGHT_PHASE_MAX,
} inflight_phase;

typedef struct inflight_record {
	unsigned version;     /* as read: 1 or INFLIGHT_VERSION (written: always INFLIGHT_VERSION) */
	char uid[128];
	char namespace_[256];
	char name[256];
	char cgroup[4096];
	inflight_phase phase;
	/* the eviction: every phase but evicted and backoff */
	char signal[64];
	bool hard, exec;
	int32_t priority;
	uint64_t grace_usec;
	int64_t usage, expected_reclaim;
	uint64_t started_real_usec;  /* CLOCK_REALTIME */
	uint64_t deadline_real_usec; /* CLOCK_REALTIME: end of grace, or of the command's wait */
	bool has_boot_clock;         /* the two below were read (written always; older evictds did not) */
	uint64_t started_boot_usec;  /* CLOCK_BOOTTIME */
	uint64_t deadline_boot_usec; /* CLOCK_BOOTTIME */
	/* version 2 */
	bool has_reclaim;            /* required in phase reclaiming */
	reclaim_entry reclaim;
	unsigned failures;           /* failed or refused evictions of this pod so far */
	uint64_t retry_mono_usec;    /* backoff: not chosen before (CLOCK_MONOTONIC); also with refused */
	bool refused;                /* the eviction still runs, but the API server refused it already */
} inflight_record;

/* A uid usable as a file name: [A-Za-z0-9_-], 1-63 characters (a pod UID is 36). */
bool inflight_uid_valid(const char *uid);

/* Creates dir (last component) when missing. Returns 0 or -errno. */
int inflight_save(const char *dir, const inflight_record *r);
/* Missing is fine. */
int inflight_remove(const char *dir, const char *uid);

/*
 * Calls fn for every valid record of this boot. Records that are unreadable, malformed or of
 * another boot are logged and removed. Returns the number of records passed to fn, or -errno
 * when dir cannot be read (-ENOENT: none).
 */
int inflight_load(const char *dir, void (*fn)(const inflight_record *r, void *userdata), void *userdata);

/*
 * Parses one record's text (boot: this boot's id, "" when unknown: every record is then refused).
 * Returns NULL with r filled, or what is wrong (a static string). For inflight_load and the fuzzer.
 */
const char *inflight_parse(const char *text, const char *boot, inflight_record *r);

const char *inflight_phase_to_string(inflight_phase p);
