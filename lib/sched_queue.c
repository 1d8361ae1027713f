/* SPDX-License-Identifier: MIT */
/*
 * kube-scheduler's PriorityQueue (pkg/scheduler/backend/queue), in simulated time.
 *
 * Differences from kube, all for determinism or because there is no wall clock:
 *   - ties in activeQ (same priority, same timestamp) are broken by arrival order (a sequence
 *     number taken whenever the timestamp is set), not left to the heap;
 *   - backoff and leftover moves happen exactly when due (kube polls every 1 s and every 30 s);
 *   - Pop never takes a pod from backoffQ when activeQ is empty (SchedulerPopFromBackoffQ), so
 *     backoff is always honoured — a simulation would otherwise never show it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sched_queue.h"

struct pp_sq_entry {
	void *pod;
	int32_t priority;
	pp_sq_state state;
	int64_t timestamp;       /* added, or last failed attempt */
	uint64_t seq;            /* arrival order, taken with the timestamp */
	int64_t backoff_expiry;  /* valid after a failure */
	unsigned attempts;       /* pops */
	unsigned failures;       /* failed attempts (kube's UnschedulableCount) */
	uint32_t rejectors;
	uint32_t inflight_events; /* event masks seen while in flight */
	bool error_backoff;       /* backing off after an error, not a rejection (kube's podErrorBackoffQ) */
	uint32_t hint_before;     /* pp__sq_hint_prepare()'s answer for the event in progress */
	size_t heap_idx;
	struct pp_sq_entry *prev, *next; /* unschedulable list (by timestamp) or in-flight list */
};

struct heap {
	struct pp_sq_entry **v;
	size_t n, cap;
	bool (*less)(const struct pp_sq_entry *a, const struct pp_sq_entry *b);
};

struct list {
	struct pp_sq_entry *head, *tail;
	size_t n;
};

struct pp_sq_queue {
	pp_sq_opts opts;
	int64_t now;
	uint64_t seq;
	struct heap active, backoff;
	struct list unsched, inflight;
	/* pointer -> entry, open addressing with linear probing and backward-shift deletion */
	struct pp_sq_entry **slots;
	size_t n_slots, n_used;
	uint64_t incoming[PP_SCHED_QUEUE_COUNT][PP_SCHED_QE_COUNT];
};

/* ---- ordering ------------------------------------------------------------------------------ */

static bool active_less(const struct pp_sq_entry *a, const struct pp_sq_entry *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	if (a->timestamp != b->timestamp)
		return a->timestamp < b->timestamp;
	return a->seq < b->seq;
}

static bool backoff_less(const struct pp_sq_entry *a, const struct pp_sq_entry *b)
{
	if (a->backoff_expiry != b->backoff_expiry)
		return a->backoff_expiry < b->backoff_expiry;
	return active_less(a, b);
}

/* ---- binary heap with back-pointers, so that any entry can be removed in O(log n) ----------- */

static void heap_set(struct heap *h, size_t i, struct pp_sq_entry *e)
{
	h->v[i] = e;
	e->heap_idx = i;
}

static void heap_up(struct heap *h, size_t i)
{
	struct pp_sq_entry *e = h->v[i];
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!h->less(e, h->v[parent]))
			break;
		heap_set(h, i, h->v[parent]);
		i = parent;
	}
	heap_set(h, i, e);
}

static void heap_down(struct heap *h, size_t i)
{
	struct pp_sq_entry *e = h->v[i];
	for (;;) {
		size_t l = 2 * i + 1, best;
		if (l >= h->n)
			break;
		best = l;
		if (l + 1 < h->n && h->less(h->v[l + 1], h->v[l]))
			best = l + 1;
		if (!h->less(h->v[best], e))
			break;
		heap_set(h, i, h->v[best]);
		i = best;
	}
	heap_set(h, i, e);
}

static int heap_push(struct heap *h, struct pp_sq_entry *e)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct pp_sq_entry **v = realloc(h->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	heap_set(h, h->n++, e);
	heap_up(h, h->n - 1);
	return 0;
}

static void heap_remove(struct heap *h, struct pp_sq_entry *e)
{
	size_t i = e->heap_idx;
	struct pp_sq_entry *last = h->v[--h->n];
	if (i == h->n)
		return;
	heap_set(h, i, last);
	heap_up(h, i);
	heap_down(h, last->heap_idx);
}

static void heap_fix(struct heap *h, struct pp_sq_entry *e)
{
	heap_up(h, e->heap_idx);
	heap_down(h, e->heap_idx);
}

/* ---- pointer map ---------------------------------------------------------------------------- */

static size_t ptr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
}

static struct pp_sq_entry **map_slot(const pp_sq_queue *q, const void *pod)
{
	size_t mask = q->n_slots - 1;
	for (size_t i = ptr_hash(pod) & mask;; i = (i + 1) & mask)
		if (!q->slots[i] || q->slots[i]->pod == pod)
			return &q->slots[i];
}

static struct pp_sq_entry *map_get(const pp_sq_queue *q, const void *pod)
{
	return *map_slot(q, pod);
}

static int map_grow(pp_sq_queue *q)
{
	size_t n = q->n_slots * 2;
	struct pp_sq_entry **old = q->slots, **slots = calloc(n, sizeof(*slots));
	size_t old_n = q->n_slots;
	if (!slots)
		return -ENOMEM;
	q->slots = slots;
	q->n_slots = n;
	for (size_t i = 0; i < old_n; i++)
		if (old[i])
			*map_slot(q, old[i]->pod) = old[i];
	free(old);
	return 0;
}

static void map_del(pp_sq_queue *q, const void *pod)
{
	size_t mask = q->n_slots - 1;
	size_t i = (size_t)(map_slot(q, pod) - q->slots);
	q->slots[i] = NULL;
	q->n_used--;
	/* Backward shift: re-place the rest of the cluster so that lookups never stop early. */
	for (size_t j = (i + 1) & mask; q->slots[j]; j = (j + 1) & mask) {
		struct pp_sq_entry *e = q->slots[j];
		q->slots[j] = NULL;
		*map_slot(q, e->pod) = e;
	}
}

/* ---- placement ------------------------------------------------------------------------------ */

static void list_unlink(struct list *l, struct pp_sq_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = NULL;
	l->n--;
}

static void list_append(struct list *l, struct pp_sq_entry *e)
{
	e->prev = l->tail;
	e->next = NULL;
	if (l->tail)
		l->tail->next = e;
	else
		l->head = e;
	l->tail = e;
	l->n++;
}

/* Takes an entry out of wherever it is; it keeps its map slot. */
static void detach(pp_sq_queue *q, struct pp_sq_entry *e)
{
	switch (e->state) {
	case PP_SQ_ACTIVE:
		heap_remove(&q->active, e);
		break;
	case PP_SQ_BACKOFF:
		heap_remove(&q->backoff, e);
		break;
	case PP_SQ_UNSCHEDULABLE:
		list_unlink(&q->unsched, e);
		break;
	case PP_SQ_IN_FLIGHT:
		list_unlink(&q->inflight, e);
		break;
	case PP_SQ_NONE:
		break;
	}
	e->state = PP_SQ_NONE;
}

static void count_incoming(pp_sq_queue *q, pp_sched_queue queue, pp_sched_queue_event event)
{
	q->incoming[queue][event]++;
}

/* The heaps grow ahead of need (see reserve()), so pushes cannot fail here. */
static void to_active(pp_sq_queue *q, struct pp_sq_entry *e, pp_sched_queue_event event)
{
	detach(q, e);
	e->state = PP_SQ_ACTIVE;
	(void)heap_push(&q->active, e);
	count_incoming(q, PP_SCHED_QUEUE_ACTIVE, event);
}

/* kube's movePodsToActiveOrBackoffQueue: back off only while the backoff has not expired. */
static void to_active_or_backoff(pp_sq_queue *q, struct pp_sq_entry *e, pp_sched_queue_event event)
{
	if (e->failures > 0 && e->backoff_expiry > q->now) {
		detach(q, e);
		e->state = PP_SQ_BACKOFF;
		(void)heap_push(&q->backoff, e);
		count_incoming(q, PP_SCHED_QUEUE_BACKOFF, event);
	} else {
		to_active(q, e, event);
	}
}

/* Every entry can be in at most one heap, so heaps sized to the entry count never grow later. */
static int reserve(pp_sq_queue *q)
{
	struct heap *hs[] = { &q->active, &q->backoff };
	for (size_t i = 0; i < 2; i++) {
		struct heap *h = hs[i];
		if (h->cap < q->n_used + 1) {
			size_t cap = h->cap ? h->cap : 64;
			while (cap < q->n_used + 1)
				cap *= 2;
			struct pp_sq_entry **v = realloc(h->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			h->v = v;
			h->cap = cap;
		}
	}
	return 0;
}

static void set_now(pp_sq_queue *q, int64_t now)
{
	if (now > q->now)
		q->now = now;
}

/* ---- API ------------------------------------------------------------------------------------ */

int pp__sq_new(const pp_sq_opts *opts, pp_sq_queue **ret)
{
	pp_sq_queue *q;

	/* 0 asks for the default; a negative duration is a caller bug, not "never". */
	if (opts && (opts->initial_backoff < 0 || opts->max_backoff < 0 || opts->max_unschedulable < 0))
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	/* The caller's clock may be anywhere in int64 (negative simulated times included). */
	q->now = INT64_MIN;
	if (opts)
		q->opts = *opts;
	if (q->opts.initial_backoff <= 0)
		q->opts.initial_backoff = PP_SQ_DEFAULT_INITIAL_BACKOFF;
	if (q->opts.max_backoff <= 0)
		q->opts.max_backoff = PP_SQ_DEFAULT_MAX_BACKOFF;
	if (q->opts.max_unschedulable <= 0)
		q->opts.max_unschedulable = PP_SQ_DEFAULT_MAX_UNSCHEDULABLE;
	q->active.less = active_less;
	q->backoff.less = backoff_less;
	q->n_slots = 64;
	q->slots = calloc(q->n_slots, sizeof(*q->slots));
	if (!q->slots) {
		free(q);
		return -ENOMEM;
	}
	*ret = q;
	return 0;
}

void pp__sq_set_pop_from_backoff(pp_sq_queue *q, bool on)
{
	q->opts.pop_from_backoff = on;
}

pp_sq_queue *pp__sq_free(pp_sq_queue *q)
{
	if (!q)
		return NULL;
	for (size_t i = 0; i < q->n_slots; i++)
		free(q->slots[i]);
	free(q->slots);
	free(q->active.v);
	free(q->backoff.v);
	free(q);
	return NULL;
}

/* A new entry, in no queue yet. */
static int new_entry(pp_sq_queue *q, void *pod, int32_t priority, int64_t now, struct pp_sq_entry **ret)
{
	struct pp_sq_entry **slot, *e;
	int r;

	if (!pod)
		return -EINVAL;
	set_now(q, now);
	if (map_get(q, pod))
		return -EEXIST;
	/* Keep the load factor under 1/2 so that probes stay short. */
	if ((q->n_used + 1) * 2 > q->n_slots && (r = map_grow(q)) < 0)
		return r;
	q->n_used++;
	r = reserve(q);
	if (r < 0) {
		q->n_used--;
		return r;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		q->n_used--;
		return -ENOMEM;
	}
	e->pod = pod;
	e->priority = priority;
	e->timestamp = q->now;
	e->seq = q->seq++;
	slot = map_slot(q, pod);
	*slot = e;
	*ret = e;
	return 0;
}

int pp__sq_add(pp_sq_queue *q, void *pod, int32_t priority, int64_t now)
{
	struct pp_sq_entry *e;
	int r = new_entry(q, pod, priority, now, &e);

	if (r < 0)
		return r;
	to_active(q, e, PP_SCHED_QE_POD_ADD);
	return 0;
}

int pp__sq_add_backing_off(pp_sq_queue *q, void *pod, int32_t priority, int64_t now)
{
	struct pp_sq_entry *e;
	int r = new_entry(q, pod, priority, now, &e);

	if (r < 0)
		return r;
	e->failures = 1;
	e->error_backoff = true;
	e->backoff_expiry = pp__sat_add(q->now, pp__sq_backoff_duration(q, 1));
	to_active_or_backoff(q, e, PP_SCHED_QE_SCHEDULE_ATTEMPT_FAILURE);
	return 0;
}

int pp__sq_remove(pp_sq_queue *q, void *pod)
{
	struct pp_sq_entry *e = pod ? map_get(q, pod) : NULL;
	if (!e)
		return -ENOENT;
	detach(q, e);
	map_del(q, pod);
	free(e);
	return 0;
}

int pp__sq_update_priority(pp_sq_queue *q, void *pod, int32_t priority)
{
	struct pp_sq_entry *e = pod ? map_get(q, pod) : NULL;
	if (!e)
		return -ENOENT;
	e->priority = priority;
	if (e->state == PP_SQ_ACTIVE)
		heap_fix(&q->active, e);
	else if (e->state == PP_SQ_BACKOFF)
		heap_fix(&q->backoff, e);
	return 0;
}

void pp__sq_flush(pp_sq_queue *q, int64_t now)
{
	set_now(q, now);
	while (q->backoff.n > 0 && q->backoff.v[0]->backoff_expiry <= q->now)
		to_active(q, q->backoff.v[0], PP_SCHED_QE_BACKOFF_COMPLETE);
	/* The list is in timestamp order (time never goes backwards), so only its head can be due. */
	while (q->unsched.head && pp__sat_add(q->unsched.head->timestamp, q->opts.max_unschedulable) <= q->now)
		to_active_or_backoff(q, q->unsched.head, PP_SCHED_QE_UNSCHEDULABLE_TIMEOUT);
}

/* The pod kube's activeQueue.unlockedPop() takes from podBackoffQ when activeQ is empty: the one
 * whose backoff expires first, never one backing off after an error (podErrorBackoffQ). */
static struct pp_sq_entry *backoff_head(const pp_sq_queue *q)
{
	struct pp_sq_entry *best = NULL;

	if (q->backoff.n == 0)
		return NULL;
	if (!q->backoff.v[0]->error_backoff)
		return q->backoff.v[0];
	for (size_t i = 1; i < q->backoff.n; i++)
		if (!q->backoff.v[i]->error_backoff && (!best || backoff_less(q->backoff.v[i], best)))
			best = q->backoff.v[i];
	return best;
}

bool pp__sq_poppable(const pp_sq_queue *q)
{
	return q->active.n > 0 || (q->opts.pop_from_backoff && backoff_head(q));
}

int pp__sq_pop(pp_sq_queue *q, int64_t now, void **ret_pod, unsigned *ret_attempts)
{
	struct pp_sq_entry *e;

	pp__sq_flush(q, now);
	if (q->active.n > 0)
		e = q->active.v[0];
	else if (!q->opts.pop_from_backoff || !(e = backoff_head(q)))
		return -EAGAIN;
	detach(q, e);
	e->state = PP_SQ_IN_FLIGHT;
	e->inflight_events = 0;
	e->attempts++;
	list_append(&q->inflight, e);
	*ret_pod = e->pod;
	if (ret_attempts)
		*ret_attempts = e->attempts;
	return 0;
}

int pp__sq_done(pp_sq_queue *q, void *pod)
{
	struct pp_sq_entry *e = pod ? map_get(q, pod) : NULL;
	if (!e)
		return -ENOENT;
	if (e->state != PP_SQ_IN_FLIGHT)
		return -EINVAL;
	return pp__sq_remove(q, pod);
}

int64_t pp__sq_backoff_duration(const pp_sq_queue *q, unsigned failures)
{
	int64_t d = q->opts.initial_backoff, max = q->opts.max_backoff;
	/* Doubling stops at max, so at most 63 rounds whatever the failure count. */
	for (unsigned i = 1; i < failures && d < max; i++)
		d = d > max / 2 ? max : d * 2;
	return d < max ? d : max;
}

int pp__sq_add_unschedulable(pp_sq_queue *q, void *pod, uint32_t rejectors, int64_t now)
{
	struct pp_sq_entry *e = pod ? map_get(q, pod) : NULL;

	if (!e)
		return -ENOENT;
	if (e->state != PP_SQ_IN_FLIGHT)
		return -EINVAL;
	set_now(q, now);
	e->failures++;
	e->error_backoff = false;
	e->rejectors = rejectors;
	e->timestamp = q->now;
	e->seq = q->seq++;
	e->backoff_expiry = pp__sat_add(q->now, pp__sq_backoff_duration(q, e->failures));
	if (e->inflight_events & rejectors) {
		to_active_or_backoff(q, e, PP_SCHED_QE_SCHEDULE_ATTEMPT_FAILURE);
	} else {
		detach(q, e);
		e->state = PP_SQ_UNSCHEDULABLE;
		list_append(&q->unsched, e);
		count_incoming(q, PP_SCHED_QUEUE_UNSCHEDULABLE, PP_SCHED_QE_SCHEDULE_ATTEMPT_FAILURE);
	}
	return 0;
}

size_t pp__sq_move_on_event(pp_sq_queue *q, uint32_t mask, const void *except, pp_sched_queue_event event,
                            int64_t now)
{
	size_t moved = 0;

	set_now(q, now);
	if (!mask)
		return 0;
	for (struct pp_sq_entry *e = q->inflight.head; e; e = e->next)
		if (e->pod != except)
			e->inflight_events |= mask;
	for (struct pp_sq_entry *e = q->unsched.head, *next; e; e = next) {
		next = e->next;
		if ((e->rejectors & mask) && e->pod != except) {
			to_active_or_backoff(q, e, event);
			moved++;
		}
	}
	return moved;
}

void pp__sq_hint_prepare(pp_sq_queue *q, pp_sq_hint_fn fn, void *ud)
{
	for (struct pp_sq_entry *e = q->inflight.head; e; e = e->next)
		e->hint_before = fn(e->pod, 0, ud);
	for (struct pp_sq_entry *e = q->unsched.head; e; e = e->next)
		e->hint_before = fn(e->pod, 0, ud);
}

size_t pp__sq_move_on_hint(pp_sq_queue *q, pp_sq_hint_fn fn, void *ud, pp_sched_queue_event event, int64_t now)
{
	size_t moved = 0;

	set_now(q, now);
	for (struct pp_sq_entry *e = q->inflight.head; e; e = e->next)
		e->inflight_events |= fn(e->pod, e->hint_before, ud);
	for (struct pp_sq_entry *e = q->unsched.head, *next; e; e = next) {
		next = e->next;
		if (e->rejectors & fn(e->pod, e->hint_before, ud)) {
			to_active_or_backoff(q, e, event);
			moved++;
		}
	}
	return moved;
}

int pp__sq_activate(pp_sq_queue *q, void *pod, pp_sched_queue_event event, int64_t now)
{
	struct pp_sq_entry *e = pod ? map_get(q, pod) : NULL;
	if (!e)
		return -ENOENT;
	set_now(q, now);
	if (e->state == PP_SQ_UNSCHEDULABLE || e->state == PP_SQ_BACKOFF)
		to_active(q, e, event);
	return 0;
}

pp_sq_state pp__sq_state_of(const pp_sq_queue *q, const void *pod)
{
	const struct pp_sq_entry *e = pod ? map_get(q, pod) : NULL;
	return e ? e->state : PP_SQ_NONE;
}

int64_t pp__sq_next_backoff_expiry(const pp_sq_queue *q)
{
	return q->backoff.n ? q->backoff.v[0]->backoff_expiry : INT64_MAX;
}

int64_t pp__sq_next_leftover_flush(const pp_sq_queue *q)
{
	return q->unsched.head ? pp__sat_add(q->unsched.head->timestamp, q->opts.max_unschedulable) : INT64_MAX;
}

void pp__sq_get_stats(const pp_sq_queue *q, pp_sq_stats *ret)
{
	ret->active = q->active.n;
	ret->backoff = q->backoff.n;
	ret->unschedulable = q->unsched.n;
	ret->in_flight = q->inflight.n;
}

uint64_t pp__sq_incoming(const pp_sq_queue *q, pp_sched_queue queue, pp_sched_queue_event event)
{
	if ((unsigned)queue >= PP_SCHED_QUEUE_COUNT || (unsigned)event >= PP_SCHED_QE_COUNT)
		return 0;
	return q->incoming[queue][event];
}
