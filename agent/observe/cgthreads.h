/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A pod's task count where pids.current does not exist: on a hybrid host the pids controller is
 * on cgroup v1, so the v2 pod cgroup has no pids.current, yet every v2 cgroup lists its threads
 * in cgroup.threads. The sum of those lines over the pod's subtree is what pids.current would
 * say (it counts tasks, i.e. threads), so pid.available can rank such pods instead of leaving
 * them unmeasured.
 */

#include <stdint.h>

/* Deeper than pod → container → any runtime nesting; and cgroups visited per pod at most. */
#define CGTHREADS_MAX_DEPTH 16
#define CGTHREADS_MAX_CGROUPS 4096

/*
 * Counts the lines of cgroup.threads in dirfd (a cgroup directory) and in every cgroup beneath
 * it, never following symlinks. Returns 0 with the count, -E2BIG when the subtree is deeper or
 * larger than the limits (a lower bound is not used for ranking), or -errno (-ENOENT: not a
 * cgroup v2 directory).
 */
int cg_count_threads(int dirfd, uint64_t *ret);
