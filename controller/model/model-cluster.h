/* SPDX-License-Identifier: MIT */
/*
 * preemptd's live cluster: what the API server says, one watch event at a time, applied in place
 * to the scheduler's model (queue/: libpreempt's pp_sched) — never rebuilt. Pods of other
 * schedulers count once bound; only this scheduler's pending pods are queued. Pods bound to a node
 * the model does not know (the pod list came first, or the node was deleted under them) get a
 * placeholder node that admits nothing, as kube-scheduler's cache keeps a NodeInfo without a Node.
 *
 * The model also holds what this scheduler has decided but the API server does not show yet — a
 * binding, a nomination, a victim's deletion — and lays it over the API's view until the API
 * shows it or the write fails (kube-scheduler's "assumed" pods). Without it, a watch event that
 * predates the write would undo the decision: a bound pod would be queued again, a preemptor
 * would lose its nomination and preempt a second time.
 */
#ifndef CTL_CLUSTER_H
#define CTL_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "k8s.h"
#include "queue.h"

typedef struct cluster cluster;

typedef enum cluster_kind {
	CLUSTER_CLASSES = 0,
	CLUSTER_NODES,
	CLUSTER_PDBS,
	CLUSTER_PODS,
	CLUSTER_KINDS
} cluster_kind;

/* "priorityclasses", "nodes", "poddisruptionbudgets", "pods": how messages name the kind. */
const char *cluster_kind_name(cluster_kind k);

typedef struct cluster_opts {
	const char *scheduler_name; /* spec.schedulerName of the pods to schedule */
	/* PP_PDB_STRICT (--pdb strict): victims go through the Eviction API; the library's dry run
	 * takes no victim beyond a budget, and a pod the API server is evicting (DisruptionTarget
	 * EvictionByEvictionAPI) counts as preempted, as kube-scheduler counts its own victims */
	pp_pdb_policy pdb_policy;
} cluster_opts;

/* q must outlive the cluster. */
int cluster_new(queue *q, const cluster_opts *o, cluster **ret);
cluster *cluster_free(cluster *c);

/*
 * Watch input: an object added or modified (a list item too). 0 applied (or nothing to do),
 * -EINVAL the object was refused (err: "KIND/NS/NAME: field: what"; the model keeps the last
 * version it accepted), -ENOMEM.
 */
int cluster_put_class(cluster *c, const struct k8s_priority_class *pc, char *err, size_t err_size);
int cluster_put_node(cluster *c, const struct k8s_node *n, char *err, size_t err_size);
int cluster_put_pdb(cluster *c, const struct k8s_pdb *p, char *err, size_t err_size);
int cluster_put_pod(cluster *c, const struct k8s_pod *p, char *err, size_t err_size);
/* An object deleted (ns NULL for nodes and classes). Unknown objects are ignored. */
void cluster_delete(cluster *c, cluster_kind k, const char *ns, const char *name);

/*
 * A refused object is worth one log line, not one per watch event: true the first time
 * KIND/NS/NAME is refused since it was last accepted or deleted.
 */
bool cluster_first_refusal(cluster *c, cluster_kind k, const char *ns, const char *name);

/* A relist: objects of kind k not put between begin and end were deleted while the watch was
 * down; end removes them and returns how many. */
void cluster_relist_begin(cluster *c, cluster_kind k);
size_t cluster_relist_end(cluster *c, cluster_kind k);

/* --- what the cycle decided, held until the API server shows it -------------------------------- */

/* The pod's metadata.uid, NULL when unknown. */
const char *cluster_pod_uid(const cluster *c, const char *ns, const char *name);
/* The PodScheduled condition the API server has for it (or this scheduler wrote): NULL when none. */
const char *cluster_pod_condition_message(const cluster *c, const char *ns, const char *name);

void cluster_assume_bound(cluster *c, const char *ns, const char *name, const char *node);
/* node NULL: the nomination is cleared. */
void cluster_assume_nominated(cluster *c, const char *ns, const char *name, const char *node);
void cluster_assume_deleting(cluster *c, const char *ns, const char *name);
/* The PodScheduled=False message about to be written (NULL: forget it). */
void cluster_assume_condition(cluster *c, const char *ns, const char *name, const char *message);

/* --- the act stage's writes -------------------------------------------------------------------- */

typedef enum cluster_write {
	CLUSTER_WRITE_BIND = 0,   /* pods/binding */
	CLUSTER_WRITE_STATUS,     /* pods/status: PodScheduled and nominatedNodeName */
	CLUSTER_WRITE_CONDITION,  /* pods/status: a victim's DisruptionTarget */
	CLUSTER_WRITE_DELETE,     /* a victim's DELETE */
	CLUSTER_WRITE_EVENT,
	CLUSTER_WRITE_EVICT,      /* a victim's eviction (pods/eviction, --pdb strict) */
	CLUSTER_WRITE_LEASE_EVENT, /* an Event about the Lease (LeaderElection): no pod of the model */
} cluster_write;

/* Whether a write about pod ns/name (uid) still means anything: false when the pod is gone or
 * replaced, a binding when the API shows the pod bound, a deletion when it is being deleted, a
 * status when the pod is bound — such a write is dropped, not sent or re-sent. */
bool cluster_write_wanted(const cluster *c, cluster_write w, const char *ns, const char *name, const char *uid);
/* The write was accepted; rv: the resourceVersion of the object it returned (NULL: none). */
void cluster_write_landed(cluster *c, cluster_write w, const char *ns, const char *name, const char *uid,
                          const char *rv);
/* The write will not happen: what it assumed is dropped. conflict (409): someone else decided —
 * a pod whose binding was refused leaves the queue until the API server says something new
 * about it. */
void cluster_write_failed(cluster *c, cluster_write w, const char *ns, const char *name, const char *uid,
                          bool conflict);
/* Every assumption dropped (leadership lost: nothing of ours is in flight any more). */
void cluster_forget_assumptions(cluster *c);
/* fn for each pod this scheduler preempted (its DisruptionTarget condition names us) that is
 * still terminating and was deleted after since_ns: what a restart can know of its recent
 * victims. */
void cluster_foreach_victim_since(cluster *c, int64_t since_ns,
                                  void (*fn)(const char *node, int64_t deleted_ns, void *userdata), void *userdata);

/* --- who else watches the pods ------------------------------------------------------------------ */

/* A pod as the API server last showed it to the model (not what this scheduler assumed). */
typedef struct cluster_pod_before {
	const char *uid, *node, *nominated; /* NULL: none */
	const char *condition;              /* PodScheduled=False message, NULL: none */
	bool terminating, preempted;        /* deletionTimestamp; DisruptionTarget/PreemptionByScheduler */
} cluster_pod_before;

/*
 * Told of every pod event just before the model applies it, so that what was decided on the model
 * as it stood can be compared with what the event shows someone else decided (shadow/).
 * pod_changing: a pod added or modified (before NULL: one the model did not have); not called for
 * an object the model refuses. pod_leaving: a pod about to leave the model (deleted, finished,
 * replaced under its name, gone at a relist).
 */
typedef struct cluster_observer {
	void (*pod_changing)(void *userdata, const struct k8s_pod *p, const cluster_pod_before *before);
	void (*pod_leaving)(void *userdata, const char *ns, const char *name, const cluster_pod_before *before);
	void *userdata;
} cluster_observer;
/* o: copied; NULL: nobody. */
void cluster_set_observer(cluster *c, const cluster_observer *o);
/* --- what the API server's refusals of evictions teach (--pdb strict; model/budget.c) ----------- */

/* The eviction of pod ns/name was refused; pdb: the PodDisruptionBudget the answer names (same
 * namespace), NULL when none. *ret (budget.h): what the model learnt. 0 or -errno (unknown pod). */
int cluster_eviction_refused(cluster *c, const char *ns, const char *name, const char *pdb, cluster_refusal *ret);
/* The tightest budget covering pod ns/name: 1 with its disruptionsAllowed (and name), 0 when none
 * covers it (or the pod is unknown). */
int cluster_pod_budget(const cluster *c, const char *ns, const char *name, int32_t *ret_allowed,
                       const char **ret_pdb);
/* The nomination this scheduler assumed for pod ns/name is withdrawn: the model shows the pod
 * without one (and requeues it at once). Returns true when the API server shows a nomination
 * that a status write must clear. */
bool cluster_withdraw_nomination(cluster *c, const char *ns, const char *name);

typedef struct cluster_counts {
	size_t nodes, pods, pdbs, classes;
	size_t gated;    /* this scheduler's pending pods held by schedulingGates */
	size_t held;     /* pods out of the queue after a refused binding, until the API says more */
	size_t assumed;  /* pods with a decision the API server does not show yet */
	size_t protected_; /* pods no victim since the API server refused their eviction */
	uint64_t refused; /* objects refused since the start */
} cluster_counts;
void cluster_get_counts(const cluster *c, cluster_counts *ret);

#endif
