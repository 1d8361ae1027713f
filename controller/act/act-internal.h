/* SPDX-License-Identifier: MIT */
/* What act.c lends the rest of act/ (evict.c carries a preemption out under --pdb strict). */
#ifndef CTL_ACT_INTERNAL_H
#define CTL_ACT_INTERNAL_H

#include "act.h"

/* /api/v1/namespaces/NS/pods/NAME[/SUB], malloc'ed (NULL when out of memory). */
char *act__pod_path(const char *ns, const char *name, const char *sub);
/* A chain about the pod (its uid guards every step). NULL when out of memory. */
write_chain *act__chain_for(const decision_pod *p);
/* Adds an events.k8s.io Event about pod (related: the other pod, or NULL) to ch. */
int act__add_event(act *a, write_chain *ch, const decision_pod *pod, const decision_pod *related, const char *type,
                   const char *reason, const char *action, const char *note, int64_t now);
/* Hands ch to the writer (r < 0: preparing it failed; it is dropped with what it assumed). */
void act__submit(act *a, write_chain *ch, int r);
/* A preemption's last writes: the lower-priority pods nominated to d->node lose their
 * nomination, the preemptor gets status.nominatedNodeName and its FitError, and a
 * FailedScheduling Event. */
void act__publish_nomination(act *a, const decision *d, int64_t now);
/* What RBAC must grant for a write (a 403 names it). */
const char *act__permission_of(cluster_write w);

#endif
