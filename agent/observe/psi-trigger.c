/* SPDX-License-Identifier: MIT */
#include "psi-trigger.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

uint64_t psi_window_round(uint64_t window_usec)
{
	if (window_usec < PSI_WINDOW_UNIT_USEC)
		return PSI_WINDOW_UNIT_USEC;
	return (window_usec + PSI_WINDOW_UNIT_USEC - 1) / PSI_WINDOW_UNIT_USEC * PSI_WINDOW_UNIT_USEC;
}

int psi_trigger_open(int dirfd, const char *name, const char *kind, uint64_t stall_usec,
                     uint64_t window_usec)
{
	if (!name || !kind || (strcmp(kind, "some") != 0 && strcmp(kind, "full") != 0) ||
	    stall_usec == 0 || stall_usec > window_usec)
		return -EINVAL;
	int fd = openat(dirfd, name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0 || (sf.f_type != PROC_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC)) {
		close(fd);
		return -EMEDIUMTYPE;
	}
	char t[64];
	int n = snprintf(t, sizeof(t), "%s %llu %llu", kind, (unsigned long long)stall_usec,
	                 (unsigned long long)window_usec);
	/* The kernel wants the terminating NUL included. */
	if (write(fd, t, (size_t)n + 1) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}
