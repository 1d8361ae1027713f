/* SPDX-License-Identifier: MIT */
/* What an update of a node or a pod changes (change.c). */
#ifndef PP_CHANGE_H
#define PP_CHANGE_H

#include "cluster.h"

enum pp__change {
	PP_CHANGE_NONE = 0,  /* nothing the model keeps */
	PP_CHANGE_STATE = 1, /* start time, deletion, readiness, the preemption condition, grace: what
	                        a pod's lifecycle changes, which frees nothing and matches nothing new */
	PP_CHANGE_SPEC = 2,  /* requests, labels, placement, priority, tolerations, affinity */
};

/* Whether two nodes carry the same labels, taints, allocatable and unschedulable. */
bool pp__node_same(const struct node *a, const struct node *b);

/* old: a pod of the cluster; fresh: the same pod built from an update (not linked), with node and
 * nominated the update's spec.nodeName and status.nominatedNodeName (NULL or "": none). */
enum pp__change pp__pod_compare(const struct pod *old, const struct pod *fresh, const char *node,
                                const char *nominated);

/* cluster.c: the updates, telling what changed (pp_sched moves queued pods only on a change). */
int pp__cluster_update_node(pp_cluster *c, const pp_node_spec *spec, pp_err *err, bool *ret_changed);
/* struct node.absent (cluster.h); an update of the node clears it. -ENOENT unknown node. */
int pp__cluster_set_node_absent(pp_cluster *c, const char *name, bool absent);
int pp__cluster_update_pod(pp_cluster *c, const pp_pod_spec *spec, pp_err *err, enum pp__change *ret_change);
int pp__cluster_set_pod_state(pp_cluster *c, const char *ns, const char *name, const pp_pod_state *st, pp_err *err,
                              enum pp__change *ret_change);

#endif
