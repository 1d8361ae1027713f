/* SPDX-License-Identifier: MIT */
/* Many small allocations freed together: an object's strings and arrays (arena.c). */
#ifndef PP_ARENA_H
#define PP_ARENA_H

#include <stddef.h>

struct arena_block;
struct arena {
	struct arena_block *head;
};
void *pp__arena_alloc(struct arena *a, size_t size);
char *pp__arena_strdup(struct arena *a, const char *s);
void pp__arena_done(struct arena *a);

#endif
