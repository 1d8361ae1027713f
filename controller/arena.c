/* SPDX-License-Identifier: MIT */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_DEFAULT (64 * 1024)

struct ctl_arena_chunk {
	struct ctl_arena_chunk *next;
	size_t used, size;
	alignas(max_align_t) unsigned char data[];
};

void *ctl_arena_calloc(ctl_arena *a, size_t n, size_t size)
{
	const size_t align = alignof(max_align_t);
	size_t want;

	if (size && n > SIZE_MAX / size)
		return NULL;
	want = n * size;
	if (want == 0)
		want = 1; /* distinct non-NULL pointers keep "NULL means failure" true */
	if (want > SIZE_MAX - align)
		return NULL;
	want = (want + align - 1) & ~(align - 1);

	struct ctl_arena_chunk *c = a->head;
	if (!c || c->size - c->used < want) {
		size_t csize = want > CHUNK_DEFAULT ? want : CHUNK_DEFAULT;
		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = csize;
		c->next = a->head;
		a->head = c;
	}
	void *p = c->data + c->used;
	c->used += want;
	memset(p, 0, want);
	return p;
}

char *ctl_arena_strndup(ctl_arena *a, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	char *p = ctl_arena_calloc(a, 1, len + 1);
	if (p && len)
		memcpy(p, s, len);
	return p;
}

char *ctl_arena_strdup(ctl_arena *a, const char *s)
{
	return ctl_arena_strndup(a, s, strlen(s));
}

void ctl_arena_free(ctl_arena *a)
{
	struct ctl_arena_chunk *c = a->head;
	while (c) {
		struct ctl_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}
