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

/*
 * Sends sig to every process of the cgroup and all its descendants, at any depth (threaded and
 * "."-named sub-cgroups included), in one blocking pass: for tests and tools. The daemon runs the
 * same walk incrementally (cgwalk.h). Processes that exit meanwhile and vanished sub-cgroups are
 * not errors. self (the caller's own pid) is never signalled. Returns the number of processes
 * signalled (>= 0) or the first -errno met (e.g. -EBADMSG for a malformed cgroup.procs).
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
