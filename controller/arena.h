/* SPDX-License-Identifier: MIT */
/*
 * A bump allocator for the decoded cluster: thousands of small strings and arrays that all live
 * exactly as long as the cluster, so they are freed at once instead of one by one.
 */
#ifndef CTL_ARENA_H
#define CTL_ARENA_H

#include <stddef.h>

struct arena_chunk;

typedef struct arena {
	struct arena_chunk *head;
} arena;

/* Zeroed memory, aligned for any object; NULL when out of memory (or n * size overflows). */
void *arena_calloc(arena *a, size_t n, size_t size);
char *arena_strndup(arena *a, const char *s, size_t len);
char *arena_strdup(arena *a, const char *s);
void arena_free(arena *a);

#endif
