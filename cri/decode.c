/* SPDX-License-Identifier: MIT */
#include "cri.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.pb-c.h"

#define UID_LABEL "io.kubernetes.pod.uid"

static int set_why(char *why, size_t size, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int set_why(char *why, size_t size, int r, const char *fmt, ...)
{
	va_list ap;

	if (why && size) {
		va_start(ap, fmt);
		vsnprintf(why, size, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* Printable ASCII, no space, at most max bytes; empty only when allowed. */
static bool token_ok(const char *s, size_t max, bool empty_ok)
{
	size_t n = 0;

	if (!s)
		return empty_ok;
	for (; s[n]; n++)
		if ((unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f || n >= max)
			return false;
	return n > 0 || empty_ok;
}

/* Absolute, no "." or ".." component, no control byte: the log file is opened beneath nothing else. */
static bool path_ok(const char *p)
{
	size_t n = strlen(p);

	if (n == 0)
		return true; /* no log path: the runtime keeps none */
	if (p[0] != '/' || n >= PATH_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return false;
	for (const char *c = p; c; c = strchr(c + 1, '/')) {
		const char *e = c + 1;
		if ((e[0] == '.' && (e[1] == '/' || !e[1])) || (e[0] == '.' && e[1] == '.' && (e[2] == '/' || !e[2])))
			return false;
	}
	return true;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* The value of label key in any of the generated map-entry arrays (they differ only in type). */
#define LABEL(entries, n, name, ret)                                                                  \
	do {                                                                                         \
		(ret) = NULL;                                                                        \
		for (size_t i_ = 0; i_ < (n) && !(ret); i_++)                                        \
			if ((entries)[i_]->key && strcmp((entries)[i_]->key, (name)) == 0)           \
				(ret) = (entries)[i_]->value;                                        \
	} while (0)

const char *cri_state_name(cri_state s)
{
	static const char *const names[] = { "created", "running", "exited", "unknown" };
	return s <= CRI_UNKNOWN ? names[s] : "unknown";
}

/* --- freeing ------------------------------------------------------------------------------- */

static void fs_free(cri_fs_usage *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		free(f[i].mountpoint);
	free(f);
}

static void images_free(cri_image *im, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(im[i].id);
		for (size_t t = 0; t < im[i].n_tags; t++)
			free(im[i].tags[t]);
		free(im[i].tags);
	}
	free(im);
}

static void sandboxes_free(cri_sandbox *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].id);
		free(s[i].uid);
		free(s[i].name);
		free(s[i].namespace_);
	}
	free(s);
}

static void containers_free(cri_container *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].id);
		free(c[i].sandbox_id);
		free(c[i].name);
		free(c[i].pod_uid);
		free(c[i].image_id);
		free(c[i].image);
		free(c[i].log_path);
	}
	free(c);
}

void cri_listing_free(cri_listing *l)
{
	if (!l)
		return;
	fs_free(l->image_fs, l->n_image_fs);
	fs_free(l->container_fs, l->n_container_fs);
	images_free(l->images, l->n_images);
	sandboxes_free(l->sandboxes, l->n_sandboxes);
	containers_free(l->containers, l->n_containers);
	*l = (cri_listing){ 0 };
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const cri_container *)a)->id, ((const cri_container *)b)->id);
}

cri_container *cri_listing_container(const cri_listing *l, const char *id)
{
	cri_container key = { .id = (char *)id };
	return l->n_containers ? bsearch(&key, l->containers, l->n_containers, sizeof(key), by_id) : NULL;
}

/* --- decoders ------------------------------------------------------------------------------ */

/*
 * protobuf-c builds the whole message before any check here can run, and an empty repeated item
 * costs 2 bytes on the wire but a struct, a pointer and the parser's own bookkeeping once
 * unpacked: 16 MiB of them took 1.4 GB. Every allocation of one unpack is counted against
 * CRI_DECODE_BUDGET, with malloc's own overhead (so that millions of tiny ones count for what
 * they cost); past it the allocation fails and protobuf-c frees what it built and gives up.
 */
typedef struct decode_budget {
	size_t used, limit;
	bool exceeded;
} decode_budget;

#define MALLOC_OVERHEAD 16

static void *capped_alloc(void *data, size_t size)
{
	decode_budget *b = data;
	size_t cost = size + MALLOC_OVERHEAD;

	if (cost < size || cost > b->limit - b->used) {
		b->exceeded = true;
		return NULL;
	}
	void *p = malloc(size ? size : 1);
	if (p)
		b->used += cost;
	return p;
}

static void capped_free(void *data, void *p)
{
	(void)data;
	free(p);
}

/* One varint at *i; false when it runs past the end or beyond 10 bytes. */
static bool wire_varint(const uint8_t *msg, size_t len, size_t *i, uint64_t *ret)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *i < len && shift < 70; shift += 7) {
		uint8_t b = msg[(*i)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			return true;
		}
	}
	return false;
}

/*
 * How many times the message's own field 1 (every list answer's repeated items) occurs, counted
 * on the wire before anything is allocated: an answer of more than CRI_ITEMS_MAX items is refused
 * by its count, cheaply. Broken framing stops the count (the unpack then says what is wrong).
 */
static size_t wire_items(const uint8_t *msg, size_t len)
{
	size_t i = 0, n = 0;
	uint64_t tag, value;

	while (i < len && wire_varint(msg, len, &i, &tag)) {
		uint64_t skip = 0;
		switch (tag & 7) {
		case 0:
			if (!wire_varint(msg, len, &i, &value))
				return n;
			break;
		case 1:
			skip = 8;
			break;
		case 2:
			if (!wire_varint(msg, len, &i, &skip))
				return n;
			break;
		case 5:
			skip = 4;
			break;
		default:
			return n;
		}
		if (skip > len - i)
			return n;
		i += (size_t)skip;
		n += (tag >> 3) == 1 && (tag & 7) == 2;
	}
	return n;
}

static int items_check(const uint8_t *msg, size_t len, const char *what, char *why, size_t size)
{
	size_t n = wire_items(msg, len);

	return n > CRI_ITEMS_MAX ? set_why(why, size, -E2BIG, "%zu %s, more than %d", n, what, CRI_ITEMS_MAX) : 0;
}

/*
 * The message m, unpacked within the budget (free it with FREE_UNPACKED), or a return of -E2BIG
 * (beyond the budget) or -EBADMSG naming what it is not.
 */
#define UNPACK(type, fn, msg, len, why, size)                                                        \
	decode_budget budget_ = { .limit = CRI_DECODE_BUDGET };                                      \
	ProtobufCAllocator alloc_ = { .alloc = capped_alloc, .free = capped_free, .allocator_data = &budget_ }; \
	type *m = fn(&alloc_, len, msg);                                                             \
	if (!m && budget_.exceeded)                                                                  \
		return set_why(why, size, -E2BIG, "%s of %zu bytes needs more than %u MiB to decode",        \
		            &#type[sizeof("Runtime__V1__") - 1], len, CRI_DECODE_BUDGET >> 20);         \
	if (!m)                                                                                      \
	return set_why(why, size, -EBADMSG, "not a valid %s message (%zu bytes)", &#type[sizeof("Runtime__V1__") - 1], len)
#define FREE_UNPACKED(fn, m) fn(m, &alloc_)

int cri_decode_version(const uint8_t *msg, size_t len, char *runtime, size_t size, char *why, size_t why_size)
{
	UNPACK(Runtime__V1__VersionResponse, runtime__v1__version_response__unpack, msg, len, why, why_size);
	int r = 0;

	if (!token_ok(m->runtime_name, 64, false) || !token_ok(m->runtime_version, 64, true) ||
	    !token_ok(m->runtime_api_version, 16, true))
		r = set_why(why, why_size, -EBADMSG, "runtime name or version is empty, too long or not printable");
	else
		snprintf(runtime, size, "%s %s (CRI %s)", m->runtime_name, m->runtime_version,
		         m->runtime_api_version[0] ? m->runtime_api_version : "?");
	FREE_UNPACKED(runtime__v1__version_response__free_unpacked, m);
	return r;
}

static int fs_list(Runtime__V1__FilesystemUsage **in, size_t n, const char *what, cri_fs_usage **ret, char *why,
                   size_t size)
{
	cri_fs_usage *out;

	if (n > 64)
		return set_why(why, size, -E2BIG, "%zu %s filesystems", n, what);
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *mp = in[i]->fs_id ? in[i]->fs_id->mountpoint : "";
		if (!path_ok(mp)) {
			fs_free(out, i);
			return set_why(why, size, -EBADMSG, "%s filesystem %zu: mountpoint is not a clean absolute path", what, i);
		}
		out[i].mountpoint = strdup(mp);
		if (!out[i].mountpoint) {
			fs_free(out, i);
			return -ENOMEM;
		}
		if ((in[i]->used_bytes && in[i]->used_bytes->value > INT64_MAX) ||
		    (in[i]->inodes_used && in[i]->inodes_used->value > INT64_MAX)) {
			fs_free(out, i + 1);
			return set_why(why, size, -EBADMSG, "%s filesystem %zu: usage beyond 2^63", what, i);
		}
		out[i].has_used = in[i]->used_bytes != NULL;
		out[i].used_bytes = out[i].has_used ? in[i]->used_bytes->value : 0;
		out[i].has_inodes = in[i]->inodes_used != NULL;
		out[i].inodes_used = out[i].has_inodes ? in[i]->inodes_used->value : 0;
	}
	*ret = out;
	return 0;
}

int cri_decode_fs_info(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size)
{
	UNPACK(Runtime__V1__ImageFsInfoResponse, runtime__v1__image_fs_info_response__unpack, msg, len, why, why_size);
	cri_fs_usage *img = NULL, *cont = NULL;
	int r = fs_list(m->image_filesystems, m->n_image_filesystems, "image", &img, why, why_size);

	if (r >= 0)
		r = fs_list(m->container_filesystems, m->n_container_filesystems, "container", &cont, why, why_size);
	if (r >= 0) {
		fs_free(l->image_fs, l->n_image_fs);
		fs_free(l->container_fs, l->n_container_fs);
		l->image_fs = img;
		l->n_image_fs = m->n_image_filesystems;
		l->container_fs = cont;
		l->n_container_fs = m->n_container_filesystems;
	} else
		fs_free(img, m->n_image_filesystems);
	FREE_UNPACKED(runtime__v1__image_fs_info_response__free_unpacked, m);
	return r;
}

static int image_copy(const Runtime__V1__Image *in, size_t i, cri_image *out, char *why, size_t size)
{
	if (!token_ok(in->id, CRI_STRING_MAX, false))
		return set_why(why, size, -EBADMSG, "image %zu: id is empty, too long or not printable", i);
	if (in->size > INT64_MAX)
		return set_why(why, size, -EBADMSG, "image %s: size beyond 2^63", in->id);
	if (in->n_repo_tags > 256)
		return set_why(why, size, -EBADMSG, "image %s: %zu tags", in->id, in->n_repo_tags);
	for (size_t t = 0; t < in->n_repo_tags; t++)
		if (!token_ok(in->repo_tags[t], CRI_STRING_MAX, false))
			return set_why(why, size, -EBADMSG, "image %s: tag %zu is empty, too long or not printable", in->id, t);
	out->id = strdup(in->id);
	out->tags = calloc(in->n_repo_tags ? in->n_repo_tags : 1, sizeof(char *));
	if (!out->id || !out->tags)
		return -ENOMEM;
	for (; out->n_tags < in->n_repo_tags; out->n_tags++)
		if (!(out->tags[out->n_tags] = strdup(in->repo_tags[out->n_tags])))
			return -ENOMEM;
	out->size = in->size;
	out->pinned = in->pinned;
	return 0;
}

int cri_decode_images(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size)
{
	int pre = items_check(msg, len, "images", why, why_size);
	if (pre < 0)
		return pre;
	UNPACK(Runtime__V1__ListImagesResponse, runtime__v1__list_images_response__unpack, msg, len, why, why_size);
	cri_image *out = NULL;
	size_t n = 0;
	int r = 0;

	if (m->n_images > CRI_ITEMS_MAX)
		r = set_why(why, why_size, -E2BIG, "%zu images, more than %d", m->n_images, CRI_ITEMS_MAX);
	else if (!(out = calloc(m->n_images ? m->n_images : 1, sizeof(*out))))
		r = -ENOMEM;
	for (; r >= 0 && n < m->n_images; n++)
		r = image_copy(m->images[n], n, &out[n], why, why_size);
	if (r >= 0) {
		images_free(l->images, l->n_images);
		l->images = out;
		l->n_images = n;
	} else
		images_free(out, n);
	FREE_UNPACKED(runtime__v1__list_images_response__free_unpacked, m);
	return r;
}

static int sandbox_copy(const Runtime__V1__PodSandbox *in, size_t i, cri_sandbox *out, char *why, size_t size)
{
	const Runtime__V1__PodSandboxMetadata *md = in->metadata;
	const char *uid;

	LABEL(in->labels, in->n_labels, UID_LABEL, uid);

	if (!token_ok(in->id, CRI_STRING_MAX, false))
		return set_why(why, size, -EBADMSG, "sandbox %zu: id is empty, too long or not printable", i);
	/* the metadata's uid first: the kubelet's stats and GC know a sandbox's pod by it */
	if (md && md->uid && md->uid[0])
		uid = md->uid;
	if (!token_ok(uid, 64, true) || (md && (!token_ok(md->name, 253, true) || !token_ok(md->namespace_, 63, true))))
		return set_why(why, size, -EBADMSG, "sandbox %s: pod uid, name or namespace too long or not printable", in->id);
	out->id = strdup(in->id);
	out->uid = dup_or_empty(uid);
	out->name = dup_or_empty(md ? md->name : NULL);
	out->namespace_ = dup_or_empty(md ? md->namespace_ : NULL);
	if (!out->id || !out->uid || !out->name || !out->namespace_)
		return -ENOMEM;
	out->ready = in->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY;
	out->created_at = in->created_at;
	return 0;
}

int cri_decode_sandboxes(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size)
{
	int pre = items_check(msg, len, "sandboxes", why, why_size);
	if (pre < 0)
		return pre;
	UNPACK(Runtime__V1__ListPodSandboxResponse, runtime__v1__list_pod_sandbox_response__unpack, msg, len, why,
	       why_size);
	cri_sandbox *out = NULL;
	size_t n = 0;
	int r = 0;

	if (m->n_items > CRI_ITEMS_MAX)
		r = set_why(why, why_size, -E2BIG, "%zu sandboxes, more than %d", m->n_items, CRI_ITEMS_MAX);
	else if (!(out = calloc(m->n_items ? m->n_items : 1, sizeof(*out))))
		r = -ENOMEM;
	for (; r >= 0 && n < m->n_items; n++)
		r = sandbox_copy(m->items[n], n, &out[n], why, why_size);
	if (r >= 0) {
		sandboxes_free(l->sandboxes, l->n_sandboxes);
		l->sandboxes = out;
		l->n_sandboxes = n;
	} else
		sandboxes_free(out, n);
	FREE_UNPACKED(runtime__v1__list_pod_sandbox_response__free_unpacked, m);
	return r;
}

static int container_copy(const Runtime__V1__Container *in, size_t i, cri_container *out, char *why, size_t size)
{
	const char *uid;
	const char *image_id = in->image_id && in->image_id[0] ? in->image_id : in->image_ref;

	LABEL(in->labels, in->n_labels, UID_LABEL, uid);
	if (!token_ok(in->id, CRI_STRING_MAX, false))
		return set_why(why, size, -EBADMSG, "container %zu: id is empty, too long or not printable", i);
	if (!token_ok(in->pod_sandbox_id, CRI_STRING_MAX, true) || !token_ok(uid, 64, true) ||
	    !token_ok(image_id, CRI_STRING_MAX, true) || !token_ok(in->image ? in->image->image : NULL, CRI_STRING_MAX, true) ||
	    !token_ok(in->metadata ? in->metadata->name : NULL, 253, true))
		return set_why(why, size, -EBADMSG, "container %s: sandbox, pod uid, image or name too long or not printable",
		            in->id);
	out->id = strdup(in->id);
	out->sandbox_id = dup_or_empty(in->pod_sandbox_id);
	out->name = dup_or_empty(in->metadata ? in->metadata->name : NULL);
	out->pod_uid = dup_or_empty(uid);
	out->image_id = dup_or_empty(image_id);
	out->image = dup_or_empty(in->image ? in->image->image : NULL);
	if (!out->id || !out->sandbox_id || !out->name || !out->pod_uid || !out->image_id || !out->image)
		return -ENOMEM;
	out->state = in->state >= 0 && in->state <= 3 ? (cri_state)in->state : CRI_UNKNOWN;
	out->attempt = in->metadata ? in->metadata->attempt : 0;
	out->created_at = in->created_at;
	return 0;
}

int cri_decode_containers(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size)
{
	int pre = items_check(msg, len, "containers", why, why_size);
	if (pre < 0)
		return pre;
	UNPACK(Runtime__V1__ListContainersResponse, runtime__v1__list_containers_response__unpack, msg, len, why,
	       why_size);
	cri_container *out = NULL;
	size_t n = 0;
	int r = 0;

	if (m->n_containers > CRI_ITEMS_MAX)
		r = set_why(why, why_size, -E2BIG, "%zu containers, more than %d", m->n_containers, CRI_ITEMS_MAX);
	else if (!(out = calloc(m->n_containers ? m->n_containers : 1, sizeof(*out))))
		r = -ENOMEM;
	for (; r >= 0 && n < m->n_containers; n++)
		r = container_copy(m->containers[n], n, &out[n], why, why_size);
	if (r >= 0 && n > 1) {
		qsort(out, n, sizeof(*out), by_id);
		for (size_t i = 1; i < n && r >= 0; i++)
			if (strcmp(out[i - 1].id, out[i].id) == 0)
				r = set_why(why, why_size, -EBADMSG, "container %s listed twice", out[i].id);
	}
	if (r >= 0) {
		containers_free(l->containers, l->n_containers);
		l->containers = out;
		l->n_containers = n;
	} else
		containers_free(out, n);
	FREE_UNPACKED(runtime__v1__list_containers_response__free_unpacked, m);
	return r;
}

int cri_decode_stats(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size)
{
	int pre = items_check(msg, len, "container stats", why, why_size);
	if (pre < 0)
		return pre;
	UNPACK(Runtime__V1__ListContainerStatsResponse, runtime__v1__list_container_stats_response__unpack, msg, len,
	       why, why_size);
	int r = 0;

	if (m->n_stats > CRI_ITEMS_MAX)
		r = set_why(why, why_size, -E2BIG, "%zu container stats, more than %d", m->n_stats, CRI_ITEMS_MAX);
	/* checked whole first: a refused answer changes nothing */
	for (size_t i = 0; r >= 0 && i < m->n_stats; i++) {
		const Runtime__V1__ContainerStats *s = m->stats[i];
		const Runtime__V1__FilesystemUsage *w = s->writable_layer;
		if (!s->attributes || !token_ok(s->attributes->id, CRI_STRING_MAX, false))
			r = set_why(why, why_size, -EBADMSG, "container stats %zu: no valid container id", i);
		else if (w && ((w->used_bytes && w->used_bytes->value > INT64_MAX) ||
		               (w->inodes_used && w->inodes_used->value > INT64_MAX)))
			r = set_why(why, why_size, -EBADMSG, "container %s: writable layer usage beyond 2^63", s->attributes->id);
	}
	for (size_t i = 0; r >= 0 && i < m->n_stats; i++) {
		const Runtime__V1__ContainerStats *s = m->stats[i];
		cri_container *c = cri_listing_container(l, s->attributes->id);
		if (!c || !s->writable_layer || !s->writable_layer->used_bytes)
			continue;
		c->has_rootfs = true;
		c->rootfs_bytes = s->writable_layer->used_bytes->value;
		c->rootfs_inodes = s->writable_layer->inodes_used ? s->writable_layer->inodes_used->value : 0;
	}
	FREE_UNPACKED(runtime__v1__list_container_stats_response__free_unpacked, m);
	return r;
}

int cri_decode_status_log_path(const uint8_t *msg, size_t len, char **ret, char *why, size_t why_size)
{
	UNPACK(Runtime__V1__ContainerStatusResponse, runtime__v1__container_status_response__unpack, msg, len, why,
	       why_size);
	const char *p = m->status && m->status->log_path ? m->status->log_path : "";
	int r = 0;

	if (!path_ok(p))
		r = set_why(why, why_size, -EBADMSG, "log path is not a clean absolute path");
	else if (!(*ret = strdup(p)))
		r = -ENOMEM;
	FREE_UNPACKED(runtime__v1__container_status_response__free_unpacked, m);
	return r;
}

int cri_decode_status_info(const uint8_t *msg, size_t len, const char *key, char **ret, char *why, size_t why_size)
{
	UNPACK(Runtime__V1__StatusResponse, runtime__v1__status_response__unpack, msg, len, why, why_size);
	int r = 0;

	*ret = NULL;
	for (size_t i = 0; i < m->n_info; i++)
		if (m->info[i]->key && strcmp(m->info[i]->key, key) == 0 && m->info[i]->value) {
			if (!(*ret = strdup(m->info[i]->value)))
				r = -ENOMEM;
			break;
		}
	FREE_UNPACKED(runtime__v1__status_response__free_unpacked, m);
	return r;
}

/* --- requests ------------------------------------------------------------------------------ */

static int pack(const ProtobufCMessage *m, uint8_t **ret, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(n ? n : 1);

	if (!b)
		return -ENOMEM;
	*len = protobuf_c_message_pack(m, b);
	*ret = b;
	return 0;
}

int cri_encode_version(uint8_t **ret, size_t *len)
{
	Runtime__V1__VersionRequest m = RUNTIME__V1__VERSION_REQUEST__INIT;
	m.version = (char *)"v1";
	return pack(&m.base, ret, len);
}

int cri_encode_status(const char *container_id, uint8_t **ret, size_t *len)
{
	Runtime__V1__ContainerStatusRequest m = RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
	m.container_id = (char *)container_id;
	return pack(&m.base, ret, len);
}

int cri_encode_runtime_status(bool verbose, uint8_t **ret, size_t *len)
{
	Runtime__V1__StatusRequest m = RUNTIME__V1__STATUS_REQUEST__INIT;
	m.verbose = verbose;
	return pack(&m.base, ret, len);
}

int cri_encode_remove_image(const char *image, uint8_t **ret, size_t *len)
{
	Runtime__V1__RemoveImageRequest m = RUNTIME__V1__REMOVE_IMAGE_REQUEST__INIT;
	Runtime__V1__ImageSpec spec = RUNTIME__V1__IMAGE_SPEC__INIT;
	spec.image = (char *)image;
	m.image = &spec;
	return pack(&m.base, ret, len);
}
