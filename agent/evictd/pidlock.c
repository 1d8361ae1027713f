/* SPDX-License-Identifier: MIT */
#include "pidlock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOCK_NAME "evictd.lock"

static pid_t read_holder(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *end;
	long pid = strtol(buf, &end, 10);
	return pid > 0 && pid <= INT_MAX && (*end == '\n' || *end == '\0') ? (pid_t)pid : 0;
}

int pidlock_acquire(const char *dir, pid_t *ret_holder)
{
	if (!dir || dir[0] != '/')
		return -EINVAL;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* O_NOFOLLOW: a symlink planted in the run directory must not make us truncate its target. */
	int fd = openat(dfd, LOCK_NAME, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
	int r = fd < 0 ? -errno : 0;
	close(dfd);
	if (r < 0)
		return r;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		if (r == -EWOULDBLOCK && ret_holder)
			*ret_holder = read_holder(fd);
		close(fd);
		return r;
	}
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		r = -errno;
		close(fd);
		return r ? r : -EIO;
	}
	return fd;
}
