/* SPDX-License-Identifier: MIT */
#include "signals.h"

#include <string.h>

static const char *const names[_SIGNAL_MAX] = {
	[SIGNAL_MEMORY_AVAILABLE] = "memory.available",
	[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = "allocatableMemory.available",
	[SIGNAL_PID_AVAILABLE] = "pid.available",
	[SIGNAL_NODEFS_AVAILABLE] = "nodefs.available",
	[SIGNAL_NODEFS_INODES_FREE] = "nodefs.inodesFree",
	[SIGNAL_IMAGEFS_AVAILABLE] = "imagefs.available",
	[SIGNAL_IMAGEFS_INODES_FREE] = "imagefs.inodesFree",
	[SIGNAL_MEMORY_SOME] = "memory.some",
	[SIGNAL_MEMORY_FULL] = "memory.full",
};

const char *signal_name(evictd_signal s)
{
	return s >= 0 && s < _SIGNAL_MAX ? names[s] : NULL;
}

evictd_signal signal_from_name(const char *name)
{
	for (int i = 0; i < _SIGNAL_MAX; i++)
		if (name && strcmp(names[i], name) == 0)
			return (evictd_signal)i;
	return _SIGNAL_INVALID;
}

evictd_condition signal_condition(evictd_signal s)
{
	switch (s) {
	case SIGNAL_PID_AVAILABLE:
		return CONDITION_PID_PRESSURE;
	case SIGNAL_NODEFS_AVAILABLE:
	case SIGNAL_NODEFS_INODES_FREE:
	case SIGNAL_IMAGEFS_AVAILABLE:
	case SIGNAL_IMAGEFS_INODES_FREE:
		return CONDITION_DISK_PRESSURE;
	default:
		return CONDITION_MEMORY_PRESSURE;
	}
}

evictd_rank_kind signal_rank_kind(evictd_signal s)
{
	switch (s) {
	case SIGNAL_PID_AVAILABLE:
		return RANK_PID;
	case SIGNAL_NODEFS_AVAILABLE:
		return RANK_DISK;
	case SIGNAL_NODEFS_INODES_FREE:
		return RANK_INODES;
	case SIGNAL_IMAGEFS_AVAILABLE:
		return RANK_IMAGEFS;
	case SIGNAL_IMAGEFS_INODES_FREE:
		return RANK_IMAGEFS_INODES;
	default:
		return RANK_MEMORY;
	}
}

bool signal_is_psi(evictd_signal s)
{
	return s == SIGNAL_MEMORY_SOME || s == SIGNAL_MEMORY_FULL;
}

const char *signal_unit(evictd_signal s)
{
	switch (s) {
	case SIGNAL_NODEFS_INODES_FREE:
	case SIGNAL_IMAGEFS_INODES_FREE:
		return "inodes";
	case SIGNAL_PID_AVAILABLE:
		return "pids";
	case SIGNAL_MEMORY_SOME:
	case SIGNAL_MEMORY_FULL:
		return "centipercent";
	default:
		return "bytes";
	}
}

const char *signal_condition_name(evictd_condition c)
{
	static const char *const n[_CONDITION_MAX] = { "MemoryPressure", "DiskPressure", "PIDPressure" };
	return c >= 0 && c < _CONDITION_MAX ? n[c] : NULL;
}

const char *signal_rank_kind_name(evictd_rank_kind k)
{
	static const char *const n[_RANK_MAX] = { "memory", "disk", "pid", "inodes", "imagefs", "imagefs-inodes" };
	return k >= 0 && k < _RANK_MAX ? n[k] : NULL;
}
