/* SPDX-License-Identifier: MIT */
/*
 * The stream front: bytes through the gate (k8s_input.c), the format chosen, then to the JSON
 * reader as they come or (YAML fed by push) kept for kstream_end.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kparse.h"
#include "kstream.h"
#include "grow.h"

/* The front is the parse state (kparse.h) behind the public handle. */
struct kstream {
	kparse p;
};

#define CHUNK (64 * 1024)

int kstream_new(kstream **ret, kstream_format fmt, const char *name, diag *d, kstream_item_fn fn,
                void *userdata)
{
	kstream *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->p.name = strdup(name ? name : "<input>");
	if (!s->p.name) {
		free(s);
		return -ENOMEM;
	}
	s->p.d = d;
	s->p.fn = fn;
	s->p.userdata = userdata;
	s->p.fmt = fmt;
	s->p.fd = -1;
	s->p.item_max = KSTREAM_ITEM_MAX;
	s->p.diag_mark = d->nerrors + d->nwarnings;
	k8s_gate_init(&s->p.gate, s->p.name, KSTREAM_TOTAL_MAX, d);
	kb_init(&s->p);
	*ret = s;
	return 0;
}

void kstream_set_limits(kstream *s, size_t total_max, size_t item_max)
{
	kparse *p = &s->p;

	p->gate.max = total_max;
	if (item_max)
		p->item_max = item_max;
}

kstream *kstream_free(kstream *s)
{
	if (!s)
		return NULL;
	kparse *p = &s->p;

	kjson_free(p);
	kb_done(p);
	free(p->keep);
	free(p->pre);
	free(p->ybuf);
	free(p->list_rv);
	free(p->list_continue);
	free(p->name);
	free(s);
	return NULL;
}

static int append(char **buf, size_t *len, size_t *cap, const void *p, size_t n)
{
	if (n > SIZE_MAX - *len || GROW_ARRAY_FROM(buf, cap, *len + n, CHUNK) < 0)
		return -ENOMEM;
	memcpy(*buf + *len, p, n);
	*len += n;
	return 0;
}

/* Picks JSON or YAML on the first non-blank byte. */
static void sniff(kparse *s, const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')
			continue;
		if (p[i] == '{' || p[i] == '[') {
			s->fmt = KSTREAM_JSON;
			s->keeping = true;
		} else {
			s->fmt = KSTREAM_YAML;
		}
		return;
	}
}

/* JSON failed before any item: start over as YAML with what was kept. */
static int fall_back_to_yaml(kparse *s)
{
	kjson_free(s);
	kb_reset(s);
	s->err = 0;
	s->fmt = KSTREAM_YAML;
	s->keeping = false;
	free(s->ybuf);
	s->ybuf = s->keep;
	s->ylen = s->nkeep;
	s->ycap = s->cap_keep;
	s->yoff = 0;
	s->keep = NULL;
	s->nkeep = s->cap_keep = 0;
	return 0;
}

static int feed_json(kparse *s, const void *buf, size_t len, bool *fell_back)
{
	int r;

	if (!s->yajl && (r = kjson_new(s)) < 0)
		return s->err = r;
	if (s->keeping && append(&s->keep, &s->nkeep, &s->cap_keep, buf, len) < 0)
		return s->err = -ENOMEM;
	r = kjson_feed(s, buf, len);
	if (r < 0 && r != -ENOMEM && kjson_may_fall_back(s)) {
		fall_back_to_yaml(s);
		*fell_back = true;
		return 0;
	}
	if (!s->keeping && s->keep) {
		free(s->keep);
		s->keep = NULL;
		s->nkeep = s->cap_keep = 0;
	}
	return r;
}

int kstream_feed(kstream *s, const void *buf, size_t len)
{
	kparse *p = &s->p;
	bool fell_back = false;
	int r;

	if (p->err)
		return p->err;
	if (p->ended)
		return -EINVAL;
	if (len == 0)
		return 0;
	if ((r = k8s_gate_feed(&p->gate, buf, len)) < 0)
		return p->err = r;
	if (p->fmt == KSTREAM_AUTO) {
		sniff(p, buf, len);
		if (p->fmt == KSTREAM_AUTO) {
			/* blanks only so far: kept, they count for lines and YAML indentation */
			if (append(&p->pre, &p->npre, &p->cap_pre, buf, len) < 0)
				return p->err = -ENOMEM;
			return 0;
		}
		if (p->npre) {
			char *pre = p->pre;
			size_t npre = p->npre;
			p->pre = NULL;
			p->npre = p->cap_pre = 0;
			r = p->fmt == KSTREAM_JSON ? feed_json(p, pre, npre, &fell_back)
			                           : append(&p->ybuf, &p->ylen, &p->ycap, pre, npre);
			free(pre);
			if (r < 0)
				return p->err = r;
			if (fell_back) {
				if (append(&p->ybuf, &p->ylen, &p->ycap, buf, len) < 0)
					return p->err = -ENOMEM;
				return 0;
			}
		}
	}
	if (p->fmt == KSTREAM_JSON) {
		r = feed_json(p, buf, len, &fell_back);
		if (r < 0 || !fell_back)
			return r;
		return 0; /* the kept bytes (this chunk included) are in ybuf now */
	}
	if (append(&p->ybuf, &p->ylen, &p->ycap, buf, len) < 0)
		return p->err = -ENOMEM;
	return 0;
}

static int end_common(kparse *s)
{
	int r;

	/* YAML pulling from a descriptor ends the gate itself, at the descriptor's end */
	if ((s->fmt != KSTREAM_YAML || s->fd < 0) && (r = k8s_gate_end(&s->gate)) < 0)
		return s->err = r;
	if (s->fmt == KSTREAM_JSON) {
		r = kjson_end(s);
		if (r < 0 && r != -ENOMEM && kjson_may_fall_back(s))
			fall_back_to_yaml(s);
		else
			return r;
	}
	if (s->fmt == KSTREAM_YAML)
		return kyaml_run(s);
	return 0; /* empty input */
}

int kstream_end(kstream *s)
{
	kparse *p = &s->p;

	if (p->err)
		return p->err;
	if (p->ended)
		return 0;
	p->ended = true;
	return end_common(p);
}

int kstream_read_fd(kstream *s, int fd)
{
	kparse *p = &s->p;
	unsigned char *buf;
	struct stat st;
	int r = 0;

	if (p->err)
		return p->err;
	/* a regular file's size tells "too large" before reading a byte */
	if (p->gate.max && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size > p->gate.max) {
		diag_error(p->d, NULL, NULL, "%s: larger than %zu bytes, refusing to read it", p->name, p->gate.max);
		return p->err = -EFBIG;
	}
	buf = malloc(CHUNK);
	if (!buf)
		return p->err = -ENOMEM;
	/* JSON is pushed chunk by chunk; YAML (chosen or fallen back to) pulls the rest itself */
	while (p->fmt != KSTREAM_YAML) {
		ssize_t n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			diag_error(p->d, NULL, NULL, "%s: %s", p->name, strerror(-r));
			p->err = r;
			break;
		}
		if (n == 0)
			break;
		if ((r = kstream_feed(s, buf, (size_t)n)) < 0)
			break;
	}
	free(buf);
	if (r < 0)
		return r;
	p->fd = fd;
	r = kstream_end(s);
	p->fd = -1;
	return r;
}

const char *kstream_name(const kstream *s)
{
	return s->p.name;
}

kstream_format kstream_format_of(const kstream *s)
{
	return s->p.fmt;
}

uint64_t kstream_items(const kstream *s)
{
	return s->p.nitems;
}

uint64_t kstream_values(const kstream *s)
{
	return s->p.nvalues;
}

const char *kstream_list_resource_version(const kstream *s)
{
	return s->p.list_rv;
}

const char *kstream_list_continue(const kstream *s)
{
	return s->p.list_continue;
}
