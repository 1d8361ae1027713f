/* SPDX-License-Identifier: MIT */
/*
 * Over ~600 lines on purpose: the scanner's kept-open fds (pod_fds), its fd budget and its
 * symlink bookkeeping are one piece of state that every per-pod read goes through; the readers of
 * single files are cgfs.c, the node's signals node.c, disks poddisk.c, descriptors podmeta.c.
 */
#include "scan.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cgfs.h"
#include "cgthreads.h"
#include "log.h"
#include "poddisk.h"
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
	unsigned warned; /* bit k: a warning about pod_files[k] was logged and it has not recovered */
} pod_fds;

/* The bit in pod_fds.warned for the pod directory itself (not a directory, symlink, ...). */
#define WARN_DIR (1u << _PF_MAX)
/* Symlinks under the cgroup root remembered so that each is warned about once, not every scan. */
#define SYMLINKS_TRACKED 64

struct scanner {
	const evictd_config *cfg;
	cg_info cg;
	int root_fd, proc_fd, meta_fd;
	bool meta_untrusted; /* the metadata directory failed podmeta_dir_check() at the last scan */
	int kube_meta_fd;    /* evictd-kube's descriptors ([kubernetes] descriptor-dir); the operator's win */
	bool kube_meta_untrusted;
	/* symlinks discovery refused, this scan and the last: each is warned about once while it stays */
	char *links[SYMLINKS_TRACKED], *prev_links[SYMLINKS_TRACKED];
	size_t n_links, n_prev_links;
	const char *kubepods;
	char self_cgroup[PATH_MAX];
	snapshot snap, prev;
	pod_fds *fds, *prev_fds; /* parallel to snap.pods / prev.pods */
	size_t fd_budget, fds_open;
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void links_free(char **l, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		free(l[i]);
	*n = 0;
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
	close_fd(&s->kube_meta_fd);
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
	s->root_fd = s->proc_fd = s->meta_fd = s->kube_meta_fd = -1;
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
	close_fd(&s->kube_meta_fd);
	fds_close(s, s->fds, s->snap.n_pods);
	fds_close(s, s->prev_fds, s->prev.n_pods);
	free(s->fds);
	free(s->prev_fds);
	snapshot_done(&s->snap);
	snapshot_done(&s->prev);
	links_free(s->links, &s->n_links);
	links_free(s->prev_links, &s->n_prev_links);
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
		.cfg = s->cfg,
	};
}

void scanner_scan_node(scanner *s, node_signals *ret)
{
	node_sources src;
	node_sources_of(s, &src);
	node_signals_read(&src, ret);
}

/* The links refused in this scan become the ones the next scan compares with. */
static void links_rotate(scanner *s)
{
	links_free(s->prev_links, &s->n_prev_links);
	memcpy(s->prev_links, s->links, s->n_links * sizeof(s->links[0]));
	s->n_prev_links = s->n_links;
	s->n_links = 0;
}

static void symlink_refused(const char *path, void *userdata)
{
	scanner *s = userdata;
	bool known = false;

	for (size_t i = 0; i < s->n_prev_links && !known; i++)
		known = strcmp(s->prev_links[i], path) == 0;
	if (s->n_links < SYMLINKS_TRACKED) {
		char *c = strdup(path);
		if (c)
			s->links[s->n_links++] = c;
	}
	if (!known) {
		log_entry e;
		log_entry_init(&e, LOG_WARNING, NULL);
		log_entry_add(&e, FIELD_CGROUP, "%s", path);
		log_entry_send(&e, "Not following symbolic link %s under the cgroup root %s: pod and QoS cgroups must be "
		               "directories; nothing behind it is read or evicted", path, s->cg.root);
	}
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
	p->containers = old->containers;
	p->n_containers = old->n_containers;
	old->containers = NULL;
	old->n_containers = 0;
	p->declared_critical = old->declared_critical;
	if (old->qos != QOS_UNKNOWN && p->qos == QOS_UNKNOWN)
		p->qos = old->qos;
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

static int load_metadata(scanner *s, int meta_fd, int pod_fd, pod_info *p)
{
	char why[512];
	int r = podmeta_apply_descriptor(meta_fd, NULL, s->cfg->pcset, p, why, sizeof(why));

	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		log_entry e;
		log_entry_init(&e, LOG_WARNING, MSGID_POD_METADATA_REJECTED);
		log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
		log_entry_add(&e, FIELD_CGROUP, "%s", p->cgroup);
		log_entry_add(&e, FIELD_REASON, "%s", why);
		log_entry_send(&e, "Ignoring metadata of pod %s: %s", p->uid, why);
	} else if (r == 0 && s->cfg->kube.enable)
		/* once per pod: an unchanged absence takes the previous scan's metadata */
		log_msg(LOG_NOTICE, "Pod %s has no metadata yet (no descriptor from evictd-kube or the operator): "
		        "ranked with cgroup-derived requests and the default priority", p->uid);
	return podmeta_defaults(pod_fd, s->cfg->pcset, p);
}

/*
 * The metadata directory's fd when descriptors in it may be trusted, else -1 (pods then get
 * cgroup-derived defaults). Checked every scan, logged when the verdict changes.
 */
static int trusted_dir_fd(int fd, const char *path, bool *untrusted)
{
	char why[PATH_MAX + 128];
	int r;

	if (fd < 0)
		return -1;
	r = podmeta_dir_check(fd, why, sizeof(why));
	if (r < 0 && !*untrusted) {
		log_entry e;
		log_entry_init(&e, LOG_WARNING, MSGID_POD_METADATA_REJECTED);
		log_entry_add(&e, FIELD_REASON, "%s", why);
		log_entry_send(&e, "Pod metadata directory %s is not trusted: %s; all descriptors in it are ignored",
		               path, why);
	} else if (r == 0 && *untrusted)
		log_msg(LOG_INFO, "Pod metadata directory %s is trusted again", path);
	*untrusted = r < 0;
	return r < 0 ? -1 : fd;
}

/* Reads one of the pod's files through its kept fd, (re)opening it from the pod directory. */
typedef struct pod_dir {
	int fd;  /* opened on first need */
	int err; /* why it could not be opened (then nothing is retried in this scan) */
} pod_dir;

static ssize_t pod_read(scanner *s, pod_fds *f, pod_dir *dir, const char *cgroup, int k, char *buf, size_t size)
{
	ssize_t n;

	for (int attempt = 0; attempt < 2; attempt++) {
		if (f->fd[k] < 0) {
			if (dir->err < 0)
				return dir->err;
			if (dir->fd < 0) {
				/* never through a symlink, never out of the cgroup root */
				dir->fd = cgfs_open_dir_beneath(s->root_fd, cgroup);
				if (dir->fd < 0) {
					dir->err = dir->fd;
					return dir->err;
				}
			}
			if (s->fds_open >= s->fd_budget) /* over budget: a transient read */
				return cgfs_read(dir->fd, pod_files[k], buf, size);
			int fd = cgfs_open_file(dir->fd, pod_files[k]);
			if (fd < 0)
				return fd;
			f->fd[k] = fd;
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

/* Why a pod's statistics file cannot be used, for the log. */
static const char *read_problem(ssize_t r, char *buf, size_t size)
{
	switch (r) {
	case -ENOENT:  return "it is missing";
	case -ELOOP:   return "it is a symbolic link (not followed)";
	case -EINVAL:  return "it is not a regular file";
	case -EFBIG:   return "it is larger than expected";
	case -EBADMSG: return "its content cannot be parsed";
	case -ENODATA: return "it has no inactive_file line";
	case -E2BIG: return "the pod's cgroup subtree is too deep or too large to count its tasks";
	default:
		snprintf(buf, size, "it cannot be read: %s", strerror((int)-r));
		return buf;
	}
}

/*
 * A pod whose statistics cannot be read is left unmeasured (never ranked as a victim on that
 * signal), which an operator must be able to see: one warning per pod and file when it starts,
 * one info line when it recovers. A missing file is only worth a warning where the controller
 * is on (otherwise every pod lacks it).
 */
static void stat_status(scanner *s, pod_fds *f, const pod_info *p, int k, ssize_t r, bool dir_failed)
{
	unsigned bit = dir_failed ? WARN_DIR : 1u << k;
	const char *file = dir_failed ? "." : pod_files[k];
	char name[POD_UID_MAX + 512], label[POD_UID_MAX * 2 + 520], tmp[128];
	log_entry e;

	snapshot_pod_display_name(p, name, sizeof(name));
	if (strcmp(name, p->uid) == 0)
		snprintf(label, sizeof(label), "%s", p->uid);
	else
		snprintf(label, sizeof(label), "%s (%s)", name, p->uid);
	if (r >= 0) {
		if (!(f->warned & bit))
			return;
		f->warned &= ~bit;
		log_entry_init(&e, LOG_INFO, MSGID_POD_STATS_RECOVERED);
		log_entry_add(&e, FIELD_POD, "%s", name);
		log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
		log_entry_add(&e, FIELD_CGROUP, "%s", p->cgroup);
		log_entry_add(&e, FIELD_FILE, "%s", file);
		if (dir_failed)
			log_entry_send(&e, "The cgroup of pod %s can be read again", label);
		else
			log_entry_send(&e, "%s of pod %s is usable again", file, label);
		return;
	}
	if (f->warned & bit)
		return;
	/* A vanished pod directory is a removed pod, not a problem. */
	if (dir_failed && (r == -ENOENT || r == -ENODEV))
		return;
	if (!dir_failed && r == -ENOENT && (k > PF_STAT || !s->cg.memory))
		return;
	f->warned |= bit;
	log_entry_init(&e, LOG_WARNING, MSGID_POD_STATS_UNAVAILABLE);
	log_entry_add(&e, FIELD_POD, "%s", name);
	log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
	log_entry_add(&e, FIELD_CGROUP, "%s", p->cgroup);
	log_entry_add(&e, FIELD_FILE, "%s", file);
	log_entry_add(&e, FIELD_REASON, "%s", read_problem(r, tmp, sizeof(tmp)));
	if (dir_failed)
		log_entry_send(&e, "Cannot open the cgroup of pod %s, %s: %s; its usage is unknown and it is not ranked",
		               label, p->cgroup, read_problem(r, tmp, sizeof(tmp)));
	else
		log_entry_send(&e, "Cannot use %s of pod %s: %s; %s", file, label,
		               read_problem(r, tmp, sizeof(tmp)),
		               k <= PF_STAT ? "its memory usage is unknown and it is not ranked for memory signals"
		                            : "that statistic is unknown");
}

static ssize_t read_u64_file(scanner *s, pod_fds *f, pod_dir *dir, const pod_info *p, int k, uint64_t *ret)
{
	char buf[64];
	ssize_t r = pod_read(s, f, dir, p->cgroup, k, buf, sizeof(buf));
	if (r >= 0)
		r = parse_u64_text(buf, ret);
	return r;
}

static void read_usage(scanner *s, pod_fds *f, pod_info *p)
{
	char buf[8192];
	uint64_t v, inactive;
	pod_dir dir = { .fd = -1, .err = 0 };
	ssize_t r;

	r = read_u64_file(s, f, &dir, p, PF_CURRENT, &v);
	if (r < 0 && dir.err < 0) {
		/* the pod directory itself: nothing else can be read either */
		stat_status(s, f, p, PF_CURRENT, r, true);
		return;
	}
	stat_status(s, f, p, PF_CURRENT, 0, true);
	stat_status(s, f, p, PF_CURRENT, r, false);
	if (r >= 0) {
		r = pod_read(s, f, &dir, p->cgroup, PF_STAT, buf, sizeof(buf));
		if (r >= 0 && cgfs_keyed_u64(buf, "inactive_file", &inactive) < 0)
			r = -ENODATA;
		stat_status(s, f, p, PF_STAT, r, false);
		if (r >= 0) {
			p->has_memory = true;
			p->memory_current = (int64_t)v;
			p->inactive_file = (int64_t)inactive;
			/* cAdvisor: working set = usage - inactive_file, clamped at 0 */
			p->working_set = v > inactive ? (int64_t)(v - inactive) : 0;
		}
	}
	r = pod_read(s, f, &dir, p->cgroup, PF_CPU, buf, sizeof(buf));
	if (r >= 0 && cgfs_keyed_u64(buf, "usage_usec", &v) < 0)
		r = -EBADMSG;
	stat_status(s, f, p, PF_CPU, r, false);
	if (r >= 0) {
		p->has_cpu = true;
		p->cpu_usage_usec = v;
	}
	r = read_u64_file(s, f, &dir, p, PF_PIDS, &v);
	if (r == -ENOENT && dir.fd >= 0)
		r = cg_count_threads(dir.fd, &v); /* no pids controller on v2 (hybrid host) */
	stat_status(s, f, p, PF_PIDS, r, false);
	if (r >= 0) {
		p->has_pids = true;
		p->pids = (int64_t)v;
	}
	r = pod_read(s, f, &dir, p->cgroup, PF_PRESSURE, buf, 512);
	if (r >= 0 && cgfs_psi_parse(buf, &p->psi_some_avg10, &p->psi_full_avg10) < 0)
		r = -EBADMSG;
	stat_status(s, f, p, PF_PRESSURE, r, false);
	if (r >= 0)
		p->has_psi = true;
	if (dir.fd >= 0)
		close(dir.fd);
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
		s->meta_fd = open(s->cfg->pod_metadata_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	int meta_fd = trusted_dir_fd(s->meta_fd, s->cfg->pod_metadata_dir, &s->meta_untrusted);
	if (s->kube_meta_fd < 0 && s->cfg->kube.enable)
		s->kube_meta_fd = open(s->cfg->kube.descriptor_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	int kube_meta_fd = trusted_dir_fd(s->kube_meta_fd, s->cfg->kube.descriptor_dir, &s->kube_meta_untrusted);

	if (s->root_fd >= 0) {
		r = pods_discover(s->root_fd, s->cfg->pods, symlink_refused, s, &pods, &n);
		links_rotate(s);
		if (r < 0)
			return r;
	}
	fds = malloc((n ? n : 1) * sizeof(*fds));
	if (!fds) {
		for (size_t i = 0; i < n; i++)
			snapshot_pod_info_done(&pods[i]);
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
		/* The operator's descriptor wins whole over evictd-kube's (README: which source wins). */
		bool present = podmeta_stat(meta_fd, p->uid, &st) == 0;
		int pod_meta_fd = meta_fd;
		if (!present && kube_meta_fd >= 0) {
			present = podmeta_stat(kube_meta_fd, p->uid, &st) == 0;
			pod_meta_fd = present ? kube_meta_fd : meta_fd;
		}

		/* the kept fds move to the new snapshot */
		if (old) {
			fds[i] = s->prev_fds[oi];
			for (int k = 0; k < _PF_MAX; k++)
				s->prev_fds[oi].fd[k] = -1;
		} else {
			for (int k = 0; k < _PF_MAX; k++)
				fds[i].fd[k] = -1;
			fds[i].warned = 0;
		}

		if (old && old->name && same_descriptor(old, &st, present))
			take_metadata(p, old);
		else {
			int dirfd = cgfs_open_dir_beneath(s->root_fd, p->cgroup);
			p->descriptor_id.present = present;
			if (present) {
				p->descriptor_id.dev = (uint64_t)st.st_dev;
				p->descriptor_id.ino = (uint64_t)st.st_ino;
				p->descriptor_id.size = (uint64_t)st.st_size;
				p->descriptor_id.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
				p->descriptor_id.ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
			}
			r = load_metadata(s, pod_meta_fd, dirfd, p);
			if (dirfd >= 0)
				close(dirfd);
			if (r < 0) {
				/* the rest of the array has no fds yet */
				for (size_t j = i + 1; j < n; j++)
					fds[j] = (pod_fds){ .fd = { -1, -1, -1, -1, -1 }, .warned = 0 };
				return r;
			}
		}
		if (s->self_cgroup[0]) {
			size_t l = strlen(p->cgroup);
			p->is_self = strncmp(s->self_cgroup, p->cgroup, l) == 0 &&
			             (s->self_cgroup[l] == '\0' || s->self_cgroup[l] == '/');
		}
		if (old && old->has_disk) {
			p->has_disk = true;
			p->disk_partial = old->disk_partial;
			p->disk_bytes = old->disk_bytes;
			p->disk_inodes = old->disk_inodes;
			p->disk_measured_usec = old->disk_measured_usec;
			p->disk_warned = old->disk_warned;
			p->volume_bytes = old->volume_bytes;
			p->volume_inodes = old->volume_inodes;
			p->log_bytes = old->log_bytes;
			p->log_inodes = old->log_inodes;
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

static void disk_status(pod_info *p, const pod_disk_usage *u)
{
	char name[POD_UID_MAX + 512], b[32];
	log_entry e;

	if (!u->partial) {
		if (p->disk_warned)
			log_msg(LOG_INFO, "Disk usage of pod %s is fully measured again: %s",
			        snapshot_pod_display_name(p, name, sizeof(name)), log_format_bytes(u->bytes, b, sizeof(b)));
		p->disk_warned = false;
		return;
	}
	if (p->disk_warned)
		return;
	p->disk_warned = true;
	snapshot_pod_display_name(p, name, sizeof(name));
	log_entry_init(&e, LOG_WARNING, MSGID_POD_DISK_PARTIAL);
	log_entry_add(&e, FIELD_POD, "%s", name);
	log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
	log_entry_add(&e, FIELD_DISK_BYTES, "%" PRId64, u->bytes);
	log_entry_add(&e, FIELD_DISK_INODES, "%" PRId64, u->inodes);
	log_entry_add(&e, FIELD_REASON, "%s", u->why);
	log_entry_send(&e, "Disk usage of pod %s is at least %s and %" PRId64 " inodes, not more is known: %s",
	               name, log_format_bytes(u->bytes, b, sizeof(b)), u->inodes, u->why);
}

int scanner_measure_disk(scanner *s, uint64_t now_usec)
{
	poddisk_pass pass;
	int r = poddisk_pass_open(s->cfg->kubelet_root_dir, s->cfg->pod_logs_dir, s->cfg->pod_disk_walk_limit, &pass);

	if (r < 0)
		return r;
	for (size_t i = 0; i < s->snap.n_pods; i++) {
		pod_info *p = &s->snap.pods[i];
		pod_disk_usage u;
		if (p->has_disk && now_usec >= p->disk_measured_usec && now_usec - p->disk_measured_usec < SCAN_DISK_TTL_USEC)
			continue;
		r = poddisk_measure(&pass, p->uid, p->has_descriptor ? p->namespace_ : NULL,
		                    p->has_descriptor ? p->name : NULL, &u);
		if (r < 0)
			break;
		p->has_disk = u.known;
		p->disk_partial = u.partial;
		p->disk_bytes = u.bytes;
		p->disk_inodes = u.inodes;
		p->volume_bytes = u.volume_bytes;
		p->volume_inodes = u.volume_inodes;
		p->log_bytes = u.bytes - u.volume_bytes;
		p->log_inodes = u.inodes - u.volume_inodes;
		p->disk_measured_usec = now_usec;
		if (u.known)
			disk_status(p, &u);
	}
	poddisk_pass_close(&pass);
	return r;
}
