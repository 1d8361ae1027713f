/* SPDX-License-Identifier: MIT */
#include "runtime-disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files looked at in one log directory at most: a kubelet keeps a handful (containerLogMaxFiles). */
#define LOG_DIR_ENTRIES_MAX 4096

disk_layout runtime_layout(const cri_listing *l, const char *kubelet_root, char *mountpoint, size_t size)
{
	struct stat img, root;

	mountpoint[0] = '\0';
	if (!l->n_image_fs || !l->image_fs[0].mountpoint[0])
		return LAYOUT_UNKNOWN;
	snprintf(mountpoint, size, "%s", l->image_fs[0].mountpoint);
	if (l->n_container_fs && l->container_fs[0].mountpoint[0] &&
	    strcmp(l->container_fs[0].mountpoint, l->image_fs[0].mountpoint) != 0)
		return LAYOUT_SPLIT;
	if (stat(l->image_fs[0].mountpoint, &img) < 0 || stat(kubelet_root, &root) < 0)
		return LAYOUT_SINGLE; /* the kubelet's answer when it cannot tell either */
	return img.st_dev != root.st_dev ? LAYOUT_DEDICATED : LAYOUT_SINGLE;
}

/* Adds the regular files of dir (all, or base and base.*) to *bytes / *inodes. false: no directory. */
static bool sum_dir(const char *dir, const char *base, int64_t *bytes, int64_t *inodes)
{
	size_t bl = base ? strlen(base) : 0;
	unsigned seen = 0;
	struct dirent *de;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;

	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while ((de = readdir(d)) && seen++ < LOG_DIR_ENTRIES_MAX) {
		struct stat st;
		if (base && !(strncmp(de->d_name, base, bl) == 0 && (de->d_name[bl] == '\0' || de->d_name[bl] == '.')))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		*bytes += (int64_t)st.st_blocks * 512;
		(*inodes)++;
	}
	closedir(d);
	return true;
}

void runtime_measure_logs(cri_listing *l)
{
	for (size_t i = 0; i < l->n_containers; i++) {
		cri_container *c = &l->containers[i];
		char dir[PATH_MAX];
		const char *slash;

		c->has_log = false;
		c->log_bytes = c->log_inodes = 0;
		if (!c->log_path || !c->log_path[0] || !(slash = strrchr(c->log_path, '/')))
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - c->log_path), c->log_path);
		c->has_log = sum_dir(dir[0] ? dir : "/", c->state == CRI_RUNNING ? NULL : slash + 1, &c->log_bytes,
		                     &c->log_inodes);
	}
}

void runtime_attribute(snapshot *snap, const cri_listing *l, disk_layout layout)
{
	snap->layout = layout;
	if (layout == LAYOUT_UNKNOWN)
		return;
	for (size_t i = 0; i < snap->n_pods; i++) {
		pod_info *p = &snap->pods[i];
		int64_t rb = 0, ri = 0, lb = 0, li = 0;
		bool rootfs = false, logs = false;

		for (size_t k = 0; k < l->n_containers; k++) {
			const cri_container *c = &l->containers[k];
			if (c->state != CRI_RUNNING || strcmp(c->pod_uid, p->uid) != 0)
				continue;
			if (c->has_rootfs) {
				rootfs = true;
				rb += (int64_t)c->rootfs_bytes;
				ri += (int64_t)c->rootfs_inodes;
			}
			if (c->has_log) {
				logs = true;
				lb += c->log_bytes;
				li += c->log_inodes;
			}
		}
		p->has_rootfs = rootfs;
		p->rootfs_bytes = rb;
		p->rootfs_inodes = ri;
		p->cri_logs = logs;
		if (logs) {
			p->log_bytes = lb;
			p->log_inodes = li;
		}
		/* the kubelet's buildSignalToRankFunc: which parts each signal's ranking sums */
		bool rootfs_on_nodefs = layout == LAYOUT_SINGLE || layout == LAYOUT_SPLIT;
		if (p->has_disk) {
			p->disk_bytes = p->volume_bytes + p->log_bytes + (rootfs_on_nodefs ? rb : 0);
			p->disk_inodes = p->volume_inodes + p->log_inodes + (rootfs_on_nodefs ? ri : 0);
		}
		switch (layout) {
		case LAYOUT_SINGLE:
			p->has_imagefs = p->has_disk;
			p->imagefs_bytes = p->disk_bytes;
			p->imagefs_inodes = p->disk_inodes;
			break;
		case LAYOUT_DEDICATED:
			p->has_imagefs = rootfs;
			p->imagefs_bytes = rb;
			p->imagefs_inodes = ri;
			break;
		default: /* split: images only, nothing per pod */
			p->has_imagefs = false;
			break;
		}
	}
}
