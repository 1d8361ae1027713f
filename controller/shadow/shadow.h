/* SPDX-License-Identifier: MIT */
/*
 * --shadow: preemptd decides for the pods of another scheduler (kube-scheduler's, by default) and
 * writes nothing; each of its decisions is compared with what that scheduler did.
 *
 * When: at the other scheduler's decision, as it becomes visible — the model told of the event
 * just before applying it (cluster_observer), so that preemptd decides on the cluster as the other
 * scheduler saw it: the pod still pending, the pods it bound before already bound. Its binding
 * (spec.nodeName), its nomination (status.nominatedNodeName: a preemption, compared when the
 * preemptor binds, by when every victim has begun to terminate), or its PodScheduled=False
 * without a nomination (unschedulable; again each time its message changes).
 *
 * What preemptd decides: libpreempt's scheduling cycle without the queue — the nominated node if
 * the pod fits there, else every feasible node with the best score (pp_cluster_bind_nodes), else
 * DefaultPreemption (pp_cluster_preempt).
 *
 * Whom the other scheduler preempted: pods of the node it nominated that began terminating with
 * DisruptionTarget/PreemptionByScheduler (or without it, while the preemptor was nominated there)
 * after the preemptor was first seen pending, of lower priority than it.
 *
 * Agreement, per kind of preemptd's decision:
 *   bind           the other scheduler bound the pod, preempting nobody, to one of the nodes that
 *                  preemptd scores best (libpreempt takes the first by name; kube-scheduler picks
 *                  among equal scores at random and scores with more plugins);
 *   preempt        it nominated one of the candidate nodes preemptd ranks best (equal on every
 *                  criterion: kube leaves that last tie to chance) and deleted the same victims
 *                  there — the same pods, or pods of the same priority and start time in their
 *                  place (kube's sort leaves their order to chance);
 *   unschedulable  it reported the pod unschedulable without nominating a node.
 * Each disagreement goes to the journal (pod, ours, theirs, why when preemptd can tell).
 */
#ifndef CTL_SHADOW_H
#define CTL_SHADOW_H

#include <stdint.h>
#include <stdio.h>

#include "model-cluster.h"
#include "queue.h"

typedef enum shadow_kind { SHADOW_BIND = 0, SHADOW_PREEMPT, SHADOW_UNSCHEDULABLE, SHADOW_KINDS } shadow_kind;
/* "bind", "preempt", "unschedulable" */
const char *shadow_kind_name(shadow_kind k);

typedef struct shadow shadow;

typedef struct shadow_opts {
	const char *scheduler_name; /* whose pods are compared (default-scheduler) */
	int64_t (*clock)(void);     /* Unix ns for pods without a start time; NULL: the wall clock */
} shadow_opts;

/* Observes c (cluster_set_observer) from now on; q is the queue c changes through. */
int shadow_new(queue *q, cluster *c, const shadow_opts *o, shadow **ret);
shadow *shadow_free(shadow *s);

typedef struct shadow_stats {
	uint64_t decisions[SHADOW_KINDS][2]; /* [kind of preemptd's decision][agree] */
	uint64_t uncompared;                 /* preemptors gone before they were bound */
	size_t open;                         /* preemptions waiting for the preemptor's binding */
	size_t victims;                      /* preemption victims seen, not attributed to a preemptor yet */
} shadow_stats;
void shadow_get_stats(const shadow *s, shadow_stats *ret);

/* The preemptd_shadow_* families. refused_writes: what the read-only transport refused. */
void shadow_write_metrics(const shadow *s, FILE *f, uint64_t refused_writes);

#endif
