/* SPDX-License-Identifier: MIT */
#include "noderec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

unsigned noderec_steps(disk_layout layout, evictd_signal s)
{
	bool nodefs = s == SIGNAL_NODEFS_AVAILABLE || s == SIGNAL_NODEFS_INODES_FREE;
	bool imagefs = s == SIGNAL_IMAGEFS_AVAILABLE || s == SIGNAL_IMAGEFS_INODES_FREE;

	if (!nodefs && !imagefs)
		return 0;
	switch (layout) {
	case LAYOUT_SINGLE:
		return NODEREC_CONTAINERS | NODEREC_IMAGES;
	case LAYOUT_DEDICATED:
		return imagefs ? NODEREC_CONTAINERS | NODEREC_IMAGES : 0;
	case LAYOUT_SPLIT:
		return nodefs ? NODEREC_CONTAINERS : NODEREC_IMAGES;
	default:
		return 0;
	}
}

static bool pod_alive(const cri_listing *l, const char *uid)
{
	for (size_t i = 0; uid[0] && i < l->n_sandboxes; i++)
		if (l->sandboxes[i].ready && strcmp(l->sandboxes[i].uid, uid) == 0)
			return true;
	return false;
}

/*
 * The kubelet's evictableContainers with evictNonDeletedPods: every dead container of a pod that
 * is gone (no ready sandbox: terminated, evicted, deleted, or not the kubelet's), and of a live
 * pod all but the newest dead instance of each container name (MaxPerPodContainer 1).
 */
static bool dead_removable(const cri_listing *l, size_t i)
{
	const cri_container *c = &l->containers[i];

	if (c->state == CRI_RUNNING)
		return false;
	if (!pod_alive(l, c->pod_uid))
		return true;
	for (size_t k = 0; k < l->n_containers; k++) {
		const cri_container *o = &l->containers[k];
		if (k != i && o->state != CRI_RUNNING && strcmp(o->pod_uid, c->pod_uid) == 0 &&
		    strcmp(o->name, c->name) == 0 &&
		    (o->created_at > c->created_at || (o->created_at == c->created_at && strcmp(o->id, c->id) > 0)))
			return true; /* a newer dead instance is the one kept */
	}
	return false;
}

static bool image_in_use(const cri_listing *l, const cri_image *im)
{
	for (size_t k = 0; k < l->n_containers; k++)
		if (strcmp(l->containers[k].image_id, im->id) == 0)
			return true;
	return false;
}

/* Ordering of the image candidates: the kubelet's byLastUsedAndDetected. */
typedef struct sort_ctx {
	size_t index;
	uint64_t last_used, first_seen;
	const char *id;
} sort_ctx;

static int by_lru(const void *a, const void *b)
{
	const sort_ctx *x = a, *y = b;

	if (x->last_used != y->last_used)
		return x->last_used < y->last_used ? -1 : 1;
	if (x->first_seen != y->first_seen)
		return x->first_seen < y->first_seen ? -1 : 1;
	return strcmp(x->id, y->id); /* the kubelet leaves this to chance; evictd does not */
}

int noderec_plan_build(const cri_listing *l, const image_history *history, uint64_t now_usec, uint64_t min_age_usec,
                       noderec_plan *ret)
{
	noderec_plan p = { 0 };
	sort_ctx *c = calloc(l->n_images ? l->n_images : 1, sizeof(*c));
	size_t n = 0;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < l->n_containers; i++) {
		const cri_container *k = &l->containers[i];
		if (!dead_removable(l, i))
			continue;
		p.n_dead++;
		p.dead_bytes += (k->has_rootfs ? (int64_t)k->rootfs_bytes : 0) + (k->has_log ? k->log_bytes : 0);
		p.dead_inodes += (k->has_rootfs ? (int64_t)k->rootfs_inodes : 0) + (k->has_log ? k->log_inodes : 0);
	}
	for (size_t i = 0; i < l->n_images; i++) {
		const cri_image *im = &l->images[i];
		if (image_in_use(l, im)) {
			p.n_in_use++;
			continue;
		}
		if (im->pinned) {
			p.n_pinned++;
			continue;
		}
		if (now_usec < history[i].first_seen_usec + min_age_usec) {
			p.n_young++;
			continue;
		}
		c[n++] = (sort_ctx){ i, history[i].last_used_usec, history[i].first_seen_usec, im->id };
	}
	qsort(c, n, sizeof(*c), by_lru);
	p.images = calloc(n ? n : 1, sizeof(*p.images));
	if (!p.images) {
		free(c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		p.images[i] = c[i].index;
		p.images_bytes += (int64_t)l->images[c[i].index].size;
	}
	p.n_images = n;
	free(c);
	*ret = p;
	return 0;
}

void noderec_plan_done(noderec_plan *p)
{
	free(p->images);
	*p = (noderec_plan){ 0 };
}

static bool inode_signal(evictd_signal s)
{
	return s == SIGNAL_NODEFS_INODES_FREE || s == SIGNAL_IMAGEFS_INODES_FREE;
}

int64_t noderec_dead_for(const noderec_plan *p, disk_layout layout, evictd_signal s)
{
	if (!(noderec_steps(layout, s) & NODEREC_CONTAINERS))
		return 0;
	return inode_signal(s) ? p->dead_inodes : p->dead_bytes;
}

size_t noderec_images_for(const noderec_plan *p, const cri_listing *l, disk_layout layout, evictd_signal s,
                          int64_t need, int64_t *bytes)
{
	size_t n = 0;

	*bytes = 0;
	if (!(noderec_steps(layout, s) & NODEREC_IMAGES) || need <= 0)
		return 0;
	while (n < p->n_images && (inode_signal(s) || *bytes < need))
		*bytes += (int64_t)l->images[p->images[n++]].size;
	return n;
}

int64_t noderec_kubelet_threshold(const threshold_value *kubelet_hard, bool kubelet_read, evictd_signal s,
                                  int64_t capacity)
{
	threshold_value def = { .set = true, .percent = true };

	if (kubelet_read)
		return kubelet_hard[s].set ? threshold_resolve(&kubelet_hard[s], capacity) : -1;
	/* pkg/kubelet/eviction/defaults_linux.go */
	switch (s) {
	case SIGNAL_NODEFS_AVAILABLE:
		def.fraction = 0.10f;
		break;
	case SIGNAL_IMAGEFS_AVAILABLE:
		def.fraction = 0.15f;
		break;
	case SIGNAL_NODEFS_INODES_FREE:
	case SIGNAL_IMAGEFS_INODES_FREE:
		def.fraction = 0.05f;
		break;
	default:
		return -1;
	}
	return threshold_resolve(&def, capacity);
}
