/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Where the cgroup v2 hierarchy is and what it can tell us. The only file that uses libcgroup:
 * cgroup_init()'s mount table finds the v2 mount; where libcgroup declines (it skips a cgroup2
 * mount whose cgroup.controllers is empty, the normal case inside a delegated container or
 * cgroup namespace, and returns ECGROUPNOTMOUNTED), /proc/self/mountinfo + statfs() decide.
 */

#include <limits.h>
#include <stdbool.h>

typedef enum cg_mode {
	CG_MODE_UNIFIED = 0, /* a cgroup2 hierarchy and no v1 one: every controller can be on v2 */
	CG_MODE_HYBRID,      /* cgroup2 and v1 hierarchies (e.g. /sys/fs/cgroup/unified + memory on v1) */
	CG_MODE_LEGACY,      /* v1 only: no v2 hierarchy at all */
	CG_MODE_ABSENT,      /* no cgroup filesystem mounted */
	CG_MODE_DIRECTORY,   /* a configured root that is not a cgroup2 mount (fixture, bind copy) */
} cg_mode;

typedef struct cg_info {
	cg_mode mode;
	char root[PATH_MAX];      /* the v2 root evictd reads; "" when there is none */
	char controllers[256];    /* the root's cgroup.controllers, space-separated */
	bool memory, cpu, pids, io;
	const char *found_by;     /* "libcgroup", "mountinfo (libcgroup declined)", "configuration" */
} cg_info;

/*
 * Finds the hierarchy. configured_root NULL means auto. Returns 0 (also for LEGACY/ABSENT: the
 * caller reports what is unavailable) or -errno when a configured root cannot be used.
 */
int cg_discover(const char *configured_root, cg_info *ret);

/* "unified", "hybrid", "legacy", "absent", "directory". */
const char *cg_mode_name(cg_mode m);
