/* A straightforward preemption simulation over plain spec arrays, written the way kube-scheduler
 * does it (copy the node's pod set, remove victims, re-run every filter from scratch per
 * reprieve step), independently of libpreempt's aggregates. Used by the differential test and
 * by the benchmark as the "full simulation" baseline. Header-only; include once per program. */
#ifndef PREEMPT_SIM_H
#define PREEMPT_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preempt.h"

struct sim_cluster {
	const pp_node_spec *nodes;
	size_t n_nodes;
	const pp_pod_spec *pods; /* bound and pending */
	size_t n_pods;
	const pp_pdb_spec *pdbs;
	size_t n_pdbs;
};

#define SIM_MAX_VICTIMS 512

struct sim_result {
	pp_outcome outcome;
	const char *node;
	pp_criterion criterion; /* the criterion that decided among the candidates */
	const char *runner_up;  /* the best of the other candidates, NULL when there was one */
	size_t n_victims;
	const pp_pod_spec *victims[SIM_MAX_VICTIMS];
};

static const char *sim_label(const pp_label *l, size_t n, const char *k)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(l[i].key, k) == 0)
			return l[i].value;
	return NULL;
}

static bool sim_req(const pp_requirement *r, const pp_label *l, size_t n)
{
	const char *v = sim_label(l, n, r->key);
	bool in = false;
	for (size_t i = 0; v && i < r->n_values; i++)
		in |= strcmp(r->values[i], v) == 0;
	switch (r->op) {
	case PP_OP_IN:
		return v && in;
	case PP_OP_NOT_IN:
		return !v || !in;
	case PP_OP_EXISTS:
		return v;
	case PP_OP_DOES_NOT_EXIST:
		return !v;
	case PP_OP_GT:
	case PP_OP_LT: {
		if (!v || r->n_values != 1)
			return false;
		char *e1, *e2;
		long long a = strtoll(v, &e1, 10), b = strtoll(r->values[0], &e2, 10);
		if (*e1 || *e2 || !*v || !*r->values[0])
			return false;
		return r->op == PP_OP_GT ? a > b : a < b;
	}
	}
	return false;
}

static bool sim_selector(const pp_label_selector *s, const pp_label *l, size_t n)
{
	if (!s->present)
		return false;
	for (size_t i = 0; i < s->n_match_labels; i++) {
		const char *v = sim_label(l, n, s->match_labels[i].key);
		if (!v || strcmp(v, s->match_labels[i].value))
			return false;
	}
	for (size_t i = 0; i < s->n_match_expressions; i++)
		if (!sim_req(&s->match_expressions[i], l, n))
			return false;
	return true;
}

static bool sim_term_matches(const pp_pod_affinity_term *t, const char *term_ns, const pp_pod_spec *p)
{
	bool ok = t->n_namespaces == 0 && strcmp(term_ns, p->namespace_) == 0;
	for (size_t i = 0; i < t->n_namespaces; i++)
		ok |= strcmp(t->namespaces[i], p->namespace_) == 0;
	return ok && sim_selector(&t->selector, p->labels, p->n_labels);
}

static bool sim_bound(const pp_pod_spec *p)
{
	return p->node_name && *p->node_name;
}

static bool sim_tolerates(const pp_pod_spec *p, const pp_taint *t)
{
	for (size_t i = 0; i < p->n_tolerations; i++) {
		const pp_toleration *o = &p->tolerations[i];
		if (o->effect != PP_EFFECT_ANY && o->effect != t->effect)
			continue;
		if (o->key && *o->key && strcmp(o->key, t->key))
			continue;
		if (o->op == PP_TOLERATION_EXISTS || !strcmp(o->value ? o->value : "", t->value ? t->value : ""))
			return true;
	}
	return false;
}

static int64_t sim_res(const pp_resource *r, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return r[i].value;
	return 0;
}

/* Result of one filter run: 0 fits, 1 resolvable failure, 2 unresolvable. */
enum { SIM_FIT = 0, SIM_RESOLVABLE = 1, SIM_UNRESOLVABLE = 2 };

/* Pod i is nominated to node ni with priority >= the preemptor's (counted in the first pass). */
static bool sim_nominated_here(const struct sim_cluster *c, size_t i, size_t ni, const pp_pod_spec *pre)
{
	const pp_pod_spec *p = &c->pods[i];
	return !sim_bound(p) && p != pre && p->nominated_node_name && !strcmp(p->nominated_node_name, c->nodes[ni].name) &&
	       p->priority >= pre->priority;
}

static int sim_affinity(const struct sim_cluster *c, size_t ni, const pp_pod_spec *pre, const bool *present,
                        bool with_nom);

/* present[i]: pod i counts as on its node (bound pods minus removed ones). */
static int sim_filter(const struct sim_cluster *c, size_t ni, const pp_pod_spec *pre, const bool *present)
{
	const pp_node_spec *n = &c->nodes[ni];
	if (n->unschedulable) {
		pp_taint cordon = { "node.kubernetes.io/unschedulable", "", PP_EFFECT_NO_SCHEDULE };
		if (!sim_tolerates(pre, &cordon))
			return SIM_UNRESOLVABLE;
	}
	for (size_t i = 0; i < n->n_taints; i++)
		if (n->taints[i].effect != PP_EFFECT_PREFER_NO_SCHEDULE && !sim_tolerates(pre, &n->taints[i]))
			return SIM_UNRESOLVABLE;
	for (size_t i = 0; i < pre->n_node_selector; i++) {
		const char *v = sim_label(n->labels, n->n_labels, pre->node_selector[i].key);
		if (!v || strcmp(v, pre->node_selector[i].value))
			return SIM_UNRESOLVABLE;
	}
	if (pre->has_node_affinity) {
		bool any = false;
		for (size_t t = 0; t < pre->n_node_affinity && !any; t++) {
			const pp_node_selector_term *term = &pre->node_affinity[t];
			bool ok = term->n_match_expressions + term->n_match_fields > 0;
			for (size_t i = 0; i < term->n_match_expressions; i++)
				ok = ok && sim_req(&term->match_expressions[i], n->labels, n->n_labels);
			for (size_t i = 0; i < term->n_match_fields; i++) {
				const pp_requirement *r = &term->match_fields[i];
				ok = ok && !strcmp(r->key, "metadata.name") && r->n_values == 1 &&
				     (r->op == PP_OP_IN || r->op == PP_OP_NOT_IN) &&
				     (!strcmp(r->values[0], n->name) == (r->op == PP_OP_IN));
			}
			any = ok;
		}
		if (!any)
			return SIM_UNRESOLVABLE;
	}

	/* NodeResourcesFit, with nominated pods of >= priority counted (first pass). */
	long long npods = 0;
	__int128 used[3] = { 0 };
	static const char *core[3] = { "cpu", "memory", "ephemeral-storage" };
	for (size_t i = 0; i < c->n_pods; i++) {
		const pp_pod_spec *p = &c->pods[i];
		bool here = present[i] && sim_bound(p) && !strcmp(p->node_name, n->name);
		bool nom = !sim_bound(p) && p != pre && p->nominated_node_name &&
		           !strcmp(p->nominated_node_name, n->name) && p->priority >= pre->priority;
		if (!here && !nom)
			continue;
		npods++;
		for (int k = 0; k < 3; k++)
			used[k] += sim_res(p->requests, p->n_requests, core[k]);
	}
	/* Since kubernetes PR #131345 an insufficiency the node could never satisfy (request above
	 * allocatable) is unresolvable; it matters for the nominated-node eligibility rule. */
	int verdict = SIM_FIT;
	if (npods + 1 > sim_res(n->allocatable, n->n_allocatable, "pods"))
		verdict = sim_res(n->allocatable, n->n_allocatable, "pods") < 1 ? SIM_UNRESOLVABLE : SIM_RESOLVABLE;
	bool zero = true;
	for (size_t i = 0; i < pre->n_requests; i++)
		zero = zero && (pre->requests[i].value == 0 || !strcmp(pre->requests[i].name, "pods"));
	if (!zero) {
		for (int k = 0; k < 3; k++) {
			int64_t want = sim_res(pre->requests, pre->n_requests, core[k]);
			if (want > 0 && want > sim_res(n->allocatable, n->n_allocatable, core[k]) - used[k] &&
			    verdict != SIM_UNRESOLVABLE)
				verdict = want > sim_res(n->allocatable, n->n_allocatable, core[k]) ? SIM_UNRESOLVABLE
				                                                                     : SIM_RESOLVABLE;
		}
		for (size_t r = 0; r < pre->n_requests; r++) {
			const char *rn = pre->requests[r].name;
			if (!strcmp(rn, "cpu") || !strcmp(rn, "memory") || !strcmp(rn, "ephemeral-storage") ||
			    !strcmp(rn, "pods") || pre->requests[r].value == 0)
				continue;
			__int128 u = 0;
			for (size_t i = 0; i < c->n_pods; i++) {
				const pp_pod_spec *p = &c->pods[i];
				bool here = present[i] && sim_bound(p) && !strcmp(p->node_name, n->name);
				bool nom = !sim_bound(p) && p != pre && p->nominated_node_name &&
				           !strcmp(p->nominated_node_name, n->name) && p->priority >= pre->priority;
				if (here || nom)
					u += sim_res(p->requests, p->n_requests, rn);
			}
			if (pre->requests[r].value > sim_res(n->allocatable, n->n_allocatable, rn) - u &&
			    verdict != SIM_UNRESOLVABLE)
				verdict = pre->requests[r].value > sim_res(n->allocatable, n->n_allocatable, rn) ? SIM_UNRESOLVABLE
				                                                                                 : SIM_RESOLVABLE;
		}
	}
	if (verdict != SIM_FIT)
		return verdict;

	/* InterPodAffinity, twice when nominated pods count here (RunFilterPluginsWithNominatedPods):
	 * with them, then without them. */
	bool any_nom = false;
	for (size_t i = 0; i < c->n_pods; i++)
		any_nom |= sim_nominated_here(c, i, ni, pre);
	if (any_nom) {
		int v = sim_affinity(c, ni, pre, present, true);
		if (v != SIM_FIT)
			return v;
	}
	return sim_affinity(c, ni, pre, present, false);
}

/* The node pod i counts on for the affinity filter (NULL: nowhere). */
static const pp_node_spec *sim_pod_node(const struct sim_cluster *c, size_t i, size_t ni, const pp_pod_spec *pre,
                                        const bool *present, bool with_nom)
{
	const pp_pod_spec *p = &c->pods[i];
	if (with_nom && sim_nominated_here(c, i, ni, pre))
		return &c->nodes[ni];
	if (!present[i] || !sim_bound(p))
		return NULL;
	for (size_t m = 0; m < c->n_nodes; m++)
		if (!strcmp(c->nodes[m].name, p->node_name))
			return &c->nodes[m];
	return NULL;
}

/* InterPodAffinity, counts rebuilt from scratch over every pod counted. */
static int sim_affinity(const struct sim_cluster *c, size_t ni, const pp_pod_spec *pre, const bool *present,
                        bool with_nom)
{
	const pp_node_spec *n = &c->nodes[ni];
	if (pre->n_affinity) {
		bool exist = true;
		long long total = 0;
		for (size_t t = 0; t < pre->n_affinity; t++)
			if (!sim_label(n->labels, n->n_labels, pre->affinity[t].topology_key))
				return SIM_UNRESOLVABLE;
		for (size_t t = 0; t < pre->n_affinity; t++) {
			const char *key = pre->affinity[t].topology_key;
			const char *val = sim_label(n->labels, n->n_labels, key);
			long long cnt = 0;
			for (size_t i = 0; i < c->n_pods; i++) {
				const pp_pod_spec *p = &c->pods[i];
				const pp_node_spec *pn = sim_pod_node(c, i, ni, pre, present, with_nom);
				if (!pn)
					continue;
				bool all = true;
				for (size_t u = 0; u < pre->n_affinity; u++)
					all = all && sim_term_matches(&pre->affinity[u], pre->namespace_, p);
				if (!all)
					continue;
				const char *pv = sim_label(pn->labels, pn->n_labels, key);
				if (pv) {
					total++;
					if (!strcmp(pv, val))
						cnt++;
				}
			}
			if (cnt <= 0)
				exist = false;
		}
		if (!exist) {
			bool self = true;
			for (size_t u = 0; u < pre->n_affinity; u++)
				self = self && sim_term_matches(&pre->affinity[u], pre->namespace_, pre);
			if (!(total == 0 && self))
				return SIM_UNRESOLVABLE;
		}
	}
	for (size_t t = 0; t < pre->n_anti_affinity; t++) {
		const char *key = pre->anti_affinity[t].topology_key;
		const char *val = sim_label(n->labels, n->n_labels, key);
		if (!val)
			continue;
		for (size_t i = 0; i < c->n_pods; i++) {
			const pp_pod_spec *p = &c->pods[i];
			const pp_node_spec *pn = sim_pod_node(c, i, ni, pre, present, with_nom);
			if (!pn || !sim_term_matches(&pre->anti_affinity[t], pre->namespace_, p))
				continue;
			const char *pv = sim_label(pn->labels, pn->n_labels, key);
			if (pv && !strcmp(pv, val))
				return SIM_RESOLVABLE;
		}
	}
	for (size_t i = 0; i < c->n_pods; i++) {
		const pp_pod_spec *p = &c->pods[i];
		const pp_node_spec *pn = sim_pod_node(c, i, ni, pre, present, with_nom);
		for (size_t t = 0; pn && t < p->n_anti_affinity; t++) {
			const char *key = p->anti_affinity[t].topology_key;
			const char *pv = sim_label(pn->labels, pn->n_labels, key);
			const char *val = sim_label(n->labels, n->n_labels, key);
			if (pv && val && !strcmp(pv, val) && sim_term_matches(&p->anti_affinity[t], p->namespace_, pre))
				return SIM_RESOLVABLE;
		}
	}
	return SIM_FIT;
}

static int64_t sim_now;

static int sim_more_important(const void *a, const void *b)
{
	const pp_pod_spec *x = *(const pp_pod_spec *const *)a, *y = *(const pp_pod_spec *const *)b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	int64_t sx = x->has_start_time ? x->start_time_ns : sim_now, sy = y->has_start_time ? y->start_time_ns : sim_now;
	if (sx != sy)
		return sx < sy ? -1 : 1;
	int r = strcmp(x->namespace_, y->namespace_);
	return r ? r : strcmp(x->name, y->name);
}

static int32_t sim_pdb_allowed(const struct sim_cluster *c, const pp_pdb_spec *b)
{
	if (b->has_disruptions_allowed)
		return b->disruptions_allowed;
	long long expected = 0, healthy = 0;
	for (size_t i = 0; i < c->n_pods; i++) {
		const pp_pod_spec *p = &c->pods[i];
		if (!sim_bound(p) || strcmp(p->namespace_, b->namespace_) ||
		    !sim_selector(&b->selector, p->labels, p->n_labels))
			continue;
		expected++;
		bool disrupted = false;
		for (size_t d = 0; d < b->n_disrupted_pods; d++)
			disrupted |= !strcmp(b->disrupted_pods[d], p->name);
		if (!p->terminating && !p->not_ready && !disrupted)
			healthy++;
	}
	long long desired = 0;
	if (b->max_unavailable.kind == PP_IOP_INT)
		desired = expected - b->max_unavailable.value;
	else if (b->max_unavailable.kind == PP_IOP_PERCENT)
		desired = expected - (b->max_unavailable.value * expected + 99) / 100;
	else if (b->min_available.kind == PP_IOP_INT)
		desired = b->min_available.value;
	else if (b->min_available.kind == PP_IOP_PERCENT)
		desired = (b->min_available.value * expected + 99) / 100;
	if (desired < 0)
		desired = 0;
	long long allowed = healthy - desired;
	return expected <= 0 || allowed <= 0 ? 0 : (int32_t)allowed;
}

struct sim_cand {
	size_t node;
	size_t n_victims, violations;
	const pp_pod_spec *victims[SIM_MAX_VICTIMS];
};

/* The strict PDB policy (pp_cluster_set_pdb_policy): no victim beyond what a budget allows, the
 * budgets' most important victims beyond it kept and the reprieve repeated. sim_protected[i]: pod i
 * is never a victim (pp_cluster_set_pod_protected); NULL: none is. */
static bool sim_strict;
static const bool *sim_protected;

/* Whether budget d covers pod p in preemption's sense (filterPodsWithPDBViolation). */
static bool sim_pdb_covers(const pp_pdb_spec *d, const pp_pod_spec *p)
{
	return p->n_labels && !strcmp(d->namespace_, p->namespace_) && d->selector.present &&
	       d->selector.n_match_labels + d->selector.n_match_expressions > 0 &&
	       sim_selector(&d->selector, p->labels, p->n_labels);
}

/* SelectVictimsOnNode. present is scratch, restored on return. Returns true for a candidate. */
static bool sim_select_victims(const struct sim_cluster *c, size_t ni, const pp_pod_spec *pre, bool *present,
                               struct sim_cand *out)
{
	const pp_pod_spec *pot[SIM_MAX_VICTIMS];
	size_t np = 0, idx[SIM_MAX_VICTIMS];
	bool kept[SIM_MAX_VICTIMS] = { false };
	for (size_t i = 0; i < c->n_pods; i++) {
		const pp_pod_spec *p = &c->pods[i];
		if (sim_bound(p) && !strcmp(p->node_name, c->nodes[ni].name) && p->priority < pre->priority &&
		    np < SIM_MAX_VICTIMS)
			pot[np++] = p;
	}
	qsort(pot, np, sizeof(*pot), sim_more_important);
	for (size_t k = 0; k < np; k++) {
		idx[k] = (size_t)(pot[k] - c->pods);
		kept[k] = sim_protected && sim_protected[idx[k]];
	}

	/* filterPodsWithPDBViolation */
	int64_t budget[64];
	bool violating[SIM_MAX_VICTIMS] = { false };
	for (size_t b = 0; b < c->n_pdbs && b < 64; b++)
		budget[b] = sim_pdb_allowed(c, &c->pdbs[b]);
	for (size_t k = 0; k < np; k++) {
		const pp_pod_spec *p = pot[k];
		for (size_t b = 0; b < c->n_pdbs && b < 64; b++) {
			const pp_pdb_spec *d = &c->pdbs[b];
			if (!sim_pdb_covers(d, p))
				continue;
			bool disrupted = false;
			for (size_t q = 0; q < d->n_disrupted_pods; q++)
				disrupted |= !strcmp(d->disrupted_pods[q], p->name);
			if (disrupted)
				continue;
			if (--budget[b] < 0)
				violating[k] = true;
		}
	}
	bool victim[SIM_MAX_VICTIMS] = { false };
	bool ok = np > 0;
	for (int round = 0; ok; round++) {
		/* every pod removed but the kept ones; the preemptor must fit */
		for (size_t k = 0; k < np; k++)
			present[idx[k]] = kept[k];
		if (sim_filter(c, ni, pre, present) != SIM_FIT) {
			ok = false;
			break;
		}
		out->node = ni;
		out->n_victims = out->violations = 0;
		memset(victim, 0, sizeof(victim));
		for (int pass = 0; pass < 2; pass++)
			for (size_t k = 0; k < np; k++) {
				if (violating[k] != (pass == 0) || kept[k])
					continue;
				present[idx[k]] = true;
				if (sim_filter(c, ni, pre, present) != SIM_FIT) {
					present[idx[k]] = false;
					victim[k] = true;
					out->violations += violating[k];
				}
			}
		if (!sim_strict)
			break;
		out->violations = 0;
		/* each victim counted against every budget covering it, as the API server counts */
		int64_t left[64];
		bool over = false;
		for (size_t b = 0; b < c->n_pdbs && b < 64; b++)
			left[b] = sim_pdb_allowed(c, &c->pdbs[b]);
		for (size_t k = 0; k < np; k++)
			for (size_t b = 0; victim[k] && !pot[k]->terminating && b < c->n_pdbs && b < 64; b++)
				if (sim_pdb_covers(&c->pdbs[b], pot[k]))
					over |= --left[b] < 0;
		if (!over)
			break;
		for (size_t k = 0; k < np; k++) {
			bool keep = false;
			for (size_t b = 0; victim[k] && !pot[k]->terminating && b < c->n_pdbs && b < 64; b++)
				keep |= sim_pdb_covers(&c->pdbs[b], pot[k]) && left[b] < 0;
			for (size_t b = 0; keep && b < c->n_pdbs && b < 64; b++)
				if (sim_pdb_covers(&c->pdbs[b], pot[k]))
					left[b]++;
			kept[k] |= keep;
		}
		(void)round;
	}
	if (ok)
		for (size_t k = 0; k < np; k++)
			if (victim[k])
				out->victims[out->n_victims++] = pot[k]; /* already in importance order */
	for (size_t i = 0; i < c->n_pods; i++)
		present[i] = true;
	return ok && out->n_victims > 0;
}

/* pickOneNodeForPreemption, each criterion a filtering round over the survivors; *crit_out (if
 * not NULL) receives the criterion that left one node. */
static size_t sim_pick(const struct sim_cluster *c, struct sim_cand *cand, size_t n, pp_criterion *crit_out)
{
	bool *alive = malloc((n + 1) * sizeof(*alive));
	__int128 *score = malloc((n + 1) * sizeof(*score));
	size_t left = n;
	for (size_t i = 0; i < n; i++)
		alive[i] = true;
	if (crit_out)
		*crit_out = n == 1 ? PP_CRIT_SINGLE_CANDIDATE : PP_CRIT_NODE_NAME;
	for (int crit = 0; crit < 5 && left > 1; crit++) {
		__int128 best = 0;
		bool first = true;
		for (size_t i = 0; i < n; i++) {
			if (!alive[i])
				continue;
			struct sim_cand *x = &cand[i];
			__int128 s = 0;
			switch (crit) {
			case 0:
				s = -(__int128)x->violations;
				break;
			case 1:
				s = -(__int128)x->victims[0]->priority;
				break;
			case 2:
				for (size_t v = 0; v < x->n_victims; v++)
					s -= (__int128)x->victims[v]->priority + ((__int128)1 << 31);
				break;
			case 3:
				s = -(__int128)x->n_victims;
				break;
			case 4: {
				int32_t maxp = x->victims[0]->priority;
				int64_t earliest = x->victims[0]->has_start_time ? x->victims[0]->start_time_ns : sim_now;
				for (size_t v = 0; v < x->n_victims; v++) {
					const pp_pod_spec *p = x->victims[v];
					int64_t st = p->has_start_time ? p->start_time_ns : sim_now;
					if (p->priority == maxp && st < earliest)
						earliest = st;
					else if (p->priority > maxp) {
						maxp = p->priority;
						earliest = st;
					}
				}
				s = earliest;
				break;
			}
			}
			score[i] = s;
			if (first || s > best)
				best = s;
			first = false;
		}
		for (size_t i = 0; i < n; i++)
			if (alive[i] && score[i] != best) {
				alive[i] = false;
				left--;
			}
		if (left == 1 && crit_out)
			*crit_out = (pp_criterion)(PP_CRIT_PDB_VIOLATIONS + crit);
	}
	/* DESIGN §3: smallest node name among the survivors. */
	size_t w = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		if (alive[i] && (w == SIZE_MAX || strcmp(c->nodes[cand[i].node].name, c->nodes[cand[w].node].name) < 0))
			w = i;
	free(alive);
	free(score);
	return w;
}

/* The whole decision. cand is caller-provided scratch of at least n_nodes entries. */
__attribute__((unused)) static void sim_preempt(const struct sim_cluster *c, const pp_pod_spec *pre, int64_t now, struct sim_cand *cand,
                        struct sim_result *res)
{
	bool *present = malloc((c->n_pods + 1) * sizeof(*present));
	int *status = malloc((c->n_nodes + 1) * sizeof(*status));
	for (size_t i = 0; i < c->n_pods; i++)
		present[i] = true;
	sim_now = now;
	memset(res, 0, sizeof(*res));
	res->outcome = PP_OUTCOME_NONE;

	const pp_node_spec *fit = NULL;
	for (size_t ni = 0; ni < c->n_nodes; ni++) {
		status[ni] = sim_filter(c, ni, pre, present);
		if (status[ni] == SIM_FIT && (!fit || strcmp(c->nodes[ni].name, fit->name) < 0))
			fit = &c->nodes[ni];
	}
	if (fit) {
		res->outcome = PP_OUTCOME_FITS;
		res->node = fit->name;
		goto out;
	}
	if (pre->preemption_policy == PP_PREEMPT_NEVER)
		goto out;
	if (pre->nominated_node_name && *pre->nominated_node_name)
		for (size_t ni = 0; ni < c->n_nodes; ni++) {
			if (strcmp(c->nodes[ni].name, pre->nominated_node_name) || status[ni] == SIM_UNRESOLVABLE)
				continue;
			for (size_t i = 0; i < c->n_pods; i++) {
				const pp_pod_spec *p = &c->pods[i];
				if (sim_bound(p) && !strcmp(p->node_name, c->nodes[ni].name) && p->priority < pre->priority &&
				    p->terminating && p->preempted_by_scheduler)
					goto out;
			}
		}
	size_t nc = 0;
	for (size_t ni = 0; ni < c->n_nodes; ni++)
		if (status[ni] == SIM_RESOLVABLE && sim_select_victims(c, ni, pre, present, &cand[nc]))
			nc++;
	if (nc == 0)
		goto out;
	size_t w = sim_pick(c, cand, nc, &res->criterion);
	res->outcome = PP_OUTCOME_PREEMPT;
	res->node = c->nodes[cand[w].node].name;
	if (nc > 1) {
		/* the runner-up: the pick among the others */
		struct sim_cand won = cand[w];
		cand[w] = cand[nc - 1];
		res->runner_up = c->nodes[cand[sim_pick(c, cand, nc - 1, NULL)].node].name;
		cand[nc - 1] = cand[w];
		cand[w] = won;
	}
	res->n_victims = cand[w].n_victims;
	memcpy(res->victims, cand[w].victims, cand[w].n_victims * sizeof(res->victims[0]));
out:
	free(present);
	free(status);
}

#endif
