/* SPDX-License-Identifier: MIT */
#include "victim-budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objmap.h"
#include "grow.h"

/* The victims of the last minute in one scope, oldest first: v[start..len). */
struct window {
	struct stamp {
		int64_t at;
		size_t n;
	} *v;
	size_t start, len, cap;
	size_t used; /* Σ n over v[start..len) */
};

struct budget {
	unsigned per_minute, per_pool;
	char *pool_label;
	struct window cluster;
	objmap pools; /* label value -> struct window */
	budget_stats stats;
};

const char *budget_scope_name(budget_scope s)
{
	return s == BUDGET_POOL ? "pool" : "cluster";
}

/* --- one window ---------------------------------------------------------------------------- */

static void window_prune(struct window *w, int64_t now)
{
	while (w->start < w->len && w->v[w->start].at <= now - BUDGET_WINDOW_NS)
		w->used -= w->v[w->start++].n;
	if (w->start == w->len)
		w->start = w->len = 0;
}

/* Counts n victims at `at`, kept in time order (a seed may be older than what is there). */
static int window_add(struct window *w, int64_t at, size_t n)
{
	if (w->start && w->len == w->cap) {
		memmove(w->v, w->v + w->start, (w->len - w->start) * sizeof(*w->v));
		w->len -= w->start;
		w->start = 0;
	}
	if (GROW_ARRAY(&w->v, &w->cap, w->len + 1) < 0)
		return -ENOMEM;
	size_t i = w->len;
	while (i > w->start && w->v[i - 1].at > at) {
		w->v[i] = w->v[i - 1];
		i--;
	}
	w->v[i] = (struct stamp){ at, n };
	w->len++;
	w->used += n;
	return 0;
}

/* When n more victims fit under limit (now when they do). */
static int64_t window_fits_at(const struct window *w, unsigned limit, size_t n, int64_t now)
{
	if (!limit || w->used + n <= limit)
		return now;
	if (n > limit) /* alone, once the window is empty */
		return w->used ? w->v[w->len - 1].at + BUDGET_WINDOW_NS : now;
	size_t excess = w->used + n - limit, freed = 0, i = w->start;
	while (freed < excess)
		freed += w->v[i++].n;
	return w->v[i - 1].at + BUDGET_WINDOW_NS;
}

static void window_done(struct window *w)
{
	free(w->v);
	*w = (struct window){ 0 };
}

/* --- the budget ------------------------------------------------------------------------------ */

int budget_new(const budget_opts *o, budget **ret)
{
	budget *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->per_minute = o ? o->per_minute : 0;
	b->per_pool = o && o->pool_label ? o->per_pool_per_minute : 0;
	if (o && o->pool_label && !(b->pool_label = strdup(o->pool_label))) {
		free(b);
		return -ENOMEM;
	}
	*ret = b;
	return 0;
}

static void free_window(const char *key, void *value, void *userdata)
{
	(void)key;
	(void)userdata;
	window_done(value);
	free(value);
}

budget *budget_free(budget *b)
{
	if (!b)
		return NULL;
	window_done(&b->cluster);
	objmap_foreach(&b->pools, free_window, NULL);
	objmap_done(&b->pools);
	free(b->pool_label);
	free(b);
	return NULL;
}

bool budget_limits(const budget *b)
{
	return b && (b->per_minute || b->per_pool);
}

const char *budget_pool_label(const budget *b)
{
	return b ? b->pool_label : NULL;
}

/* The pool's window (created when asked to), NULL when the node has no pool. */
static struct window *pool_window(budget *b, const char *pool, bool create, int *err)
{
	struct window *w;

	if (!b->per_pool || !pool || !*pool)
		return NULL;
	w = objmap_get(&b->pools, pool);
	if (w || !create)
		return w;
	if (!(w = calloc(1, sizeof(*w))) || objmap_put(&b->pools, pool, w) < 0) {
		free(w);
		*err = -ENOMEM;
		return NULL;
	}
	return w;
}

int budget_take(budget *b, const char *node, const char *pool, size_t n, int64_t now, int64_t *ret_until,
                budget_scope *ret_scope, char *why, size_t why_size)
{
	int err = 0;
	struct window *pw = pool_window(b, pool, true, &err);

	if (err < 0)
		return err;
	if (n == 0)
		return 0;
	window_prune(&b->cluster, now);
	if (pw)
		window_prune(pw, now);
	int64_t cluster_at = window_fits_at(&b->cluster, b->per_minute, n, now);
	int64_t pool_at = pw ? window_fits_at(pw, b->per_pool, n, now) : now;
	if (cluster_at <= now && pool_at <= now) {
		if (window_add(&b->cluster, now, n) < 0 || (pw && window_add(pw, now, n) < 0))
			return -ENOMEM;
		b->stats.taken += n;
		return 0;
	}
	/* the later of the two is when both allow it; the message names the one that holds longer
	 * (the pool's when they end together: it is the narrower one) */
	budget_scope scope = pool_at > now && pool_at >= cluster_at ? BUDGET_POOL : BUDGET_CLUSTER;
	unsigned limit = scope == BUDGET_POOL ? b->per_pool : b->per_minute;
	char where[320] = "";
	if (scope == BUDGET_POOL)
		snprintf(where, sizeof(where), " of node pool %s=%s", b->pool_label, pool);
	const char *flag = scope == BUDGET_POOL ? "max-victims-per-minute-per-pool" : "max-victims-per-minute";
	if (n > limit)
		snprintf(why, why_size, "%zu victims on node %s are more than the budget of %u victim%s per minute%s (%s): "
		         "they go alone, once a minute has passed without others.", n, node, limit, limit == 1 ? "" : "s",
		         where, flag);
	else
		snprintf(why, why_size, "%zu victim%s on node %s would exceed the budget of %u victim%s per minute%s (%s).",
		         n, n == 1 ? "" : "s", node, limit, limit == 1 ? "" : "s", where, flag);
	*ret_until = pool_at > cluster_at ? pool_at : cluster_at;
	*ret_scope = scope;
	b->stats.postponed[scope]++;
	return 1;
}

int budget_seed(budget *b, const char *pool, size_t n, int64_t at)
{
	int err = 0;
	struct window *pw = pool_window(b, pool, true, &err);

	if (err < 0 || window_add(&b->cluster, at, n) < 0 || (pw && window_add(pw, at, n) < 0))
		return -ENOMEM;
	return 0;
}

size_t budget_used(budget *b, const char *pool, int64_t now)
{
	int err = 0;
	struct window *w = pool ? pool_window(b, pool, false, &err) : &b->cluster;

	if (!w)
		return 0;
	window_prune(w, now);
	return w->used;
}

struct each {
	objmap *pools;
	int64_t now;
	void (*fn)(const char *pool, size_t used, void *userdata);
	void *userdata;
};

static void each_pool(const char *key, void *value, void *userdata)
{
	struct each *e = userdata;
	struct window *w = value;

	window_prune(w, e->now);
	if (w->used) {
		e->fn(key, w->used, e->userdata);
		return;
	}
	/* a pool without recent victims costs nothing until it has some again */
	objmap_remove(e->pools, key);
	window_done(w);
	free(w);
}

void budget_foreach_pool(budget *b, int64_t now, void (*fn)(const char *pool, size_t used, void *userdata),
                         void *userdata)
{
	struct each e = { &b->pools, now, fn, userdata };

	objmap_foreach(&b->pools, each_pool, &e);
}

void budget_get_stats(const budget *b, budget_stats *ret)
{
	*ret = b->stats;
}
