/* SPDX-License-Identifier: MIT */
#include "karena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_DEFAULT (64 * 1024)

struct karena_chunk {
	struct karena_chunk *next;
	size_t used, size;
	alignas(max_align_t) unsigned char data[];
};

static void *alloc(karena *a, size_t want, size_t align)
{
	struct karena_chunk *c = a->head;
	size_t off;

	if (want == 0)
		want = 1; /* distinct non-NULL pointers keep "NULL means failure" true */
	if (want > SIZE_MAX / 2)
		return NULL;
	off = c ? (c->used + align - 1) & ~(align - 1) : 0;
	if (!c || off > c->size || c->size - off < want) {
		/* big requests get a chunk of their own; chunks double up to 1 MiB so that a large
		 * item costs few mallocs */
		size_t csize = c && c->size < (1u << 20) ? c->size * 2 : CHUNK_DEFAULT;
		if (csize < want)
			csize = want;
		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->used = 0;
		c->size = csize;
		c->next = a->head;
		a->head = c;
		off = 0;
	}
	c->used = off + want;
	a->used += want;
	return c->data + off;
}

void *karena_calloc(karena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = alloc(a, n * size, alignof(max_align_t));
	if (p)
		memset(p, 0, n * size > 0 ? n * size : 1);
	return p;
}

void *karena_alloc(karena *a, size_t size)
{
	return alloc(a, size, 8);
}

char *karena_strndup(karena *a, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	char *p = alloc(a, len + 1, 1);
	if (p) {
		if (len)
			memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *karena_strdup(karena *a, const char *s)
{
	return karena_strndup(a, s, strlen(s));
}

void karena_reset(karena *a)
{
	struct karena_chunk *c = a->head;

	if (c) {
		struct karena_chunk *rest = c->next;
		while (rest) {
			struct karena_chunk *next = rest->next;
			free(rest);
			rest = next;
		}
		c->next = NULL;
		c->used = 0;
	}
	a->used = 0;
}

void karena_free(karena *a)
{
	struct karena_chunk *c = a->head;
	while (c) {
		struct karena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->used = 0;
}
