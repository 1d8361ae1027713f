/* SPDX-License-Identifier: MIT */
/* The cluster model's store (cluster.c): lookups, the pod info it hands out, updates telling
 * what changed, and the notice every change of a node gives. Nothing here is exported. */
#ifndef PP_CLUSTER_H
#define PP_CLUSTER_H

#include "change.h"
#include "cluster_model.h"

/* Refreshes n's summary and drops its cached preemption result. */
void pp__node_changed(const pp_cluster *c, const struct node *n);

void pp__pod_info_fill(const struct pod *p, pp_pod_info *ret);
struct pod *pp__cluster_find_pod(const pp_cluster *c, const char *ns, const char *name);
struct node *pp__cluster_find_node(const pp_cluster *c, const char *name);
struct pdb *pp__cluster_find_pdb(const pp_cluster *c, const char *ns, const char *name);

/* Importance order of two bound pods (MoreImportantPod + DESIGN §3), start of "no start" = now. */
int pp__slot_cmp_now(const struct slot *a, const struct slot *b, int64_t now);

/* The updates, telling what changed (pp_sched moves queued pods only on a change). */
int pp__cluster_update_node(pp_cluster *c, const pp_node_spec *spec, pp_err *err, bool *ret_changed);
/* struct node.absent (cluster_model.h); an update of the node clears it. -ENOENT unknown node. */
int pp__cluster_set_node_absent(pp_cluster *c, const char *name, bool absent);
int pp__cluster_update_pod(pp_cluster *c, const pp_pod_spec *spec, pp_err *err, enum pp__change *ret_change);
int pp__cluster_set_pod_state(pp_cluster *c, const char *ns, const char *name, const pp_pod_state *st, pp_err *err,
                              enum pp__change *ret_change);

#endif
