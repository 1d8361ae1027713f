/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The reclaim tracker: what evicted pods are still to give back to the node (DESIGN §5 "Reclaim").
 *
 * A victim is registered when its eviction starts, with what it was expected to free for every
 * signal (its working set, emptyDir + logs bytes and inodes, tasks: measured when it was chosen)
 * and each signal's value then. When its processes are gone it is *reclaiming*: until its pod
 * cgroup directory is removed (the kubelet does it after unmounting the volumes: its own "pod
 * finished" test) or the reclaim timeout passes (the kubelet's podCleanupTimeout, 30 s). Meanwhile
 * its expected reclaim is pending for each signal (reclaim_pending), so that the decision does not
 * choose another victim for pressure it will relieve.
 *
 * A victim stays a victim: processes that reappear in a reclaiming pod's cgroup (the kubelet
 * restarting containers before it sees the pod's deletion) are killed again at once
 * (cgroup.kill), reported once per pod, never as a new eviction.
 *
 * Nothing here runs while nothing is reclaiming: the caller checks only when reclaim_count() > 0.
 */

#include <stdbool.h>
#include <stdint.h>

#include "signals.h"

typedef struct reclaim_set reclaim_set;

typedef struct reclaim_entry {
	char uid[64];
	char pod[320];           /* "namespace/name" or the uid, for messages */
	char cgroup[4096];       /* absolute path of the pod cgroup */
	evictd_signal signal;    /* the signal that chose it */
	bool hard;               /* ... as a hard threshold */
	bool dry_run;            /* nothing was killed: only the cgroup's removal or the timeout ends it */
	int64_t expected[_SIGNAL_MAX]; /* per signal, in its unit; -1 unknown */
	int64_t observed[_SIGNAL_MAX]; /* each signal's value when it was chosen... */
	bool observed_known[_SIGNAL_MAX]; /* ...when known */
	/* set by the tracker */
	bool reclaiming;         /* processes gone; false: the eviction is still running */
	uint64_t gone_usec;      /* CLOCK_MONOTONIC: when its processes were gone */
	uint64_t deadline_usec;  /* gone_usec + reclaim timeout */
	bool relieved[_SIGNAL_MAX]; /* the signal's pressure ended meanwhile: not pending for it */
	bool bound_set;          /* gone[] read (the first look after its processes were gone) */
	int64_t gone[_SIGNAL_MAX];  /* each signal then: a fall below it is new pressure */
	bool gone_known[_SIGNAL_MAX];
	unsigned rekills;        /* processes reappeared and were killed again */
	int rekill_error;        /* last -errno of such a kill, 0 when it worked */
} reclaim_entry;

typedef enum reclaim_event {
	RECLAIM_DONE,      /* the pod cgroup is gone: the node has the pod's resources back */
	RECLAIM_TIMEOUT,   /* still there after the timeout: no longer pending */
	RECLAIM_REKILLED,  /* processes reappeared and were killed again (first time only) */
} reclaim_event;

reclaim_set *reclaim_set_new(void);
reclaim_set *reclaim_set_free(reclaim_set *r);

/* Registers a victim at the start of its eviction (replacing any entry of the same uid).
 * Returns 0, -EINVAL (no uid or cgroup), -ENOSPC (bound reached) or -ENOMEM. */
int reclaim_arm(reclaim_set *r, const reclaim_entry *e);

/*
 * Its processes are gone (now: CLOCK_MONOTONIC): reclaiming until the cgroup goes or timeout
 * passes. timeout 0: not tracked at all (the entry is dropped). Returns the entry (valid until the
 * next change of r), or NULL when the uid is not armed or timeout is 0.
 */
const reclaim_entry *reclaim_begin(reclaim_set *r, const char *uid, uint64_t now, uint64_t timeout);

/* Drops the entry (the eviction failed or was refused: nothing to wait for). */
void reclaim_drop(reclaim_set *r, const char *uid);

/* The entry of uid (valid until the next change of r), NULL when none. */
const reclaim_entry *reclaim_find(const reclaim_set *r, const char *uid);
/* true when uid is registered (armed or reclaiming). */
bool reclaim_contains(const reclaim_set *r, const char *uid);
/* Entries reclaiming (not those whose eviction is still running). */
unsigned reclaim_count(const reclaim_set *r);
/* The earliest deadline of the reclaiming entries, UINT64_MAX when none. */
uint64_t reclaim_next_deadline(const reclaim_set *r);

/*
 * Looks at every reclaiming pod's cgroup (relative to dirfd AT_FDCWD: paths are absolute): gone ->
 * RECLAIM_DONE (entry removed), processes back -> cgroup.kill and RECLAIM_REKILLED (once per pod;
 * dry runs excepted), deadline passed -> RECLAIM_TIMEOUT (entry removed). fn gets the entry before
 * it is removed. Returns the number of entries removed.
 */
unsigned reclaim_check(reclaim_set *r, uint64_t now,
                       void (*fn)(reclaim_event what, const reclaim_entry *e, void *userdata), void *userdata);

/*
 * The node's signals now (available[], known[] by signal): entries whose processes are gone and
 * that have no bound yet take these values as theirs. Called before reclaim_pending(): a victim
 * may have grown between its choice and its death, so what counts as new pressure is a fall below
 * the signal as it was once the victim was gone, not as it was when it was chosen.
 */
void reclaim_observe(reclaim_set *r, const int64_t available[_SIGNAL_MAX], const bool known[_SIGNAL_MAX]);

/*
 * Per signal, what the reclaiming pods will still give back (decide.h's pending_reclaim, by its
 * fields): sum of known expected reclaims, how many pods, whether one is unknown, and the worst
 * value the signal had once such a pod was gone (lowest; highest for PSI; reclaim_observe).
 */
void reclaim_pending(const reclaim_set *r, int64_t amount[_SIGNAL_MAX], unsigned pods[_SIGNAL_MAX],
                     bool unknown[_SIGNAL_MAX], int64_t bound[_SIGNAL_MAX]);

/*
 * The pressure on signal s is over (no threshold of it met): what the reclaiming pods were to give
 * back for it no longer counts — it came back, or the pressure went another way; a fall after this
 * is new pressure.
 */
void reclaim_signal_relieved(reclaim_set *r, evictd_signal s);

/* Calls fn for every reclaiming entry, oldest first (status.json). */
void reclaim_foreach(const reclaim_set *r, void (*fn)(const reclaim_entry *e, void *userdata), void *userdata);
