/* SPDX-License-Identifier: MIT */
/*
 * What the API server's refusals of evictions teach the model under --pdb strict (model-cluster.h,
 * cluster_eviction_refused): a budget the refusal names and the library sees covering the pod is
 * spent (disruptionsAllowed 0, until the watch brings the budget anew); any other refusal (a budget
 * the library does not match to the pod as the API server does — a {} selector covers the whole
 * namespace —, two budgets over one pod, no budget named) protects that pod, until a budget of
 * its namespace is added, changed or removed. Either way the same victim is not chosen again for
 * the same reason, so a refusal never turns into a loop of refusals.
 * The functions are model-cluster.c's alone (model-cluster.h includes this file for cluster_refusal): it owns
 * the memory and tells it about budgets and pods. They are handed the library's scheduler, never
 * model-cluster.c's model, so that the calls run one way: down.
 */
#ifndef CTL_BUDGET_H
#define CTL_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include <preempt.h>

typedef struct budget_memory budget_memory;

int budget_memory_new(budget_memory **ret);
budget_memory *budget_memory_free(budget_memory *b);
/* A budget of namespace ns was added, changed or removed: its pods' protections are lifted. */
void budget_memory_pdb_changed(budget_memory *b, pp_sched *s, const char *ns);
/* Pod ns/name is gone (its protection went with it in the library). */
void budget_memory_forget(budget_memory *b, const char *ns, const char *name);
size_t budget_memory_count(const budget_memory *b);

typedef enum cluster_refusal {
	CLUSTER_BUDGET_SPENT = 0, /* the budget the refusal names covers the pod: it allows 0 now */
	CLUSTER_POD_PROTECTED,    /* anything else: the pod itself is no victim, until a budget of its
	                           * namespace changes */
} cluster_refusal;

/* cluster_eviction_refused (model-cluster.h) for model-cluster.c: what the refusal teaches goes into s, and a
 * protection into b too. */
int budget_memory_refused(budget_memory *b, pp_sched *s, const char *ns, const char *name, const char *pdb,
                          cluster_refusal *ret);
/* cluster_pod_budget (model-cluster.h) for model-cluster.c, of the budgets lc holds. */
int budget_tightest(const pp_cluster *lc, const char *ns, const char *name, int32_t *ret_allowed,
                    const char **ret_pdb);

#endif
