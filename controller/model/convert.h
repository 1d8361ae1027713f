/* SPDX-License-Identifier: MIT */
/*
 * One decoded Kubernetes object (k8s.h) -> the libpreempt spec that describes it. The one place
 * where the two vocabularies meet: preemptctl's snapshot (model.c) and preemptd's live cluster
 * (model-cluster.c) both convert through here, so a pod means the same to the what-if and to the
 * controller.
 *
 * The arrays a spec points to are allocated in the given arena (the library copies what it keeps:
 * reset the arena after the pp_* call); strings point into the decoded object. Each function
 * returns 0 or -ENOMEM.
 */
#ifndef CTL_CONVERT_H
#define CTL_CONVERT_H

#include <preempt.h>

#include "karena.h"
#include "k8s.h"

int conv_node(karena *a, const struct k8s_node *n, pp_node_spec *ret);

/*
 * The pod as the library sees it, with the priority and policy admission resolved and the
 * requests already summed (k8s_pod_requests). nominated: status.nominatedNodeName as the caller
 * wants it counted (NULL: none).
 */
int conv_pod(karena *a, const struct k8s_pod *p, int32_t priority, pp_preemption_policy policy,
             const pp_resource *requests, size_t n_requests, const char *nominated, pp_pod_spec *ret);

int conv_pdb(karena *a, const struct k8s_pdb *p, pp_pdb_spec *ret);

/* "NoSchedule", "PreferNoSchedule", "NoExecute"; anything else (the empty toleration effect):
 * PP_EFFECT_ANY. */
pp_taint_effect conv_effect(const char *e);

#endif
