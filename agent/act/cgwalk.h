/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * An incremental, resumable signal walk over a pod cgroup's subtree.
 *
 * A tenant controls what is below its container cgroup: 100k empty sub-cgroups, nesting as deep
 * as cgroup.max.depth allows, threaded sub-cgroups (cgroup.procs unreadable: EOPNOTSUPP), frozen
 * ones, names starting with ".", sub-cgroups removed while we read them, processes that fork or
 * move between sub-cgroups while the walk runs. The walk reaches all of it without recursion (an
 * explicit stack) and does a bounded amount of work per cg_walk_step() call, so that the daemon
 * can run it from its event loop without stalling monitoring. A pass that signalled a process not
 * seen before is followed by another one (a fork storm or a process hopping into a directory the
 * walk had passed), up to CG_WALK_MAX_PASSES.
 *
 * One directory fd is held per level being listed: the depth reached is bounded by the fds left
 * (evictd raises its soft RLIMIT_NOFILE to the hard one; the scanner keeps 512 in reserve), and a
 * subtree below that is skipped and counted (EMFILE), never silently.
 *
 * Nothing the tenant can do makes the walk fail: unreadable or vanished sub-cgroups are counted
 * (cg_walk_skipped) and the first unexpected error is kept for the log (cg_walk_error). The walk
 * is best effort by nature — the end of an eviction is cgroup.kill, which needs none of this.
 */

#include <stdbool.h>
#include <sys/types.h>

typedef struct cg_walk cg_walk;

#define CG_WALK_MAX_PASSES 8

enum {
	CG_WALK_THAW = 1 << 0, /* write 0 to cgroup.freeze where it is 1 before signalling */
	CG_WALK_ONE_PASS = 1 << 1, /* no repeat passes (counting, tests) */
};

/* root_dirfd is duplicated; self (the caller's pid) is never signalled. sig 0 only counts. */
int cg_walk_new(int root_dirfd, int sig, pid_t self, unsigned flags, cg_walk **ret);
cg_walk *cg_walk_free(cg_walk *w);

/*
 * Visits at most max_dirs cgroups. Returns 1 while there is more to do, 0 when the walk is over,
 * -ENOMEM when it cannot go on.
 */
int cg_walk_step(cg_walk *w, unsigned max_dirs);

/* Distinct processes (threads in threaded sub-cgroups) signalled so far, all passes. */
unsigned cg_walk_signalled(const cg_walk *w);
/* True once the first pass is over (the count then covers every sub-cgroup once). */
bool cg_walk_first_pass_done(const cg_walk *w);
/* Cgroups visited, all passes. */
unsigned long cg_walk_visited(const cg_walk *w);
/* Sub-cgroups that could not be read for another reason than vanishing (EMFILE, EACCES...). */
unsigned cg_walk_skipped(const cg_walk *w);
/* The first such error (-errno), 0 when none. */
int cg_walk_error(const cg_walk *w);
