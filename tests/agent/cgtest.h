/* SPDX-License-Identifier: MIT */
/* Helpers shared by the tests and benchmarks that work on the real cgroup v2 hierarchy. */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgkill.h"

/* The mounted cgroup2 hierarchy (hybrid hosts: the unified one), or NULL. */
static inline const char *cgtest_find_cgroup2(void)
{
	static const char *const cands[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	for (size_t i = 0; i < 2; i++) {
		struct statfs sf;
		if (statfs(cands[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
			return cands[i];
	}
	return NULL;
}

/* cgroup.kill, then waits (up to 1 s) for the kernel to say the cgroup is empty. */
static inline void cgtest_kill(const char *cg)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	(void)cg_kill(fd);
	for (int i = 0; i < 200 && cg_populated(fd) == 1; i++)
		usleep(5000);
	close(fd);
}

/*
 * After creating a test cgroup or moving a process into one failed with errno e: 77 (skip) when
 * the machine cannot give it — no root or no writable cgroup v2 here (EPERM, EACCES, EROFS,
 * ENOENT) — and 1 (failure) for anything else, such as EBUSY or EINVAL: a regression must not
 * turn into a skip. Prints the line scripts/run-tests.sh shows either way.
 */
static inline int cgtest_env_or_fail(int e, const char *what, const char *where)
{
	if (e == EPERM || e == EACCES || e == EROFS || e == ENOENT) {
		printf("skipped: %s %s: %s\n", what, where, strerror(e));
		return 77;
	}
	printf("not ok - %s %s: %s (not a missing privilege or cgroup v2: a failure)\n", what, where, strerror(e));
	return 1;
}

/* 0 when cg has a writable cgroup.kill, else prints the skip reason and returns 77. */
static inline int cgtest_need_cgroup_kill(const char *cg)
{
	char kp[400];
	snprintf(kp, sizeof(kp), "%s/cgroup.kill", cg);
	if (access(kp, W_OK) == 0)
		return 0;
	printf("skipped: %s: %s (kernel < 5.14?)\n", kp, strerror(errno));
	return 77;
}

/* In a child after fork(): moves the calling process into cg, or exits 99. */
static inline void cgtest_join(const char *cg)
{
	char p[1200];
	snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0", 1) != 1)
		_exit(99);
	close(fd);
}
