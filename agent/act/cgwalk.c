/* SPDX-License-Identifier: MIT */
#include "cgwalk.h"
#include "grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Directory entries read per visited cgroup budget: control files are cheap, but not free. */
#define ENTRIES_PER_DIR 64

struct cg_walk {
	int root_fd;
	int sig;
	pid_t self;
	unsigned flags;

	DIR **stack; /* one open directory per level being listed */
	size_t depth, cap;

	pid_t *seen; /* open-addressing set of signalled pids (0 = free slot) */
	size_t seen_n, seen_cap;

	unsigned pass;     /* passes started */
	bool in_pass, first_pass_done, done;
	unsigned pass_new; /* processes first signalled in this pass */
	unsigned signalled, skipped;
	unsigned long visited;
	int error;
};

static size_t hash_pid(pid_t p, size_t cap)
{
	return ((uint32_t)p * 2654435761u) & (cap - 1);
}

static bool seen_has(const cg_walk *w, pid_t p)
{
	if (!w->seen_cap)
		return false;
	for (size_t i = hash_pid(p, w->seen_cap);; i = (i + 1) & (w->seen_cap - 1)) {
		if (w->seen[i] == p)
			return true;
		if (w->seen[i] == 0)
			return false;
	}
}

static int seen_add(cg_walk *w, pid_t p)
{
	if ((w->seen_n + 1) * 2 > w->seen_cap) {
		size_t cap = w->seen_cap ? w->seen_cap * 2 : 64;
		pid_t *n = calloc(cap, sizeof(*n));
		if (!n)
			return -ENOMEM;
		for (size_t i = 0; i < w->seen_cap; i++)
			if (w->seen[i]) {
				size_t j = hash_pid(w->seen[i], cap);
				while (n[j])
					j = (j + 1) & (cap - 1);
				n[j] = w->seen[i];
			}
		free(w->seen);
		w->seen = n;
		w->seen_cap = cap;
	}
	size_t i = hash_pid(p, w->seen_cap);
	while (w->seen[i])
		i = (i + 1) & (w->seen_cap - 1);
	w->seen[i] = p;
	w->seen_n++;
	return 0;
}

static void note_error(cg_walk *w, int r)
{
	w->skipped++;
	if (!w->error)
		w->error = r;
}

/*
 * A pid read from cgroup.procs may exit and be reused by a process outside the pod before the
 * kill() below: the race is inherent to pid-based signalling (a pidfd would only pin the process
 * found at pidfd_open time, which is as late as kill()). It is why evictd ends every eviction
 * with cgroup.kill, which the kernel applies to the cgroup's members only, and uses per-pid
 * signals only for the SIGTERM of the grace period (and for SIGKILL on kernels < 5.14).
 * In a threaded sub-cgroup the ids are thread ids: kill() on one signals its whole process.
 */
static int signal_one(cg_walk *w, const char *s)
{
	char *end;
	errno = 0;
	long pid = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || pid <= 0 || pid > INT32_MAX)
		return -EBADMSG;
	if (pid == w->self || seen_has(w, (pid_t)pid))
		return 0;
	if (kill((pid_t)pid, w->sig) < 0)
		return errno == ESRCH ? 0 : -errno; /* exited meanwhile: not an error */
	int r = seen_add(w, (pid_t)pid);
	if (r < 0)
		return r;
	w->signalled++;
	w->pass_new++;
	return 0;
}

/*
 * cgroup.procs can be long (thousands of pids), so it is streamed through a fixed buffer rather
 * than read whole: no unbounded allocation in the daemon.
 */
static int signal_list(cg_walk *w, int dirfd, const char *file)
{
	/* O_NOFOLLOW|O_NONBLOCK: a symlink or FIFO in a fixture/bind-mounted tree is refused, not waited on */
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	char buf[4096];
	size_t have = 0;
	int r = 0;
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
			int k = signal_one(w, buf + off);
			if (k == -ENOMEM || k == -EBADMSG) {
				r = k;
				break;
			}
			if (k < 0 && !w->error)
				w->error = k; /* EPERM on one process: the others still get theirs */
			off = nl ? (size_t)(nl - buf) + 1 : have;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
		if (have == sizeof(buf) - 1) /* a line longer than any pid: not a pid list */
			r = -EBADMSG;
	}
	close(fd);
	return r;
}

/* A frozen cgroup's processes cannot act on SIGTERM, and on old kernels not on SIGKILL either. */
static void thaw(int dirfd)
{
	int fd = openat(dirfd, "cgroup.freeze", O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return; /* the root of a hierarchy, a fixture, a kernel < 5.2 */
	char c;
	if (pread(fd, &c, 1, 0) == 1 && c == '1')
		(void)!pwrite(fd, "0", 1, 0);
	close(fd);
}

static bool vanished(int r)
{
	return r == -ENOENT || r == -ENODEV || r == -ENOTDIR;
}

/* Signals the processes of one cgroup; fd is consumed (kept as the new stack top on success). */
static int visit(cg_walk *w, int fd)
{
	w->visited++;
	if (w->flags & CG_WALK_THAW)
		thaw(fd);
	int r = signal_list(w, fd, "cgroup.procs");
	if (r == -EOPNOTSUPP) /* a threaded cgroup: its members are listed as threads */
		r = signal_list(w, fd, "cgroup.threads");
	if (r == -ENOMEM) {
		close(fd);
		return r;
	}
	if (r < 0 && !vanished(r))
		note_error(w, r);

	if (GROW_ARRAY(&w->stack, &w->cap, w->depth + 1) < 0) {
		close(fd);
		return -ENOMEM;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		if (r == -ENOMEM)
			return r;
		note_error(w, r);
		return 0;
	}
	w->stack[w->depth++] = d;
	return 0;
}

static int start_pass(cg_walk *w)
{
	int fd = openat(w->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (!vanished(-errno))
			note_error(w, -errno);
		w->done = true;
		return 0;
	}
	w->pass++;
	w->pass_new = 0;
	w->in_pass = true;
	return visit(w, fd);
}

int cg_walk_step(cg_walk *w, unsigned max_dirs)
{
	if (!w)
		return -EINVAL;
	unsigned long entries = (unsigned long)max_dirs * ENTRIES_PER_DIR;
	while (!w->done && max_dirs > 0 && entries > 0) {
		if (w->depth == 0) {
			if (w->in_pass) {
				w->in_pass = false;
				w->first_pass_done = true;
				if ((w->flags & CG_WALK_ONE_PASS) || w->pass_new == 0 || w->pass >= CG_WALK_MAX_PASSES) {
					w->done = true;
					break;
				}
			}
			int r = start_pass(w);
			if (r < 0)
				return r;
			max_dirs--;
			continue;
		}
		DIR *top = w->stack[w->depth - 1];
		errno = 0;
		struct dirent *de = readdir(top);
		if (!de) {
			if (errno && !vanished(-errno))
				note_error(w, -errno);
			closedir(top);
			w->depth--;
			continue;
		}
		entries--;
		/* Every other name is a candidate, "." prefixed ones included: cgroupfs has no hidden files. */
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		int fd = openat(dirfd(top), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0) {
			if (!vanished(-errno) && errno != ELOOP)
				note_error(w, -errno); /* EMFILE at extreme depth: cgroup.kill reaches it anyway */
			continue;
		}
		int r = visit(w, fd);
		if (r < 0)
			return r;
		max_dirs--;
	}
	return w->done ? 0 : 1;
}

int cg_walk_new(int root_dirfd, int sig, pid_t self, unsigned flags, cg_walk **ret)
{
	if (root_dirfd < 0 || !ret)
		return -EBADF;
	cg_walk *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->root_fd = fcntl(root_dirfd, F_DUPFD_CLOEXEC, 3);
	if (w->root_fd < 0) {
		int r = -errno;
		free(w);
		return r;
	}
	w->sig = sig;
	w->self = self;
	w->flags = flags;
	*ret = w;
	return 0;
}

cg_walk *cg_walk_free(cg_walk *w)
{
	if (!w)
		return NULL;
	while (w->depth)
		closedir(w->stack[--w->depth]);
	free(w->stack);
	free(w->seen);
	close(w->root_fd);
	free(w);
	return NULL;
}

unsigned cg_walk_signalled(const cg_walk *w)
{
	return w ? w->signalled : 0;
}

bool cg_walk_first_pass_done(const cg_walk *w)
{
	return w && (w->first_pass_done || w->done);
}

unsigned long cg_walk_visited(const cg_walk *w)
{
	return w ? w->visited : 0;
}

unsigned cg_walk_skipped(const cg_walk *w)
{
	return w ? w->skipped : 0;
}

int cg_walk_error(const cg_walk *w)
{
	return w ? w->error : 0;
}
