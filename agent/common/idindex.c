/* SPDX-License-Identifier: MIT */
#include "idindex.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int id_index_init(id_index *x, size_t n)
{
	size_t cap = 16;

	while (cap < 2 * n + 2) {
		if (cap > SIZE_MAX / 4)
			return -ENOMEM;
		cap *= 2;
	}
	x->slots = calloc(cap, sizeof(*x->slots));
	x->mask = cap - 1;
	return x->slots ? 0 : -ENOMEM;
}

void id_index_done(id_index *x)
{
	free(x->slots);
	*x = (id_index){ 0 };
}

static uint64_t hash(const char *a, const char *b)
{
	uint64_t h = UINT64_C(1469598103934665603);

	for (const unsigned char *p = (const unsigned char *)a; *p; p++)
		h = (h ^ *p) * UINT64_C(1099511628211);
	if (b) {
		h = (h ^ 0xff) * UINT64_C(1099511628211); /* never in an id: ("ab","c") is not ("a","bc") */
		for (const unsigned char *p = (const unsigned char *)b; *p; p++)
			h = (h ^ *p) * UINT64_C(1099511628211);
	}
	return h;
}

static bool same(const id_index_slot *s, const char *a, const char *b)
{
	return strcmp(s->a, a) == 0 && (!s->b == !b) && (!b || strcmp(s->b, b) == 0);
}

id_index_slot *id_index_slot_of(id_index *x, const char *a, const char *b, bool *found)
{
	for (size_t i = (size_t)hash(a, b) & x->mask;; i = (i + 1) & x->mask) {
		id_index_slot *s = &x->slots[i];
		if (!s->a || same(s, a, b)) {
			*found = s->a != NULL;
			return s;
		}
	}
}

bool id_index_get(const id_index *x, const char *a, const char *b, size_t *value)
{
	bool found;
	const id_index_slot *s = id_index_slot_of((id_index *)x, a, b, &found);

	if (found)
		*value = s->value;
	return found;
}

void id_index_put(id_index *x, const char *a, const char *b, size_t value)
{
	bool found;
	id_index_slot *s = id_index_slot_of(x, a, b, &found);

	*s = (id_index_slot){ a, b, value };
}
