/* SPDX-License-Identifier: MIT */
/*
 * The scheduling filters and scoring over the cluster model (reference §4, §6), shared by the
 * preemption decision (preemption.c) and the scheduling cycle (sched_fit.c): one implementation
 * of NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit and InterPodAffinity,
 * with the two-pass nominated-pods rule, and NodeResourcesFit's LeastAllocated score.
 * Nothing here is exported.
 */
#ifndef PP_FILTER_H
#define PP_FILTER_H

#include "cluster_model.h"

/* Filter failures, in the order Kubernetes' default Filter plugins run. */
enum {
	F_UNSCHEDULABLE = 1 << 0, /* NodeUnschedulable */
	F_TAINT = 1 << 1,         /* TaintToleration */
	F_NODE_AFFINITY = 1 << 2, /* NodeAffinity */
	F_PODS = 1 << 3,          /* NodeResourcesFit: Too many pods */
	F_CPU = 1 << 4,
	F_MEMORY = 1 << 5,
	F_EPHEMERAL = 1 << 6,
	F_SCALAR = 1 << 7, /* ids in struct filter_failures */
	F_POD_AFFINITY = 1 << 8, /* InterPodAffinity */
	F_POD_ANTI_AFFINITY = 1 << 9,
	F_EXISTING_ANTI_AFFINITY = 1 << 10,
	F_NO_VICTIMS = 1 << 11, /* preemption dry run: nothing of lower priority */
	F_PDB = 1 << 12,        /* strict dry run: the victims a budget allows are not enough (pdb) */
	F_ABSENT = 1 << 13,     /* no Node object (struct node.absent): in no count, no reason given */
	F_RESOURCES = F_PODS | F_CPU | F_MEMORY | F_EPHEMERAL | F_SCALAR,
};

#define MAX_SCALAR_REASONS 8

/* Which filters a node fails for a pod (F_* in mask), with what the reasons name. */
struct filter_failures {
	unsigned mask;
	bool unresolvable; /* UnschedulableAndUnresolvable: preemption cannot help */
	const pp_taint *taint;
	const struct pdb *pdb; /* F_PDB */
	uint32_t scalar[MAX_SCALAR_REASONS];
	size_t n_scalar;
};

struct aff;

/* Changes to the inter-pod affinity counts of the node under test (pods removed or added). */
struct aff_delta {
	int64_t match_all;
	int64_t *anti; /* per preemptor anti-affinity term */
	int64_t *ex;   /* per existing anti-affinity topology key */
};

/* Filter state for one pending pod, built once per decision or cycle. */
struct filter {
	const pp_cluster *c;
	const struct pod *pre;
	struct aff *aff;        /* NULL: no inter-pod (anti-)affinity is involved anywhere */
	struct aff_delta delta; /* pods removed from the node under test (preemption's dry run) */
	struct aff_delta nom;   /* scratch: delta plus the nominated pods (first pass) */
};

/* Nominated pods with priority >= the pod's, counted on their node in the first pass; and, in a
 * preemption's dry run, the lower-priority pods that are no victims (stuck, or spared as young):
 * their pod count and core requests are in pods and req, kept lists them for scalar requests. */
struct extra {
	int64_t pods;
	i128 req[N_CORE_RES];
	const struct pod *const *kept;
	size_t n_kept;
};

int pp__filter_init(struct filter *x, const pp_cluster *c, const struct pod *pre);
void pp__filter_done(struct filter *x);

void pp__filter_extra(const struct filter *x, const struct node *n, struct extra *e);

/* Scalar (extended) resource amounts; 0 where absent. */
i128 pp__node_alloc_scalar(const struct node *n, uint32_t id);
i128 pp__node_req_scalar(const struct node *n, uint32_t id);
int64_t pp__pod_scalar(const struct pod *p, uint32_t id);
/* Σ of the nominated extras' scalar request id on n. */
i128 pp__extra_scalar(const struct filter *x, const struct node *n, uint32_t id);
/* Σ scalar request id of the node's pods from slot `from` on. */
i128 pp__lower_scalar(const struct node *n, size_t from, uint32_t id);

/* NodeUnschedulable, TaintToleration, NodeAffinity: never resolvable by preemption. */
unsigned pp__filter_static(const struct pod *pre, const struct node *n, struct filter_failures *f);

/*
 * NodeResourcesFit with only the node's first `keep` pods (slot order) present, plus the
 * extras e. skip_terminating: the node's terminating pods count as gone.
 */
unsigned pp__filter_resources(const struct filter *x, const struct node *n, size_t keep, const struct extra *e,
                          bool skip_terminating, struct filter_failures *f);

/* x->delta: start empty, then add (sign +1) or remove (-1) a pod of node n. */
void pp__filter_delta_reset(struct filter *x);
void pp__filter_delta_add(struct filter *x, const struct node *n, const struct pod *p, int sign);

/* InterPodAffinity with x->delta applied, both passes of the nominated-pods rule. */
unsigned pp__filter_affinity(struct filter *x, const struct node *n, bool *unresolvable);

/*
 * RunFilterPluginsWithNominatedPods on the node as it is: every filter, first with the
 * nominated pods of priority >= the pod's, then (if there are any) without them. 0: fits.
 */
unsigned pp__filter_node(struct filter *x, const struct node *n, bool skip_terminating, struct filter_failures *f);

/* The failure's reasons as Kubernetes words them, in plugin order; fn is called per reason. */
void pp__filter_reasons(const pp_cluster *c, const struct filter_failures *f, void (*fn)(const char *, void *),
                        void *ud);

/* kube's defaults for requests that are not set (schedutil.GetNonzeroRequests). */
#define NONZERO_CPU_MILLI 100
#define NONZERO_MEMORY (200LL * 1024 * 1024)
int64_t pp__pod_nonzero_request(const struct pod *p, int res);

/* NodeResourcesFit score, LeastAllocated over cpu and memory, weight 1 each (0..100). */
/* LeastAllocated over cpu and memory: allocatable, the bound pods' non-zero requests, the pod's. */
int64_t pp__least_allocated(const int64_t alloc[2], const i128 used[2], const int64_t want[2]);
int64_t pp__score_least_allocated(const struct pod *p, const struct node *n);

#endif
