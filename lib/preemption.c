/* SPDX-License-Identifier: MIT */
/*
 * The scheduling filters and DefaultPreemption (reference §4, §7), made deterministic
 * (DESIGN.md §3), with per-node aggregates instead of per-victim filter re-runs:
 *  - "fits after removing every lower-priority pod" is one prefix-sum lookup per node;
 *  - the reprieve walks the node's lower-priority pods once, adding each back into a running
 *    slack (only the resources the preemptor requests matter, as in fitsRequest);
 *  - nodes are scanned in name order, so the final tie-break is "first best wins";
 *  - most nodes are settled from their summary (struct nsum, one contiguous array): the
 *    scheduling attempt, and lower bounds of the best-candidate criteria that let a node be
 *    skipped when it cannot beat the best so far; the rest from prefix sums, and only the few
 *    left over run the reprieve.
 * Inter-pod (anti-)affinity is evaluated from cluster-wide topology counts built once per
 * decision, adjusted by the pods removed on the node under test, as the plugin's
 * PreFilterExtensions do in Kubernetes.
 *
 * Why one file of over 700 lines: the fast scan (decide_fast), the explained decision, the
 * pruning bounds, the reprieve and the result's accessors share one decision context (struct
 * ctx) and one ranking, and the fast scan's shortcuts are only correct because they agree with
 * the reprieve step by step (tests/lib/test-preempt-differential.c holds them to the plain
 * simulation). Kept together, that agreement can be read in one place; the filters (filter.c),
 * the per-node cache (pcache.c) and the reasons' wording (sched_fit.c) are already apart.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cluster.h"
#include "filter.h"
#include "pcache.h"
#include "pdb.h"
#include "preemption.h"
#include "sched_fit.h"
#include "select.h"

/* ----------------------------------------------------------------------------------------- */
/* The decision context */



struct ctx {
	const pp_cluster *c;
	const struct pod *pre;
	int64_t now;
	bool order_ok; /* stored slot order equals the order for this now */
	bool need_scalar;
	bool lane; /* nodes without NS_GENERAL may be settled from their summary (lane_evaluate) */
	bool strict; /* PP_PDB_STRICT: no victim beyond a budget (select_victims) */
	/* pods that started after protect_after (or not at all) are no victims (the first pass of a
	 * scheduler with a minimum runtime, pp_sched_set_min_runtime) */
	bool protect;
	int64_t protect_after;
	struct filter f;
	/* scratch, sized for the largest node */
	const struct slot **lower;
	unsigned char *flags; /* per lower pod: 1 violating, 2 victim */
	const struct pod **kept; /* lower-priority pods that are no victims */
	i128 *sslack;         /* per preemptor scalar request */
	size_t cap_lower;
	/* PDB budgets: allowed computed once per decision, budget reset per node via stamps */
	int32_t *pdb_allowed;
	bool *pdb_known;
	int64_t *budget;
	uint64_t *stamp;
	uint64_t cur_stamp;
};

/* First pass: the node as it is. Returns 0 when the pod fits. */
static unsigned filter_now(struct ctx *x, const struct node *n, struct filter_failures *f)
{
	return pp__filter_node(&x->f, n, false, f);
}

/* First slot whose priority is below the preemptor's: the lower-priority pods are a suffix. */
static size_t first_lower(const struct node *n, int32_t prio)
{
	if (n->n_pods == 0 || n->max_prio < prio)
		return 0;
	if (n->min_prio >= prio)
		return n->n_pods;
	size_t lo = 0, hi = n->n_pods;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (n->slots[mid].prio >= prio)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int slot_cmp_ctx(const void *a, const void *b, void *userdata)
{
	return pp__slot_cmp_now(*(const struct slot *const *)a, *(const struct slot *const *)b, *(const int64_t *)userdata);
}

static int32_t pdb_allowed(struct ctx *x, const struct pdb *b)
{
	if (!x->pdb_known[b->idx]) {
		x->pdb_allowed[b->idx] = pp__pdb_disruptions_allowed(x->c, b);
		x->pdb_known[b->idx] = true;
	}
	return x->pdb_allowed[b->idx];
}

enum { FL_VIOLATING = 1, FL_VICTIM = 2, FL_KEPT = 4 };

/* Inter-pod affinity counts of the node under test with every lower-priority pod removed but the
 * kept ones. */
/* A lower-priority pod that is no potential victim: stuck terminating (no preemption counts on
 * its room), or too young while young pods are spared. */
static bool is_kept(const struct ctx *x, const struct slot *s)
{
	return s->pod->stuck || (x->protect && (!s->has_start || s->start > x->protect_after));
}

static void delta_without_lower(struct ctx *x, const struct node *n, size_t h, size_t nl)
{
	pp__filter_delta_reset(&x->f);
	for (size_t i = h; i < n->n_pods; i++)
		if (!is_kept(x, &n->slots[i])) /* no victims (select_victims): they stay */
			pp__filter_delta_add(&x->f, n, n->slots[i].pod, -1);
	for (size_t i = 0; i < nl; i++)
		if (x->flags[i] & FL_KEPT)
			pp__filter_delta_add(&x->f, n, x->lower[i]->pod, +1);
}

/*
 * The reprieve (reference §7.3 steps 6–8) over x->lower[0..nl) in importance order, the pods
 * flagged FL_KEPT staying on the node: every other lower-priority pod removed, then each added
 * back where it still fits — PDB-violating ones first when any_pdb — and FL_VICTIM set on the
 * others. x->f's affinity delta must hold the node without its lower-priority pods but the kept
 * ones. Returns 1 with the key filled, 0 when the preemptor does not fit even so (f says why).
 */
static int reprieve(struct ctx *x, const struct node *n, size_t h, size_t nl, const struct extra *e, bool any_pdb,
                    size_t n_kept, struct filter_failures *f, struct pkey *key)
{
	const struct pod *pre = x->pre;

	/* Slack of every checked resource with all lower-priority pods removed. */
	i128 pods_slack = (i128)n->max_pods - h - e->pods - 1;
	i128 slack[N_CORE_RES] = { 0 };
	bool check[N_CORE_RES] = { false };
	if (!pre->zero_request)
		for (int k = 0; k < N_CORE_RES; k++)
			if (pre->req[k] > 0) {
				check[k] = true;
				slack[k] = (i128)n->alloc[k] - (h ? n->psum[h][k] : 0) - e->req[k] - pre->req[k];
			}
	i128 *sslack = x->sslack;
	size_t ns = x->need_scalar ? pre->n_scalar : 0;
	for (size_t s = 0; s < ns; s++) {
		uint32_t id = pre->scalar[s].id;
		sslack[s] = pp__node_alloc_scalar(n, id) - (pp__node_req_scalar(n, id) - pp__lower_scalar(n, h, id)) -
		            pp__extra_scalar(&x->f, n, id) - pre->scalar[s].value;
		for (size_t j = 0; j < e->n_kept; j++)
			sslack[s] -= pp__pod_scalar(e->kept[j], id);
	}
	if (n_kept) {
		/* the kept pods stay: the preemptor must fit beside them and the higher-priority pods */
		static const unsigned bits[N_CORE_RES] = { F_CPU, F_MEMORY, F_EPHEMERAL };
		for (size_t i = 0; i < nl; i++) {
			if (!(x->flags[i] & FL_KEPT))
				continue;
			pods_slack--;
			for (int k = 0; k < N_CORE_RES; k++)
				slack[k] -= x->lower[i]->req[k];
			for (size_t s = 0; s < ns; s++)
				sslack[s] -= pp__pod_scalar(x->lower[i]->pod, pre->scalar[s].id);
		}
		*f = (struct filter_failures){ 0 };
		if (pods_slack < 0)
			f->mask |= F_PODS;
		for (int k = 0; k < N_CORE_RES; k++)
			if (check[k] && slack[k] < 0)
				f->mask |= bits[k];
		for (size_t s = 0; s < ns; s++)
			if (pre->scalar[s].value > 0 && sslack[s] < 0 && f->n_scalar < MAX_SCALAR_REASONS) {
				f->mask |= F_SCALAR;
				f->scalar[f->n_scalar++] = pre->scalar[s].id;
			}
		if (!f->mask && x->f.aff) {
			bool unres = false;
			f->mask = pp__filter_affinity(&x->f, n, &unres);
		}
		if (f->mask)
			return 0;
	}

	size_t count = 0, viol = 0;
	int64_t sum = 0;
	const struct slot *top = NULL;
	for (int pass = 0; pass < (any_pdb ? 2 : 1); pass++) {
		for (size_t i = 0; i < nl; i++) {
			if (any_pdb && ((x->flags[i] & FL_VIOLATING) != 0) != (pass == 0))
				continue;
			if (x->flags[i] & FL_KEPT)
				continue;
			const struct slot *sl = x->lower[i];
			bool fits = pods_slack >= 1;
			for (int k = 0; k < N_CORE_RES; k++)
				if (check[k] && slack[k] < sl->req[k])
					fits = false;
			for (size_t s = 0; s < ns && fits; s++)
				if (pre->scalar[s].value > 0 && sslack[s] < pp__pod_scalar(sl->pod, pre->scalar[s].id))
					fits = false;
			if (fits && x->f.aff) {
				pp__filter_delta_add(&x->f, n, sl->pod, +1);
				bool unres = false;
				if (pp__filter_affinity(&x->f, n, &unres)) {
					pp__filter_delta_add(&x->f, n, sl->pod, -1);
					fits = false;
				}
			}
			if (fits) {
				pods_slack--;
				for (int k = 0; k < N_CORE_RES; k++)
					slack[k] -= sl->req[k];
				for (size_t s = 0; s < ns; s++)
					sslack[s] -= pp__pod_scalar(sl->pod, pre->scalar[s].id);
				continue;
			}
			x->flags[i] |= FL_VICTIM;
			count++;
			/* Each term is below 2^32, so the sum overflows only past 2^31 victims on one
			 * node, which no memory holds. */
			sum += (int64_t)sl->prio + ((int64_t)1 << 31);
			if (x->flags[i] & FL_VIOLATING)
				viol++;
			/* lower[] is in importance order: the victim with the smallest index is victims[0] */
			if (!top || pp__slot_cmp_now(sl, top, x->now) < 0)
				top = sl;
		}
	}
	if (count == 0) { /* cannot happen when the first pass failed; kube needs >= 1 victim */
		*f = (struct filter_failures){ .mask = F_NO_VICTIMS };
		return 0;
	}
	key->f[0] = x->strict ? 0 : (int64_t)viol; /* strict: no victim is beyond a budget */
	key->f[1] = top->prio;
	key->f[2] = sum;
	key->f[3] = (int64_t)count;
	int64_t st = top->has_start ? top->start : x->now;
	key->f[4] = st == INT64_MIN ? INT64_MAX : -st; /* later start wins */
	return 1;
}

/*
 * The strict policy's count (preempt.h): every victim that is not terminating against each budget
 * that covers it, as the API server decrements them. Victims beyond what a budget allows are kept
 * on the node — the most important of its victims, so that the least important ones go — and
 * their FL_VICTIM cleared; returns the first budget that needed it (NULL: every victim may go).
 * Uses x->budget/x->stamp, free once the split is done.
 */
static const struct pdb *keep_over_budget(struct ctx *x, size_t nl)
{
	const struct pdb *first = NULL;

	x->cur_stamp++;
	for (size_t i = 0; i < nl; i++) {
		const struct pod *p = x->lower[i]->pod;
		if (!(x->flags[i] & FL_VICTIM) || p->terminating)
			continue;
		for (size_t j = 0; j < p->n_pdbs; j++) {
			const struct pdb *b = p->pdbs[j];
			if (x->stamp[b->idx] != x->cur_stamp) {
				x->stamp[b->idx] = x->cur_stamp;
				x->budget[b->idx] = pdb_allowed(x, b);
			}
			if (--x->budget[b->idx] < 0 && !first)
				first = b;
		}
	}
	if (!first)
		return NULL;
	for (size_t i = 0; i < nl; i++) {
		const struct pod *p = x->lower[i]->pod;
		bool keep = false;
		if ((x->flags[i] & FL_VICTIM) && !p->terminating)
			for (size_t j = 0; j < p->n_pdbs && !keep; j++)
				keep = x->budget[p->pdbs[j]->idx] < 0;
		if (keep)
			for (size_t j = 0; j < p->n_pdbs; j++)
				x->budget[p->pdbs[j]->idx]++; /* one victim fewer for each of its budgets */
		x->flags[i] &= (unsigned char)~FL_VICTIM;
		if (keep)
			x->flags[i] |= FL_KEPT;
	}
	return first;
}

static int ensure_scratch(struct ctx *x, size_t nl)
{
	if (nl <= x->cap_lower)
		return 0;
	size_t cap = nl * 2;
	const struct slot **l = realloc(x->lower, cap * sizeof(*l));
	if (!l)
		return -ENOMEM;
	x->lower = l;
	unsigned char *fl = realloc(x->flags, cap);
	if (!fl)
		return -ENOMEM;
	x->flags = fl;
	const struct pod **k = realloc(x->kept, cap * sizeof(*k));
	if (!k)
		return -ENOMEM;
	x->kept = k;
	x->cap_lower = cap;
	return 0;
}

/*
 * SelectVictimsOnNode for a node whose first pass failed with a resolvable status.
 * Returns 1 with the key filled (x->lower/x->flags describe the victims), 0 when the node is not
 * a candidate (f says why), or a negative errno. About 120 lines, kept whole: its steps follow
 * kube's SelectVictimsOnNode one for one (remove the lower-priority pods, check the node,
 * split them by PDB, reprieve in importance order, the key), which is how it is read against
 * the reference.
 */
static int select_victims(struct ctx *x, const struct node *n, struct filter_failures *f, struct pkey *key,
                          size_t *ret_nlower)
{
	const struct pod *pre = x->pre;
	size_t h = first_lower(n, pre->priority), nl = n->n_pods - h;
	struct extra e;

	*f = (struct filter_failures){ 0 };
	if (nl == 0) {
		f->mask = F_NO_VICTIMS;
		return 0;
	}
	pp__filter_extra(&x->f, n, &e);
	if (ensure_scratch(x, nl) < 0)
		return -ENOMEM;
	/* The pods that are no victims stay, their room counted like the extras'. */
	size_t nk = 0;
	if (x->protect || x->c->n_stuck) {
		for (size_t i = h; i < n->n_pods; i++) {
			const struct slot *sl = &n->slots[i];
			if (!is_kept(x, sl))
				continue;
			x->kept[nk++] = sl->pod;
			e.pods++;
			for (int k = 0; k < N_CORE_RES; k++)
				e.req[k] += sl->req[k];
		}
		e.kept = x->kept;
		e.n_kept = nk;
		if (nk == nl) {
			f->mask = F_NO_VICTIMS;
			return 0;
		}
	}
	if (pp__filter_resources(&x->f, n, h, &e, false, f))
		return 0;
	/* Protected pods stay: removing them may break an affinity that keeping them meets, so the
	 * affinity test without every lower-priority pod is the reprieve's, with them (below). */
	size_t n_kept = 0;
	if (n->n_protected)
		for (size_t i = h; i < n->n_pods; i++)
			n_kept += n->slots[i].pod->protected_;
	if (x->f.aff && !n_kept) {
		pp__filter_delta_reset(&x->f);
		for (size_t i = h; i < n->n_pods; i++)
			if (!nk || !is_kept(x, &n->slots[i]))
				pp__filter_delta_add(&x->f, n, n->slots[i].pod, -1);
		bool unres = false;
		f->mask = pp__filter_affinity(&x->f, n, &unres);
		if (f->mask)
			return 0;
	}

	/* Candidate: reprieve in importance order, PDB-violating pods first. */
	bool any_pdb = false;
	size_t nv = 0;
	for (size_t i = h; i < n->n_pods; i++) {
		if (nk && is_kept(x, &n->slots[i]))
			continue;
		x->lower[nv] = &n->slots[i];
		x->flags[nv++] = 0;
	}
	nl = nv;
	if (n->n_pdb_pods) /* the pods themselves are only touched when a PDB may matter */
		for (size_t i = 0; i < nl; i++)
			any_pdb |= x->lower[i]->pod->n_pdbs > 0;
	if (!x->order_ok)
		qsort_r(x->lower, nl, sizeof(*x->lower), slot_cmp_ctx, &x->now);
	if (any_pdb) {
		x->cur_stamp++;
		for (size_t i = 0; i < nl; i++) {
			const struct pod *p = x->lower[i]->pod;
			for (size_t j = 0; j < p->n_pdbs; j++) {
				const struct pdb *b = p->pdbs[j];
				if (pp__pdb_disrupted(b, p->name))
					continue;
				if (x->stamp[b->idx] != x->cur_stamp) {
					x->stamp[b->idx] = x->cur_stamp;
					x->budget[b->idx] = pdb_allowed(x, b);
				}
				if (--x->budget[b->idx] < 0)
					x->flags[i] |= FL_VIOLATING;
			}
		}
	}
	if (n_kept)
		for (size_t i = 0; i < nl; i++)
			if (x->lower[i]->pod->protected_)
				x->flags[i] |= FL_KEPT;
	if (n_kept && x->f.aff)
		delta_without_lower(x, n, h, nl);

	const struct pdb *kept_by = NULL;
	for (;;) {
		int r = reprieve(x, n, h, nl, &e, any_pdb, n_kept, f, key);
		if (r == 0 && kept_by) {
			/* what is short is what the budget keeps */
			*f = (struct filter_failures){ .mask = F_PDB, .pdb = kept_by };
		}
		if (r == 0)
			return 0;
		if (!x->strict || !any_pdb)
			break;
		const struct pdb *over = keep_over_budget(x, nl);
		if (!over)
			break;
		if (!kept_by)
			kept_by = over;
		/* each round keeps one more pod at least: at most nl rounds */
		n_kept = 0;
		for (size_t i = 0; i < nl; i++)
			n_kept += (x->flags[i] & FL_KEPT) != 0;
		if (x->f.aff)
			delta_without_lower(x, n, h, nl);
	}
	if (x->strict)
		for (size_t i = 0; i < nl; i++)
			x->flags[i] &= (unsigned char)~FL_VIOLATING; /* within every budget: violates none */
	*ret_nlower = nl;
	return 1;
}

/* Number of equal leading criteria. */
static int key_lcp(const struct pkey *a, const struct pkey *b)
{
	int i = 0;
	while (i < 5 && a->f[i] == b->f[i])
		i++;
	return i;
}

static bool key_less(const struct pkey *a, const struct pkey *b)
{
	int i = key_lcp(a, b);
	return i < 5 && a->f[i] < b->f[i];
}

/*
 * The best candidate so far and the runner-up (the best of the others), nodes met in name order so
 * that an equal key never displaces an earlier node. The runner-up is what the winner is explained
 * against, and its common criteria prefix with the winner is the one that decided
 * (pickOneNodeForPreemption stops at the first criterion that leaves one node): for sorted keys
 * a <= b <= c, lcp(a, c) = min(lcp(a, b), lcp(b, c)), so no candidate shares more with the winner.
 */
struct ranking {
	const struct node *best, *second;
	struct pkey best_key, second_key;
	size_t n_candidates;
};

static void rank_add(struct ranking *rk, const struct node *n, const struct pkey *k)
{
	rk->n_candidates++;
	if (!rk->best || key_less(k, &rk->best_key)) {
		rk->second = rk->best;
		rk->second_key = rk->best_key;
		rk->best = n;
		rk->best_key = *k;
	} else if (!rk->second || key_less(k, &rk->second_key)) {
		rk->second = n;
		rk->second_key = *k;
	}
}

/* ----------------------------------------------------------------------------------------- */
/* Results */

struct pp_preemption {
	struct arena arena;
	pp_outcome outcome;
	pp_eligibility eligibility;
	const char *node;
	const char *reason;
	pp_victim *victims;
	size_t n_victims;
	size_t violations;
	pp_criterion criterion;
	pp_pod_info *cleared;
	size_t n_cleared;
	pp_node_explain *explain;
	size_t n_explain;
	pp_candidate cand[2]; /* the winner, the runner-up */
	size_t n_cand;
	struct victim_pdbs {
		pp_victim_pdb *v;
		size_t n;
	} *victim_pdbs; /* per victim of the chosen node; NULL when no victim has a PDB */
	const char *unresolvable;
};

const char *pp_eligibility_reason(pp_eligibility e)
{
	switch (e) {
	case PP_NOT_ELIGIBLE_NEVER:
		return "not eligible due to preemptionPolicy=Never.";
	case PP_NOT_ELIGIBLE_TERMINATING:
		return "not eligible due to a terminating pod on the nominated node.";
	case PP_ELIGIBLE:
	default:
		return "";
	}
}

const char *pp_criterion_name(pp_criterion c)
{
	switch (c) {
	case PP_CRIT_NONE:
		return "none";
	case PP_CRIT_SINGLE_CANDIDATE:
		return "only candidate";
	case PP_CRIT_PDB_VIOLATIONS:
		return "fewest PDB violations";
	case PP_CRIT_HIGHEST_PRIORITY:
		return "lowest highest-victim priority";
	case PP_CRIT_PRIORITY_SUM:
		return "lowest sum of victim priorities";
	case PP_CRIT_VICTIM_COUNT:
		return "fewest victims";
	case PP_CRIT_START_TIME:
		return "latest start of the highest-priority victims";
	case PP_CRIT_NODE_NAME:
		return "smallest node name";
	}
	return "?";
}

/* A growable string in the result's arena-free heap, for reasons. */
struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3))) static void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap : 128;
		while (cap <= b->len + (size_t)n)
			cap *= 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

static void join_reason(const char *r, void *ud)
{
	struct buf *b = ud;
	buf_printf(b, "%s%s", b->len ? "; " : "", r);
}

static const char *arena_copy(struct arena *a, const char *s, bool *oom)
{
	const char *r = pp__arena_strdup(a, s ? s : "");
	if (!r)
		*oom = true;
	return r ? r : "";
}

pp_preemption *pp_preemption_free(pp_preemption *p)
{
	if (!p)
		return NULL;
	pp__arena_done(&p->arena);
	free(p);
	return NULL;
}

static void ctx_done(struct ctx *x)
{
	pp__filter_done(&x->f);
	free(x->lower);
	free(x->flags);
	free(x->kept);
	free(x->sslack);
	free(x->pdb_allowed);
	free(x->pdb_known);
	free(x->budget);
	free(x->stamp);
}

/* Fills victims of a candidate node from x->lower/x->flags (importance order). */
static int fill_victims(struct ctx *x, pp_preemption *res, size_t nl, pp_victim **ret, size_t *ret_n, bool *oom)
{
	size_t n = 0;
	for (size_t i = 0; i < nl; i++)
		n += (x->flags[i] & FL_VICTIM) != 0;
	pp_victim *v = pp__arena_alloc(&res->arena, (n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t j = 0;
	for (size_t i = 0; i < nl; i++) {
		if (!(x->flags[i] & FL_VICTIM))
			continue;
		const struct slot *s = x->lower[i];
		v[j++] = (pp_victim){
			.namespace_ = arena_copy(&res->arena, s->pod->ns, oom),
			.name = arena_copy(&res->arena, s->pod->name, oom),
			.priority = s->prio,
			.start_time_ns = s->has_start ? s->start : x->now,
			.terminating = s->pod->terminating,
			.violates_pdb = (x->flags[i] & FL_VIOLATING) != 0,
		};
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static int cmp_pod_info(const void *a, const void *b)
{
	const pp_pod_info *x = a, *y = b;
	int r = strcmp(x->namespace_, y->namespace_);
	return r ? r : strcmp(x->name, y->name);
}

/* PodEligibleToPreemptOthers (§7.1). */
static pp_eligibility eligibility(struct ctx *x)
{
	const struct pod *pre = x->pre;
	if (pre->policy == PP_PREEMPT_NEVER)
		return PP_NOT_ELIGIBLE_NEVER;
	if (pre->nominated) {
		struct filter_failures f;
		filter_now(x, pre->nominated, &f);
		if (!f.unresolvable)
			for (size_t i = 0; i < pre->nominated->n_pods; i++) {
				const struct slot *s = &pre->nominated->slots[i];
				if (s->prio < pre->priority && s->pod->terminating && s->pod->preempted_by_scheduler &&
				    !s->pod->stuck)
					return PP_NOT_ELIGIBLE_TERMINATING;
			}
	}
	return PP_ELIGIBLE;
}

static int finish_none(struct ctx *x, pp_preemption *res, pp_eligibility elig, bool *oom);
static int finish_preempt(struct ctx *x, pp_preemption *res, const struct ranking *rk, bool *oom);

/* ----------------------------------------------------------------------------------------- */
/* Pruning: lower bounds of the best-candidate key */

/*
 * Whether a node can be skipped whose key k (if it is a candidate at all) is bounded by lb:
 * k >= lb on each of the first four criteria, and on the last one when equal on those. Then
 * k >= lb lexicographically, so when lb >= the runner-up's key, the node beats neither the
 * runner-up nor the winner (ties go to the earlier node name, and nodes are scanned in name
 * order). With a runner-up there are two candidates already, so whether the node is one does
 * not matter for "only candidate" either.
 */
static bool can_skip(const struct pkey *lb, const struct ranking *rk)
{
	return rk->second && !key_less(lb, &rk->second_key);
}

/* The start-time criterion's value for a victim starting at st (later start wins). */
static int64_t start_key(int64_t st)
{
	return st == INT64_MIN ? INT64_MAX : -st;
}

/* a / b rounded up, for a > 0 and b > 0; 128-bit division is slow, so only when needed. */
static i128 ceil_div(i128 a, int64_t b)
{
	if (a <= INT64_MAX - b)
		return ((int64_t)a + b - 1) / b;
	return (a + b - 1) / b;
}

/* Resource fit of the preemptor with only the first keep pods of the node present. */
static bool lane_fits(const struct pod *pre, const struct nsum *s, size_t keep)
{
	if ((i128)keep + 1 > s->max_pods)
		return false;
	if (pre->zero_request)
		return true;
	for (int k = 0; k < N_CORE_RES; k++)
		if (pre->req[k] > 0 && pre->req[k] > (i128)s->alloc[k] - s->psum[keep][k])
			return false;
	return true;
}

/*
 * One node's part of a decision from its summary (struct nsum), for nodes without NS_GENERAL
 * when the preemptor has no scalar requests, node selector, affinity of any kind. The same
 * states as evaluate_node(); PC_BOUND: k is a lower bound of the node's key (when it is a candidate)
 * that is enough to skip it (can_skip), so its victims were never selected. Otherwise the
 * victims are selected as usual (select_victims), unless the bounds already pin them down.
 */
static int lane_evaluate(struct ctx *x, const struct nsum *s, bool not_eligible,
                         const struct ranking *rk, struct pkey *k)
{
	const struct pod *pre = x->pre;
	static const int64_t off = (int64_t)1 << 31;

	/* The scheduling attempt: NodeResourcesFit is all there is on such a node. */
	bool fits = (i128)s->n_pods + 1 <= s->max_pods, unres = s->max_pods < 1, hopeless = false;
	i128 need = fits ? 1 : (i128)s->n_pods + 1 - s->max_pods; /* victims needed, at least */
	for (int r = 0; r < N_CORE_RES && !pre->zero_request; r++) {
		int64_t want = pre->req[r];
		if (want <= 0 || want <= s->free[r])
			continue;
		fits = false;
		unres |= want > s->alloc[r];
		if (s->max_req[r] == 0)
			hopeless = true; /* no pod frees any of it */
		else if (ceil_div((i128)want - s->free[r], s->max_req[r]) > need)
			need = ceil_div((i128)want - s->free[r], s->max_req[r]);
	}
	if (fits)
		return PC_FITS;
	if (unres)
		return PC_UNRESOLVABLE;
	if (not_eligible || hopeless || s->n_pods == 0 || s->min_prio >= pre->priority || need > (i128)s->n_pods)
		return PC_NOT_CANDIDATE;

	/* Level 0, the summary alone: every victim has priority >= min_prio, and there are at least
	 * need of them. The last criterion only matters for keys equal to the bound so far: need
	 * victims all of priority min_prio. Then victims[0] is at slot n_pods - need or earlier, in
	 * the lowest priority's group, which is in start order: it starts no later than that slot
	 * (a pod without start time starts "now", later than every start on such a node). */
	size_t t = need < NS_TAIL ? (size_t)need - 1 : NS_TAIL - 1;
	*k = (struct pkey){ { 0, s->min_prio, (int64_t)need * ((int64_t)s->min_prio + off), (int64_t)need,
		              start_key((s->tail_nostart >> t) & 1 ? x->now : s->tail_start[t]) } };
	if (can_skip(k, rk))
		return PC_BOUND;
	if (s->flags & NS_PDB)
		return -EAGAIN; /* PDB-violating pods are reprieved first: victims are no suffix */

	/* Level 1, prefix sums: the lower-priority pods are slots[h..n) in importance order.
	 * Until the first victim every pod is reprieved, so the first victim (victims[0]) is the
	 * slot right after the longest prefix that still leaves room for the preemptor. */
	size_t n_pods = s->n_pods, h = 0;
	if (s->max_prio >= pre->priority) {
		size_t hi = n_pods - 1; /* the last slot has min_prio < priority */
		while (h < hi) {
			size_t mid = h + (hi - h) / 2;
			if (s->slots[mid].prio >= pre->priority)
				h = mid + 1;
			else
				hi = mid;
		}
	}
	if (!lane_fits(pre, s, h))
		return PC_NOT_CANDIDATE;
	size_t lo = h, hi = n_pods - 1; /* the whole node does not fit (first pass failed) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		if (lane_fits(pre, s, mid))
			lo = mid;
		else
			hi = mid - 1;
	}
	const struct slot *top = &s->slots[lo];
	/* Of the pods after top, at most the room left beside the first lo pods comes back. */
	size_t rest = n_pods - lo - 1;
	i128 more = (i128)rest - (s->max_pods - (i128)lo - 1);
	if (more < 0)
		more = 0;
	for (int r = 0; r < N_CORE_RES && !pre->zero_request; r++) {
		if (pre->req[r] <= 0)
			continue;
		i128 slack = (i128)s->alloc[r] - s->psum[lo][r] - pre->req[r];
		/* psum[n_pods] = requested = alloc - free: one line fewer to load */
		i128 excess = (i128)s->alloc[r] - s->free[r] - s->psum[lo + 1][r] - slack;
		if (excess > 0 && ceil_div(excess, s->max_req[r]) > more)
			more = ceil_div(excess, s->max_req[r]);
	}
	int64_t top_start = top->has_start ? top->start : x->now;
	if (more >= (i128)rest && top->prio == s->min_prio) {
		/* Every pod after top is a victim too, all of the lowest priority: the exact key. */
		*k = (struct pkey){ { 0, top->prio, ((int64_t)rest + 1) * ((int64_t)top->prio + off), (int64_t)rest + 1,
			              start_key(top_start) } };
		return PC_CANDIDATE;
	}
	*k = (struct pkey){ { 0, top->prio, (int64_t)top->prio + off + (int64_t)more * ((int64_t)s->min_prio + off),
		              (int64_t)more + 1, start_key(top_start) } };
	if (can_skip(k, rk))
		return PC_BOUND;
	return -EAGAIN;
}

/* One node's part of a decision without explanations: PC_* (key filled for PC_CANDIDATE, a
 * lower bound for PC_BOUND), or a negative errno. */
static int evaluate_node(struct ctx *x, const struct node *n, bool not_eligible, const struct ranking *rk,
                         struct pkey *k)
{
	struct filter_failures f;
	size_t nl;
	if (x->lane) {
		const struct nsum *s = &x->c->sum[n->idx];
		/* Without a start time a pod's place in the order depends on now. */
		if (!(s->flags & NS_GENERAL) && (!(s->flags & NS_NOSTART) || x->now > s->max_start)) {
			int r = lane_evaluate(x, s, not_eligible, rk, k);
			if (r != -EAGAIN)
				return r;
			goto select;
		}
	}
	if (!filter_now(x, n, &f))
		return PC_FITS;
	if (f.unresolvable)
		return PC_UNRESOLVABLE;
	if (not_eligible)
		return PC_NOT_CANDIDATE; /* not simulated: the decision needs no victims */
select:;
	int r = select_victims(x, n, &f, k, &nl);
	return r < 0 ? r : r ? PC_CANDIDATE : PC_NOT_CANDIDATE;
}

/*
 * One scan in name order: the first feasible node ends it (FITS); meanwhile every resolvable
 * node is simulated and only the best key so far is kept, so no per-node state is stored.
 * Most nodes are settled from their summaries, without their pods (lane_evaluate). Results of
 * nodes that did not change since an earlier decision for an equally shaped preemptor come
 * from the cache (pcache.h): then a node costs a few loads.
 */
static int decide_fast(struct ctx *x, pp_preemption *res, bool *oom)
{
	const pp_cluster *c = x->c;
	const struct pod *pre = x->pre;
	pp_eligibility elig = eligibility(x);
	bool not_eligible = elig != PP_ELIGIBLE;
	struct ranking rk = { 0 };
	struct pcache *pc = c->pcache;
	/* a cached result knows nothing of protected pods: the protecting pass evaluates every node */
	bool cached = !not_eligible && !x->f.aff && !x->protect && pp__pcache_acquire(pc, c, pre);
	int r = 0;

	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = c->nodes[i];
		/* The preemptor is not counted on its own nominated node: that result is its own. */
		struct pc_entry *e = cached && n != pre->nominated ? &pc->e[i] : NULL;
		struct pkey k;
		int state = 0;
		if (e && e->gen == pc->gen && (!e->now_dep || e->now == x->now)) {
			state = e->state;
			k = e->key;
			if (state == PC_BOUND && !can_skip(&k, &rk))
				state = 0; /* the bound no longer suffices: evaluate */
		}
		if (!state) {
			state = evaluate_node(x, n, not_eligible, &rk, &k);
			if (state < 0) {
				r = state;
				break;
			}
			/* the summary's flags, not the node's counters: one line fewer to load */
			unsigned fl = c->sum[i].flags;
			if (e && !(fl & NS_PDB))
				*e = (struct pc_entry){ .gen = pc->gen, .now = x->now, .key = k, .state = (uint8_t)state,
					                .now_dep = (fl & NS_NOSTART) != 0 };
		}
		if (state == PC_FITS) {
			if (cached)
				pp__pcache_release(pc);
			res->outcome = PP_OUTCOME_FITS;
			res->node = arena_copy(&res->arena, n->name, oom);
			res->reason = "";
			return 0;
		}
		if (state == PC_CANDIDATE)
			rank_add(&rk, n, &k);
	}
	if (cached)
		pp__pcache_release(pc);
	if (r < 0)
		return r;
	if (!rk.best)
		return finish_none(x, res, elig, oom);
	return finish_preempt(x, res, &rk, oom);
}

/* The decision's context for preemptor pre: flags, filter state and scratch. On failure the
 * caller still calls ctx_done(). */
static int ctx_init(struct ctx *x, const pp_cluster *c, const struct pod *pre, const pp_preempt_options *opts,
                    const int64_t *protect_after)
{
	int r;

	x->c = c;
	x->pre = pre;
	x->now = opts->now_ns;
	x->strict = c->pdb_policy == PP_PDB_STRICT;
	if (protect_after) {
		x->protect = true;
		x->protect_after = *protect_after;
	}
	x->order_ok = !c->any_start || opts->now_ns > c->max_start;
	for (size_t i = 0; i < pre->n_scalar; i++)
		x->need_scalar |= pre->scalar[i].value > 0;
	x->lane = !x->need_scalar && !pre->n_node_selector && !pre->has_node_affinity && !x->protect;
	x->sslack = calloc(pre->n_scalar + 1, sizeof(*x->sslack));
	if (!x->sslack)
		return -ENOMEM;
	r = pp__filter_init(&x->f, c, pre);
	if (r < 0)
		return r;
	x->lane &= !x->f.aff;
	if (c->n_pdbs) {
		x->pdb_allowed = calloc(c->n_pdbs, sizeof(*x->pdb_allowed));
		x->pdb_known = calloc(c->n_pdbs, sizeof(*x->pdb_known));
		x->budget = calloc(c->n_pdbs, sizeof(*x->budget));
		x->stamp = calloc(c->n_pdbs, sizeof(*x->stamp));
		if (!x->pdb_allowed || !x->pdb_known || !x->budget || !x->stamp)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The decision with a record per node (opts->explain): every node is filtered (pass 1), and when
 * none fits, every node where preemption may help is simulated (pass 2), so each record tells
 * why its node lost. Same result as decide_fast(), which skips what no record needs.
 */
static int decide_explained(struct ctx *x, pp_preemption *res, bool *oom)
{
	const pp_cluster *c = x->c;
	const struct pod *pre = x->pre;
	int r = 0;

	res->explain = pp__arena_alloc(&res->arena, (c->n_nodes ? c->n_nodes : 1) * sizeof(*res->explain));
	if (!res->explain)
		return -ENOMEM;
	res->n_explain = c->n_nodes;

	/* Pass 1: the scheduling attempt. The first feasible node in name order wins. */
	const struct node *fit = NULL;
	size_t n_resolvable = 0;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = c->nodes[i];
		struct filter_failures f;
		unsigned m = filter_now(x, n, &f);
		if (!m && !fit)
			fit = n;
		if (m && !f.unresolvable)
			n_resolvable++;
		struct buf b = { 0 };
		pp__filter_reasons(c, &f, join_reason, &b);
		res->explain[i] = (pp_node_explain){
			.node = arena_copy(&res->arena, n->name, oom),
			.verdict = !m ? PP_NODE_FITS : f.unresolvable ? PP_NODE_UNRESOLVABLE : PP_NODE_NOT_HELPFUL,
			.reason = arena_copy(&res->arena, b.s ? b.s : "", oom),
			.score = !m ? pp__score_least_allocated(pre, n) : -1,
		};
		*oom |= b.oom;
		free(b.s);
	}
	if (fit) {
		res->outcome = PP_OUTCOME_FITS;
		res->node = arena_copy(&res->arena, fit->name, oom);
		res->reason = "";
		return 0;
	}

	/* Eligibility (§7.1). */
	pp_eligibility elig = eligibility(x);

	/* Pass 2: candidates and the best of them. */
	struct ranking rk = { 0 };
	if (elig == PP_ELIGIBLE && n_resolvable > 0)
		for (size_t i = 0; i < c->n_nodes; i++) {
			const struct node *n = c->nodes[i];
			pp_node_explain *e = &res->explain[i];
			struct filter_failures f;
			if (e->verdict != PP_NODE_NOT_HELPFUL)
				continue;
			struct pkey k;
			size_t nl = 0;
			r = select_victims(x, n, &f, &k, &nl);
			if (r < 0)
				return r;
			if (r == 0) {
				struct buf b = { 0 };
				pp__filter_reasons(c, &f, join_reason, &b);
				e->reason = arena_copy(&res->arena, b.s ? b.s : "", oom);
				*oom |= b.oom;
				free(b.s);
				continue;
			}
			e->verdict = PP_NODE_CANDIDATE;
			e->reason = "";
			e->num_pdb_violations = (size_t)k.f[0];
			e->priority_sum = k.f[2];
			r = fill_victims(x, res, nl, (pp_victim **)&e->victims, &e->n_victims, oom);
			if (r < 0)
				return r;
			rank_add(&rk, n, &k);
		}
	if (!rk.best)
		return finish_none(x, res, elig, oom);
	r = finish_preempt(x, res, &rk, oom);
	for (size_t i = 0; r >= 0 && i < res->n_explain; i++) {
		pp_node_explain *e = &res->explain[i];
		if (e->verdict != PP_NODE_CANDIDATE || c->nodes[i] == rk.best)
			continue;
		/* Re-evaluated for the key: cheap, and no per-node keys are kept around. */
		struct filter_failures f;
		struct pkey k;
		size_t nl;
		r = select_victims(x, c->nodes[i], &f, &k, &nl);
		if (r < 0)
			break;
		e->lost_at = (pp_criterion)(PP_CRIT_PDB_VIOLATIONS + key_lcp(&k, &rk.best_key));
		r = 0;
	}
	return r;
}

int pp__cluster_preempt(const pp_cluster *c, const char *ns, const char *name, const pp_preempt_options *opts,
                        const int64_t *protect_after, pp_preemption **ret, pp_err *err)
{
	static const pp_preempt_options defaults = { 0 };
	struct ctx x = { 0 };
	pp_preemption *res = NULL;
	bool oom = false;
	int r;

	if (!c || !ret)
		return -EINVAL;
	if (!opts)
		opts = &defaults;
	const struct pod *pre = pp__cluster_find_pod(c, ns, name);
	if (!pre)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	if (pre->node)
		return pp_fail(err, -EINVAL, "pods/%s/%s: already bound to %s", pre->ns, pre->name, pre->node->name);

	res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	r = ctx_init(&x, c, pre, opts, protect_after);
	if (r >= 0)
		r = opts->explain ? decide_explained(&x, res, &oom) : decide_fast(&x, res, &oom);
	if (r >= 0 && oom)
		r = -ENOMEM;
	ctx_done(&x);
	if (r < 0) {
		pp_preemption_free(res);
		return r == -ENOMEM ? pp_fail(err, r, "out of memory") : r;
	}
	*ret = res;
	return 0;
}

int pp_cluster_preempt(const pp_cluster *c, const char *ns, const char *name, const pp_preempt_options *opts,
                       pp_preemption **ret, pp_err *err)
{
	return pp__cluster_preempt(c, ns, name, opts, NULL, ret, err);
}

/* a b, or b alone when a is NULL; in *ret (malloc'ed). */
static int concat(const char *a, const char *b, char **ret)
{
	size_t la = a ? strlen(a) + 1 : 0, lb = strlen(b);
	char *s = malloc(la + lb + 1);
	if (!s)
		return -ENOMEM;
	if (a) {
		memcpy(s, a, la - 1);
		s[la - 1] = ' ';
	}
	memcpy(s + la, b, lb + 1);
	*ret = s;
	return 0;
}

static int finish_none(struct ctx *x, pp_preemption *res, pp_eligibility elig, bool *oom)
{
	/* Kubernetes' FitError text: the scheduling failure, then the preemption's (the PostFilter's
	 * own FitError over the same nodes), sorted and worded as the scheduling cycle does. */
	const pp_cluster *c = x->c;
	size_t present = pp__cluster_present_nodes(c);
	struct sfit_reasons h = { .n_nodes = present }, unres = { .n_nodes = present };
	char *post = NULL, *msg = NULL, *unres_msg = NULL;
	int r = 0;

	/* No node at all: schedulePod returns ErrNoNodesAvailable, which is no FitError, so the
	 * PostFilter (preemption) never runs and the message is that alone. */
	if (present == 0) {
		/* nothing to explain */
	} else if (elig != PP_ELIGIBLE) {
		res->eligibility = elig;
		r = concat("preemption:", pp_eligibility_reason(elig), &post);
	}
	else {
		for (size_t i = 0; i < c->n_nodes && r >= 0; i++) {
			const struct node *n = c->nodes[i];
			struct filter_failures f;
			struct pkey k;
			size_t nl;
			if (n->absent)
				continue;
			filter_now(x, n, &f);
			if (f.unresolvable) {
				pp__sfit_reasons_collect("Preemption is not helpful for scheduling", &h);
				/* what kube's words hide (kubernetes#97182): which filter it was */
				pp__filter_reasons(c, &f, pp__sfit_reasons_collect, &unres);
				continue;
			}
			r = select_victims(x, n, &f, &k, &nl);
			if (r >= 0)
				pp__filter_reasons(c, &f, pp__sfit_reasons_collect, &h);
		}
		char *m = NULL;
		if (r >= 0)
			r = unres.err ? unres.err : pp__sfit_reasons_list(&unres, &unres_msg);
		if (r >= 0)
			r = h.err ? h.err : pp__sfit_reasons_format(&h, NULL, &m);
		if (r >= 0)
			r = concat("preemption:", m, &post);
		free(m);
	}
	pp__sfit_reasons_clear(&h);
	h.n_nodes = present;
	if (r >= 0 && present == 0)
		r = concat(NULL, "no nodes available to schedule pods", &msg);
	else if (r >= 0) {
		for (size_t i = 0; i < c->n_nodes; i++) {
			struct filter_failures f;
			filter_now(x, c->nodes[i], &f);
			pp__filter_reasons(c, &f, pp__sfit_reasons_collect, &h);
		}
		r = h.err ? h.err : pp__sfit_reasons_format(&h, post, &msg);
	}
	pp__sfit_reasons_done(&h);
	pp__sfit_reasons_done(&unres);
	free(post);
	res->outcome = PP_OUTCOME_NONE;
	if (r >= 0) {
		res->reason = arena_copy(&res->arena, msg, oom);
		res->unresolvable = arena_copy(&res->arena, unres_msg ? unres_msg : "", oom);
	}
	free(msg);
	free(unres_msg);
	return r;
}

static void candidate_of(pp_preemption *res, const struct node *n, const struct pkey *k, bool *oom)
{
	int64_t st = k->f[4] == INT64_MAX ? INT64_MIN : -k->f[4];
	res->cand[res->n_cand++] = (pp_candidate){
		.node = arena_copy(&res->arena, n->name, oom),
		.num_pdb_violations = (size_t)k->f[0],
		.highest_priority = (int32_t)k->f[1],
		.priority_sum = k->f[2],
		.n_victims = (size_t)k->f[3],
		.earliest_start_ns = st,
	};
}

/*
 * The budgets behind the victims' PDB verdicts (x->lower/x->flags from select_victims): the
 * lower-priority pods charged in importance order, as the split did, each victim's budgets
 * written down as they stood when it was charged.
 */
static int fill_victim_pdbs(struct ctx *x, pp_preemption *res, size_t nl, bool *oom)
{
	size_t j = 0;
	bool any = false;

	for (size_t i = 0; i < nl && !any; i++)
		any = (x->flags[i] & FL_VICTIM) && x->lower[i]->pod->n_pdbs;
	if (!any)
		return 0;
	res->victim_pdbs = pp__arena_alloc(&res->arena, res->n_victims * sizeof(*res->victim_pdbs));
	if (!res->victim_pdbs)
		return -ENOMEM;
	x->cur_stamp++;
	for (size_t i = 0; i < nl; i++) {
		const struct pod *p = x->lower[i]->pod;
		bool victim = (x->flags[i] & FL_VICTIM) != 0;
		pp_victim_pdb *v = victim && p->n_pdbs ? pp__arena_alloc(&res->arena, p->n_pdbs * sizeof(*v)) : NULL;
		if (victim && p->n_pdbs && !v)
			return -ENOMEM;
		for (size_t k = 0; k < p->n_pdbs; k++) {
			const struct pdb *b = p->pdbs[k];
			bool disrupted = pp__pdb_disrupted(b, p->name);
			if (!disrupted) {
				if (x->stamp[b->idx] != x->cur_stamp) {
					x->stamp[b->idx] = x->cur_stamp;
					x->budget[b->idx] = pdb_allowed(x, b);
				}
				x->budget[b->idx]--;
			}
			if (v)
				v[k] = (pp_victim_pdb){ .namespace_ = arena_copy(&res->arena, b->ns, oom),
					                .name = arena_copy(&res->arena, b->name, oom),
					                .disruptions_allowed = pdb_allowed(x, b), .disrupted = disrupted,
					                .violated = !disrupted && x->budget[b->idx] < 0 };
		}
		if (victim)
			res->victim_pdbs[j++] = (struct victim_pdbs){ v, v ? p->n_pdbs : 0 };
	}
	return 0;
}

static int finish_preempt(struct ctx *x, pp_preemption *res, const struct ranking *rk, bool *oom)
{
	const struct pod *pre = x->pre;
	const struct node *best = rk->best;
	struct filter_failures f;
	struct pkey k;
	size_t nl = 0;
	int r;

	res->outcome = PP_OUTCOME_PREEMPT;
	res->reason = "";
	res->node = arena_copy(&res->arena, best->name, oom);
	res->criterion = rk->second ? (pp_criterion)(PP_CRIT_PDB_VIOLATIONS + key_lcp(&rk->best_key, &rk->second_key))
	                            : PP_CRIT_SINGLE_CANDIDATE;
	candidate_of(res, best, &rk->best_key, oom);
	if (rk->second)
		candidate_of(res, rk->second, &rk->second_key, oom);
	r = select_victims(x, best, &f, &k, &nl);
	if (r < 0)
		return r;
	r = fill_victims(x, res, nl, &res->victims, &res->n_victims, oom);
	if (r >= 0)
		r = fill_victim_pdbs(x, res, nl, oom);
	if (r < 0)
		return r;
	res->violations = (size_t)k.f[0];

	/* Lower-priority pods nominated to the chosen node lose their nomination. */
	size_t nc = 0;
	for (size_t i = 0; i < best->n_nominated; i++)
		nc += best->nominated[i] != pre && best->nominated[i]->priority < pre->priority;
	if (!nc)
		return 0;
	res->cleared = pp__arena_alloc(&res->arena, nc * sizeof(*res->cleared));
	if (!res->cleared)
		return -ENOMEM;
	for (size_t i = 0; i < best->n_nominated; i++) {
		const struct pod *p = best->nominated[i];
		if (p == pre || p->priority >= pre->priority)
			continue;
		pp_pod_info *pi = &res->cleared[res->n_cleared++];
		pp__pod_info_fill(p, pi);
		pi->namespace_ = arena_copy(&res->arena, p->ns, oom);
		pi->name = arena_copy(&res->arena, p->name, oom);
		pi->node_name = NULL;
		pi->nominated_node_name = res->node;
	}
	qsort(res->cleared, res->n_cleared, sizeof(*res->cleared), cmp_pod_info);
	return 0;
}

pp_outcome pp_preemption_outcome(const pp_preemption *p)
{
	return p ? p->outcome : PP_OUTCOME_NONE;
}

pp_eligibility pp_preemption_eligibility(const pp_preemption *p)
{
	return p ? p->eligibility : PP_ELIGIBLE;
}

const char *pp_preemption_node(const pp_preemption *p)
{
	return p && p->outcome != PP_OUTCOME_NONE ? p->node : NULL;
}

const char *pp_preemption_reason(const pp_preemption *p)
{
	return p && p->reason ? p->reason : "";
}

size_t pp_preemption_victim_count(const pp_preemption *p)
{
	return p ? p->n_victims : 0;
}

const pp_victim *pp_preemption_victim(const pp_preemption *p, size_t i)
{
	return p && i < p->n_victims ? &p->victims[i] : NULL;
}

size_t pp_preemption_pdb_violations(const pp_preemption *p)
{
	return p ? p->violations : 0;
}

pp_criterion pp_preemption_criterion(const pp_preemption *p)
{
	return p ? p->criterion : PP_CRIT_NONE;
}

size_t pp_preemption_cleared_nomination_count(const pp_preemption *p)
{
	return p ? p->n_cleared : 0;
}

const pp_pod_info *pp_preemption_cleared_nomination(const pp_preemption *p, size_t i)
{
	return p && i < p->n_cleared ? &p->cleared[i] : NULL;
}

size_t pp_preemption_node_count(const pp_preemption *p)
{
	return p ? p->n_explain : 0;
}

const pp_node_explain *pp_preemption_node_explain(const pp_preemption *p, size_t i)
{
	return p && i < p->n_explain ? &p->explain[i] : NULL;
}

const pp_candidate *pp_preemption_candidate(const pp_preemption *p, size_t rank)
{
	return p && p->outcome == PP_OUTCOME_PREEMPT && rank < p->n_cand ? &p->cand[rank] : NULL;
}

size_t pp_preemption_victim_pdb_count(const pp_preemption *p, size_t i)
{
	return p && p->victim_pdbs && i < p->n_victims ? p->victim_pdbs[i].n : 0;
}

const pp_victim_pdb *pp_preemption_victim_pdb(const pp_preemption *p, size_t i, size_t k)
{
	return k < pp_preemption_victim_pdb_count(p, i) ? &p->victim_pdbs[i].v[k] : NULL;
}

const char *pp_preemption_unresolvable(const pp_preemption *p)
{
	return p && p->outcome == PP_OUTCOME_NONE && p->unresolvable ? p->unresolvable : "";
}
