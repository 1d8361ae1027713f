/* SPDX-License-Identifier: MIT */
/* Decoding one object node (k8s_decode.c), used by the file loader (k8s_load.c). */
#ifndef KUBE_K8S_DECODE_H
#define KUBE_K8S_DECODE_H


#include "k8s.h"
#include "kval.h"

/* 0, -EINVAL (errors reported through d), -ENOMEM. Lists are expanded (depth: nesting). */
int k8s_decode_object(k8s_cluster *c, diag *d, const char *file, const kval *obj, int depth);

/* An item of an API server list (PodList...): items carry no kind, the list's is given. */
int k8s_decode_list_item(k8s_cluster *c, diag *d, const char *file, const kval *obj, const char *kind);

#endif
