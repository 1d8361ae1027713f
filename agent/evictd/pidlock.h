/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One evictd per node: two daemons would both signal the pods and each count the other's reclaim
 * as missing. The lock is a file in the run directory held with flock(LOCK_EX|LOCK_NB) for the
 * daemon's lifetime (the kernel drops it when the process dies, even by SIGKILL: no stale lock
 * to clean up), with the holder's pid written into it so that a refused start can name it.
 * `evictd --once` signals nothing and takes no lock.
 */

#include <sys/types.h>

/*
 * Creates dir when missing (its last component), opens dir/evictd.lock and locks it. Returns the
 * fd to keep open, -EWOULDBLOCK when another process holds it (*ret_holder = its pid, 0 when
 * the file does not name one), or another -errno.
 */
int pidlock_acquire(const char *dir, pid_t *ret_holder);
