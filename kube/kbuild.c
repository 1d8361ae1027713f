/* SPDX-License-Identifier: MIT */
/*
 * Parser events -> kval trees, one item at a time. The readers call kb_begin/kb_scalar/kb_end as
 * they parse; children wait on one shared stack (kids) until their collection closes, then move
 * into the arena as an array. Elements of a top-level "items" sequence are built in their own
 * arena, handed to the callback as they close and forgotten, so a List of any length costs the
 * memory of one item.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kparse.h"
#include "grow.h"

#define ANCHORS_MAX 256

static bool is_merge_key(const kval *k);

/* Drops the value being built: the List item it is in, else the top-level value. */
static void mark_bad(struct kbuild *b)
{
	if (b->nframes >= 2 && b->frames[1].items)
		b->bad = true;
	else
		b->bad_top = true;
}

static bool ends_with_list(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	return n >= 4 && strcmp(s + n - 4, "List") == 0;
}

static bool key_is(const kval *k, const char *s, size_t len)
{
	return k && k->type < KVAL_MAP && k->n == len && memcmp(k->u.s, s, len) == 0;
}

void kb_init(kparse *s)
{
	memset(&s->b, 0, sizeof(s->b));
	s->b.alias_budget = KSTREAM_ALIAS_NODES_MAX;
}

static void drop_pending(struct kbuild *b)
{
	free(b->pending_rv);
	free(b->pending_continue);
	b->pending_rv = b->pending_continue = NULL;
}

void kb_reset(kparse *s)
{
	struct kbuild *b = &s->b;

	karena_reset(&b->header);
	karena_reset(&b->item);
	b->nframes = 0;
	b->nkids = 0;
	b->nanchors = 0;
	b->alias_budget = KSTREAM_ALIAS_NODES_MAX;
	b->bad = b->bad_top = b->kind_not_list = b->split = false;
	b->top_kind = NULL;
	drop_pending(b);
}

void kb_done(kparse *s)
{
	struct kbuild *b = &s->b;

	karena_free(&b->header);
	karena_free(&b->item);
	free(b->kids);
	free(b->anchors);
	free(b->hash);
	drop_pending(b);
	memset(b, 0, sizeof(*b));
}

bool kb_in_value(const kparse *s)
{
	return s->b.nframes > 0;
}

/* The arena for a node whose parent is frames[parent] (-1: top level). */
static karena *arena_for(struct kbuild *b, int parent)
{
	return parent >= 1 && b->frames[1].items ? &b->item : &b->header;
}

static void *node_alloc(kparse *s, karena *a, size_t size, uint32_t line)
{
	void *p = karena_alloc(a, size);
	if (!p) {
		s->err = -ENOMEM;
		return NULL;
	}
	if (a->used > s->item_max) {
		kp_error(s, line, "object larger than %zu bytes, refusing it", s->item_max);
		s->err = -EINVAL;
		return NULL;
	}
	return p;
}

static void forget_list_meta(kparse *s)
{
	free(s->list_rv);
	free(s->list_continue);
	s->list_rv = s->list_continue = NULL;
}

/* The top-level value is a List: its metadata, if seen already, becomes the stream's. */
static void publish_list_meta(kparse *s)
{
	struct kbuild *b = &s->b;

	if (!b->pending_rv && !b->pending_continue)
		return;
	forget_list_meta(s);
	s->list_rv = b->pending_rv;
	s->list_continue = b->pending_continue;
	b->pending_rv = b->pending_continue = NULL;
}

/* metadata of the top-level mapping: kept aside until we know it is a List's */
static int stash_meta(kparse *s, const kval *meta)
{
	struct kbuild *b = &s->b;
	const kval *rv = kval_get(meta, "resourceVersion"), *cont = kval_get(meta, "continue");

	drop_pending(b);
	if (rv && rv->type == KVAL_STRING && !(b->pending_rv = strdup(rv->u.s)))
		return -ENOMEM;
	if (cont && cont->type == KVAL_STRING && cont->n && !(b->pending_continue = strdup(cont->u.s)))
		return -ENOMEM;
	if (b->split)
		publish_list_meta(s);
	return 0;
}

static void drop_item_anchors(struct kbuild *b)
{
	size_t j = 0;
	for (size_t i = 0; i < b->nanchors; i++)
		if (!b->anchors[i].in_item)
			b->anchors[j++] = b->anchors[i];
	b->nanchors = j;
}

static int deliver(kparse *s, const kval *v, bool item)
{
	struct kbuild *b = &s->b;
	bool *bad = item ? &b->bad : &b->bad_top;
	int r = 0;

	if (*bad)
		*bad = false;
	else {
		s->nitems++;
		s->keeping = false; /* an item is out: no more falling back to YAML */
		r = s->fn ? s->fn(s->userdata, v) : 0;
	}
	if (item) {
		karena_reset(&b->item);
		drop_item_anchors(b);
		b->alias_budget = KSTREAM_ALIAS_NODES_MAX;
	}
	if (r < 0)
		s->err = r;
	return r;
}

static int top_done(kparse *s, const kval *v)
{
	struct kbuild *b = &s->b;
	int r = 0;

	s->nvalues++;
	if (b->split && !b->top_kind) {
		/* kubectl's YAML List ends with kind: List and metadata after its items: without them the
		 * file was most likely cut at an item's end, and its items would read as a smaller cluster */
		r = kp_error(s, kval_line(v),
		             "a List (top-level \"items\") without kind%s",
		             s->fmt == KSTREAM_YAML ? ": cut short after its items? (kubectl's ends with kind: List)" : "");
		s->d->unusable = true;
		s->err = r;
	} else if (b->split) {
		if (b->top_kind && !ends_with_list(b->top_kind))
			diag_warn(s->d, &(struct diag_loc){ .file = s->name, .line = (int)kval_line(v) }, NULL,
			          "kind %s has a top-level \"items\" list: read as a List", b->top_kind);
		publish_list_meta(s);
	} else {
		if (ends_with_list(b->top_kind)) {
			forget_list_meta(s);
			publish_list_meta(s);
		}
		r = deliver(s, v, false);
	}
	karena_reset(&b->header);
	b->nanchors = 0;
	b->alias_budget = KSTREAM_ALIAS_NODES_MAX;
	b->split = b->kind_not_list = b->bad = b->bad_top = false;
	b->top_kind = NULL;
	drop_pending(b);
	return r;
}

/* Adds a finished node to its parent, or hands it out. */
static int push_child(kparse *s, const kval *v)
{
	struct kbuild *b = &s->b;

	if (b->nframes == 0)
		return top_done(s, v);
	struct kframe *f = &b->frames[b->nframes - 1];
	if (f->items)
		return deliver(s, v, true);
	if (f->type == KVAL_MAP && (b->nkids - f->start) % 2 == 1 && is_merge_key(b->kids[b->nkids - 1]))
		f->merge = true;
	if (b->nframes == 1 && f->type == KVAL_MAP && (b->nkids - f->start) % 2 == 1) {
		const kval *key = b->kids[b->nkids - 1];
		if (key_is(key, "kind", 4) && v->type == KVAL_STRING) {
			b->top_kind = v->u.s;
			if (!b->split && !ends_with_list(v->u.s))
				b->kind_not_list = true;
		} else if (key_is(key, "metadata", 8) && v->type == KVAL_MAP) {
			if (stash_meta(s, v) < 0)
				return s->err = -ENOMEM;
		}
	}
	if (GROW_ARRAY_FROM(&b->kids, &b->cap_kids, b->nkids + 1, 64) < 0)
		return s->err = -ENOMEM;
	b->kids[b->nkids++] = v;
	return 0;
}

static int add_anchor(kparse *s, const char *name, size_t len, const kval *v, uint32_t line)
{
	struct kbuild *b = &s->b;

	if (!name)
		return 0;
	if (b->nanchors >= ANCHORS_MAX) {
		kp_error(s, line, "more than %d YAML anchors in one object, refusing it", ANCHORS_MAX);
		return s->err = -EINVAL;
	}
	if (GROW_ARRAY_FROM(&b->anchors, &b->cap_anchors, b->nanchors + 1, 64) < 0)
		return s->err = -ENOMEM;
	b->anchors[b->nanchors++] = (struct kanchor){ name, len, v, b->nframes >= 2 && b->frames[1].items };
	return 0;
}

int kb_scalar(kparse *s, kval_type t, uint8_t flags, const char *text, size_t len, uint32_t line,
              const char *anchor, size_t anchor_len)
{
	struct kbuild *b = &s->b;
	karena *a = arena_for(b, (int)b->nframes - 1);
	kval *v;
	char *c;

	if (len > UINT32_MAX) {
		kp_error(s, line, "value larger than 4 GiB");
		return s->err = -EINVAL;
	}
	v = node_alloc(s, a, sizeof(*v) + len + 1, line);
	if (!v)
		return s->err;
	c = (char *)(v + 1);
	memcpy(c, text, len);
	c[len] = '\0';
	*v = (kval){ .type = (uint8_t)t, .flags = flags, .line = line, .n = (uint32_t)len, .u.s = c };
	if (anchor) {
		char *an = karena_strndup(a, anchor, anchor_len);
		if (!an)
			return s->err = -ENOMEM;
		if (add_anchor(s, an, anchor_len, v, line) < 0)
			return s->err;
	}
	return push_child(s, v);
}

int kb_begin(kparse *s, kval_type t, uint32_t line, const char *anchor, size_t anchor_len)
{
	struct kbuild *b = &s->b;
	struct kframe *f;

	if (b->nframes >= KSTREAM_DEPTH_MAX) {
		kp_error(s, line, "nested deeper than %d levels, refusing it", KSTREAM_DEPTH_MAX);
		return s->err = -EINVAL;
	}
	f = &b->frames[b->nframes];
	*f = (struct kframe){ .type = (uint8_t)t, .line = line, .start = b->nkids };
	if (anchor) {
		f->anchor = karena_strndup(arena_for(b, (int)b->nframes - 1), anchor, anchor_len);
		if (!f->anchor)
			return s->err = -ENOMEM;
		f->anchor_len = anchor_len;
	}
	if (b->nframes == 1 && t == KVAL_SEQ && b->frames[0].type == KVAL_MAP && !b->kind_not_list &&
	    (b->nkids - b->frames[0].start) % 2 == 1 && key_is(b->kids[b->nkids - 1], "items", 5)) {
		f->items = true;
		b->split = true;
		forget_list_meta(s);
		publish_list_meta(s);
	}
	b->nframes++;
	return 0;
}

/* --- duplicate keys and merge keys ------------------------------------------------------------ */

static uint32_t hash_key(const kval *k)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < k->n; i++)
		h = (h ^ (unsigned char)k->u.s[i]) * 16777619u;
	return h;
}

static bool same_key(const kval *a, const kval *b)
{
	return a->type < KVAL_MAP && b->type < KVAL_MAP && a->n == b->n && memcmp(a->u.s, b->u.s, a->n) == 0;
}

static int keyset_init(struct kbuild *b, size_t n)
{
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	if (cap > b->hash_alloc) {
		uint32_t *h = reallocarray(b->hash, cap, sizeof(*h));
		if (!h)
			return -ENOMEM;
		b->hash = h;
		b->hash_alloc = cap;
	}
	memset(b->hash, 0, cap * sizeof(*b->hash));
	b->hash_cap = cap;
	return 0;
}

/*
 * pairs[2j] are keys. Adds key j to the set: its earlier twin's index, or -1. Small mappings (the
 * usual Kubernetes object) compare pairwise; large ones hash, so that a mapping of n keys costs
 * O(n) — the API server reads 200,000 labels in linear time too.
 */
static long keyset_add(struct kbuild *b, const kval *const *pairs, size_t j, bool hashed)
{
	const kval *k = pairs[2 * j];

	if (k->type >= KVAL_MAP)
		return -1;
	if (!hashed) {
		for (size_t i = 0; i < j; i++)
			if (same_key(pairs[2 * i], k))
				return (long)i;
		return -1;
	}
	size_t mask = b->hash_cap - 1, h = hash_key(k) & mask;
	while (b->hash[h]) {
		size_t i = b->hash[h] - 1;
		if (same_key(pairs[2 * i], k))
			return (long)i;
		h = (h + 1) & mask;
	}
	b->hash[h] = (uint32_t)j + 1;
	return -1;
}

static int check_duplicates(kparse *s, const kval **pairs, size_t n)
{
	struct kbuild *b = &s->b;
	bool hashed = n > 8;

	if (hashed && keyset_init(b, n) < 0)
		return s->err = -ENOMEM;
	for (size_t j = 0; j < n; j++)
		if (keyset_add(b, pairs, j, hashed) >= 0) {
			const kval *k = pairs[2 * j];
			kp_error(s, k->line, "duplicate key \"%.*s\"", (int)(k->n > 100 ? 100 : k->n), k->u.s);
			mark_bad(b); /* the object is dropped; the stream goes on */
			return 0;
		}
	return 0;
}

static bool is_merge_key(const kval *k)
{
	return k->type == KVAL_STRING && (k->flags & KVAL_F_PLAIN) && k->n == 2 && k->u.s[0] == '<' && k->u.s[1] == '<';
}

/*
 * YAML merge keys as go-yaml (and so kubectl) applies them: the mapping's own keys win, then the
 * merged mappings in order. The result replaces the frame's children on the kids stack.
 */
static int apply_merges(kparse *s, struct kframe *f)
{
	struct kbuild *b = &s->b;
	size_t n = (b->nkids - f->start) / 2, total = 0, out;

	for (size_t i = 0; i < n; i++) {
		const kval *k = b->kids[f->start + 2 * i], *v = b->kids[f->start + 2 * i + 1];
		if (!is_merge_key(k)) {
			total++;
			continue;
		}
		if (v->type == KVAL_MAP)
			total += v->n;
		else if (v->type == KVAL_SEQ) {
			for (size_t j = 0; j < v->n; j++) {
				if (v->u.v[j]->type != KVAL_MAP) {
					kp_error(s, v->u.v[j]->line, "a merge key (<<) takes a mapping or a list of mappings");
					mark_bad(b);
					return 0;
				}
				total += v->u.v[j]->n;
			}
		} else {
			kp_error(s, v->line, "a merge key (<<) takes a mapping or a list of mappings");
			mark_bad(b);
			return 0;
		}
	}
	/* build the merged pairs after the current ones, then move them down */
	out = b->nkids;
	if (GROW_ARRAY_FROM(&b->kids, &b->cap_kids, b->nkids + 2 * total, 64) < 0 ||
	    keyset_init(b, total) < 0)
		return s->err = -ENOMEM;
	const kval **dst = b->kids + out;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const kval *k = b->kids[f->start + 2 * i];
		if (is_merge_key(k))
			continue;
		dst[2 * m] = k;
		dst[2 * m + 1] = b->kids[f->start + 2 * i + 1];
		if (keyset_add(b, dst, m, true) >= 0) {
			kp_error(s, k->line, "duplicate key \"%.*s\"", (int)(k->n > 100 ? 100 : k->n), k->u.s);
			mark_bad(b);
			return 0;
		}
		m++;
	}
	for (size_t i = 0; i < n; i++) {
		const kval *k = b->kids[f->start + 2 * i], *v = b->kids[f->start + 2 * i + 1];
		if (!is_merge_key(k))
			continue;
		size_t nsrc = v->type == KVAL_SEQ ? v->n : 1;
		for (size_t j = 0; j < nsrc; j++) {
			const kval *src = v->type == KVAL_SEQ ? v->u.v[j] : v;
			for (size_t p = 0; p < src->n; p++) {
				dst[2 * m] = src->u.v[2 * p];
				dst[2 * m + 1] = src->u.v[2 * p + 1];
				if (keyset_add(b, dst, m, true) < 0)
					m++;
			}
		}
	}
	memmove(b->kids + f->start, dst, 2 * m * sizeof(*dst));
	b->nkids = f->start + 2 * m;
	return 0;
}

int kb_end(kparse *s)
{
	struct kbuild *b = &s->b;
	struct kframe f;
	size_t cnt;
	kval *v;

	if (b->nframes == 0)
		return 0;
	f = b->frames[b->nframes - 1];
	if (f.type == KVAL_MAP && (b->nkids - f.start) % 2 == 1) {
		kp_error(s, f.line, "mapping key without a value");
		return s->err = -EINVAL;
	}
	if (f.type == KVAL_MAP && f.merge && apply_merges(s, &f) < 0)
		return s->err;
	cnt = b->nkids - f.start;
	if (f.type == KVAL_MAP && !f.merge && cnt > 2 && check_duplicates(s, b->kids + f.start, cnt / 2) < 0)
		return s->err;

	karena *a = arena_for(b, (int)b->nframes - 2);
	uint32_t line = cnt ? b->kids[f.start]->line : f.line;
	if (f.items)
		cnt = 0; /* the items went out one by one */
	v = node_alloc(s, a, sizeof(*v) + cnt * sizeof(kval *), line);
	if (!v)
		return s->err;
	const kval **arr = (const kval **)(v + 1);
	if (cnt)
		memcpy(arr, b->kids + f.start, cnt * sizeof(*arr));
	*v = (kval){ .type = f.type, .line = line, .n = (uint32_t)(f.type == KVAL_MAP ? cnt / 2 : cnt),
	             .u.v = arr };
	b->nkids = f.start;
	b->nframes--;
	if (f.anchor && add_anchor(s, f.anchor, f.anchor_len, v, line) < 0)
		return s->err;
	return push_child(s, v);
}

/* Nodes under v, against the budget; false once it runs out or the nesting grows too deep. */
static bool count_nodes(const kval *v, uint64_t *budget, unsigned depth)
{
	if (depth > KSTREAM_DEPTH_MAX || *budget == 0)
		return false;
	--*budget;
	if (v->type < KVAL_MAP)
		return true;
	size_t n = v->type == KVAL_MAP ? 2 * (size_t)v->n : v->n;
	for (size_t i = 0; i < n; i++)
		if (!count_nodes(v->u.v[i], budget, depth + 1))
			return false;
	return true;
}

int kb_alias(kparse *s, const char *name, size_t len, uint32_t line)
{
	struct kbuild *b = &s->b;
	const kval *target = NULL;

	for (size_t i = b->nanchors; i-- > 0;)
		if (b->anchors[i].len == len && memcmp(b->anchors[i].name, name, len) == 0) {
			target = b->anchors[i].v;
			break;
		}
	if (!target) {
		kp_error(s, line, "alias *%.*s refers to no anchor of this object", (int)(len > 100 ? 100 : len), name);
		return s->err = -EINVAL;
	}
	if (!count_nodes(target, &b->alias_budget, b->nframes)) {
		kp_error(s, line, "YAML aliases expand to more than %d nodes (or nest too deeply), refusing the document",
		         KSTREAM_ALIAS_NODES_MAX);
		return s->err = -EINVAL;
	}
	return push_child(s, target);
}

void kb_document_end(kparse *s)
{
	s->b.nanchors = 0;
}
