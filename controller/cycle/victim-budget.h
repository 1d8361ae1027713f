/* SPDX-License-Identifier: MIT */
/*
 * The preemption budget (--max-victims-per-minute, --max-victims-per-minute-per-pool): how many
 * pods preemption may delete in any 60 seconds, cluster-wide and per node pool (the value of a
 * node label: every value is its own pool with its own budget). A preemption whose victims do
 * not fit what is left waits until enough of the last minute's victims have aged out of the
 * window; one that needs more victims than a whole budget goes alone, in a minute without other
 * victims (else it could never go). Only victims that need a DELETE count (one already
 * terminating costs nothing). A pure function of the times it is given: no clock of its own.
 */
#ifndef CTL_VICTIM_BUDGET_H
#define CTL_VICTIM_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BUDGET_WINDOW_NS (60LL * 1000000000LL)

typedef struct budget budget;

typedef struct budget_opts {
	unsigned per_minute;          /* cluster-wide; 0: no limit */
	const char *pool_label;       /* the node label whose values are pools; NULL: no pools */
	unsigned per_pool_per_minute; /* per pool; 0: no limit */
} budget_opts;

typedef enum budget_scope {
	BUDGET_CLUSTER = 0,
	BUDGET_POOL,
	BUDGET_SCOPES
} budget_scope;

/* "cluster", "pool" (the label value of preemptd_preemptions_postponed_total). */
const char *budget_scope_name(budget_scope s);

int budget_new(const budget_opts *o, budget **ret);
budget *budget_free(budget *b);
/* Whether any limit is set. */
bool budget_limits(const budget *b);
/* The node label that names pools, NULL when none. */
const char *budget_pool_label(const budget *b);

/*
 * n victims on a node of pool (NULL or "": the node has no pool label) at now: 0 when they may go
 * (then they are counted), 1 when they must wait — *ret_until: when they may, *ret_scope: the
 * budget that holds them, why: the reason in a FitError's words ("3 victims on node n1 would
 * exceed ..."). -ENOMEM.
 */
int budget_take(budget *b, const char *node, const char *pool, size_t n, int64_t now, int64_t *ret_until,
                budget_scope *ret_scope, char *why, size_t why_size);

/* Victims deleted at `at` before this process knew of them (what a restart finds terminating). */
int budget_seed(budget *b, const char *pool, size_t n, int64_t at);

/* Victims counted in the minute before now, cluster-wide (pool NULL) or in a pool. */
size_t budget_used(budget *b, const char *pool, int64_t now);
/* Calls fn for every pool with victims in the minute before now. */
void budget_foreach_pool(budget *b, int64_t now, void (*fn)(const char *pool, size_t used, void *userdata),
                         void *userdata);

typedef struct budget_stats {
	uint64_t postponed[BUDGET_SCOPES]; /* preemptions postponed, by the budget that held them */
	uint64_t taken;                    /* victims counted */
} budget_stats;
void budget_get_stats(const budget *b, budget_stats *ret);

#endif
