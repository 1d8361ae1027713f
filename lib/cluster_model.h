/* SPDX-License-Identifier: MIT */
/* The cluster model's internal representation: the types that cluster.c keeps and every module
 * below it reads (select.c, change.c, pdb.c, filter.c, pcache.c ...). Types only: the functions
 * live with their modules' own headers. Nothing here is exported. */
#ifndef PP_MODEL_H
#define PP_MODEL_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "internal.h"
#include "strmap.h"

/* cpu (millicores), memory, ephemeral-storage: the resources every pod and node carries. */
enum { RES_CPU = 0, RES_MEMORY = 1, RES_EPHEMERAL = 2, N_CORE_RES = 3 };

typedef __int128 i128;

/* A scalar (extended) resource amount; id indexes pp_cluster.res_names. */
struct sres {
	uint32_t id;
	int64_t value;
};

struct sres128 {
	uint32_t id;
	i128 value;
};

struct node;
struct pdb;

struct pod {
	struct arena arena;
	const char *ns, *name, *key; /* key = ns "\x1f" name */
	pp_label *labels;
	size_t n_labels;
	int32_t priority;
	pp_preemption_policy policy;
	int64_t req[N_CORE_RES];
	struct sres *scalar;
	size_t n_scalar;
	bool zero_request; /* requests nothing at all: only the pod count is checked */
	struct node *node;      /* bound node, or NULL */
	struct node *nominated; /* pending pods only */
	bool has_start;
	int64_t start;
	bool terminating;
	int64_t deletion; /* metadata.deletionTimestamp: when it is due to be gone */
	bool preempted_by_scheduler;
	/* terminating past the deadline of a nomination that waited for it (sched_reserve.c): it
	 * keeps its room, but no preemption counts on it any more */
	bool stuck;
	bool not_ready;
	bool protected_; /* never a victim (pp_cluster_set_pod_protected) */
	int64_t grace;
	pp_toleration *tolerations;
	size_t n_tolerations;
	pp_label *node_selector;
	size_t n_node_selector;
	bool has_node_affinity;
	pp_node_selector_term *node_affinity;
	size_t n_node_affinity;
	pp_pod_affinity_term *affinity;
	size_t n_affinity;
	pp_pod_affinity_term *anti_affinity;
	size_t n_anti_affinity;
	struct pdb **pdbs; /* PDBs that match it in the preemption sense (malloc'ed) */
	size_t n_pdbs;
	size_t idx;     /* in pp_cluster.pods */
	size_t nom_idx; /* in nominated->nominated */
};

/* A bound pod as the node keeps it, hot fields inline so that scans stay in cache. */
struct slot {
	int32_t prio;
	bool has_start;
	int64_t start;
	int64_t req[N_CORE_RES];
	struct pod *pod;
};

struct node {
	/* hot: read for every node of every decision */
	i128 req_total[N_CORE_RES]; /* = psum[n_pods], inline so that most nodes need no other line */
	int64_t alloc[N_CORE_RES];
	int64_t max_pods;
	int32_t max_prio, min_prio; /* of the bound pods (valid when n_pods > 0) */
	i128 (*psum)[N_CORE_RES]; /* psum[i] = Σ core requests of slots[0..i) */
	struct slot *slots; /* bound pods, most important first (priority desc, start asc with
	                       "no start" last, namespace, name) */
	size_t n_pods;
	size_t n_nominated;
	size_t n_taints;
	size_t n_pdb_pods; /* bound pods matching some PDB */
	size_t n_protected; /* bound pods that are never victims */
	size_t n_nostart;  /* bound pods without a start time (their order depends on "now") */
	bool unschedulable;
	/* its Node object is gone (or not seen yet) while pods are still bound to it: kept for
	 * their resources, but out of every filter and count, as kube's snapshot keeps only nodes
	 * whose Node exists (cache.UpdateSnapshot skips a NodeInfo without Node) */
	bool absent;
	/* cold */
	i128 nonzero_total[2]; /* Σ cpu, memory of bound pods with kube's non-zero defaults (scoring) */
	size_t cap_pods, cap_nominated;
	struct arena arena;
	const char *name;
	pp_label *labels;
	size_t n_labels;
	pp_taint *taints;
	struct sres *alloc_scalar;
	size_t n_alloc_scalar;
	struct sres128 *req_scalar; /* Σ scalar requests of bound pods */
	size_t n_req_scalar, cap_req_scalar;
	struct pod **nominated; /* pending pods nominated here */
	size_t n_anti; /* bound pods with required anti-affinity */
	size_t idx;    /* in pp_cluster.nodes (name order) */
};

/*
 * A node as the first look of a preemption decision sees it: what the resource filter and the
 * lower bounds of the best-candidate criteria read, for every node in one contiguous array in
 * name order (pp_cluster.sum[node->idx]), so that the scan over all nodes is sequential and
 * most nodes are settled without touching their pod arrays. Refreshed by node_sum_update()
 * on every change of the node, its bound or nominated pods, or their PDB membership.
 */
enum {
	NS_GENERAL = 1 << 0, /* only the general path knows: cordon, taints, nominated pods,
	                        stuck pods, amounts beyond int64 */
	NS_PDB = 1 << 1,     /* some bound pod matches a PDB or is protected: victims are not a suffix
	                        of slots */
	NS_NOSTART = 1 << 2, /* some bound pod has no start time ("now") */
};

struct nsum {
	int64_t free[N_CORE_RES];    /* allocatable - requested by the bound pods */
	int64_t alloc[N_CORE_RES];
	int64_t max_req[N_CORE_RES]; /* largest request of one bound pod */
	int64_t max_pods;
	int64_t max_start; /* latest start of a bound pod that has one (INT64_MIN: none) */
	/* The least important pods, where victims usually come from: tail_start[j] is the start of
	 * slots[n_pods - 1 - j] (bit j of tail_nostart: it has none) */
#define NS_TAIL 4
	int64_t tail_start[NS_TAIL];
	unsigned tail_nostart;
	const struct slot *slots;
	const i128 (*psum)[N_CORE_RES];
	size_t n_pods;
	int32_t min_prio, max_prio; /* valid when n_pods > 0 */
	unsigned flags;             /* NS_* */
	/* cpu and memory of the bound pods with kube's non-zero defaults: the LeastAllocated score */
	int64_t nz_used[2];
	/* the last score computed here and for which non-zero request (0, 0: none), kept until the
	 * node changes: pods of one shape, scheduled one after the other, score each node once */
	int64_t score_for[2];
	int64_t score;
};

struct pdb {
	struct arena arena;
	const char *ns, *name, *key;
	pp_label_selector selector;
	bool preempt_selectable; /* non-nil, non-empty selector: may match in preemption */
	pp_int_or_percent min_available, max_unavailable;
	bool has_disruptions_allowed;
	int32_t disruptions_allowed;
	const char **disrupted;
	size_t n_disrupted;
	size_t idx;
};

struct pp_cluster {
	struct node **nodes; /* ascending name */
	size_t n_nodes, cap_nodes;
	size_t n_absent; /* nodes with absent set */
	struct strmap node_map;
	struct pod **pods;
	size_t n_pods, cap_pods;
	struct strmap pod_map;
	struct pdb **pdbs;
	size_t n_pdbs, cap_pdbs;
	struct strmap pdb_map;
	char **res_names; /* scalar resource names by id */
	size_t n_res, cap_res;
	struct strmap res_map; /* name -> id + 1 */
	bool any_start;
	int64_t max_start; /* max start time ever added: decides whether slot order matches "now" */
	size_t n_anti;     /* bound pods with required anti-affinity, cluster-wide */
	size_t n_nom_anti; /* nominated pods with required anti-affinity, cluster-wide */
	size_t n_stuck;    /* pods marked stuck (struct pod.stuck) */
	struct pcache *pcache; /* preemption.c's per-node results, reused across decisions */
	struct nsum *sum;      /* by node index, see struct nsum */
	size_t cap_sum;
	pp_pdb_policy pdb_policy;
};

/* Nodes whose Node object exists: the N of "0/N nodes are available". */
static inline size_t pp__cluster_present_nodes(const pp_cluster *c)
{
	return c->n_nodes - c->n_absent;
}

#endif
