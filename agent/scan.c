/* SPDX-License-Identifier: MIT */
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cgfs.h"
#include "log.h"
#include "podmeta.h"
#include "pods.h"

/*
 * Per-pod files kept open between scans: a pread() on a kept fd costs one syscall, an
 * open+read+close three plus a path lookup, which made up most of a scan (measured with
 * tests/bench/bench-scan.c). A file of a removed cgroup reads ENODEV and is reopened or dropped.
 */
enum { PF_CURRENT, PF_STAT, PF_CPU, PF_PIDS, PF_PRESSURE, _PF_MAX };
static const char *const pod_files[_PF_MAX] = { "memory.current", "memory.stat", "cpu.stat", "pids.current",
	                                         "memory.pressure" };

typedef struct pod_fds {
	int fd[_PF_MAX]; /* -1: not open (absent, or over the fd budget) */
} pod_fds;

struct scanner {
	const evictd_config *cfg;
	cg_info cg;
	int root_fd, proc_fd, meta_fd;
	const char *kubepods;
	char self_cgroup[PATH_MAX];
	snapshot snap, prev;
	pod_fds *fds, *prev_fds; /* parallel to snap.pods / prev.pods */
	size_t fd_budget, fds_open;
};

static void pod_free_strings(pod_info *p)
{
	free(p->cgroup);
	free(p->namespace_);
	free(p->name);
	free(p->priority_class);
	p->cgroup = p->namespace_ = p->name = p->priority_class = NULL;
}

void pod_info_done(pod_info *p)
{
	if (p)
		pod_free_strings(p);
}

void snapshot_done(snapshot *s)
{
	for (size_t i = 0; i < s->n_pods; i++)
		pod_info_done(&s->pods[i]);
	free(s->pods);
	s->pods = NULL;
	s->n_pods = 0;
}

const char *pod_display_name(const pod_info *p, char *buf, size_t size)
{
	const char *name = p->name ? p->name : p->uid;
	if (p->namespace_ && p->namespace_[0])
		snprintf(buf, size, "%s/%s", p->namespace_, name);
	else
		snprintf(buf, size, "%s", name);
	return buf;
}

const char *pod_qos_name(pod_qos q)
{
	static const char *const n[] = { "", "Guaranteed", "Burstable", "BestEffort" };
	return q <= QOS_BESTEFFORT ? n[q] : "";
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void read_self_cgroup(scanner *s)
{
	char buf[4096];
	const char *l;

	s->self_cgroup[0] = '\0';
	if (s->proc_fd < 0 || cgfs_read(s->proc_fd, "self/cgroup", buf, sizeof(buf)) < 0)
		return;
	/* cgroup v2 line: "0::/path" */
	for (l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, "0::/", 4) == 0) {
			size_t n = strcspn(l + 4, "\n");
			if (n < sizeof(s->self_cgroup)) {
				memcpy(s->self_cgroup, l + 4, n);
				s->self_cgroup[n] = '\0';
			}
			return;
		}
}

static int open_fds(scanner *s)
{
	close_fd(&s->root_fd);
	close_fd(&s->proc_fd);
	close_fd(&s->meta_fd);
	if (s->cg.root[0]) {
		s->root_fd = open(s->cg.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->root_fd < 0)
			return -errno;
	}
	s->proc_fd = open(s->cfg->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->proc_fd < 0)
		return -errno;
	/* The metadata directory may appear later (created by whatever places pods): retried per scan. */
	s->meta_fd = open(s->cfg->pod_metadata_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	s->kubepods = node_find_kubepods(s->root_fd);
	read_self_cgroup(s);
	return 0;
}

static void fds_close(scanner *s, pod_fds *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		for (int k = 0; k < _PF_MAX; k++)
			if (f[i].fd[k] >= 0) {
				close(f[i].fd[k]);
				f[i].fd[k] = -1;
				s->fds_open--;
			}
}

/* Kept fds may use the soft limit raised to the hard one (no select() here), minus a reserve. */
static size_t fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit want = { .rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max };
		if (setrlimit(RLIMIT_NOFILE, &want) == 0)
			rl.rlim_cur = rl.rlim_max;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1 << 20)
		rl.rlim_cur = 1 << 20;
	return rl.rlim_cur > 512 ? (size_t)rl.rlim_cur - 512 : 0;
}

int scanner_new(const evictd_config *cfg, const cg_info *cg, scanner **ret)
{
	scanner *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->fd_budget = fd_budget();
	s->cfg = cfg;
	s->cg = *cg;
	s->root_fd = s->proc_fd = s->meta_fd = -1;
	r = open_fds(s);
	if (r < 0) {
		scanner_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

scanner *scanner_free(scanner *s)
{
	if (!s)
		return NULL;
	close_fd(&s->root_fd);
	close_fd(&s->proc_fd);
	close_fd(&s->meta_fd);
	fds_close(s, s->fds, s->snap.n_pods);
	fds_close(s, s->prev_fds, s->prev.n_pods);
	free(s->fds);
	free(s->prev_fds);
	snapshot_done(&s->snap);
	snapshot_done(&s->prev);
	free(s);
	return NULL;
}

int scanner_set_config(scanner *s, const evictd_config *cfg)
{
	s->cfg = cfg;
	fds_close(s, s->fds, s->snap.n_pods);
	fds_close(s, s->prev_fds, s->prev.n_pods);
	free(s->fds);
	free(s->prev_fds);
	s->fds = s->prev_fds = NULL;
	snapshot_done(&s->prev);
	snapshot_done(&s->snap);
	return open_fds(s);
}

int scanner_root_fd(const scanner *s)
{
	return s->root_fd;
}

const char *scanner_self_cgroup(const scanner *s)
{
	return s->self_cgroup;
}

static void node_sources_of(const scanner *s, node_sources *src)
{
	*src = (node_sources){
		.cg_root_fd = s->root_fd,
		.proc_fd = s->proc_fd,
		.cg = &s->cg,
		.kubepods = s->kubepods,
		.nodefs_path = s->cfg->nodefs_path,
		.imagefs_path = s->cfg->imagefs_path,
	};
}

void scanner_scan_node(scanner *s, node_signals *ret)
{
	node_sources src;
	node_sources_of(s, &src);
	node_signals_read(&src, ret);
}

static ssize_t find_prev(const snapshot *prev, const char *cgroup)
{
	size_t lo = 0, hi = prev->n_pods;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(prev->pods[mid].cgroup, cgroup);
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static bool same_descriptor(const pod_info *old, const struct stat *st, bool present)
{
	if (old->descriptor_id.present != present)
		return false;
	if (!present)
		return true;
	return old->descriptor_id.dev == (uint64_t)st->st_dev && old->descriptor_id.ino == (uint64_t)st->st_ino &&
	       old->descriptor_id.size == (uint64_t)st->st_size &&
	       old->descriptor_id.mtime_ns == (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec &&
	       old->descriptor_id.ctime_ns == (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* Moves the metadata of an unchanged pod from the previous scan (no re-parse, no re-warning). */
static void take_metadata(pod_info *p, pod_info *old)
{
	p->namespace_ = old->namespace_;
	p->name = old->name;
	p->priority_class = old->priority_class;
	old->namespace_ = old->name = old->priority_class = NULL;
	p->priority = old->priority;
	p->priority_src = old->priority_src;
	p->memory_request = old->memory_request;
	p->memory_request_src = old->memory_request_src;
	p->cpu_request_milli = old->cpu_request_milli;
	p->cpu_request_src = old->cpu_request_src;
	p->storage_request = old->storage_request;
	p->termination_grace_usec = old->termination_grace_usec;
	p->has_descriptor = old->has_descriptor;
	p->descriptor_id = old->descriptor_id;
	p->critical = old->critical;
}

static int load_metadata(scanner *s, int pod_fd, pod_info *p)
{
	char why[512];
	int r = podmeta_apply_descriptor(s->meta_fd, NULL, s->cfg->pcset, p, why, sizeof(why));

	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		log_entry e;
		log_entry_init(&e, LOG_WARNING, MSGID_POD_METADATA_REJECTED);
		log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
		log_entry_add(&e, FIELD_CGROUP, "%s", p->cgroup);
		log_entry_add(&e, FIELD_REASON, "%s", why);
		log_entry_send(&e, "Ignoring metadata of pod %s: %s", p->uid, why);
	}
	return podmeta_defaults(pod_fd, s->cfg->pcset, p);
}

/* Reads one of the pod's files through its kept fd, (re)opening it from the pod directory. */
static ssize_t pod_read(scanner *s, pod_fds *f, int *dirfd, const char *cgroup, int k, char *buf, size_t size)
{
	ssize_t n;

	for (int attempt = 0; attempt < 2; attempt++) {
		if (f->fd[k] < 0) {
			if (*dirfd < 0) {
				*dirfd = openat(s->root_fd, cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				if (*dirfd < 0)
					return -errno;
			}
			if (s->fds_open >= s->fd_budget) /* over budget: a transient read */
				return cgfs_read(*dirfd, pod_files[k], buf, size);
			f->fd[k] = openat(*dirfd, pod_files[k], O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
			if (f->fd[k] < 0)
				return -errno;
			s->fds_open++;
		}
		n = pread(f->fd[k], buf, size - 1, 0);
		if (n >= 0 && (size_t)n < size - 1) {
			buf[n] = '\0';
			return n;
		}
		/* ENODEV: the cgroup went away under a kept fd (maybe recreated): reopen once. */
		close(f->fd[k]);
		f->fd[k] = -1;
		s->fds_open--;
		if (n >= 0)
			return -EFBIG;
	}
	return -ENODEV;
}

static int parse_u64_text(const char *t, uint64_t *ret)
{
	char *end;
	if (*t < '0' || *t > '9')
		return -EBADMSG;
	errno = 0;
	*ret = strtoull(t, &end, 10);
	return errno || (*end && *end != '\n') ? -EBADMSG : 0;
}

static void read_usage(scanner *s, pod_fds *f, pod_info *p)
{
	char buf[8192];
	uint64_t v, inactive;
	int dirfd = -1;

	if (pod_read(s, f, &dirfd, p->cgroup, PF_CURRENT, buf, 64) >= 0 && parse_u64_text(buf, &v) == 0 &&
	    pod_read(s, f, &dirfd, p->cgroup, PF_STAT, buf, sizeof(buf)) >= 0 &&
	    cgfs_keyed_u64(buf, "inactive_file", &inactive) == 0) {
		p->has_memory = true;
		p->memory_current = (int64_t)v;
		p->inactive_file = (int64_t)inactive;
		/* cAdvisor: working set = usage - inactive_file, clamped at 0 */
		p->working_set = v > inactive ? (int64_t)(v - inactive) : 0;
	}
	if (pod_read(s, f, &dirfd, p->cgroup, PF_CPU, buf, sizeof(buf)) >= 0 && cgfs_keyed_u64(buf, "usage_usec", &v) == 0) {
		p->has_cpu = true;
		p->cpu_usage_usec = v;
	}
	if (pod_read(s, f, &dirfd, p->cgroup, PF_PIDS, buf, 64) >= 0 && parse_u64_text(buf, &v) == 0) {
		p->has_pids = true;
		p->pids = (int64_t)v;
	}
	if (pod_read(s, f, &dirfd, p->cgroup, PF_PRESSURE, buf, 512) >= 0 &&
	    cgfs_psi_parse(buf, &p->psi_some_avg10, &p->psi_full_avg10) == 0)
		p->has_psi = true;
	if (dirfd >= 0)
		close(dirfd);
}

int scanner_scan(scanner *s, uint64_t now_usec, const snapshot **ret)
{
	pod_info *pods = NULL;
	pod_fds *fds;
	size_t n = 0;
	node_sources src;
	int r;

	/* The previous snapshot becomes the cache for this one. */
	fds_close(s, s->prev_fds, s->prev.n_pods);
	free(s->prev_fds);
	snapshot_done(&s->prev);
	s->prev = s->snap;
	s->prev_fds = s->fds;
	s->fds = NULL;
	s->snap = (snapshot){ .timestamp_usec = now_usec };

	node_sources_of(s, &src);
	node_signals_read(&src, &s->snap.node);

	if (s->meta_fd < 0)
		s->meta_fd = open(s->cfg->pod_metadata_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (s->root_fd >= 0) {
		r = pods_discover(s->cg.root, s->cfg->pods, &pods, &n);
		if (r < 0)
			return r;
	}
	fds = malloc((n ? n : 1) * sizeof(*fds));
	if (!fds) {
		for (size_t i = 0; i < n; i++)
			pod_info_done(&pods[i]);
		free(pods);
		return -ENOMEM;
	}
	s->snap.pods = pods;
	s->snap.n_pods = n;
	s->fds = fds;

	for (size_t i = 0; i < n; i++) {
		pod_info *p = &pods[i];
		ssize_t oi = find_prev(&s->prev, p->cgroup);
		pod_info *old = oi >= 0 ? &s->prev.pods[oi] : NULL;
		struct stat st;
		bool present = podmeta_stat(s->meta_fd, p->uid, &st) == 0;

		/* the kept fds move to the new snapshot */
		if (old) {
			fds[i] = s->prev_fds[oi];
			for (int k = 0; k < _PF_MAX; k++)
				s->prev_fds[oi].fd[k] = -1;
		} else
			for (int k = 0; k < _PF_MAX; k++)
				fds[i].fd[k] = -1;

		if (old && old->name && same_descriptor(old, &st, present))
			take_metadata(p, old);
		else {
			int dirfd = openat(s->root_fd, p->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			p->descriptor_id.present = present;
			if (present) {
				p->descriptor_id.dev = (uint64_t)st.st_dev;
				p->descriptor_id.ino = (uint64_t)st.st_ino;
				p->descriptor_id.size = (uint64_t)st.st_size;
				p->descriptor_id.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
				p->descriptor_id.ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
			}
			r = load_metadata(s, dirfd, p);
			if (dirfd >= 0)
				close(dirfd);
			if (r < 0) {
				/* the rest of the array has no fds yet */
				for (size_t j = i + 1; j < n; j++)
					for (int k = 0; k < _PF_MAX; k++)
						fds[j].fd[k] = -1;
				return r;
			}
		}
		if (s->self_cgroup[0]) {
			size_t l = strlen(p->cgroup);
			p->is_self = strncmp(s->self_cgroup, p->cgroup, l) == 0 &&
			             (s->self_cgroup[l] == '\0' || s->self_cgroup[l] == '/');
		}
		read_usage(s, &fds[i], p);
		if (old && old->has_cpu && p->has_cpu && now_usec > s->prev.timestamp_usec &&
		    p->cpu_usage_usec >= old->cpu_usage_usec) {
			p->has_cpu_rate = true;
			p->cpu_rate = (double)(p->cpu_usage_usec - old->cpu_usage_usec) /
			              (double)(now_usec - s->prev.timestamp_usec);
		}
	}
	/* pods gone since the last scan: their fds are closed now, not at the next scan */
	fds_close(s, s->prev_fds, s->prev.n_pods);
	*ret = &s->snap;
	return 0;
}
