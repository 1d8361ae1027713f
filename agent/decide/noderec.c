/* SPDX-License-Identifier: MIT */
#include "noderec.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "idindex.h"

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

const char *noderec_keep_name(noderec_keep k)
{
	switch (k) {
	case NODEREC_KEEP_PINNED:
		return "pinned by the runtime";
	case NODEREC_KEEP_SANDBOX:
		return "the runtime's sandbox image";
	case NODEREC_KEEP_BACKED_OFF:
		return "its removal failed lately";
	case NODEREC_KEEP_YOUNG:
		return "younger than image-minimum-gc-age";
	}
	return "?";
}

/*
 * A reference as the runtimes resolve it: "pause:3.6" is "docker.io/library/pause:3.6",
 * "k8s/pause" is "docker.io/k8s/pause:latest"; a first part with a dot or a colon, or "localhost",
 * is a registry. Returns false when it does not fit.
 */
static bool normalize_ref(const char *ref, char *buf, size_t size)
{
	const char *slash = strchr(ref, '/');
	const char *prefix = "";
	int n;

	if (!slash)
		prefix = "docker.io/library/";
	else if (!memchr(ref, '.', (size_t)(slash - ref)) && !memchr(ref, ':', (size_t)(slash - ref)) &&
	         strncmp(ref, "localhost/", 10) != 0)
		prefix = "docker.io/";
	const char *last = strrchr(ref, '/');
	last = last ? last + 1 : ref;
	bool tagged = strchr(last, ':') || strchr(ref, '@');
	n = snprintf(buf, size, "%s%s%s", prefix, ref, tagged ? "" : ":latest");
	return n > 0 && (size_t)n < size;
}

static bool repository_is_pause(const char *tag)
{
	const char *last = strrchr(tag, '/');
	last = last ? last + 1 : tag;
	return strncmp(last, "pause:", 6) == 0 || strcmp(last, "pause") == 0 || strncmp(last, "pause@", 6) == 0;
}

bool noderec_is_sandbox_image(const cri_image *im, const char *sandbox_image)
{
	char want[CRI_STRING_MAX + 32], tag[CRI_STRING_MAX + 32];

	if (!sandbox_image || !sandbox_image[0]) {
		for (size_t t = 0; t < im->n_tags; t++)
			if (repository_is_pause(im->tags[t]))
				return true;
		return false;
	}
	if (strcmp(im->id, sandbox_image) == 0)
		return true;
	if (!normalize_ref(sandbox_image, want, sizeof(want)))
		return false;
	for (size_t t = 0; t < im->n_tags; t++)
		if (normalize_ref(im->tags[t], tag, sizeof(tag)) && strcmp(tag, want) == 0)
			return true;
	return false;
}

/* An instance is newer than another: created later, ties by id (the kubelet's order, made total). */
static bool newer(const cri_container *o, const cri_container *c)
{
	return o->created_at > c->created_at || (o->created_at == c->created_at && strcmp(o->id, c->id) > 0);
}

/*
 * The kubelet's evictableContainers with evictNonDeletedPods: every dead container of a pod that
 * is gone (no ready sandbox: terminated, evicted, deleted, or not the kubelet's), and of a live
 * pod all but the newest dead instance of each container name (MaxPerPodContainer 1). Marks
 * removable[i]; linear: ready pods and each (pod, name)'s newest dead instance are indexed first.
 */
static int dead_removable(const cri_listing *l, bool *removable)
{
	id_index alive = { 0 }, newest = { 0 };
	int r;

	if ((r = id_index_init(&alive, l->n_sandboxes)) < 0 || (r = id_index_init(&newest, l->n_containers)) < 0) {
		id_index_done(&alive);
		return r;
	}
	for (size_t i = 0; i < l->n_sandboxes; i++)
		if (l->sandboxes[i].ready && l->sandboxes[i].uid[0])
			id_index_put(&alive, l->sandboxes[i].uid, NULL, i);
	for (size_t i = 0; i < l->n_containers; i++) {
		const cri_container *c = &l->containers[i];
		bool found;
		if (c->state == CRI_RUNNING)
			continue;
		id_index_slot *s = id_index_slot_of(&newest, c->pod_uid, c->name, &found);
		if (!found || newer(c, &l->containers[s->value]))
			*s = (id_index_slot){ c->pod_uid, c->name, i };
	}
	for (size_t i = 0; i < l->n_containers; i++) {
		const cri_container *c = &l->containers[i];
		size_t v, keep = i;
		if (c->state == CRI_RUNNING)
			continue;
		if (!c->pod_uid[0] || !id_index_get(&alive, c->pod_uid, NULL, &v))
			removable[i] = true;
		else
			removable[i] = id_index_get(&newest, c->pod_uid, c->name, &keep) && keep != i;
	}
	id_index_done(&alive);
	id_index_done(&newest);
	return 0;
}

/* in_use[i] for l->images[i]: a container, running or dead, names it (one pass over each). */
static int images_in_use(const cri_listing *l, bool *in_use)
{
	id_index ids = { 0 };
	int r = id_index_init(&ids, l->n_images);

	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n_images; i++)
		id_index_put(&ids, l->images[i].id, NULL, i);
	for (size_t k = 0; k < l->n_containers; k++) {
		size_t i;
		if (l->containers[k].image_id && id_index_get(&ids, l->containers[k].image_id, NULL, &i))
			in_use[i] = true;
	}
	id_index_done(&ids);
	return 0;
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
	noderec_rules rules = { .min_age_usec = min_age_usec };
	return noderec_plan_build_rules(l, history, now_usec, &rules, ret);
}

static void keep(noderec_plan *p, size_t i, noderec_keep why)
{
	p->kept[p->n_kept] = i;
	p->kept_why[p->n_kept++] = why;
}

int noderec_plan_build_rules(const cri_listing *l, const image_history *history, uint64_t now_usec,
                             const noderec_rules *rules, noderec_plan *ret)
{
	noderec_plan p = { 0 };
	size_t n_img = l->n_images ? l->n_images : 1;
	sort_ctx *c = calloc(n_img, sizeof(*c));
	bool *removable = calloc(l->n_containers ? l->n_containers : 1, sizeof(bool));
	bool *in_use = calloc(n_img, sizeof(bool));
	size_t n = 0;
	int r = -ENOMEM;

	p.kept = calloc(n_img, sizeof(*p.kept));
	p.kept_why = calloc(n_img, sizeof(*p.kept_why));
	p.images = calloc(n_img, sizeof(*p.images));
	if (!c || !removable || !in_use || !p.kept || !p.kept_why || !p.images)
		goto out;
	if ((r = dead_removable(l, removable)) < 0 || (r = images_in_use(l, in_use)) < 0)
		goto out;
	for (size_t i = 0; i < l->n_containers; i++) {
		const cri_container *k = &l->containers[i];
		if (!removable[i])
			continue;
		p.n_dead++;
		p.dead_bytes += (k->has_rootfs ? (int64_t)k->rootfs_bytes : 0) + (k->has_log ? k->log_bytes : 0);
		p.dead_inodes += (k->has_rootfs ? (int64_t)k->rootfs_inodes : 0) + (k->has_log ? k->log_inodes : 0);
	}
	for (size_t i = 0; i < l->n_images; i++) {
		const cri_image *im = &l->images[i];
		if (in_use[i]) {
			p.n_in_use++;
			continue;
		}
		if (im->pinned) {
			p.n_pinned++;
			keep(&p, i, NODEREC_KEEP_PINNED);
			continue;
		}
		if (noderec_is_sandbox_image(im, rules->sandbox_image)) {
			p.n_sandbox++;
			keep(&p, i, NODEREC_KEEP_SANDBOX);
			continue;
		}
		if (rules->backed_off && rules->backed_off[i]) {
			p.n_backed_off++;
			keep(&p, i, NODEREC_KEEP_BACKED_OFF);
			continue;
		}
		if (now_usec < history[i].first_seen_usec + rules->min_age_usec) {
			p.n_young++;
			keep(&p, i, NODEREC_KEEP_YOUNG);
			continue;
		}
		c[n++] = (sort_ctx){ i, history[i].last_used_usec, history[i].first_seen_usec, im->id };
	}
	qsort(c, n, sizeof(*c), by_lru);
	for (size_t i = 0; i < n; i++) {
		p.images[i] = c[i].index;
		p.images_bytes += (int64_t)l->images[c[i].index].size;
	}
	p.n_images = n;
	r = 0;
out:
	free(c);
	free(removable);
	free(in_use);
	if (r < 0)
		noderec_plan_done(&p);
	else
		*ret = p;
	return r;
}

void noderec_plan_done(noderec_plan *p)
{
	free(p->images);
	free(p->kept);
	free(p->kept_why);
	*p = (noderec_plan){ 0 };
}

bool noderec_disk_signal(evictd_signal s)
{
	return s == SIGNAL_NODEFS_AVAILABLE || s == SIGNAL_NODEFS_INODES_FREE || s == SIGNAL_IMAGEFS_AVAILABLE ||
	       s == SIGNAL_IMAGEFS_INODES_FREE;
}

bool noderec_inode_signal(evictd_signal s)
{
	return s == SIGNAL_NODEFS_INODES_FREE || s == SIGNAL_IMAGEFS_INODES_FREE;
}

int64_t noderec_dead_for(const noderec_plan *p, disk_layout layout, evictd_signal s)
{
	if (!(noderec_steps(layout, s) & NODEREC_CONTAINERS))
		return 0;
	return noderec_inode_signal(s) ? p->dead_inodes : p->dead_bytes;
}

size_t noderec_images_for(const noderec_plan *p, const cri_listing *l, disk_layout layout, evictd_signal s,
                          int64_t need, int64_t *bytes)
{
	size_t n = 0;

	*bytes = 0;
	if (!(noderec_steps(layout, s) & NODEREC_IMAGES) || need <= 0)
		return 0;
	while (n < p->n_images && (noderec_inode_signal(s) || *bytes < need))
		*bytes += (int64_t)l->images[p->images[n++]].size;
	return n;
}

int64_t noderec_kubelet_threshold(const threshold_value *kubelet_hard, bool kubelet_read, evictd_signal s,
                                  int64_t capacity)
{
	threshold_value def = { .set = true, .percent = true };

	if (kubelet_read)
		return kubelet_hard[s].set ? config_threshold_resolve(&kubelet_hard[s], capacity) : -1;
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
	return config_threshold_resolve(&def, capacity);
}
