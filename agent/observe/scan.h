/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The scanner: one object that holds the directory fds (cgroup root, proc root, metadata dir)
 * and what must survive between scans (descriptor cache, previous cpu usage for rates), and
 * produces a snapshot per scan. Reads are openat/pread on those fds; nothing here decides.
 */

#include <stdint.h>

#include "cgdiscover.h"
#include "config.h"
#include "node.h"
#include "snapshot.h"

typedef struct scanner scanner;

/*
 * cfg must outlive the scanner (or be replaced with scanner_set_config after a reload).
 * Returns 0, or -errno when the cgroup root or proc root cannot be opened (a missing cgroup v2
 * hierarchy is not an error: pod signals are then unavailable).
 */
int scanner_new(const evictd_config *cfg, const cg_info *cg, scanner **ret);
scanner *scanner_free(scanner *s);

/* After a reload. Reopens the fds whose paths changed; the descriptor cache is dropped. */
int scanner_set_config(scanner *s, const evictd_config *cfg);

/*
 * A full scan: node signals, pod discovery, metadata, per-pod usage. The snapshot stays valid
 * (and owned by the scanner) until the next scanner_scan() or scanner_free().
 * Returns 0 or -ENOMEM; per-pod read errors (a pod vanishing mid-scan) are not errors.
 */
int scanner_scan(scanner *s, uint64_t now_usec, const snapshot **ret);

/* A pod's disk measurement is reused for this long (one pressure episode must not re-walk constantly). */
#define SCAN_DISK_TTL_USEC (10 * UINT64_C(1000000))

/*
 * Measures the nodefs usage (emptyDir volumes, logs) of every pod of the current snapshot whose
 * measurement is older than SCAN_DISK_TTL_USEC. Costs a directory walk per pod: call it only when
 * a nodefs threshold is actionable, or in --once. Returns 0 or -ENOMEM.
 */
int scanner_measure_disk(scanner *s, uint64_t now_usec);

/* Only the node signals: cheap, for fast polling near a threshold. */
void scanner_scan_node(scanner *s, node_signals *ret);

/* The cgroup root directory fd (for openat of a pod's cgroup path), or -1. */
int scanner_root_fd(const scanner *s);
/* evictd's own cgroup relative to the v2 root (from <proc-root>/self/cgroup), "" if unknown. */
const char *scanner_self_cgroup(const scanner *s);
