/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The reclaim tracker: what evicted pods are still to give back to the node (DESIGN §5 "Reclaim").
 *
 * A victim is registered when its eviction starts, with what it was expected to free for every
 * signal (its working set, tasks, emptyDir + log bytes and inodes: measured when it was chosen),
 * each signal's value then, and the parts of the node that hold it (reclaim_part): its pod cgroup
 * always; its emptyDir volumes' directory and its container log directory when they existed.
 * When its processes are gone it is *reclaiming*, part by part: the cgroup is back when the kubelet
 * removes it, the two directories when they are gone or hold nothing but empty directories (what
 * was counted in them, their files, is freed) — the kubelet removes the volumes and the cgroup
 * first, the runtime's container GC the logs seconds later. Each signal counts only its own parts
 * (memory, tasks, imagefs: the cgroup; nodefs bytes and inodes: the volumes and the logs, each with
 * what was counted in it, or the cgroup when the pod had neither directory), so a signal stops being pending as soon as its parts are back, and the
 * entry ends when every part is back (RECLAIM_DONE) or the reclaim timeout passes (the kubelet's
 * podCleanupTimeout, 30 s; RECLAIM_TIMEOUT). Meanwhile reclaim_pending() adds each outstanding
 * amount to the decision's pending reclaim (pending.h).
 *
 * A victim stays a victim: processes that reappear in a reclaiming pod's cgroup (the kubelet
 * restarting containers before it sees the pod's deletion) are killed again at once
 * (cgroup.kill), reported once per pod, never as a new eviction.
 *
 * The whole state of an entry is plain data (times are CLOCK_MONOTONIC, which runs on across
 * processes of one boot), so that it can be recorded with the in-flight records and restored by
 * the next evictd process (reclaim_restore; agent/evictd/victims.c).
 *
 * Nothing here runs while nothing is reclaiming: the caller checks only when reclaim_count() > 0.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "pending.h"
#include "signals.h"

typedef enum reclaim_part {
	RECLAIM_PART_CGROUP,  /* the pod cgroup: memory (memory-backed emptyDirs too), tasks, imagefs */
	RECLAIM_PART_VOLUMES, /* <kubelet-root-dir>/pods/<uid>/volumes/kubernetes.io~empty-dir */
	RECLAIM_PART_LOGS,    /* <pod-logs-dir>/<namespace>_<name>_<uid> */
	_RECLAIM_PART_MAX,
} reclaim_part;

typedef struct reclaim_set reclaim_set;

typedef struct reclaim_entry {
	char uid[64];
	char pod[320];           /* "namespace/name" or the uid, for messages */
	char cgroup[PATH_MAX];   /* absolute path of the pod cgroup (= the cgroup part) */
	evictd_signal signal;    /* the signal that chose it */
	bool hard;               /* ... as a hard threshold */
	bool dry_run;            /* nothing was killed: only the cgroup's removal or the timeout ends it */
	int64_t expected[_SIGNAL_MAX]; /* per signal, in its unit; -1 unknown */
	int64_t observed[_SIGNAL_MAX]; /* each signal's value when it was chosen... */
	bool observed_known[_SIGNAL_MAX]; /* ...when known */
	/* what its reclaim is measured against: the value when it was chosen, moved on each time
	 * another victim's part came back (that change is the other's) — reclaim_rebase() */
	int64_t base[_SIGNAL_MAX];
	bool base_known[_SIGNAL_MAX];
	/* the two directories (absolute; "" when the pod had none) and what was counted in each for
	 * nodefs.available and nodefs.inodesFree (-1: not measured, or only a lower bound) */
	char volumes[PATH_MAX];
	char logs[PATH_MAX];
	int64_t part_bytes[_RECLAIM_PART_MAX], part_inodes[_RECLAIM_PART_MAX];
	/* set by the tracker */
	bool reclaiming;         /* processes gone; false: the eviction is still running */
	uint64_t gone_usec;      /* CLOCK_MONOTONIC: when its processes were gone */
	uint64_t deadline_usec;  /* gone_usec + reclaim timeout */
	bool part_back[_RECLAIM_PART_MAX]; /* back (an untracked part counts as back) */
	unsigned just_back;      /* the parts (a bit each) that came back at the last look */
	bool relieved[_SIGNAL_MAX]; /* the signal's pressure ended meanwhile: not pending for it */
	bool bound_set;          /* gone[] read (the first look after its processes were gone) */
	int64_t gone[_SIGNAL_MAX];  /* each signal then: a fall below it is new pressure */
	bool gone_known[_SIGNAL_MAX];
	unsigned rekills;        /* processes reappeared and were killed again */
	int rekill_error;        /* last -errno of such a kill, 0 when it worked */
} reclaim_entry;

typedef enum reclaim_event {
	RECLAIM_DONE,      /* every part is back: the node has the pod's resources back */
	RECLAIM_TIMEOUT,   /* still not all back after the timeout: no longer pending */
	RECLAIM_REKILLED,  /* processes reappeared and were killed again (first time only) */
	RECLAIM_PART_BACK, /* parts are back (just_back), others are still outstanding */
} reclaim_event;

/*
 * Whether anything counted is left in a directory part (the caller reads the node: observe/):
 * 1 something is left, 0 it is back (nothing but empty directories), -ENOENT it is gone,
 * another -errno it cannot be read (treated as "left").
 */
typedef int (*reclaim_probe_fn)(reclaim_part part, const char *path, void *userdata);

reclaim_set *reclaim_set_new(void);
reclaim_set *reclaim_set_free(reclaim_set *r);

/* Registers a victim at the start of its eviction (replacing any entry of the same uid); its
 * tracker fields are reset. Returns 0, -EINVAL (no uid or cgroup), -ENOSPC (bound reached) or -ENOMEM. */
int reclaim_arm(reclaim_set *r, const reclaim_entry *e);

/* Puts back an entry as a previous evictd process left it, tracker fields included (a reclaiming
 * one goes on reclaiming toward its original deadline). Same returns as reclaim_arm. */
int reclaim_restore(reclaim_set *r, const reclaim_entry *e);

/*
 * Its processes are gone (now: CLOCK_MONOTONIC): reclaiming until every part is back or timeout
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

/* Whether the entry tracks part p (the cgroup always; a directory when the pod had it). */
bool reclaim_part_tracked(const reclaim_entry *e, reclaim_part p);
/* The parts that count for signal s (a bit per reclaim_part), among those the entry tracks. */
unsigned reclaim_signal_parts(const reclaim_entry *e, evictd_signal s);
/* "pod cgroup", "emptyDir volumes", "container logs"; and the part's path in e. */
const char *reclaim_part_name(reclaim_part p);
const char *reclaim_part_path(const reclaim_entry *e, reclaim_part p);

/*
 * Looks at every reclaiming pod's parts (paths are absolute): the cgroup gone, a directory gone or
 * emptied (probe) -> that part is back (RECLAIM_PART_BACK while others are outstanding, RECLAIM_DONE
 * with the last, entry removed); processes back in the cgroup -> cgroup.kill and RECLAIM_REKILLED
 * (once per pod; dry runs excepted); deadline passed -> RECLAIM_TIMEOUT (entry removed). fn gets the
 * entry before it is removed. Returns the number of entries with a part back in this look.
 */
unsigned reclaim_check(reclaim_set *r, uint64_t now, reclaim_probe_fn probe, void *probe_data,
                       void (*fn)(reclaim_event what, const reclaim_entry *e, void *userdata), void *userdata);

/*
 * The node's signals now (available[], known[] by signal): entries whose processes are gone and
 * that have no bound yet take these values as theirs. Called before reclaim_pending(): a victim
 * may have grown between its choice and its death, so what counts as new pressure is a fall below
 * the signal as it was once the victim was gone, not as it was when it was chosen. Returns how
 * many entries took a bound (their state changed: worth recording).
 */
unsigned reclaim_observe(reclaim_set *r, const int64_t available[_SIGNAL_MAX], const bool known[_SIGNAL_MAX]);

/*
 * Adds to p (pending.h), per signal, what the reclaiming pods will still give back: for each
 * pod, the amounts counted in its outstanding parts for that signal, with the signal's value once
 * it was gone as the bound (its value when it was chosen until then).
 */
void reclaim_pending(const reclaim_set *r, pending_reclaim *p);

/*
 * The pressure on signal s is over (no threshold of it met): what the reclaiming pods were to give
 * back for it no longer counts — it came back, or the pressure went another way; a fall after this
 * is new pressure. Returns how many entries changed.
 */
unsigned reclaim_signal_relieved(reclaim_set *r, evictd_signal s);

/*
 * Parts came back (reclaim_check said so) and the signals now read available[] (known[]): that
 * change was theirs, so the other pods still reclaiming measure theirs from here on — no reclaim
 * is credited to another pod. (Pods whose parts came back in the same look share the change: each
 * line shows it whole.) Returns how many entries changed.
 */
unsigned reclaim_rebase(reclaim_set *r, const int64_t available[_SIGNAL_MAX], const bool known[_SIGNAL_MAX]);

/* An entry's reclaim so far for signal s, given the signal now: -1 not measurable (*ret unset). */
int reclaim_measured(const reclaim_entry *e, evictd_signal s, bool now_known, int64_t now, int64_t *ret);

/* Calls fn for every reclaiming entry, oldest first (status.json, the records). */
void reclaim_foreach(const reclaim_set *r, void (*fn)(const reclaim_entry *e, void *userdata), void *userdata);
