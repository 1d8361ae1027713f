/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

static char tombstone;
#define STRMAP_TOMBSTONE (&tombstone)

static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)(h ^ (h >> 29));
}

void pp__strmap_done(struct strmap *m)
{
	free(m->slots);
	*m = (struct strmap){ 0 };
}

static struct strmap_slot *lookup(const struct strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash(key) & (m->cap - 1), n = 0; n < m->cap; i = (i + 1) & (m->cap - 1), n++) {
		struct strmap_slot *s = &m->slots[i];
		if (!s->key)
			return NULL;
		if (s->key != STRMAP_TOMBSTONE && strcmp(s->key, key) == 0)
			return s;
	}
	return NULL;
}

void *pp__strmap_get(const struct strmap *m, const char *key)
{
	struct strmap_slot *s = lookup(m, key);
	return s ? s->value : NULL;
}

static int grow(struct strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 16;
	if (m->live * 4 < m->cap)
		cap = m->cap; /* mostly tombstones: rehash in place */
	struct strmap_slot *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < m->cap; i++) {
		struct strmap_slot *s = &m->slots[i];
		if (!s->key || s->key == STRMAP_TOMBSTONE)
			continue;
		size_t j = hash(s->key) & (cap - 1);
		while (slots[j].key)
			j = (j + 1) & (cap - 1);
		slots[j] = *s;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	m->used = m->live;
	return 0;
}

int pp__strmap_put(struct strmap *m, const char *key, void *value)
{
	struct strmap_slot *s = lookup(m, key);
	if (s) {
		s->value = value;
		s->key = key;
		return 0;
	}
	if ((m->used + 1) * 4 > m->cap * 3) {
		int r = grow(m);
		if (r < 0)
			return r;
	}
	size_t i = hash(key) & (m->cap - 1);
	while (m->slots[i].key && m->slots[i].key != STRMAP_TOMBSTONE)
		i = (i + 1) & (m->cap - 1);
	if (!m->slots[i].key)
		m->used++;
	m->slots[i] = (struct strmap_slot){ .key = key, .value = value };
	m->live++;
	return 0;
}

void *pp__strmap_remove(struct strmap *m, const char *key)
{
	struct strmap_slot *s = lookup(m, key);
	if (!s)
		return NULL;
	void *v = s->value;
	s->key = STRMAP_TOMBSTONE;
	s->value = NULL;
	m->live--;
	return v;
}
