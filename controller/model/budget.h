/* SPDX-License-Identifier: MIT */
/*
 * What the API server's refusals of evictions teach the model under --pdb strict (cluster.h,
 * cluster_eviction_refused): a budget the refusal names and the library sees covering the pod is
 * spent (disruptionsAllowed 0, until the watch brings the budget anew); any other refusal (a budget
 * the library does not match to the pod as the API server does — a {} selector covers the whole
 * namespace —, two budgets over one pod, no budget named) protects that pod, until a budget of
 * its namespace is added, changed or removed. Either way the same victim is not chosen again for
 * the same reason, so a refusal never turns into a loop of refusals.
 * Internal to model/: cluster.c owns the memory and tells it about budgets and pods.
 */
#ifndef CTL_BUDGET_H
#define CTL_BUDGET_H

#include <stddef.h>

#include "cluster.h"

typedef struct budget_memory budget_memory;

int budget_memory_new(budget_memory **ret);
budget_memory *budget_memory_free(budget_memory *b);
/* A budget of namespace ns was added, changed or removed: its pods' protections are lifted. */
void budget_memory_pdb_changed(budget_memory *b, pp_sched *s, const char *ns);
/* Pod ns/name is gone (its protection went with it in the library). */
void budget_memory_forget(budget_memory *b, const char *ns, const char *name);
size_t budget_memory_count(const budget_memory *b);

/* cluster.c, for budget.c */
pp_sched *cluster__sched(const cluster *c);
budget_memory *cluster__budgets(const cluster *c);

#endif
