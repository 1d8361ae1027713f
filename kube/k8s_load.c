/* SPDX-License-Identifier: MIT */
/*
 * Files -> objects, streamed (kstream.h): each object is decoded as it is read and its tree
 * freed, so a cluster dump costs the decoded cluster, not the document.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"
#include "k8s_decode.h"
#include "kstream.h"
#include <unistd.h>

void k8s_cluster_init(k8s_cluster *c)
{
	memset(c, 0, sizeof(*c));
}

void k8s_cluster_done(k8s_cluster *c)
{
	free(c->classes);
	free(c->nodes);
	free(c->pods);
	free(c->pdbs);
	free(c->quotas);
	free(c->limited);
	free(c->rejected_classes);
	karena_free(&c->arena);
	memset(c, 0, sizeof(*c));
}

struct load {
	k8s_cluster *c;
	diag *d;
	const char *file; /* in the cluster's arena: objects keep it in their locations */
	bool bad;
};

static int on_item(void *userdata, const kval *item)
{
	struct load *l = userdata;
	int r = k8s_decode_object(l->c, l->d, l->file, item, 0);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		l->bad = true;
	return 0;
}

/* fd >= 0: read it; else text[0..len). *ret_values (when not NULL): the top-level values read. */
static int stream(const char *name, int fd, const char *text, size_t len, diag *d, kstream_item_fn fn, void *ud,
                  uint64_t *ret_values)
{
	kstream *s = NULL;
	int r = kstream_new(&s, KSTREAM_AUTO, name, d, fn, ud);

	if (r < 0)
		return r;
	if (fd >= 0)
		r = kstream_read_fd(s, fd);
	else if ((r = kstream_feed(s, text, len)) == 0)
		r = kstream_end(s);
	if (ret_values)
		*ret_values = kstream_values(s);
	kstream_free(s);
	return r;
}

static int load(k8s_cluster *c, const char *name, int fd, const char *text, size_t len, diag *d)
{
	struct load l = { .c = c, .d = d };
	int r;

	l.file = karena_strdup(&c->arena, name);
	if (!l.file)
		return -ENOMEM;
	r = stream(l.file, fd, text, len, d, on_item, &l, NULL);
	if (r == -ENOMEM)
		return r;
	return r < 0 || l.bad ? -EINVAL : 0;
}

static int read_file(const char *path, const char *name, diag *d, kstream_item_fn fn, void *userdata,
                     uint64_t *ret_values)
{
	bool is_stdin = strcmp(path, "-") == 0;
	int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0) {
		r = -errno;
		diag_error(d, NULL, NULL, "%s: %s", path, strerror(-r));
		return r;
	}
	r = stream(name, fd, NULL, 0, d, fn, userdata, ret_values);
	if (!is_stdin)
		close(fd);
	return r;
}

int k8s_read_file(const char *path, const char *name, diag *d, kstream_item_fn fn, void *userdata)
{
	return read_file(path, name, d, fn, userdata, NULL);
}

int k8s_load_file(k8s_cluster *c, const char *path, diag *d)
{
	struct load l = { .c = c, .d = d };
	uint64_t values = 0;
	int r;

	l.file = karena_strdup(&c->arena, strcmp(path, "-") == 0 ? "<stdin>" : path);
	if (!l.file)
		return -ENOMEM;
	r = read_file(path, l.file, d, on_item, &l, &values);
	if (r == -ENOMEM)
		diag_error(d, NULL, NULL, "%s: out of memory", path);
	if (r < 0)
		return r;
	/* an empty file (a failed redirect, `: > f`) is no cluster with nothing in it */
	if (values == 0) {
		diag_error(d, &(struct diag_loc){ .file = l.file }, NULL, "empty: no object or List in it");
		d->unusable = true;
		return -EINVAL;
	}
	return l.bad ? -EINVAL : 0;
}

int k8s_read_string(const char *name, const char *text, size_t len, diag *d, kstream_item_fn fn, void *userdata)
{
	return stream(name, -1, text, len, d, fn, userdata, NULL);
}

int k8s_load_string(k8s_cluster *c, const char *name, const char *text, size_t len, diag *d)
{
	return load(c, name, -1, text, len, d);
}

const struct k8s_pod *k8s_cluster_find_pod(const k8s_cluster *c, const char *namespace_, const char *name)
{
	for (size_t i = 0; i < c->npods; i++)
		if (strcmp(c->pods[i].namespace_, namespace_) == 0 && strcmp(c->pods[i].name, name) == 0)
			return &c->pods[i];
	return NULL;
}

bool k8s_class_rejected(const k8s_cluster *c, const char *name)
{
	for (size_t i = 0; name && i < c->nrejected_classes; i++)
		if (strcmp(c->rejected_classes[i], name) == 0)
			return true;
	return false;
}

int k8s_pod_label(const struct k8s_pod *p, char *buf, size_t size)
{
	int r = snprintf(buf, size, "pods/%s/%s", p->namespace_, p->name);
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}
