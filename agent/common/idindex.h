/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A string-keyed index (open addressing, FNV-1a): a listing's ids, or (pod uid, container name)
 * pairs, to an array index in constant time, so that what relates containers, images and sandboxes
 * of one listing costs linear time, not the product of their counts (65,536 containers are
 * allowed). Keys are borrowed: they must outlive the index. Sized once for the expected entries.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct id_index_slot {
	const char *a, *b; /* a NULL: empty; b may be NULL (a single key) */
	size_t value;
} id_index_slot;

typedef struct id_index {
	id_index_slot *slots;
	size_t mask;
} id_index;

/* Room for n entries at most (kept under half full). 0 or -ENOMEM. */
int id_index_init(id_index *x, size_t n);
void id_index_done(id_index *x);
/* The slot of (a, b): found (*found) or where it would go. Never NULL while under n entries. */
id_index_slot *id_index_slot_of(id_index *x, const char *a, const char *b, bool *found);
/* value of (a, b) in *value: true when there. */
bool id_index_get(const id_index *x, const char *a, const char *b, size_t *value);
/* Adds or replaces. */
void id_index_put(id_index *x, const char *a, const char *b, size_t value);
