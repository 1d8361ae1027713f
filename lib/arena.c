/* SPDX-License-Identifier: MIT */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	alignas(16) unsigned char data[];
};

void *pp__arena_alloc(struct arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size == 0)
		size = 16;
	struct arena_block *b = a->head;
	if (!b || b->size - b->used < size) {
		/* Every pod has its own arena, and most need a few hundred bytes: a first block of 1 KiB
		 * made a 20,000-pod cluster cost 1.3 KB per pod. Blocks start small and double. */
		size_t bsize = b ? (b->size < 4096 ? b->size * 2 : 4096) : 224;
		if (bsize < size)
			bsize = size;
		b = calloc(1, sizeof(*b) + bsize);
		if (!b)
			return NULL;
		b->size = bsize;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += size;
	return p;
}

char *pp__arena_strdup(struct arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = pp__arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

void pp__arena_done(struct arena *a)
{
	while (a->head) {
		struct arena_block *n = a->head->next;
		free(a->head);
		a->head = n;
	}
}
