/* SPDX-License-Identifier: MIT */
/*
 * A bump allocator for the decoded cluster: thousands of small strings and arrays that all live
 * exactly as long as the cluster, so they are freed at once instead of one by one.
 */
#ifndef CTL_ARENA_H
#define CTL_ARENA_H

#include <stddef.h>

struct ctl_arena_chunk;

typedef struct ctl_arena {
	struct ctl_arena_chunk *head;
} ctl_arena;

/* Zeroed memory, aligned for any object; NULL when out of memory (or n * size overflows). */
void *ctl_arena_calloc(ctl_arena *a, size_t n, size_t size);
char *ctl_arena_strndup(ctl_arena *a, const char *s, size_t len);
char *ctl_arena_strdup(ctl_arena *a, const char *s);
void ctl_arena_free(ctl_arena *a);

#endif
