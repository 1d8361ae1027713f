/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Killing a pod cgroup: the kernel primitives behind evictd's `kill` action.
 *
 * Every function takes a directory fd of the pod cgroup (opened O_DIRECTORY|O_CLOEXEC) so that the
 * same code runs on the real cgroupfs and on fixture trees in tests, and a pod cgroup renamed or
 * removed under us can never redirect a kill to another directory.
 */

#include <stdbool.h>
#include <sys/types.h>

/* Deepest nesting followed below a pod cgroup (pod → container → runtime sub-cgroups). */
#define CG_MAX_DEPTH 16

/*
 * Sends sig to every process listed in cgroup.procs of the cgroup and all its descendants.
 * Processes that exit meanwhile are not errors. self (the caller's own pid) is never signalled.
 * Returns the number of processes signalled (>= 0) or -errno when the cgroup cannot be read.
 */
int cg_signal_tree(int cg_dirfd, int sig, pid_t self);

/*
 * Writes "1" to cgroup.kill (Linux >= 5.14): the kernel SIGKILLs the whole subtree, including
 * processes forked after the call started. Returns 0, -ENOENT when the kernel lacks cgroup.kill,
 * or another -errno.
 */
int cg_kill(int cg_dirfd);

/*
 * Reads cgroup.events: 1 when the subtree still has processes ("populated 1"), 0 when empty,
 * -ENOENT when the cgroup is gone (also "empty" for an evictor), -EBADMSG when the file has no
 * populated line.
 */
int cg_populated(int cg_dirfd);

/* Reads memory.current of the cgroup into *ret_bytes; -ENOENT where the memory controller is absent. */
int cg_memory_current(int cg_dirfd, unsigned long long *ret_bytes);
