/* SPDX-License-Identifier: MIT */
/*
 * A string-keyed table of the objects preemptd follows (pods by "namespace/name", nodes, PDBs,
 * classes): O(1) lookup as each watch event arrives, iteration for the prune after a relist.
 * The key is copied; values are the caller's.
 */
#ifndef CTL_OBJMAP_H
#define CTL_OBJMAP_H

#include <stddef.h>

typedef struct objmap_entry {
	struct objmap_entry *next;
	void *value;
	unsigned hash;
	char key[];
} objmap_entry;

typedef struct objmap {
	objmap_entry **buckets;
	size_t n, n_buckets;
} objmap;

void *objmap_get(const objmap *ix, const char *key);
/* Adds or replaces. 0 or -ENOMEM. */
int objmap_put(objmap *ix, const char *key, void *value);
/* The value that was there, or NULL. */
void *objmap_remove(objmap *ix, const char *key);
size_t objmap_count(const objmap *ix);
/* Calls fn for every entry (fn may remove the entry it is given, nothing else). */
void objmap_foreach(objmap *ix, void (*fn)(const char *key, void *value, void *userdata), void *userdata);
/* Frees the table (not the values). */
void objmap_done(objmap *ix);

#endif
