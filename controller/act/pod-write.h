/* SPDX-License-Identifier: MIT */
/* What every write about a pod starts from, whether act.c sends it or evict.c: the path of the
 * pod (or its subresource), a chain that its uid guards, and the RBAC rule the write needs; and a
 * decision's writes about a pod, handed down once (pod_write_send): their requests and bodies are
 * made here, and the writer gets the chain whole. */
#ifndef CTL_POD_WRITE_H
#define CTL_POD_WRITE_H

#include "model-cluster.h"
#include "decision.h"
#include "k8s_body.h"
#include "writer.h"

/* /api/v1/namespaces/NS/pods/NAME[/SUB], malloc'ed (NULL when out of memory). */
char *pod_write_path(const char *ns, const char *name, const char *sub);
/* A chain about the pod (its uid guards every step). NULL when out of memory. */
write_chain *pod_write_chain(const decision_pod *p);
/* One write about a pod, as a decision says it: the kind, and what its body is made of. The rest
 * follows from the kind: a binding (to the chain's node) and an eviction POSTed to their
 * subresource, the status and a condition PATCHed to status (strategic merge), DELETE to the pod
 * with its own grace period, an Event POSTed to events.k8s.io in the pod's namespace. */
typedef struct pod_write {
	cluster_write kind;
	const k8s_body_condition *condition; /* STATUS, CONDITION: the condition set (NULL: none) */
	bool set_nomination;                 /* STATUS: status.nominatedNodeName set to nominate */
	const char *nominate;                /* (NULL: cleared) */
	const k8s_body_event *event;         /* EVENT */
} pod_write;

/* The writes about pod p, their bodies made here, in one chain that w sends a step after the
 * other: what a decision hands down once. node: the node they are about, the binding's target
 * (NULL: none); on_end, userdata as write_chain_on_end (on_end NULL: none). 0, or -ENOMEM /
 * -E2BIG when a write could not be prepared: then no write goes out, the chain is dropped with
 * what it assumed (writer_drop) and the journal says so once. */
int pod_write_send(writer *w, const decision_pod *p, const char *node, const pod_write *writes, size_t n,
                   write_end_fn on_end, void *userdata);

/* What RBAC must grant for a write (a 403 names it). */
const char *pod_write_permission(cluster_write w);

#endif
