/* SPDX-License-Identifier: MIT */
/*
 * A bump allocator: thousands of small strings and arrays that all live exactly as long as their
 * owner (a decoded cluster, one streamed item), so they are freed at once instead of one by one.
 * karena_reset() keeps the newest chunk for reuse: a stream of items of similar size allocates
 * nothing after the first.
 */
#ifndef KUBE_ARENA_H
#define KUBE_ARENA_H

#include <stddef.h>

struct karena_chunk;

typedef struct karena {
	struct karena_chunk *head;
	size_t used; /* bytes handed out since the last reset (for size limits) */
} karena;

/* Zeroed memory, aligned for any object; NULL when out of memory (or n * size overflows). */
void *karena_calloc(karena *a, size_t n, size_t size);
/* The same, not zeroed, aligned to 8 bytes. */
void *karena_alloc(karena *a, size_t size);
char *karena_strndup(karena *a, const char *s, size_t len);
char *karena_strdup(karena *a, const char *s);
/* Forgets every allocation, keeping the newest chunk. */
void karena_reset(karena *a);
void karena_free(karena *a);

#endif
