/* SPDX-License-Identifier: MIT */
#include "cgkill.h"

#include <dirent.h>
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

/*
 * A pid read from cgroup.procs may exit and be reused by a process outside the pod before the
 * kill() below: the race is inherent to pid-based signalling (a pidfd would only pin the process
 * found at pidfd_open time, which is as late as kill()). It is why evictd ends every eviction
 * with cgroup.kill, which the kernel applies to the cgroup's members only, and uses per-pid
 * signals only for the SIGTERM of the grace period (and for SIGKILL on kernels < 5.14).
 */
static int signal_pid(const char *s, int sig, pid_t self)
{
	char *end;
	errno = 0;
	long pid = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || pid <= 0)
		return -EBADMSG;
	if (pid == self)
		return 0;
	if (kill((pid_t)pid, sig) == 0)
		return 1;
	return errno == ESRCH ? 0 : -errno; /* exited meanwhile: not an error */
}

/*
 * cgroup.procs can be long (thousands of pids), so it is streamed through a fixed buffer rather
 * than read whole: no unbounded allocation in the daemon.
 */
static int signal_procs(int dirfd, int sig, pid_t self)
{
	int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	char buf[4096];
	size_t have = 0;
	int count = 0, r = 0;
	bool eof = false;
	while (!eof && r >= 0) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		eof = n == 0;
		have += (size_t)n;
		buf[have] = '\0';
		size_t off = 0;
		for (;;) {
			char *nl = memchr(buf + off, '\n', have - off);
			if (!nl && !(eof && off < have))
				break;
			if (nl)
				*nl = '\0';
			int k = signal_pid(buf + off, sig, self);
			if (k < 0) {
				r = k;
				break;
			}
			count += k;
			off = nl ? (size_t)(nl - buf) + 1 : have;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
		if (have == sizeof(buf) - 1) /* a line longer than any pid: not cgroup.procs */
			r = -EBADMSG;
	}
	close(fd);
	return r < 0 ? r : count;
}

static int signal_tree(int dirfd, int sig, pid_t self, unsigned depth)
{
	int r = signal_procs(dirfd, sig, self);
	if (r < 0)
		return r;
	int count = r;
	if (depth >= CG_MAX_DEPTH)
		return count;

	int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	DIR *d = fdopendir(dfd);
	if (!d) {
		r = -errno;
		close(dfd);
		return r;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		int child = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (child < 0)
			continue; /* a file, or a child cgroup removed meanwhile */
		r = signal_tree(child, sig, self, depth + 1);
		close(child);
		/* A child that vanished between readdir and read is empty by definition. */
		if (r >= 0)
			count += r;
		else if (r != -ENOENT && r != -ENODEV) {
			closedir(d);
			return r;
		}
	}
	closedir(d);
	return count;
}

int cg_signal_tree(int cg_dirfd, int sig, pid_t self)
{
	if (cg_dirfd < 0)
		return -EBADF;
	return signal_tree(cg_dirfd, sig, self, 0);
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
