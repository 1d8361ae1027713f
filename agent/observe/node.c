/* SPDX-License-Identifier: MIT */
#include "node.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cgfs.h"

static void unknown(signal_obs *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void unknown(signal_obs *o, const char *fmt, ...)
{
	va_list ap;

	*o = (signal_obs){ .known = false };
	va_start(ap, fmt);
	vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
	va_end(ap);
}

/* unknown() without the formatting when the reason is already the one recorded: the idle tick. */
static void unknown_again(signal_obs *o, const char *reason)
{
	if (!o->known && strcmp(o->reason, reason) == 0)
		return;
	unknown(o, "%s", reason);
}

static void known(signal_obs *o, int64_t available, int64_t capacity)
{
	*o = (signal_obs){ .known = true, .available = available, .capacity = capacity };
}

static const char *no_memory_reason(const node_sources *src)
{
	if (!src->cg || src->cg_root_fd < 0)
		return "no cgroup v2 hierarchy";
	if (src->cg->mode == CG_MODE_HYBRID)
		return "the memory controller is not on cgroup v2 here (hybrid layout: memory is on cgroup v1)";
	return "the memory controller is not enabled on the cgroup v2 root";
}

void node_cache_reset(node_cache *c)
{
	int *fds[] = { &c->nodefs_fd, &c->imagefs_fd, &c->memory_stat_fd };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* The root memory.stat; with a cache, through a descriptor kept open (dropped after any error). */
static ssize_t read_root_memory_stat(const node_sources *src, char *buf, size_t size)
{
	node_cache *c = src->cache;
	ssize_t n;

	if (src->cg_root_fd < 0)
		return -ENOENT;
	if (!c)
		return cgfs_read(src->cg_root_fd, "memory.stat", buf, size);
	if (c->memory_stat_fd < 0) {
		int fd = cgfs_open_file(src->cg_root_fd, "memory.stat");
		if (fd < 0)
			return fd;
		c->memory_stat_fd = fd;
	}
	n = pread(c->memory_stat_fd, buf, size - 1, 0);
	if (n >= 0 && (size_t)n < size - 1) {
		buf[n] = '\0';
		return n;
	}
	/* An error or a full buffer: the uncached read decides (and reports -EFBIG). */
	close(c->memory_stat_fd);
	c->memory_stat_fd = -1;
	return cgfs_read(src->cg_root_fd, "memory.stat", buf, size);
}

/*
 * On an idle tick (a cache) the memory controller known to be absent from a real v2 hierarchy is
 * not asked again: that is a failed openat per second. Full reads still ask (and a fixture
 * directory, whose files say nothing about controllers, always is).
 */
static bool memory_known_absent(const node_sources *src)
{
	return src->cache && src->cg && !src->cg->memory &&
	       (src->cg->mode == CG_MODE_HYBRID || src->cg->mode == CG_MODE_UNIFIED);
}

/*
 * reuse_total: the idle tick keeps the MemTotal of the previous read (it changes only with memory
 * hotplug; full reads, every status refresh, take it again) — /proc/meminfo is generated in full on
 * every read and is the most expensive file of the tick.
 */
static void read_memory(const node_sources *src, node_signals *ret, bool reuse_total)
{
	char stat[8192], meminfo[8192];
	uint64_t total_kb, anon, file, inactive;
	ssize_t n;
	signal_obs *o = &ret->s[SIGNAL_MEMORY_AVAILABLE];

	/* memory.stat first: on a host without the memory controller on v2 it is the cheap "no". */
	n = memory_known_absent(src) ? -ENOENT : read_root_memory_stat(src, stat, sizeof(stat));
	if (n == -ENOENT) {
		unknown_again(o, no_memory_reason(src));
		return;
	}
	if (n < 0 || cgfs_keyed_u64(stat, "anon", &anon) < 0 || cgfs_keyed_u64(stat, "file", &file) < 0 ||
	    cgfs_keyed_u64(stat, "inactive_file", &inactive) < 0) {
		unknown(o, "cannot read anon/file/inactive_file from the root memory.stat: %s",
		        n < 0 ? strerror((int)-n) : "missing keys");
		return;
	}
	if (reuse_total && o->known && o->capacity > 0)
		total_kb = (uint64_t)o->capacity / 1024;
	else {
		n = src->proc_fd >= 0 ? cgfs_read(src->proc_fd, "meminfo", meminfo, sizeof(meminfo)) : -EBADF;
		if (n < 0 || cgfs_keyed_u64(meminfo, "MemTotal", &total_kb) < 0) {
			unknown(o, "cannot read MemTotal from meminfo: %s",
			        n < 0 ? strerror((int)-n) : "no MemTotal line");
			return;
		}
	}
	/*
	 * The root has no memory.current; runc/cAdvisor emulate usage as anon + file, and the
	 * kubelet's working set subtracts inactive_file (clamped at 0).
	 */
	int64_t usage = (int64_t)(anon + file);
	int64_t ws = usage > (int64_t)inactive ? usage - (int64_t)inactive : 0;
	int64_t total = (int64_t)total_kb * 1024;
	known(o, total - ws, total);
}

const char *node_find_kubepods(int cg_root_fd)
{
	static const char *const names[] = { "kubepods.slice", "kubepods" };
	struct stat st;

	for (size_t i = 0; i < 2 && cg_root_fd >= 0; i++)
		if (fstatat(cg_root_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
			return names[i];
	return NULL;
}

/*
 * Node allocatable as the kubelet publishes it (GetNodeAllocatableReservation): MemTotal minus
 * kubeReserved, systemReserved and the hard memory.available threshold. The kubelet's own
 * threshold when its configuration was read (its Allocatable is what the scheduler fills), else
 * evictd's. Returns -1 when nothing is reserved and nothing enforced: no allocatable is known.
 */
static int64_t computed_allocatable(const node_sources *src, char *why, size_t size)
{
	const evictd_config *c = src->cfg;
	char meminfo[8192];
	uint64_t total_kb;
	ssize_t n;

	if (!c || (c->enforce_node_allocatable_pods && c->kube_reserved_memory == 0 && c->system_reserved_memory == 0)) {
		snprintf(why, size, "memory.max is \"max\" (no node allocatable enforced, no kube/system-reserved-memory)");
		return -1;
	}
	n = src->proc_fd >= 0 ? cgfs_read(src->proc_fd, "meminfo", meminfo, sizeof(meminfo)) : -EBADF;
	if (n < 0 || cgfs_keyed_u64(meminfo, "MemTotal", &total_kb) < 0) {
		snprintf(why, size, "cannot read MemTotal from meminfo: %s", n < 0 ? strerror((int)-n) : "no MemTotal line");
		return -1;
	}
	int64_t total = (int64_t)total_kb * 1024;
	const threshold_value *t = c->kubelet.path[0] ? &c->kubelet.hard[SIGNAL_MEMORY_AVAILABLE]
	                                              : &c->hard[SIGNAL_MEMORY_AVAILABLE];
	int64_t hard = t->set ? config_threshold_resolve(t, total) : 0;
	int64_t a = total - c->kube_reserved_memory - c->system_reserved_memory - hard;
	if (a <= 0) {
		snprintf(why, size, "node allocatable is not positive (MemTotal minus reserved memory and the hard threshold)");
		return -1;
	}
	return a;
}

static void read_allocatable(const node_sources *src, node_signals *ret)
{
	signal_obs *o = &ret->s[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE];
	char stat[8192], why[160];
	uint64_t max, cur, inactive;
	int fd, r;

	if (!src->kubepods || src->cg_root_fd < 0) {
		unknown(o, "no kubepods cgroup (kubepods.slice or kubepods) under the cgroup root");
		return;
	}
	fd = cgfs_open_dir_beneath(src->cg_root_fd, src->kubepods); /* no symlink out of the root */
	if (fd < 0) {
		unknown(o, "cannot open %s: %s", src->kubepods, strerror(-fd));
		return;
	}
	r = cgfs_read_u64(fd, "memory.max", &max);
	/*
	 * Which allocatable wins: the cgroup's memory.max when node allocatable is enforced on pods
	 * (the kernel's limit, what the kubelet's own observation uses); the computed one when it is
	 * not enforced, or when the cgroup is unlimited but reservations are known.
	 */
	bool enforced = !src->cfg || src->cfg->enforce_node_allocatable_pods;
	int64_t alloc = -1;
	if (r == 0 && enforced)
		alloc = (int64_t)max;
	else if (r == 0 || r == -ERANGE) {
		alloc = computed_allocatable(src, why, sizeof(why));
		if (alloc < 0) {
			/* The kubelet has no observation either when the pods cgroup is unlimited. */
			unknown(o, "%s/%s", src->kubepods, why);
			close(fd);
			return;
		}
	}
	if (r == -ENOENT) {
		unknown(o, "%s", no_memory_reason(src));
	} else if (r < 0 && r != -ERANGE) {
		unknown(o, "cannot read %s/memory.max: %s", src->kubepods, strerror(-r));
	} else if ((r = cgfs_read_u64(fd, "memory.current", &cur)) < 0 ||
	           (r = (int)cgfs_read(fd, "memory.stat", stat, sizeof(stat))) < 0 ||
	           (r = cgfs_keyed_u64(stat, "inactive_file", &inactive)) < 0) {
		unknown(o, "cannot read %s memory.current/memory.stat: %s", src->kubepods, strerror(-r));
	} else {
		int64_t ws = cur > inactive ? (int64_t)(cur - inactive) : 0;
		known(o, alloc - ws, alloc);
	}
	close(fd);
}

/*
 * statvfs(path), or with a cache fstatvfs() on a descriptor kept open: no path walk per tick. A
 * failure on the kept descriptor drops it and asks the path again.
 */
static int fs_stat(const char *path, int *cached, struct statvfs *sv)
{
	if (cached && *cached < 0)
		*cached = open(path, O_PATH | O_CLOEXEC);
	if (cached && *cached >= 0) {
		if (fstatvfs(*cached, sv) == 0)
			return 0;
		close(*cached);
		*cached = -1;
	}
	return statvfs(path, sv) < 0 ? -errno : 0;
}

static void read_fs(const char *path, const char *what, int *cached, signal_obs *avail, signal_obs *inodes)
{
	struct statvfs sv;
	int r;

	if (!path) {
		unknown(avail, "no %s path configured", what);
		*inodes = *avail;
		return;
	}
	if ((r = fs_stat(path, cached, &sv)) < 0) {
		unknown(avail, "statvfs(%s): %s", path, strerror(-r));
		*inodes = *avail;
		return;
	}
	known(avail, (int64_t)(sv.f_frsize * sv.f_bavail), (int64_t)(sv.f_frsize * sv.f_blocks));
	if (sv.f_files == 0)
		unknown(inodes, "the filesystem of %s does not report inodes", path);
	else
		known(inodes, (int64_t)sv.f_ffree, (int64_t)sv.f_files);
}

static void read_pids(const node_sources *src, node_signals *ret)
{
	signal_obs *o = &ret->s[SIGNAL_PID_AVAILABLE];
	char buf[256];
	uint64_t pid_max, threads_max;
	int r;

	if (src->proc_fd < 0) {
		unknown(o, "no proc root");
		return;
	}
	r = cgfs_read_u64(src->proc_fd, "sys/kernel/pid_max", &pid_max);
	if (r < 0) {
		unknown(o, "cannot read sys/kernel/pid_max: %s", strerror(-r));
		return;
	}
	/* k/k#107111: the real limit is the smaller of pid_max and threads-max. */
	if (cgfs_read_u64(src->proc_fd, "sys/kernel/threads-max", &threads_max) == 0 && threads_max < pid_max)
		pid_max = threads_max;
	ssize_t n = cgfs_read(src->proc_fd, "loadavg", buf, sizeof(buf));
	unsigned long long running, total;
	if (n < 0 || sscanf(buf, "%*s %*s %*s %llu/%llu", &running, &total) != 2) {
		unknown(o, "cannot read the task count from loadavg: %s", n < 0 ? strerror((int)-n) : "bad format");
		return;
	}
	known(o, (int64_t)pid_max - (int64_t)total, (int64_t)pid_max);
}

static void read_psi(const node_sources *src, node_signals *ret)
{
	char buf[512];
	double some, full;
	ssize_t n = src->proc_fd >= 0 ? cgfs_read(src->proc_fd, "pressure/memory", buf, sizeof(buf)) : -EBADF;

	if (n < 0) {
		unknown(&ret->s[SIGNAL_MEMORY_SOME], "cannot read pressure/memory: %s%s", strerror((int)-n),
		        n == -ENOENT || n == -EOPNOTSUPP ? " (kernel without PSI, or booted with psi=0)" : "");
		ret->s[SIGNAL_MEMORY_FULL] = ret->s[SIGNAL_MEMORY_SOME];
		return;
	}
	if (cgfs_psi_parse(buf, &some, &full) < 0) {
		unknown(&ret->s[SIGNAL_MEMORY_SOME], "pressure/memory: unexpected format");
		ret->s[SIGNAL_MEMORY_FULL] = ret->s[SIGNAL_MEMORY_SOME];
		return;
	}
	known(&ret->s[SIGNAL_MEMORY_SOME], llround(some * 100), 10000);
	known(&ret->s[SIGNAL_MEMORY_FULL], llround(full * 100), 10000);
}

void node_signals_read(const node_sources *src, node_signals *ret)
{
	node_signals_read_some(src, NULL, ret);
}

/* Added by the issue-6 daemon (idle CPU): only the groups of signals that have a threshold. */
void node_signals_read_some(const node_sources *src, const bool want[_SIGNAL_MAX], node_signals *ret)
{
#define WANT(s) (!want || want[s])
	if (WANT(SIGNAL_MEMORY_AVAILABLE))
		read_memory(src, ret, want != NULL);
	if (WANT(SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE))
		read_allocatable(src, ret);
	if (WANT(SIGNAL_PID_AVAILABLE))
		read_pids(src, ret);
	if (WANT(SIGNAL_NODEFS_AVAILABLE) || WANT(SIGNAL_NODEFS_INODES_FREE))
		read_fs(src->nodefs_path, "nodefs", src->cache ? &src->cache->nodefs_fd : NULL, &ret->s[SIGNAL_NODEFS_AVAILABLE], &ret->s[SIGNAL_NODEFS_INODES_FREE]);
	if (WANT(SIGNAL_IMAGEFS_AVAILABLE) || WANT(SIGNAL_IMAGEFS_INODES_FREE)) {
		/* One filesystem for both (no dedicated imagefs) is common: one statvfs per tick. */
		if (src->imagefs_path && src->nodefs_path && strcmp(src->imagefs_path, src->nodefs_path) == 0 &&
		    (WANT(SIGNAL_NODEFS_AVAILABLE) || WANT(SIGNAL_NODEFS_INODES_FREE))) {
			ret->s[SIGNAL_IMAGEFS_AVAILABLE] = ret->s[SIGNAL_NODEFS_AVAILABLE];
			ret->s[SIGNAL_IMAGEFS_INODES_FREE] = ret->s[SIGNAL_NODEFS_INODES_FREE];
		} else
			read_fs(src->imagefs_path, "imagefs", src->cache ? &src->cache->imagefs_fd : NULL, &ret->s[SIGNAL_IMAGEFS_AVAILABLE],
			        &ret->s[SIGNAL_IMAGEFS_INODES_FREE]);
	}
	if (WANT(SIGNAL_MEMORY_SOME) || WANT(SIGNAL_MEMORY_FULL))
		read_psi(src, ret);
#undef WANT
}

int node_online_cpus(int proc_fd, unsigned *ret)
{
	/* The cpu lines come first; 64 KiB holds ~800 of them before the long "intr" line. */
	const size_t size = 64 * 1024;
	unsigned n = 0;
	size_t len = 0;
	ssize_t k;

	if (proc_fd < 0)
		return -EBADF;
	int fd = cgfs_open_file(proc_fd, "stat");
	if (fd < 0)
		return fd;
	char *buf = malloc(size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < size && (k = read(fd, buf + len, size - len)) > 0)
		len += (size_t)k;
	close(fd);
	buf[len] = '\0';
	for (const char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (strncmp(l, "cpu", 3) == 0 && l[3] >= '0' && l[3] <= '9')
			n++;
	free(buf);
	if (n == 0)
		return -ENOENT;
	*ret = n;
	return 0;
}
