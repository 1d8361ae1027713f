/* SPDX-License-Identifier: MIT */
/* What an update of a node or a pod changes (change.c). */
#ifndef PP_CHANGE_H
#define PP_CHANGE_H

#include "cluster_model.h"

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

#endif
