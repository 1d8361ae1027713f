/* SPDX-License-Identifier: MIT */
/*
 * What the scheduling cycle needs from the cluster model beyond the public API: pod iteration,
 * the filters run with nominated pods (two-pass rule, reference §6) and node scoring.
 * Implemented in sched_fit.c on top of the cluster's internals.
 */
#ifndef PP_SCHED_FIT_H
#define PP_SCHED_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "preempt.h"

/* Rejector bits: which kind of filter failed, matched against the events that may resolve it
 * (kube's QueueingHints, coarsened to one bit per plugin; a node event is judged pod by pod:
 * node_hint() in sched_cycle.c). */
#define SCHED_REJ_RESOURCES     0x01u /* NodeResourcesFit */
#define SCHED_REJ_UNSCHEDULABLE 0x02u /* NodeUnschedulable */
#define SCHED_REJ_TAINT         0x04u /* TaintToleration */
#define SCHED_REJ_NODE_AFFINITY 0x08u /* NodeAffinity (nodeSelector, required terms) */
#define SCHED_REJ_POD_AFFINITY  0x10u /* InterPodAffinity: a required affinity is unmet */
#define SCHED_REJ_POD_ANTI      0x20u /* InterPodAffinity: an anti-affinity conflicts */
#define SCHED_REJ_NODES         0x40u /* there is no node at all */
#define SCHED_REJ_BUDGET        0x80u /* strict PDB policy: preemption found no victims the budgets allow */
#define SCHED_REJ_ALL           0xffu

/* Failure reasons counted over nodes, for the "0/N nodes are available: ..." message. */
struct sfit_reason {
	char *reason;
	size_t nodes;
};

struct sfit_reasons {
	struct sfit_reason *v;
	size_t n, cap;
	size_t n_nodes;     /* nodes evaluated */
	uint32_t rejectors; /* union of SCHED_REJ_* over the failing nodes */
	int err;            /* first failure of pp__sfit_reasons_collect() */
};

void pp__sfit_reasons_clear(struct sfit_reasons *r);
void pp__sfit_reasons_done(struct sfit_reasons *r);
int pp__sfit_reasons_add(struct sfit_reasons *r, const char *reason);
/* pp__sfit_reasons_add() as a pp__filter_reasons() callback (ud: the struct sfit_reasons); a failure
 * is kept in ->err. */
void pp__sfit_reasons_collect(const char *reason, void *ud);
/* Sorts as kube's FitError does ("<count> <reason>" strings in byte order) and formats
 * "0/N nodes are available: 2 Insufficient cpu, 3 ...." (+ " " + post when post is non-empty).
 * The one implementation of that message: the scheduling cycle's and the preemption's. */
int pp__sfit_reasons_format(struct sfit_reasons *r, const char *post, char **ret);
/* The counted reasons alone, sorted the same way: "2 Insufficient cpu, 1 Too many pods" ("" for none). */
int pp__sfit_reasons_list(struct sfit_reasons *r, char **ret);

/* Calls fn for every pod of the cluster; stops at the first negative return and returns it. */
int pp__sfit_foreach_pod(const pp_cluster *c, int (*fn)(const pp_pod_info *pi, void *ud), void *ud);

/*
 * Whether the pending pod ns/name passes every filter on node, with the two-pass rule: pods
 * nominated to node with priority >= the pod's counted, then (if any) without them.
 * ignore_terminating: judge the node as if its terminating pods were already gone.
 * -ENOENT unknown pod or node.
 */
int pp__sfit_fits_on(const pp_cluster *c, const char *ns, const char *name, const char *node,
                 bool ignore_terminating, bool *ret);

/*
 * Filters every node (two-pass rule) and returns the feasible node with the highest
 * least-allocated score (ties: smaller name), or NULL in *ret_node when none. r may be NULL;
 * else it is cleared first and receives the failure reasons and rejectors.
 */
int pp__sfit_select_node(const pp_cluster *c, const char *ns, const char *name, const char **ret_node,
                     struct sfit_reasons *r);

#endif
