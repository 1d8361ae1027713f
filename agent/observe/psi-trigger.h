/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * PSI triggers as wake-up sources: the kernel raises EPOLLPRI when tasks stalled on memory for
 * more than `stall` within a `window`, so the daemon scans at once instead of at its next tick.
 *
 * Two kernel rules shape this (deps-and-style.md §4): without CAP_SYS_RESOURCE on the opener the
 * window must be a multiple of 2 s, and a failed trigger write leaves an fd that polls
 * POLLPRI|POLLERR forever (a busy loop) — so the write is always checked and such an fd is never
 * added to the loop.
 */

#include <stdint.h>

#define PSI_WINDOW_UNIT_USEC 2000000ULL

/* Rounds a window up to the unprivileged granularity (2 s multiples, at least 2 s). */
uint64_t psi_window_round(uint64_t window_usec);

/*
 * Opens `name` under dirfd (e.g. "memory.pressure" in a cgroup, "pressure/memory" in /proc) and
 * registers "<kind> <stall_usec> <window_usec>". Refuses (-EMEDIUMTYPE) files that are not on
 * procfs or cgroup2: writing a trigger into a fixture tree would corrupt it. Returns the fd
 * (O_RDWR|O_NONBLOCK|O_CLOEXEC), ready for EPOLLPRI, or -errno (-EINVAL: window refused;
 * -EOPNOTSUPP: PSI disabled; -ENOENT: no such file).
 */
int psi_trigger_open(int dirfd, const char *name, const char *kind, uint64_t stall_usec,
                     uint64_t window_usec);
