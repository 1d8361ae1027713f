/* SPDX-License-Identifier: MIT */
#include "atomic-file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int atomic_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int atomic_write_file_in(const char *dir, const char *path, const char *text, size_t len)
{
	int r = atomic_write_file(path, text, len);
	if (r == -ENOENT && mkdir(dir, 0755) == 0)
		r = atomic_write_file(path, text, len);
	return r;
}

int atomic_write_file(const char *path, const char *text, size_t len)
{
	char tmp[4096];
	if (!path || !*path || snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -EINVAL;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = atomic_write_all(fd, text, len);
	/* Readable by controllers running as other users; the content is not secret. */
	if (r == 0 && fchmod(fd, 0644) < 0)
		r = -errno;
	/*
	 * rename() alone is what makes the update atomic for readers. fsync only adds durability,
	 * which means nothing on tmpfs (/run, where the unit keeps it) and costs the idle budget.
	 */
	struct statfs sfs;
	bool volatile_fs = fstatfs(fd, &sfs) == 0 && (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC);
	if (r == 0 && !volatile_fs && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	if (volatile_fs)
		return 0;
	/* Make the rename itself durable where the directory is on a real disk (tests, other paths). */
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	return 0;
}
