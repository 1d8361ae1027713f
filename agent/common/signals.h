/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Eviction signals, as the kubelet names them (pkg/kubelet/eviction/api/types.go), plus PSI.
 * The order of the enum is the order of output and the order in which thresholds are acted on
 * (memory first, as the kubelet's byEvictionPriority does).
 */

#include <stdbool.h>

typedef enum evictd_signal {
	SIGNAL_MEMORY_AVAILABLE = 0,         /* memory.available */
	SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE, /* allocatableMemory.available */
	SIGNAL_PID_AVAILABLE,                /* pid.available */
	SIGNAL_NODEFS_AVAILABLE,             /* nodefs.available */
	SIGNAL_NODEFS_INODES_FREE,           /* nodefs.inodesFree */
	SIGNAL_IMAGEFS_AVAILABLE,            /* imagefs.available */
	SIGNAL_IMAGEFS_INODES_FREE,          /* imagefs.inodesFree */
	SIGNAL_MEMORY_SOME,                  /* memory.some: PSI avg10, beyond the kubelet */
	SIGNAL_MEMORY_FULL,                  /* memory.full: PSI avg10, beyond the kubelet */
	_SIGNAL_MAX,
	_SIGNAL_INVALID = -1,
} evictd_signal;

typedef enum evictd_condition {
	CONDITION_MEMORY_PRESSURE = 0,
	CONDITION_DISK_PRESSURE,
	CONDITION_PID_PRESSURE,
	_CONDITION_MAX,
} evictd_condition;

/* Which ranking a signal uses (libpreempt's comparators) and what a pod's reclaim is measured in. */
typedef enum evictd_rank_kind {
	RANK_MEMORY = 0,
	RANK_DISK,    /* nodefs.available: bytes of emptyDir volumes + logs vs ephemeral-storage request */
	RANK_PID,
	RANK_INODES,  /* nodefs.inodesFree: inodes of emptyDir volumes + logs, no request */
	RANK_IMAGEFS, /* imagefs.available: as the layout says (writable layers...); without the CRI, priority only */
	RANK_IMAGEFS_INODES, /* imagefs.inodesFree: the same in inodes */
	_RANK_MAX,
} evictd_rank_kind;

/* "memory.available", ... ; NULL for an invalid value. */
const char *signal_name(evictd_signal s);
/* _SIGNAL_INVALID when name is not a signal. */
evictd_signal signal_from_name(const char *name);
evictd_condition signal_condition(evictd_signal s);
evictd_rank_kind signal_rank_kind(evictd_signal s);
/*
 * PSI signals are "more is worse": met when the observed stall share is ABOVE the threshold.
 * Every kubelet signal is "available": met when the observation is BELOW (strictly) the threshold.
 */
bool signal_is_psi(evictd_signal s);
/* Unit of available/capacity figures: "bytes", "inodes", "pids" or "centipercent" (PSI). */
const char *signal_unit(evictd_signal s);

const char *signal_condition_name(evictd_condition c); /* "MemoryPressure", ... */
const char *signal_rank_kind_name(evictd_rank_kind k); /* "memory", "disk", "pid", "inodes", "imagefs", "imagefs-inodes" */
