/* SPDX-License-Identifier: MIT */
#include "status-file.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
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

int status_write_atomic(const char *path, const char *text, size_t len)
{
	char tmp[4096];
	if (!path || !*path || snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -EINVAL;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, text, len);
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

int status_print(const char *path, int out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[8192];
	int r = 0;
	size_t total = 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (total > STATUS_MAX_BYTES) {
			r = -EFBIG;
			break;
		}
		if ((r = write_all(out, buf, (size_t)n)) < 0)
			break;
	}
	close(fd);
	return r;
}

void status_history_add(status_history *h, const status_decision *d)
{
	h->items[h->next] = *d;
	h->next = (h->next + 1) % STATUS_HISTORY;
	if (h->count < STATUS_HISTORY)
		h->count++;
}

const status_decision *status_history_get(const status_history *h, size_t i)
{
	if (i >= h->count)
		return NULL;
	return &h->items[(h->next + STATUS_HISTORY - 1 - i) % STATUS_HISTORY];
}
