/* SPDX-License-Identifier: MIT */
/*
 * A min-heap of deadlines, for the scheduler's timers (sched_cycle.c): victims waiting for their
 * grace period, nominations waiting for their deadline, postponed preemptions waiting for their
 * retry. The entry lives inside the item it times (container_of style), so that an item is found,
 * moved or removed in O(log n) without a lookup. Ties are ordered by insertion, so that a
 * simulation does not depend on the heap's shape.
 */
#ifndef PP_THEAP_H
#define PP_THEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct theap_entry {
	int64_t at;
	uint64_t seq;
	size_t idx;
	bool in; /* in the heap */
};

struct theap {
	struct theap_entry **v;
	size_t n, cap;
	uint64_t seq;
};

/* Inserts e due at `at`, or moves it there when it is in already (keeping its place among equal
 * times only when `at` is unchanged). -ENOMEM (e stays out) or 0. */
int pp__theap_set(struct theap *h, struct theap_entry *e, int64_t at);
/* Takes e out (a no-op when it is not in). */
void pp__theap_remove(struct theap *h, struct theap_entry *e);
/* The earliest entry, NULL when empty. */
static inline struct theap_entry *pp__theap_top(const struct theap *h)
{
	return h->n ? h->v[0] : NULL;
}
/* The earliest entry when it is due at now (NULL: none is). */
static inline struct theap_entry *pp__theap_due(const struct theap *h, int64_t now)
{
	return h->n && h->v[0]->at <= now ? h->v[0] : NULL;
}
/* When the earliest entry is due (INT64_MAX: none; an entry may be due at INT64_MAX too). */
static inline int64_t pp__theap_next(const struct theap *h)
{
	return h->n ? h->v[0]->at : INT64_MAX;
}
void pp__theap_done(struct theap *h);

#endif
