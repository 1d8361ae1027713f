/* SPDX-License-Identifier: MIT */
/* Decoding one object node (k8s_decode.c), used by the file loader (k8s_load.c). */
#ifndef KUBE_K8S_DECODE_H
#define KUBE_K8S_DECODE_H


#include <stdlib.h>

#include "k8s.h"
#include "kval.h"
#include "yamlval.h"
#include "grow.h"

/* Appends a copy of obj to a cluster array (c->field, c->nfield, c->cap_field); ret is the new
 * element, or NULL when out of memory. */
#define APPEND(c, field, obj, ret)                                                           \
	do {                                                                                 \
		(ret) = NULL;                                                                \
		if (GROW_ARRAY(&(c)->field, &(c)->cap_##field, (c)->n##field + 1) < 0)     \
			break;                                                               \
		(ret) = &(c)->field[(c)->n##field++];                                        \
		*(ret) = (obj);                                                              \
	} while (0)

/* 0, -EINVAL (errors reported through d), -ENOMEM. Lists are expanded (depth: nesting). */
int k8s_decode_object(k8s_cluster *c, diag *d, const char *file, const kval *obj, int depth);

/* An item of an API server list (PodList...): items carry no kind, the list's is given. */
int k8s_decode_list_item(k8s_cluster *c, diag *d, const char *file, const kval *obj, const char *kind);

#endif
