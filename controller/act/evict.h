/* SPDX-License-Identifier: MIT */
/*
 * A preemption carried out under --pdb strict: the victims are evicted through the Eviction API
 * (POST pods/NAME/eviction, policy/v1 Eviction with the victim's uid as deleteOptions
 * precondition), so the API server enforces every PodDisruptionBudget; the library's dry run
 * (pp_cluster_set_pdb_policy) already chose victims the budgets allow as the watch shows them.
 *
 * One eviction at a time, in this order: the victims a budget covers first, the tightest budget
 * (fewest disruptionsAllowed) first, then the others, each group in kube-scheduler's order. Only
 * a budget refuses an eviction, and the tighter it is, the likelier something else (another
 * eviction, a pod turning unready, the disruption controller's recount) has spent it since the
 * watch last showed it: trying those first finds a refusal while nothing is evicted yet. A victim
 * no budget covers is refused by nothing but a budget the dry run cannot see, so it goes last.
 *
 * Every victim evicted (201): its Event "Preempted by pod UID on node NODE"; after the last one,
 * the preemptor's status.nominatedNodeName and FitError (and the lower-priority nominations to
 * the node cleared), as kube-scheduler writes them — the nomination is published once the
 * preemption is whole, never before. A victim that is gone meanwhile (404, a replaced pod's 409,
 * or the watch showing it terminating) frees its room anyway: the next one is evicted.
 *
 * A refusal (eviction.h) withdraws the preemption: no further victim is evicted, the model
 * learns what the refusal says (model/budget.h: the budget spent, or the pod protected), the
 * deletions it assumed for the victims not evicted are dropped, and the preemptor's nomination
 * is withdrawn (cleared by a status patch when the API server shows one) so that it is tried
 * again at once — another node, another victim set, or pending with a FitError naming the
 * budget. Victims evicted before the refusal are not brought back: an eviction cannot be undone,
 * they were of lower priority and their budgets allowed them; their room is free once they have
 * terminated, for the retry (its dry run counts a terminating pod as a victim needing no
 * eviction) or for any pod. No partial preemption is left behind: nothing is nominated, nothing
 * more is evicted for it.
 *
 * Leadership lost (or preemptd stopping): the evictions not sent are dropped with the rest of
 * the writes; the next leader decides again (a victim evicted counts as preempted, and a preemptor
 * does not preempt again while such a pod terminates on its node).
 */
#ifndef CTL_EVICT_H
#define CTL_EVICT_H

#include <stdbool.h>
#include <stdint.h>

#include "model-cluster.h"
#include "decision.h"
#include "eviction.h"
#include "transport.h"
#include "writer.h"

typedef struct evictor evictor;

/* What the evictor asks of the act stage above it (act.c): the writes a preemption under --pdb
 * strict shares with every other decision, so that its Events, its dropped chains and the
 * nomination it ends with are those of a preemption by deletion. userdata: the first argument. */
typedef struct evict_ops {
	/* Adds an events.k8s.io Event about pod (related: the other pod, or NULL) to ch. */
	int (*add_event)(void *userdata, write_chain *ch, const decision_pod *pod, const decision_pod *related,
	                 const char *type, const char *reason, const char *action, const char *note, int64_t now);
	/* Hands ch to the writer (r < 0: preparing it failed; it is dropped with what it assumed). */
	void (*submit)(void *userdata, write_chain *ch, int r);
	/* A preemption's last writes: the lower-priority pods nominated to d->node lose their
	 * nomination, the preemptor gets status.nominatedNodeName and its FitError, and a
	 * FailedScheduling Event. */
	void (*publish_nomination)(void *userdata, const decision *d, int64_t now);
	void *userdata;
} evict_ops;

/* ops: copied. */
int evict_new(const evict_ops *ops, cluster *c, writer *w, evictor **ret);
/* After writer_free(): what it abandoned has ended every preemption. */
evictor *evict_free(evictor *ev);

/* Starts carrying decision d (DECISION_PREEMPT) out; now_ns: the wall clock. */
void evict_preempt(evictor *ev, const decision *d, int64_t now_ns);

typedef struct evict_stats {
	uint64_t evicted;                     /* evictions accepted */
	uint64_t refused[EVICTION_REFUSALS];  /* evictions refused, by what refused them */
	uint64_t completed;                   /* preemptions whose every victim went */
	uint64_t withdrawn, withdrawn_partial; /* preemptions withdrawn before any eviction / after some */
	uint64_t in_progress;                 /* now */
} evict_stats;
/* Zeroes when ev is NULL (--pdb prefer). */
void evict_get_stats(const evictor *ev, evict_stats *ret);

#endif
