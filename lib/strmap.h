/* SPDX-License-Identifier: MIT */
/* A string-keyed hash map (open addressing). Keys are borrowed: they must outlive their entry. */
#ifndef PP_STRMAP_H
#define PP_STRMAP_H

#include <stddef.h>

struct strmap_slot {
	const char *key; /* NULL = empty, STRMAP_TOMBSTONE = deleted */
	void *value;
};

struct strmap {
	struct strmap_slot *slots;
	size_t cap, used, live; /* used counts tombstones too */
};

void pp__strmap_done(struct strmap *m);
void *pp__strmap_get(const struct strmap *m, const char *key);
/* -ENOMEM, or 0; replaces an existing value. */
int pp__strmap_put(struct strmap *m, const char *key, void *value);
void *pp__strmap_remove(struct strmap *m, const char *key);

#endif
