/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the daemon remembers about pods whose eviction ended, so that the next decisions do not
 * repeat it: a pod evicted already (its cgroup has no process left, even if the directory stays
 * until the runtime removes it) is never chosen again, and a pod whose eviction failed waits a
 * growing back-off before it is tried again, while the next pod in the ranking is chosen. Entries
 * go when their pod's cgroup does. A victim stays a victim: processes that reappear in an evicted
 * pod's cgroup (the kubelet restarting its containers before it sees the deletion) are reported
 * to the caller to be killed again, never chosen anew. A dry run remembers its victims the same
 * way (as if evicted; their processes run on, by design).
 */

#include <stdbool.h>
#include <stdint.h>

#include "evictor.h"
#include "snapshot.h"

typedef struct pod_memo pod_memo;

typedef enum memo_verdict {
	MEMO_IGNORED,          /* handed over: nothing to remember */
	MEMO_DONE,             /* never chosen again while its cgroup stays empty */
	MEMO_FIRST_FAILURE,    /* report it, with the retry time */
	MEMO_REPEATED_FAILURE, /* reported already: quiet */
} memo_verdict;

pod_memo *pod_memo_new(void);
pod_memo *pod_memo_free(pod_memo *m);

/* Records a finished eviction (now: CLOCK_MONOTONIC); *ret_retry_usec = the back-off applied. */
memo_verdict pod_memo_finished(pod_memo *m, const evict_info *i, uint64_t now, uint64_t backoff_usec,
                               uint64_t backoff_max_usec, uint64_t *ret_retry_usec);

/* An evicted pod's cgroup has processes again: kill them (first: not reported yet for this pod). */
typedef void (*pod_memo_restarted_fn)(const char *uid, const char *cgroup, bool first, void *userdata);
/* A pod forgotten by pod_memo_prune (its cgroup is gone): its record may go too. */
typedef void (*pod_memo_forgot_fn)(const char *uid, void *userdata);

/*
 * Drops entries of pods no longer in snap (forgot is called for each, after); calls fn for "done"
 * entries (not dry runs) whose cgroup is populated again.
 */
void pod_memo_prune(pod_memo *m, const snapshot *snap, pod_memo_restarted_fn fn, pod_memo_forgot_fn forgot,
                    void *userdata);

/*
 * The pods not to choose now, with why (static strings): arrays of n entries, freed by the caller
 * with free() (the uid strings belong to m and stay valid until its next change).
 */
int pod_memo_skip_list(const pod_memo *m, uint64_t now, const char ***ret_uids, const char ***ret_why,
                       size_t *ret_n);

/*
 * The API server refused the eviction of uid (outcome.h): a failure, not an eviction — the pod keeps
 * running, is not killed again if its containers restart, and waits the retry back-off. Returns
 * MEMO_IGNORED when uid was not evicted by us, else MEMO_FIRST_FAILURE or MEMO_REPEATED_FAILURE.
 */
memo_verdict pod_memo_refused(pod_memo *m, const char *uid, uint64_t now, uint64_t backoff_usec,
                              uint64_t backoff_max_usec, uint64_t *ret_retry_usec);

/*
 * The same, for a pod whose eviction is still running (a soft threshold's grace period): the
 * refusal is remembered (cgroup: the pod's), and when that eviction finishes the pod stays refused
 * — not "evicted": its restarted containers are left alone — instead of being recorded as done.
 */
memo_verdict pod_memo_refused_in_flight(pod_memo *m, const char *uid, const char *cgroup, uint64_t now,
                                        uint64_t backoff_usec, uint64_t backoff_max_usec, uint64_t *ret_retry_usec);

/*
 * The back-off is the pod's, not one eviction's: failures count up across kills, refusals and
 * restarts of evictd (the count is only forgotten with the pod), so each wait doubles the last.
 * What a restart needs to carry it over (agent/evictd/victims.c):
 */
typedef struct pod_memo_state {
	bool done;          /* evicted: not chosen again while its cgroup stays */
	bool refused_in_flight; /* refused while its eviction still runs (pod_memo_refused_in_flight) */
	bool dry;           /* ...in a dry run */
	unsigned failures;  /* failed or refused evictions so far */
	uint64_t retry_at;  /* CLOCK_MONOTONIC: not chosen before (0: no wait) */
	const char *cgroup; /* valid until m changes */
} pod_memo_state;
/* false when uid has no entry. */
bool pod_memo_get(const pod_memo *m, const char *uid, pod_memo_state *ret);
/* Puts an entry back as a previous evictd process left it (ret: what it was; done and
 * refused_in_flight exclusive). Returns 0, -EINVAL, -ENOSPC or -ENOMEM. */
int pod_memo_restore(pod_memo *m, const char *uid, const char *cgroup, const pod_memo_state *state);


unsigned pod_memo_count(const pod_memo *m);
