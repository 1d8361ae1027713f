/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the daemon remembers about pods whose eviction ended, so that the next decisions do not
 * repeat it: a pod evicted already (its cgroup has no process left, even if the directory stays
 * until the runtime removes it) is never chosen again, and a pod whose eviction failed waits a
 * growing back-off before it is tried again, while the next pod in the ranking is chosen. Entries
 * go when their pod's cgroup does; a "done" entry also goes when the cgroup has processes again
 * (a container restarted in the same pod: a new eviction is legitimate then).
 */

#include <stdbool.h>
#include <stdint.h>

#include "evictor.h"
#include "snapshot.h"

typedef struct pod_memo pod_memo;

typedef enum memo_verdict {
	MEMO_IGNORED,          /* dry run, handed over: nothing to remember */
	MEMO_DONE,             /* never chosen again while its cgroup stays empty */
	MEMO_FIRST_FAILURE,    /* report it, with the retry time */
	MEMO_REPEATED_FAILURE, /* reported already: quiet */
} memo_verdict;

pod_memo *pod_memo_new(void);
pod_memo *pod_memo_free(pod_memo *m);

/* Records a finished eviction (now: CLOCK_MONOTONIC); *ret_retry_usec = the back-off applied. */
memo_verdict pod_memo_finished(pod_memo *m, const evict_info *i, uint64_t now, uint64_t backoff_usec,
                               uint64_t backoff_max_usec, uint64_t *ret_retry_usec);

/*
 * Drops entries of pods no longer in snap and "done" entries whose cgroup is populated again.
 */
void pod_memo_prune(pod_memo *m, const snapshot *snap);

/*
 * The pods not to choose now, with why (static strings): arrays of n entries, freed by the caller
 * with free() (the uid strings belong to m and stay valid until its next change).
 */
int pod_memo_skip_list(const pod_memo *m, uint64_t now, const char ***ret_uids, const char ***ret_why,
                       size_t *ret_n);

unsigned pod_memo_count(const pod_memo *m);
