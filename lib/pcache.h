/* SPDX-License-Identifier: MIT */
/*
 * Per-node preemption results reused across decisions. A node's result (fits / unresolvable /
 * not a candidate / candidate with its best-candidate key) is a function of the node, its
 * bound and nominated pods, the preemptor's "shape" (everything about it the filters and the
 * victim selection read) and, only when the node has pods without a start time, "now". So an
 * entry stays valid until cluster.c reports a change of its node (pp__pcache_node_changed) or a
 * decision for a preemptor of another shape starts a new generation. Nodes whose victims may
 * match a PDB (budgets depend on the whole cluster), the preemptor's own nominated node (the
 * preemptor is not counted there) and inter-pod affinity (cluster-wide counts) are never cached.
 */
#ifndef PP_PCACHE_H
#define PP_PCACHE_H

#include <stdatomic.h>

#include "cluster_model.h"

/* Best-candidate criteria (reference §7.4) in order, each "lower is better". */
struct pkey {
	int64_t f[5]; /* violations, top priority, Σ(prio + 2^31), count, -start */
};

/* PC_BOUND: a candidate or not, with a key no better than .key component by component. */
enum { PC_FITS = 1, PC_UNRESOLVABLE, PC_NOT_CANDIDATE, PC_CANDIDATE, PC_BOUND };

struct pc_entry {
	uint64_t gen; /* valid when equal to pcache.gen */
	int64_t now;  /* "now" of the result, when now_dep */
	struct pkey key;
	uint8_t state; /* PC_* */
	bool now_dep;
};

struct pcache {
	atomic_flag busy; /* one decision at a time uses it; concurrent ones go without */
	uint64_t gen;
	unsigned char *shape; /* the preemptor shape of this generation */
	size_t shape_len;
	struct pc_entry *e; /* by node index */
	size_t n;
};

/*
 * Takes the cache for a decision about pre, starting a new generation when pre's shape differs
 * from the last one. false: not usable now (another decision holds it, or no memory) — decide
 * without it. On true, call pp__pcache_release() when done.
 */
bool pp__pcache_acquire(struct pcache *pc, const pp_cluster *c, const struct pod *pre);
void pp__pcache_release(struct pcache *pc);

/* pp__pcache_node_changed: a node's cached result no longer holds (any change to the node, its
 * bound or nominated pods, or their PDB membership); pp__pcache_reset: none of them does (nodes
 * added or removed). */
struct pcache *pp__pcache_new(void);
void pp__pcache_free(struct pcache *pc);
void pp__pcache_node_changed(const pp_cluster *c, const struct node *n);
void pp__pcache_reset(const pp_cluster *c);

#endif
