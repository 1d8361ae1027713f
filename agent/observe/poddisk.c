/* SPDX-License-Identifier: MIT */
#include "poddisk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgfs.h"
#include "grow.h"

/* More log directories than this on one node is not a kubelet's doing; the rest are not read. */
#define LOG_NAMES_MAX 65536
/* "<uid>/volumes/kubernetes.io~empty-dir", or a log directory's "<namespace>_<name>_<uid>" */
#define POD_LOG_NAME_MAX 768

static void set_partial(du_totals *t, const char *fmt, const char *label, unsigned long long n)
{
	if (!t->partial)
		snprintf(t->why, sizeof(t->why), fmt, label, n);
	t->partial = true;
}

/*
 * Bytes are st_blocks * 512 (what du reports, and the kubelet's volume statistics): the space the
 * filesystem actually allocated, which is what nodefs.available loses. The apparent size
 * (st_size) would count sparse files in full and small files at less than a block. Hard links
 * inside one pod are counted once per link (an over-estimate, as with du -l).
 */
static void count(const struct stat *st, du_totals *t)
{
	t->bytes += (int64_t)st->st_blocks * 512;
	t->inodes++;
}

static void walk(int dfd, dev_t dev, unsigned depth, unsigned max_depth, const char *label, du_totals *t)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st, st2;
		int fd;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (t->entries_left == 0) {
			set_partial(t, "%s has more entries than pod-disk-walk-limit allows (%llu counted)", label,
			            (unsigned long long)t->inodes);
			break;
		}
		t->entries_left--;
		/* never through a symlink: a tenant's link to / must not make us walk the node */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue; /* removed while we looked */
		/* a mount point (tmpfs emptyDir, a bind mount): another filesystem, not this one's usage */
		if (st.st_dev != dev)
			continue;
		count(&st, t);
		if (!S_ISDIR(st.st_mode))
			continue;
		if (depth >= max_depth) {
			set_partial(t, "%s is nested deeper than %llu directory levels", label, max_depth);
			continue;
		}
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* replaced between fstatat and openat (by a mount, or another directory): skip it */
		if (fstat(fd, &st2) < 0 || st2.st_dev != dev || st2.st_ino != st.st_ino) {
			close(fd);
			continue;
		}
		walk(fd, dev, depth + 1, max_depth, label, t);
		if (t->partial && t->entries_left == 0)
			break;
	}
	closedir(d);
}

void poddisk_du_walk(int dirfd, unsigned max_depth, const char *label, du_totals *t)
{
	struct stat st;

	if (fstat(dirfd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(dirfd);
		return;
	}
	count(&st, t);
	walk(dirfd, st.st_dev, 0, max_depth, label, t);
}

int poddisk_pass_open(const char *kubelet_root, const char *pod_logs_dir, uint64_t limit, poddisk_pass *ret)
{
	char path[PATH_MAX];

	*ret = (poddisk_pass){ .pods_fd = -1, .logs_fd = -1, .limit = limit };
	/* The configured paths are the operator's: symlinks in them are fine; below them, none is. */
	if (snprintf(path, sizeof(path), "%s/pods", kubelet_root) < (int)sizeof(path))
		ret->pods_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret->logs_fd = open(pod_logs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

void poddisk_pass_close(poddisk_pass *p)
{
	if (p->pods_fd >= 0)
		close(p->pods_fd);
	if (p->logs_fd >= 0)
		close(p->logs_fd);
	for (size_t i = 0; i < p->n_log_names; i++)
		free(p->log_names[i]);
	free(p->log_names);
	*p = (poddisk_pass){ .pods_fd = -1, .logs_fd = -1 };
}

static int list_logs(poddisk_pass *p)
{
	int fd;
	DIR *d;
	struct dirent *de;

	p->listed = true;
	if (p->logs_fd < 0 || (fd = openat(p->logs_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) && p->n_log_names < LOG_NAMES_MAX) {
		if (de->d_name[0] == '.' || !strchr(de->d_name, '_'))
			continue;
		if (GROW_ARRAY(&p->log_names, &p->cap_log_names, p->n_log_names + 1) < 0 ||
		    !(p->log_names[p->n_log_names] = strdup(de->d_name))) {
			closedir(d);
			return -ENOMEM;
		}
		p->n_log_names++;
	}
	closedir(d);
	return 0;
}

/*
 * The pod's log directory: <ns>_<name>_<uid> when the descriptor names it, else by "_<uid>" suffix.
 * found (when not NULL) gets its name.
 */
static int open_log_dir(poddisk_pass *p, const char *uid, const char *ns, const char *name, int *ret_fd,
                        char *found, size_t found_size)
{
	char want[768];
	size_t ul = strlen(uid);

	*ret_fd = -1;
	if (p->logs_fd < 0)
		return 0;
	if (ns && ns[0] && name && name[0] &&
	    snprintf(want, sizeof(want), "%s_%s_%s", ns, name, uid) < (int)sizeof(want) &&
	    (*ret_fd = cgfs_open_dir_beneath(p->logs_fd, want)) >= 0) {
		if (found)
			snprintf(found, found_size, "%s", want);
		return 0;
	}
	*ret_fd = -1;
	if (!p->listed) {
		int r = list_logs(p);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < p->n_log_names; i++) {
		const char *n = p->log_names[i];
		size_t l = strlen(n);
		if (l > ul + 1 && n[l - ul - 1] == '_' && strcmp(n + l - ul, uid) == 0) {
			*ret_fd = cgfs_open_dir_beneath(p->logs_fd, n);
			if (*ret_fd >= 0) {
				if (found)
					snprintf(found, found_size, "%s", n);
				return 0;
			}
		}
	}
	return 0;
}

static void walk_empty_dirs(poddisk_pass *p, const char *uid, du_totals *t)
{
	char path[160]; /* "<uid>/volumes/kubernetes.io~empty-dir", uid < 64 */
	struct stat vst;
	int vfd, dfd;
	DIR *d;
	struct dirent *de;

	if (p->pods_fd < 0 || snprintf(path, sizeof(path), "%s/volumes/kubernetes.io~empty-dir", uid) >= (int)sizeof(path))
		return;
	vfd = cgfs_open_dir_beneath(p->pods_fd, path);
	if (vfd < 0)
		return; /* no emptyDir volumes (or no such pod here) */
	if (fstat(vfd, &vst) < 0 || !(d = fdopendir(vfd))) {
		close(vfd);
		return;
	}
	while ((de = readdir(d)) && !(t->partial && t->entries_left == 0)) {
		struct stat st, st2;
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		/* medium: Memory is a tmpfs mounted here: another st_dev, not nodefs */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_dev != vst.st_dev)
			continue;
		dfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		if (fstat(dfd, &st2) < 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
			close(dfd);
			continue;
		}
		char label[PATH_MAX];
		snprintf(label, sizeof(label), "emptyDir %s", de->d_name);
		poddisk_du_walk(dfd, PODDISK_MAX_DEPTH, label, t);
	}
	closedir(d);
}

int poddisk_measure(poddisk_pass *p, const char *uid, const char *namespace_, const char *name, pod_disk_usage *ret)
{
	du_totals t = { .entries_left = p->limit };
	int lfd, r;

	*ret = (pod_disk_usage){ 0 };
	if (p->pods_fd < 0 && p->logs_fd < 0)
		return 0;
	walk_empty_dirs(p, uid, &t);
	ret->volume_bytes = t.bytes;
	ret->volume_inodes = t.inodes;
	r = open_log_dir(p, uid, namespace_, name, &lfd, NULL, 0);
	if (r < 0)
		return r;
	if (lfd >= 0) {
		if (t.partial && t.entries_left == 0)
			close(lfd);
		else
			poddisk_du_walk(lfd, PODDISK_MAX_DEPTH, "the log directory", &t);
	}
	ret->known = true;
	ret->partial = t.partial;
	ret->bytes = t.bytes;
	ret->inodes = t.inodes;
	snprintf(ret->why, sizeof(ret->why), "%s", t.why);
	return 0;
}

#define EMPTY_DIR_PLUGIN "volumes/kubernetes.io~empty-dir"

int poddisk_locate(const char *kubelet_root, const char *pod_logs_dir, const char *uid, const char *namespace_,
                   const char *name, char *volumes, size_t volumes_size, char *logs, size_t logs_size)
{
	poddisk_pass p;
	char rel[POD_LOG_NAME_MAX];
	int fd, r = poddisk_pass_open(kubelet_root, pod_logs_dir, 1, &p);

	volumes[0] = logs[0] = '\0';
	if (r < 0)
		return r;
	if (p.pods_fd >= 0 && snprintf(rel, sizeof(rel), "%s/" EMPTY_DIR_PLUGIN, uid) < (int)sizeof(rel) &&
	    (fd = cgfs_open_dir_beneath(p.pods_fd, rel)) >= 0) {
		close(fd);
		if (snprintf(volumes, volumes_size, "%s/pods/%s", kubelet_root, rel) >= (int)volumes_size)
			r = -ENAMETOOLONG;
	}
	rel[0] = '\0';
	if (r == 0 && (r = open_log_dir(&p, uid, namespace_, name, &fd, rel, sizeof(rel))) == 0 && fd >= 0) {
		close(fd);
		if (snprintf(logs, logs_size, "%s/%s", pod_logs_dir, rel) >= (int)logs_size)
			r = -ENAMETOOLONG;
	}
	poddisk_pass_close(&p);
	if (r < 0)
		volumes[0] = logs[0] = '\0';
	return r;
}

/* 1 at the first non-directory entry on dev, 0 when there is none; *budget counts entries down. */
static int files_left(int dfd, dev_t dev, unsigned depth, uint64_t *budget)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int found = 0;

	if (!d) {
		close(dfd);
		return -errno;
	}
	while (!found && (de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (*budget == 0 || depth >= PODDISK_MAX_DEPTH) {
			found = 1; /* not known to be empty */
			break;
		}
		(*budget)--;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
			continue; /* removed meanwhile, or another filesystem (a memory-backed emptyDir) */
		if (!S_ISDIR(st.st_mode)) {
			found = 1;
			break;
		}
		int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			found = files_left(fd, dev, depth + 1, budget);
		if (found < 0)
			found = 0; /* a subdirectory removed while we looked */
	}
	closedir(d);
	return found;
}

int poddisk_files_left(const char *path, uint64_t limit)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOTDIR ? -ENOENT : -errno;
	if (fstat(fd, &st) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return files_left(fd, st.st_dev, 0, &limit);
}
