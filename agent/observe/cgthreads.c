/* SPDX-License-Identifier: MIT */
#include "cgthreads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgfs.h"

static int count_lines(int dirfd, uint64_t *n)
{
	char buf[4096];
	int fd = cgfs_open_file(dirfd, "cgroup.threads");
	if (fd < 0)
		return fd;
	int r = 0;
	for (;;) {
		ssize_t k = read(fd, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = -errno;
			break;
		}
		if (k == 0)
			break;
		for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + k - p))); p++)
			(*n)++;
	}
	close(fd);
	return r;
}

/* dirfd is consumed (closed) here. */
static int walk(int dirfd, unsigned depth, unsigned *visited, uint64_t *n)
{
	int r;

	if (++*visited > CGTHREADS_MAX_CGROUPS || depth > CGTHREADS_MAX_DEPTH) {
		close(dirfd);
		return -E2BIG;
	}
	r = count_lines(dirfd, n);
	if (r < 0) {
		close(dirfd);
		return r;
	}
	DIR *d = fdopendir(dirfd);
	if (!d) {
		r = -errno;
		close(dirfd);
		return r;
	}
	struct dirent *de;
	while (r == 0 && (errno = 0, de = readdir(d))) {
		if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			/* a child cgroup removed while we walk has no tasks left to count */
			if (errno != ENOENT)
				r = -errno;
			continue;
		}
		r = walk(sub, depth + 1, visited, n);
		if (r == -ENOENT)
			r = 0; /* removed between open and read: likewise */
	}
	if (r == 0 && errno != 0)
		r = -errno;
	closedir(d);
	return r;
}

int cg_count_threads(int dirfd, uint64_t *ret)
{
	uint64_t n = 0;
	unsigned visited = 0;
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	/* the pod's own cgroup.threads missing is an error (-ENOENT); a vanished child is not */
	int r = walk(fd, 0, &visited, &n);
	if (r < 0)
		return r;
	*ret = n;
	return 0;
}
