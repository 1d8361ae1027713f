/* SPDX-License-Identifier: MIT */
/*
 * The filters and scoring of filter.h, on the cluster's per-node aggregates: resource fit is a
 * prefix-sum lookup for any "first keep pods present" state, so preemption's dry run needs no
 * NodeInfo copies. Inter-pod (anti-)affinity uses cluster-wide topology counts built once per
 * pending pod, adjusted by a delta for the pods removed from (or nominated to) the node under
 * test, as the plugin's PreFilterExtensions do in Kubernetes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "select.h"
#include "strmap.h"

/* ---- inter-pod affinity counts -------------------------------------------------------------- */

struct count_map {
	const char *key;      /* topology key */
	struct strmap values; /* topology value -> count (as uintptr) */
};

struct aff {
	size_t n_aff, n_anti;
	/* the pod's required affinity terms: pods matching all terms, per topology value */
	struct count_map *aff; /* one per term */
	int64_t aff_total;
	bool self_match;
	struct count_map *anti; /* one per anti-affinity term of the pod */
	struct count_map *ex;   /* other pods' anti-affinity terms matching the pod, by key */
	size_t n_ex, cap_ex;
};

static uintptr_t map_count(const struct strmap *m, const char *v)
{
	return (uintptr_t)pp__strmap_get(m, v);
}

static int map_add(struct strmap *m, const char *v, uintptr_t d)
{
	return pp__strmap_put(m, v, (void *)(map_count(m, v) + d));
}

static bool pod_matches_all_terms(const pp_pod_affinity_term *t, size_t n, const char *ns, const struct pod *p)
{
	for (size_t i = 0; i < n; i++)
		if (!pp__affinity_term_matches(&t[i], ns, p))
			return false;
	return true;
}

static struct count_map *ex_map(struct aff *a, const char *key)
{
	for (size_t i = 0; i < a->n_ex; i++)
		if (strcmp(a->ex[i].key, key) == 0)
			return &a->ex[i];
	if (a->n_ex == a->cap_ex) {
		size_t cap = a->cap_ex ? a->cap_ex * 2 : 4;
		struct count_map *e = realloc(a->ex, cap * sizeof(*e));
		if (!e)
			return NULL;
		a->ex = e;
		a->cap_ex = cap;
	}
	a->ex[a->n_ex] = (struct count_map){ .key = key };
	return &a->ex[a->n_ex++];
}

static void aff_free(struct aff *a)
{
	if (!a)
		return;
	for (size_t i = 0; a->aff && i < a->n_aff; i++)
		pp__strmap_done(&a->aff[i].values);
	for (size_t i = 0; a->anti && i < a->n_anti; i++)
		pp__strmap_done(&a->anti[i].values);
	for (size_t i = 0; i < a->n_ex; i++)
		pp__strmap_done(&a->ex[i].values);
	free(a->aff);
	free(a->anti);
	free(a->ex);
	free(a);
}

/* The contribution of bound pod p on node n to the counts. */
static int aff_count(struct aff *a, const struct pod *pre, const struct node *n, const struct pod *p)
{
	if (pre->n_affinity && pod_matches_all_terms(pre->affinity, pre->n_affinity, pre->ns, p))
		for (size_t t = 0; t < pre->n_affinity; t++) {
			const char *v = pp__labels_get(n->labels, n->n_labels, a->aff[t].key);
			if (v) {
				if (map_add(&a->aff[t].values, v, 1) < 0)
					return -ENOMEM;
				a->aff_total++;
			}
		}
	for (size_t t = 0; t < pre->n_anti_affinity; t++) {
		const char *v = pp__labels_get(n->labels, n->n_labels, a->anti[t].key);
		if (v && pp__affinity_term_matches(&pre->anti_affinity[t], pre->ns, p) && map_add(&a->anti[t].values, v, 1) < 0)
			return -ENOMEM;
	}
	for (size_t t = 0; t < p->n_anti_affinity; t++) {
		const pp_pod_affinity_term *te = &p->anti_affinity[t];
		const char *v = pp__labels_get(n->labels, n->n_labels, te->topology_key);
		if (!v || !pp__affinity_term_matches(te, p->ns, pre))
			continue;
		struct count_map *m = ex_map(a, te->topology_key);
		if (!m || map_add(&m->values, v, 1) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int aff_build(const pp_cluster *c, const struct pod *pre, struct aff **ret)
{
	struct aff *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->n_aff = pre->n_affinity;
	a->n_anti = pre->n_anti_affinity;
	a->aff = calloc(pre->n_affinity + 1, sizeof(*a->aff));
	a->anti = calloc(pre->n_anti_affinity + 1, sizeof(*a->anti));
	if (!a->aff || !a->anti)
		goto out_of_memory;
	for (size_t t = 0; t < pre->n_affinity; t++)
		a->aff[t].key = pre->affinity[t].topology_key;
	for (size_t t = 0; t < pre->n_anti_affinity; t++)
		a->anti[t].key = pre->anti_affinity[t].topology_key;
	a->self_match = pod_matches_all_terms(pre->affinity, pre->n_affinity, pre->ns, pre);

	/* Without terms of its own, only pods with anti-affinity can matter. */
	bool all = pre->n_affinity || pre->n_anti_affinity;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = c->nodes[i];
		if (!all && !n->n_anti)
			continue;
		for (size_t j = 0; j < n->n_pods; j++) {
			const struct pod *p = n->slots[j].pod;
			if ((all || p->n_anti_affinity) && aff_count(a, pre, n, p) < 0)
				goto out_of_memory;
		}
	}
	/* Nominated pods join the counts per node under test (first pass): their keys must exist. */
	for (size_t i = 0; c->n_nom_anti && i < c->n_nodes; i++) {
		const struct node *n = c->nodes[i];
		for (size_t j = 0; j < n->n_nominated; j++) {
			const struct pod *p = n->nominated[j];
			for (size_t t = 0; t < p->n_anti_affinity; t++)
				if (pp__affinity_term_matches(&p->anti_affinity[t], p->ns, pre) &&
				    !ex_map(a, p->anti_affinity[t].topology_key))
					goto out_of_memory;
		}
	}
	*ret = a;
	return 0;
out_of_memory:
	aff_free(a);
	return -ENOMEM;
}

static void delta_add(const struct aff *a, const struct pod *pre, const struct node *n, const struct pod *p, int sign,
                      struct aff_delta *d)
{
	if (pre->n_affinity && pod_matches_all_terms(pre->affinity, pre->n_affinity, pre->ns, p))
		d->match_all += sign;
	for (size_t t = 0; t < pre->n_anti_affinity; t++)
		if (pp__affinity_term_matches(&pre->anti_affinity[t], pre->ns, p))
			d->anti[t] += sign;
	for (size_t t = 0; t < p->n_anti_affinity; t++) {
		const pp_pod_affinity_term *te = &p->anti_affinity[t];
		if (!pp__labels_get(n->labels, n->n_labels, te->topology_key) || !pp__affinity_term_matches(te, p->ns, pre))
			continue;
		for (size_t k = 0; k < a->n_ex; k++)
			if (strcmp(a->ex[k].key, te->topology_key) == 0)
				d->ex[k] += sign;
	}
}

/* The InterPodAffinity Filter with the counts adjusted by d (pods added to or removed from n). */
static unsigned aff_check(const struct aff *a, const struct pod *pre, const struct node *n, const struct aff_delta *d,
                          bool *unresolvable)
{
	if (pre->n_affinity) {
		bool exist = true;
		for (size_t t = 0; t < pre->n_affinity; t++) {
			const char *v = pp__labels_get(n->labels, n->n_labels, a->aff[t].key);
			if (!v) {
				*unresolvable = true;
				return F_POD_AFFINITY;
			}
			if ((int64_t)map_count(&a->aff[t].values, v) + d->match_all <= 0)
				exist = false;
		}
		/* Every pod of the delta sits on n, which has every term's key: n_affinity pairs each. */
		if (!exist && !(a->aff_total + d->match_all * (int64_t)pre->n_affinity == 0 && a->self_match)) {
			*unresolvable = true;
			return F_POD_AFFINITY;
		}
	}
	for (size_t t = 0; t < pre->n_anti_affinity; t++) {
		const char *v = pp__labels_get(n->labels, n->n_labels, a->anti[t].key);
		if (v && (int64_t)map_count(&a->anti[t].values, v) + d->anti[t] > 0)
			return F_POD_ANTI_AFFINITY;
	}
	for (size_t k = 0; k < a->n_ex; k++) {
		const char *v = pp__labels_get(n->labels, n->n_labels, a->ex[k].key);
		if (v && (int64_t)map_count(&a->ex[k].values, v) + d->ex[k] > 0)
			return F_EXISTING_ANTI_AFFINITY;
	}
	return 0;
}

/* ---- the filter state --------------------------------------------------------------------- */

int pp__filter_init(struct filter *x, const pp_cluster *c, const struct pod *pre)
{
	*x = (struct filter){ .c = c, .pre = pre };
	if (!pre->n_affinity && !pre->n_anti_affinity && !c->n_anti && !c->n_nom_anti)
		return 0;
	int r = aff_build(c, pre, &x->aff);
	if (r < 0)
		return r;
	x->delta.anti = calloc(pre->n_anti_affinity + 1, sizeof(int64_t));
	x->delta.ex = calloc(x->aff->n_ex + 1, sizeof(int64_t));
	x->nom.anti = calloc(pre->n_anti_affinity + 1, sizeof(int64_t));
	x->nom.ex = calloc(x->aff->n_ex + 1, sizeof(int64_t));
	if (!x->delta.anti || !x->delta.ex || !x->nom.anti || !x->nom.ex) {
		pp__filter_done(x);
		return -ENOMEM;
	}
	return 0;
}

void pp__filter_done(struct filter *x)
{
	aff_free(x->aff);
	free(x->delta.anti);
	free(x->delta.ex);
	free(x->nom.anti);
	free(x->nom.ex);
	x->aff = NULL;
	x->delta = x->nom = (struct aff_delta){ 0 };
}

void pp__filter_delta_reset(struct filter *x)
{
	if (!x->aff)
		return;
	memset(x->delta.anti, 0, x->aff->n_anti * sizeof(int64_t));
	memset(x->delta.ex, 0, x->aff->n_ex * sizeof(int64_t));
	x->delta.match_all = 0;
}

void pp__filter_delta_add(struct filter *x, const struct node *n, const struct pod *p, int sign)
{
	if (x->aff)
		delta_add(x->aff, x->pre, n, p, sign, &x->delta);
}

static bool is_extra(const struct filter *x, const struct pod *p)
{
	return p != x->pre && p->priority >= x->pre->priority;
}

unsigned pp__filter_affinity(struct filter *x, const struct node *n, bool *unresolvable)
{
	const struct aff *a = x->aff;
	if (!a)
		return 0;
	/* First pass: the nominated pods count as if they ran on n. */
	bool any = false;
	for (size_t i = 0; i < n->n_nominated; i++) {
		const struct pod *p = n->nominated[i];
		if (!is_extra(x, p))
			continue;
		if (!any) {
			memcpy(x->nom.anti, x->delta.anti, a->n_anti * sizeof(int64_t));
			memcpy(x->nom.ex, x->delta.ex, a->n_ex * sizeof(int64_t));
			x->nom.match_all = x->delta.match_all;
			any = true;
		}
		delta_add(a, x->pre, n, p, +1, &x->nom);
	}
	if (any) {
		unsigned m = aff_check(a, x->pre, n, &x->nom, unresolvable);
		if (m)
			return m;
	}
	/* Second pass (or the only one): without them. */
	return aff_check(a, x->pre, n, &x->delta, unresolvable);
}

/* ---- node filters --------------------------------------------------------------------------- */

/* Scalar lists are sorted by id (copy_resources, req_scalar_add): binary search, so that objects
 * with many extended resources do not make the filter quadratic. */
#define SCALAR_FIND(arr, n, key)                                \
	do {                                                     \
		size_t lo_ = 0, hi_ = (n);                           \
		while (lo_ < hi_) {                                  \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;             \
			if ((arr)[mid_].id < (key))                      \
				lo_ = mid_ + 1;                              \
			else                                             \
				hi_ = mid_;                                  \
		}                                                    \
		if (lo_ < (n) && (arr)[lo_].id == (key))             \
			return (arr)[lo_].value;                         \
		return 0;                                            \
	} while (0)

i128 pp__node_alloc_scalar(const struct node *n, uint32_t id)
{
	SCALAR_FIND(n->alloc_scalar, n->n_alloc_scalar, id);
}

i128 pp__node_req_scalar(const struct node *n, uint32_t id)
{
	SCALAR_FIND(n->req_scalar, n->n_req_scalar, id);
}

int64_t pp__pod_scalar(const struct pod *p, uint32_t id)
{
	SCALAR_FIND(p->scalar, p->n_scalar, id);
}

i128 pp__extra_scalar(const struct filter *x, const struct node *n, uint32_t id)
{
	i128 s = 0;
	for (size_t i = 0; i < n->n_nominated; i++)
		if (is_extra(x, n->nominated[i]))
			s += pp__pod_scalar(n->nominated[i], id);
	return s;
}

i128 pp__lower_scalar(const struct node *n, size_t from, uint32_t id)
{
	i128 s = 0;
	for (size_t i = from; i < n->n_pods; i++)
		s += pp__pod_scalar(n->slots[i].pod, id);
	return s;
}

void pp__filter_extra(const struct filter *x, const struct node *n, struct extra *e)
{
	*e = (struct extra){ 0 };
	for (size_t i = 0; i < n->n_nominated; i++) {
		const struct pod *p = n->nominated[i];
		if (!is_extra(x, p))
			continue;
		e->pods++;
		for (int k = 0; k < N_CORE_RES; k++)
			e->req[k] += p->req[k];
	}
}

unsigned pp__filter_static(const struct pod *pre, const struct node *n, struct filter_failures *f)
{
	if (n->absent) {
		f->mask = F_ABSENT;
		f->unresolvable = true;
		return f->mask;
	}
	if (n->unschedulable) {
		static const pp_taint cordon = { .key = "node.kubernetes.io/unschedulable", .value = "",
			                         .effect = PP_EFFECT_NO_SCHEDULE };
		if (!pp__pod_tolerates(pre, &cordon)) {
			f->mask = F_UNSCHEDULABLE;
			f->unresolvable = true;
			return f->mask;
		}
	}
	for (size_t i = 0; i < n->n_taints; i++) {
		const pp_taint *t = &n->taints[i];
		if (t->effect == PP_EFFECT_PREFER_NO_SCHEDULE || pp__pod_tolerates(pre, t))
			continue;
		f->mask = F_TAINT;
		f->taint = t;
		f->unresolvable = true;
		return f->mask;
	}
	if ((pre->n_node_selector || pre->has_node_affinity) && !pp__pod_matches_node_affinity(pre, n)) {
		f->mask = F_NODE_AFFINITY;
		f->unresolvable = true;
		return f->mask;
	}
	return 0;
}

unsigned pp__filter_resources(const struct filter *x, const struct node *n, size_t keep, const struct extra *e,
                          bool skip_terminating, struct filter_failures *f)
{
	const struct pod *pre = x->pre;
	static const i128 none[N_CORE_RES];
	const i128 *core_used = keep == n->n_pods ? n->req_total : keep == 0 ? none : n->psum[keep];
	i128 used[N_CORE_RES];
	i128 pods = (i128)keep + e->pods;
	unsigned m = 0;

	for (int k = 0; k < N_CORE_RES; k++)
		used[k] = core_used[k] + e->req[k];
	if (skip_terminating)
		for (size_t j = 0; j < keep; j++)
			if (n->slots[j].pod->terminating) {
				pods--;
				for (int k = 0; k < N_CORE_RES; k++)
					used[k] -= n->slots[j].req[k];
			}
	if (pods + 1 > n->max_pods) {
		m |= F_PODS;
		if (n->max_pods < 1)
			f->unresolvable = true;
	}
	if (!pre->zero_request) {
		static const unsigned bits[N_CORE_RES] = { F_CPU, F_MEMORY, F_EPHEMERAL };
		for (int k = 0; k < N_CORE_RES; k++) {
			int64_t want = pre->req[k];
			if (want > 0 && want > (i128)n->alloc[k] - used[k]) {
				m |= bits[k];
				if (want > n->alloc[k]) /* PR #131345: no preemption can make room */
					f->unresolvable = true;
			}
		}
		for (size_t i = 0; i < pre->n_scalar; i++) {
			uint32_t id = pre->scalar[i].id;
			int64_t want = pre->scalar[i].value;
			if (want == 0)
				continue;
			i128 u = pp__node_req_scalar(n, id) + pp__extra_scalar(x, n, id);
			if (keep < n->n_pods)
				u -= pp__lower_scalar(n, keep, id);
			for (size_t j = 0; j < e->n_kept; j++)
				u += pp__pod_scalar(e->kept[j], id);
			if (skip_terminating)
				for (size_t j = 0; j < keep; j++)
					if (n->slots[j].pod->terminating)
						u -= pp__pod_scalar(n->slots[j].pod, id);
			i128 alloc = pp__node_alloc_scalar(n, id);
			if (want > alloc - u) {
				m |= F_SCALAR;
				if (f->n_scalar < MAX_SCALAR_REASONS)
					f->scalar[f->n_scalar++] = id;
				if (want > alloc)
					f->unresolvable = true;
			}
		}
	}
	f->mask |= m;
	return m;
}

unsigned pp__filter_node(struct filter *x, const struct node *n, bool skip_terminating, struct filter_failures *f)
{
	struct extra e;
	*f = (struct filter_failures){ 0 };
	if (pp__filter_static(x->pre, n, f))
		return f->mask;
	/* Resources: the first pass, with the nominated pods, is the stricter one. */
	pp__filter_extra(x, n, &e);
	if (pp__filter_resources(x, n, n->n_pods, &e, skip_terminating, f))
		return f->mask;
	if (x->aff) {
		pp__filter_delta_reset(x);
		f->mask = pp__filter_affinity(x, n, &f->unresolvable);
	}
	return f->mask;
}

void pp__filter_reasons(const pp_cluster *c, const struct filter_failures *f, void (*fn)(const char *, void *),
                        void *ud)
{
	char tmp[600];
	if (f->mask & F_UNSCHEDULABLE)
		fn("node(s) were unschedulable", ud);
	if (f->mask & F_TAINT) {
		snprintf(tmp, sizeof(tmp), "node(s) had untolerated taint {%.250s: %.250s}", f->taint->key,
		         f->taint->value ? f->taint->value : "");
		fn(tmp, ud);
	}
	if (f->mask & F_NODE_AFFINITY)
		fn("node(s) didn't match Pod's node affinity/selector", ud);
	if (f->mask & F_PODS)
		fn("Too many pods", ud);
	if (f->mask & F_CPU)
		fn("Insufficient cpu", ud);
	if (f->mask & F_MEMORY)
		fn("Insufficient memory", ud);
	if (f->mask & F_EPHEMERAL)
		fn("Insufficient ephemeral-storage", ud);
	for (size_t i = 0; i < f->n_scalar; i++) {
		snprintf(tmp, sizeof(tmp), "Insufficient %.500s", c->res_names[f->scalar[i]]);
		fn(tmp, ud);
	}
	if (f->mask & F_POD_AFFINITY)
		fn("node(s) didn't match pod affinity rules", ud);
	if (f->mask & F_POD_ANTI_AFFINITY)
		fn("node(s) didn't match pod anti-affinity rules", ud);
	if (f->mask & F_EXISTING_ANTI_AFFINITY)
		fn("node(s) didn't satisfy existing pods anti-affinity rules", ud);
	if (f->mask & F_NO_VICTIMS)
		fn("No preemption victims found for incoming pod", ud);
	if (f->mask & F_PDB) {
		snprintf(tmp, sizeof(tmp), "node(s) would need more evictions than PodDisruptionBudget %.250s/%.250s allows",
		         f->pdb->ns, f->pdb->name);
		fn(tmp, ud);
	}
}

/* ---- scoring -------------------------------------------------------------------------------- */

int64_t pp__pod_nonzero_request(const struct pod *p, int res)
{
	/* The model keeps pod-level sums, so "not set" and "set to 0" look alike: both get the
	 * default (kube substitutes per container, and only for requests that are not set). */
	if (res == RES_CPU)
		return p->req[RES_CPU] ? p->req[RES_CPU] : NONZERO_CPU_MILLI;
	if (res == RES_MEMORY)
		return p->req[RES_MEMORY] ? p->req[RES_MEMORY] : NONZERO_MEMORY;
	return p->req[res];
}

int64_t pp__least_allocated(const int64_t alloc[2], const i128 used[2], const int64_t want[2])
{
	int64_t sum = 0, weights = 0;
	for (int k = RES_CPU; k <= RES_MEMORY; k++) {
		int64_t cap = alloc[k];
		if (cap <= 0)
			continue;
		i128 req = used[k] + want[k];
		weights++;
		if (req > cap)
			continue;
		/* 128-bit division is slow; 64 bits suffice below 2^63 / 100 (≈ 82 PiB). */
		if (cap <= INT64_MAX / 100)
			sum += ((cap - (int64_t)req) * 100) / cap;
		else
			sum += (int64_t)((cap - req) * 100 / cap);
	}
	return weights ? sum / weights : 0;
}

int64_t pp__score_least_allocated(const struct pod *p, const struct node *n)
{
	/* kube's LeastAllocated uses NodeInfo.NonZeroRequested and the pod's non-zero request. */
	const int64_t want[2] = { pp__pod_nonzero_request(p, RES_CPU), pp__pod_nonzero_request(p, RES_MEMORY) };
	return pp__least_allocated(n->alloc, n->nonzero_total, want);
}
