/* SPDX-License-Identifier: MIT */
/*
 * How preemption treats PodDisruptionBudgets (preempt.h, "PodDisruptionBudgets in preemption"):
 * the policy, the pods a refused eviction protects, and a budget as observed. The dry run that
 * reads them is preemption.c's select_victims().
 */
#include <errno.h>
#include <string.h>

#include "cluster.h"
#include "pdb.h"

const char *pp_pdb_policy_name(pp_pdb_policy p)
{
	switch (p) {
	case PP_PDB_PREFER:
		return "prefer";
	case PP_PDB_STRICT:
		return "strict";
	}
	return NULL;
}

int pp_pdb_policy_parse(const char *s, pp_pdb_policy *ret, pp_err *err)
{
	if (s && !strcmp(s, "prefer"))
		*ret = PP_PDB_PREFER;
	else if (s && !strcmp(s, "strict"))
		*ret = PP_PDB_STRICT;
	else
		return pp_fail(err, -EINVAL, "expected prefer or strict, not \"%.100s\"", s ? s : "");
	return 0;
}

int pp_cluster_set_pdb_policy(pp_cluster *c, pp_pdb_policy policy)
{
	if (!c || !pp_pdb_policy_name(policy))
		return -EINVAL;
	/* Only nodes with budgets (never cached: pcache.h) decide differently: no cache to drop. */
	c->pdb_policy = policy;
	return 0;
}

pp_pdb_policy pp_cluster_pdb_policy(const pp_cluster *c)
{
	return c ? c->pdb_policy : PP_PDB_PREFER;
}

int pp_cluster_set_pod_protected(pp_cluster *c, const char *ns, const char *name, bool protected_, pp_err *err)
{
	if (!c)
		return -EINVAL;
	struct pod *p = pp__cluster_find_pod(c, ns, name);
	if (!p)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	if (p->protected_ == protected_)
		return 0;
	p->protected_ = protected_;
	if (p->node) {
		/* the node's summary flags it (victims are no suffix of its slots any more) and its
		 * cached result goes */
		p->node->n_protected += protected_ ? 1 : (size_t)-1;
		pp__node_changed(c, p->node);
	}
	return 0;
}

bool pp_cluster_pod_protected(const pp_cluster *c, const char *ns, const char *name)
{
	const struct pod *p = c ? pp__cluster_find_pod(c, ns, name) : NULL;
	return p && p->protected_;
}

int pp_cluster_set_pdb_disruptions_allowed(pp_cluster *c, const char *ns, const char *name, int32_t allowed,
                                           pp_err *err)
{
	if (!c)
		return -EINVAL;
	struct pdb *b = pp__cluster_find_pdb(c, ns, name);
	if (!b)
		return pp_fail(err, -ENOENT, "poddisruptionbudgets/%.100s/%.100s: not found", ns ? ns : "",
		               name ? name : "");
	/* Budgets are read afresh by every decision, and nodes with PDB pods are never cached. */
	b->has_disruptions_allowed = true;
	b->disruptions_allowed = allowed;
	return 0;
}

int pp_cluster_pod_pdb(const pp_cluster *c, const char *ns, const char *name, size_t i, pp_pdb_info *ret)
{
	if (!c || !ret)
		return -EINVAL;
	const struct pod *p = pp__cluster_find_pod(c, ns, name);
	if (!p)
		return -ENOENT;
	if (i >= p->n_pdbs)
		return -ERANGE;
	const struct pdb *b = p->pdbs[i];
	*ret = (pp_pdb_info){ b->ns, b->name, pp__pdb_disruptions_allowed(c, b) };
	return 0;
}
