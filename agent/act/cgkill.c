/* SPDX-License-Identifier: MIT */
#include "cgkill.h"

#include "cgwalk.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads a small cgroupfs control file whole; cgroupfs files are not seekable streams, so pread(0). */
static int read_small(int dirfd, const char *name, char *buf, size_t size)
{
	/* O_NOFOLLOW|O_NONBLOCK: a symlink or FIFO in a fixture/bind-mounted tree is refused, not waited on */
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ssize_t n = pread(fd, buf, size - 1, 0);
	int r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	buf[n] = '\0';
	return (int)n;
}

int cg_signal_tree(int cg_dirfd, int sig, pid_t self)
{
	cg_walk *w;
	int r = cg_walk_new(cg_dirfd, sig, self, CG_WALK_ONE_PASS, &w);
	if (r < 0)
		return r;
	while ((r = cg_walk_step(w, 1024)) > 0)
		;
	if (r == 0)
		r = cg_walk_error(w) ? cg_walk_error(w) : (int)cg_walk_signalled(w);
	cg_walk_free(w);
	return r;
}

int cg_kill(int cg_dirfd)
{
	/* Never through a symlink: the write must reach this cgroup's own cgroup.kill. */
	int fd = openat(cg_dirfd, "cgroup.kill", O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	int r = write(fd, "1", 1) == 1 ? 0 : -errno;
	close(fd);
	return r;
}

int cg_populated(int cg_dirfd)
{
	char buf[512];
	int r = read_small(cg_dirfd, "cgroup.events", buf, sizeof(buf));
	if (r < 0)
		return r;
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, "populated ", 10) == 0)
			return line[10] == '1' ? 1 : line[10] == '0' ? 0 : -EBADMSG;
	}
	return -EBADMSG;
}

int cg_memory_current(int cg_dirfd, unsigned long long *ret_bytes)
{
	char buf[64];
	int r = read_small(cg_dirfd, "memory.current", buf, sizeof(buf));
	if (r < 0)
		return r;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end != '\n' && *end != '\0'))
		return -EBADMSG;
	*ret_bytes = v;
	return 0;
}
