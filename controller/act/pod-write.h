/* SPDX-License-Identifier: MIT */
/* What every write about a pod starts from, whether act.c sends it or evict.c: the path of the
 * pod (or its subresource), a chain that its uid guards, and the RBAC rule the write needs. */
#ifndef CTL_POD_WRITE_H
#define CTL_POD_WRITE_H

#include "model-cluster.h"
#include "decision.h"
#include "writer.h"

/* /api/v1/namespaces/NS/pods/NAME[/SUB], malloc'ed (NULL when out of memory). */
char *pod_write_path(const char *ns, const char *name, const char *sub);
/* A chain about the pod (its uid guards every step). NULL when out of memory. */
write_chain *pod_write_chain(const decision_pod *p);
/* What RBAC must grant for a write (a 403 names it). */
const char *pod_write_permission(cluster_write w);

#endif
