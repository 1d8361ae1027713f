/* SPDX-License-Identifier: MIT */
/* ResourceQuota objects and their scope selectors (k8s_quota.c), for the object decoder
 * (k8s_decode.c) and the admission configuration's scope limits (k8s_admission.c). */
#ifndef KUBE_K8S_QUOTA_H
#define KUBE_K8S_QUOTA_H

#include "k8s.h"
#include "kval.h"
#include "yamlval.h"

/* One ScopedResourceSelectorRequirement (a yv_elem_fn), and a ResourceQuota's spec and status.
 * -1 on error (reported through v). */
int k8s_scope_req(yv *v, const kval *e, void *elem);
int k8s_decode_quota(yv *v, const kval *obj, struct k8s_quota *q);

#endif
