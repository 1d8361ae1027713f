/* SPDX-License-Identifier: MIT */
#include "theap.h"

#include <errno.h>
#include <stdlib.h>

static bool less(const struct theap_entry *a, const struct theap_entry *b)
{
	return a->at != b->at ? a->at < b->at : a->seq < b->seq;
}

static void put(struct theap *h, size_t i, struct theap_entry *e)
{
	h->v[i] = e;
	e->idx = i;
}

static void sift(struct theap *h, size_t i)
{
	struct theap_entry *e = h->v[i];
	while (i > 0 && less(e, h->v[(i - 1) / 2])) {
		put(h, i, h->v[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t l = 2 * i + 1, best = l;
		if (l >= h->n)
			break;
		if (l + 1 < h->n && less(h->v[l + 1], h->v[l]))
			best = l + 1;
		if (!less(h->v[best], e))
			break;
		put(h, i, h->v[best]);
		i = best;
	}
	put(h, i, e);
}

int pp__theap_set(struct theap *h, struct theap_entry *e, int64_t at)
{
	if (e->in) {
		if (e->at == at)
			return 0;
		e->at = at;
		e->seq = h->seq++;
		sift(h, e->idx);
		return 0;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct theap_entry **v = realloc(h->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	e->at = at;
	e->seq = h->seq++;
	e->in = true;
	put(h, h->n++, e);
	sift(h, h->n - 1);
	return 0;
}

void pp__theap_remove(struct theap *h, struct theap_entry *e)
{
	if (!e->in)
		return;
	size_t i = e->idx;
	struct theap_entry *last = h->v[--h->n];
	e->in = false;
	if (i == h->n)
		return;
	put(h, i, last);
	sift(h, i);
}

void pp__theap_done(struct theap *h)
{
	free(h->v);
	*h = (struct theap){ 0 };
}
