/* SPDX-License-Identifier: MIT */
#include "objmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a: keys are short names; a good spread is all that is needed. */
static unsigned hash_of(const char *s)
{
	unsigned h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static objmap_entry **slot_of(const objmap *ix, const char *key, unsigned h)
{
	objmap_entry **e = &ix->buckets[h & (ix->n_buckets - 1)];
	while (*e && ((*e)->hash != h || strcmp((*e)->key, key) != 0))
		e = &(*e)->next;
	return e;
}

void *objmap_get(const objmap *ix, const char *key)
{
	if (!ix->n)
		return NULL;
	objmap_entry **e = slot_of(ix, key, hash_of(key));
	return *e ? (*e)->value : NULL;
}

static int grow(objmap *ix)
{
	size_t nb = ix->n_buckets ? ix->n_buckets * 2 : 64;
	objmap_entry **b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < ix->n_buckets; i++)
		for (objmap_entry *e = ix->buckets[i], *next; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (nb - 1)];
			b[e->hash & (nb - 1)] = e;
		}
	free(ix->buckets);
	ix->buckets = b;
	ix->n_buckets = nb;
	return 0;
}

int objmap_put(objmap *ix, const char *key, void *value)
{
	unsigned h = hash_of(key);
	objmap_entry **e;

	if (ix->n_buckets) {
		e = slot_of(ix, key, h);
		if (*e) {
			(*e)->value = value;
			return 0;
		}
	}
	if (ix->n >= ix->n_buckets && grow(ix) < 0)
		return -ENOMEM;
	size_t len = strlen(key);
	objmap_entry *n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return -ENOMEM;
	memcpy(n->key, key, len + 1);
	n->hash = h;
	n->value = value;
	e = &ix->buckets[h & (ix->n_buckets - 1)];
	n->next = *e;
	*e = n;
	ix->n++;
	return 0;
}

void *objmap_remove(objmap *ix, const char *key)
{
	if (!ix->n)
		return NULL;
	objmap_entry **e = slot_of(ix, key, hash_of(key)), *gone = *e;
	if (!gone)
		return NULL;
	void *v = gone->value;
	*e = gone->next;
	free(gone);
	ix->n--;
	return v;
}

size_t objmap_count(const objmap *ix)
{
	return ix->n;
}

void objmap_foreach(objmap *ix, void (*fn)(const char *key, void *value, void *userdata), void *userdata)
{
	for (size_t i = 0; i < ix->n_buckets; i++)
		for (objmap_entry *e = ix->buckets[i], *next; e; e = next) {
			next = e->next;
			fn(e->key, e->value, userdata);
		}
}

void objmap_done(objmap *ix)
{
	for (size_t i = 0; i < ix->n_buckets; i++)
		for (objmap_entry *e = ix->buckets[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	free(ix->buckets);
	*ix = (objmap){ 0 };
}
