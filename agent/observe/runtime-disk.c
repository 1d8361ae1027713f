/* SPDX-License-Identifier: MIT */
#include "runtime-disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "grow.h"

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

void runtime_label_notes_done(runtime_label_notes *notes)
{
	if (!notes)
		return;
	for (size_t i = 0; i < notes->n; i++)
		free(notes->ids[i]);
	free(notes->ids);
	*notes = (runtime_label_notes){ 0 };
}

static const cri_sandbox *sandbox_of(const cri_listing *l, const char *id)
{
	for (size_t i = 0; i < l->n_sandboxes; i++)
		if (strcmp(l->sandboxes[i].id, id) == 0)
			return &l->sandboxes[i];
	return NULL;
}

static bool noted(const runtime_label_notes *notes, const char *id)
{
	for (size_t i = 0; i < notes->n; i++)
		if (strcmp(notes->ids[i], id) == 0)
			return true;
	return false;
}

static void note_mislabelled(runtime_label_notes *notes, const cri_container *c, const cri_sandbox *sb)
{
	if (!notes || noted(notes, c->id))
		return;
	if (GROW_ARRAY(&notes->ids, &notes->cap, notes->n + 1) < 0)
		return;
	if (!(notes->ids[notes->n] = strdup(c->id)))
		return;
	notes->n++;
	log_msg(LOG_WARNING, "Container %.64s (%s) in sandbox %.64s of pod %s/%s (uid %s) is labelled io.kubernetes.pod.uid=%s: "
	        "its disk usage is counted for the sandbox's pod, as the kubelet counts it, not for the pod its label names",
	        c->id, c->name, sb->id, sb->namespace_, sb->name, sb->uid, c->pod_uid);
}

/* Forgets the containers no longer listed: the notes stay as small as the node's containers. */
static void notes_prune(runtime_label_notes *notes, const cri_listing *l)
{
	size_t k = 0;
	for (size_t i = 0; notes && i < notes->n; i++) {
		if (cri_listing_container(l, notes->ids[i]))
			notes->ids[k++] = notes->ids[i];
		else
			free(notes->ids[i]);
	}
	if (notes)
		notes->n = k;
}

/* Each container's pod: its sandbox's uid; NULL for a container whose sandbox is not listed. */
static const char **container_owners(const cri_listing *l, runtime_label_notes *notes)
{
	const char **owner = calloc(l->n_containers ? l->n_containers : 1, sizeof(*owner));
	if (!owner)
		return NULL;
	notes_prune(notes, l);
	for (size_t k = 0; k < l->n_containers; k++) {
		const cri_container *c = &l->containers[k];
		const cri_sandbox *sb = sandbox_of(l, c->sandbox_id);
		if (!sb || !sb->uid[0])
			continue;
		owner[k] = sb->uid;
		if (c->state == CRI_RUNNING && c->pod_uid[0] && strcmp(c->pod_uid, sb->uid) != 0)
			note_mislabelled(notes, c, sb);
	}
	return owner;
}

void runtime_attribute(snapshot *snap, const cri_listing *l, disk_layout layout, runtime_label_notes *notes)
{
	snap->layout = layout;
	if (layout == LAYOUT_UNKNOWN)
		return;
	const char **owner = container_owners(l, notes);
	if (!owner)
		return; /* no memory: the pods are ranked without the runtime's share, as with no runtime */
	for (size_t i = 0; i < snap->n_pods; i++) {
		pod_info *p = &snap->pods[i];
		int64_t rb = 0, ri = 0, lb = 0, li = 0;
		bool rootfs = false, logs = false;

		for (size_t k = 0; k < l->n_containers; k++) {
			const cri_container *c = &l->containers[k];
			if (c->state != CRI_RUNNING || !owner[k] || strcmp(owner[k], p->uid) != 0)
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
	free(owner);
}
