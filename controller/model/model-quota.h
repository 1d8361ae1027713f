/* SPDX-License-Identifier: MIT */
/*
 * The ResourceQuota admission plugin over the input (model-quota.c): the quotas and the plugin's
 * configuration into libpreempt, the pods that exist counted as the quota controller counts them,
 * the pods to be created admitted or refused in input order — as kube-apiserver would on
 * `kubectl create -f` of the same files: quota is charged when a pod is created, not when it is
 * bound, so every new pod is admitted (or refused) before anything is scheduled.
 */
#ifndef CTL_QUOTA_H
#define CTL_QUOTA_H

#include "model.h"

/* A pod the API server has not stored yet: neither metadata.creationTimestamp nor spec.nodeName. */
bool quota_pod_is_new(const struct k8s_pod *p);

/* m->quotas from c (every problem reported through d); the pods that exist counted into the
 * quotas the input gives without status, at now_ns. 0, -EINVAL (reported), -ENOMEM. */
int quota_build(model *m, const k8s_cluster *c, int64_t now_ns, diag *d);

/* Admission of a new pod (class_name: after Priority admission). 0 admitted (charged), 1 refused
 * (recorded in m->refused), -EINVAL (reported), -ENOMEM. */
int quota_admit_new(model *m, const struct k8s_pod *p, const char *class_name, diag *d);

/* `check`: quotas whose usage is above their limits, and pods that exist in a namespace where no
 * quota covers what the configuration's limitedResources restrict (a pod like them would be
 * refused now), one warning per namespace and class. */
int quota_report(model *m, const k8s_cluster *c, diag *d);

#endif
