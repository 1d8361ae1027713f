/* SPDX-License-Identifier: MIT */
/*
 * The scheduling cycle's filters and scoring over the cluster model (reference §4, §6):
 * NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit, InterPodAffinity — in
 * kube's plugin order, stopping at the first failing plugin of a node (all insufficient
 * resources are reported together, as NodeResourcesFit does), with the reason strings of kube.
 *
 * Nominated pods: on each node, the pods nominated to it with priority >= the pod's are added
 * for a first pass; if any were added and it passed, a second pass runs without them
 * (RunFilterPluginsWithNominatedPods). Lower-priority nominations are ignored.
 *
 * Scoring: NodeResourcesFit's LeastAllocated over cpu and memory, weight 1 each:
 * score(r) = (allocatable − (requested + pod)) × 100 / allocatable (0 when over), averaged over
 * the resources the node has, integer division as kube. Deviation: kube scores with "non-zero"
 * requests (100m / 200Mi substituted for pods that request nothing); here the requests as they
 * are. The highest score wins; ties go to the smaller node name (DESIGN §3).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "sched_fit.h"

#define MAX_EXTRA 64 /* nominated pods considered per node (more are ignored beyond this) */

/* ---- reasons ------------------------------------------------------------------------------ */

void sfit_reasons_clear(struct sfit_reasons *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].reason);
	r->n = 0;
	r->n_nodes = 0;
	r->rejectors = 0;
}

void sfit_reasons_done(struct sfit_reasons *r)
{
	sfit_reasons_clear(r);
	free(r->v);
	*r = (struct sfit_reasons){ 0 };
}

int sfit_reasons_add(struct sfit_reasons *r, const char *reason)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].reason, reason) == 0) {
			r->v[i].nodes++;
			return 0;
		}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 8;
		struct sfit_reason *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	char *s = strdup(reason);
	if (!s)
		return -ENOMEM;
	r->v[r->n++] = (struct sfit_reason){ s, 1 };
	return 0;
}

/* kube sorts the formatted "<count> <reason>" strings byte-wise. */
static int reason_cmp(const void *a, const void *b)
{
	const struct sfit_reason *x = a, *y = b;
	char bx[700], by[700];
	snprintf(bx, sizeof(bx), "%zu %s", x->nodes, x->reason);
	snprintf(by, sizeof(by), "%zu %s", y->nodes, y->reason);
	return strcmp(bx, by);
}

int sfit_reasons_format(struct sfit_reasons *r, const char *post, char **ret)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	qsort(r->v, r->n, sizeof(*r->v), reason_cmp);
	fprintf(f, "0/%zu nodes are available:", r->n_nodes);
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "%s%zu %s", i ? ", " : " ", r->v[i].nodes, r->v[i].reason);
	if (r->n)
		fputc('.', f);
	if (post && *post)
		fprintf(f, " %s", post);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}

/* ---- lookups ------------------------------------------------------------------------------ */

static struct pod *find_pod(const pp_cluster *c, const char *ns, const char *name)
{
	char key[600];
	int n = snprintf(key, sizeof(key), "%s\x1f%s", ns, name);
	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL;
	return strmap_get(&c->pod_map, key);
}

static struct node *find_node(const pp_cluster *c, const char *name)
{
	return strmap_get(&c->node_map, name);
}

int sfit_foreach_pod(const pp_cluster *c, int (*fn)(const pp_pod_info *pi, void *ud), void *ud)
{
	for (size_t i = 0; i < c->n_pods; i++) {
		const struct pod *p = c->pods[i];
		pp_pod_info pi = {
			.namespace_ = p->ns,
			.name = p->name,
			.priority = p->priority,
			.preemption_policy = p->policy,
			.node_name = p->node ? p->node->name : NULL,
			.nominated_node_name = p->nominated ? p->nominated->name : NULL,
			.terminating = p->terminating,
			.has_start_time = p->has_start,
			.start_time_ns = p->start,
			.termination_grace_period_s = p->grace,
		};
		int r = fn(&pi, ud);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- inter-pod affinity pre-filter (topology pair counts over the bound pods) -------------- */

struct tp_entry {
	size_t count;
	char key[]; /* "key\x1fvalue" */
};

struct tp_counts {
	struct strmap m; /* key -> struct tp_entry */
	struct tp_entry **v;
	size_t n, cap;
};

static void tp_done(struct tp_counts *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	strmap_done(&t->m);
	*t = (struct tp_counts){ 0 };
}

static int tp_key(const char *k, const char *v, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s\x1f%s", k, v);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int tp_inc(struct tp_counts *t, const char *k, const char *v)
{
	char buf[600];
	struct tp_entry *e;
	int r;

	if (tp_key(k, v, buf, sizeof(buf)) < 0)
		return 0; /* longer than any valid label: cannot match a node label either */
	e = strmap_get(&t->m, buf);
	if (e) {
		e->count++;
		return 0;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct tp_entry **nv = realloc(t->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = cap;
	}
	e = malloc(sizeof(*e) + strlen(buf) + 1);
	if (!e)
		return -ENOMEM;
	e->count = 1;
	strcpy(e->key, buf);
	r = strmap_put(&t->m, e->key, e);
	if (r < 0) {
		free(e);
		return r;
	}
	t->v[t->n++] = e;
	return 0;
}

static size_t tp_get(const struct tp_counts *t, const char *k, const char *v)
{
	char buf[600];
	const struct tp_entry *e;
	if (tp_key(k, v, buf, sizeof(buf)) < 0)
		return 0;
	e = strmap_get(&t->m, buf);
	return e ? e->count : 0;
}

struct ctx {
	const pp_cluster *c;
	const struct pod *p;
	bool ipa; /* inter-pod affinity has to be evaluated */
	struct tp_counts existing_anti, anti, aff;
	bool self_affinity; /* the pod matches all its own affinity terms */
};

static bool matches_all_affinity(const struct pod *p, const struct pod *e)
{
	for (size_t i = 0; i < p->n_affinity; i++)
		if (!affinity_term_matches(&p->affinity[i], p->ns, e))
			return false;
	return p->n_affinity > 0;
}

/* The contribution of one pod e, placed on node n, to the three kinds of counts. */
static int count_pod(struct ctx *x, const struct pod *e, const struct node *n)
{
	const struct pod *p = x->p;
	int r = 0;
	for (size_t i = 0; i < e->n_anti_affinity && r >= 0; i++) {
		const pp_pod_affinity_term *t = &e->anti_affinity[i];
		const char *v = labels_get(n->labels, n->n_labels, t->topology_key);
		if (v && affinity_term_matches(t, e->ns, p))
			r = tp_inc(&x->existing_anti, t->topology_key, v);
	}
	for (size_t i = 0; i < p->n_anti_affinity && r >= 0; i++) {
		const pp_pod_affinity_term *t = &p->anti_affinity[i];
		const char *v = labels_get(n->labels, n->n_labels, t->topology_key);
		if (v && affinity_term_matches(t, p->ns, e))
			r = tp_inc(&x->anti, t->topology_key, v);
	}
	if (r >= 0 && matches_all_affinity(p, e))
		for (size_t i = 0; i < p->n_affinity && r >= 0; i++) {
			const char *v = labels_get(n->labels, n->n_labels, p->affinity[i].topology_key);
			if (v)
				r = tp_inc(&x->aff, p->affinity[i].topology_key, v);
		}
	return r;
}

static void ctx_done(struct ctx *x)
{
	tp_done(&x->existing_anti);
	tp_done(&x->anti);
	tp_done(&x->aff);
}

static int ctx_init(struct ctx *x, const pp_cluster *c, const struct pod *p)
{
	*x = (struct ctx){ .c = c, .p = p };
	x->ipa = p->n_affinity || p->n_anti_affinity || c->n_anti;
	if (!x->ipa)
		return 0;
	x->self_affinity = matches_all_affinity(p, p);
	bool all = p->n_affinity || p->n_anti_affinity;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = c->nodes[i];
		if (!all && !n->n_anti)
			continue;
		for (size_t j = 0; j < n->n_pods; j++) {
			const struct pod *e = n->slots[j].pod;
			if (!all && !e->n_anti_affinity)
				continue;
			int r = count_pod(x, e, n);
			if (r < 0) {
				ctx_done(x);
				return r;
			}
		}
	}
	return 0;
}

/* ---- filters on one node ------------------------------------------------------------------ */

static const pp_taint unschedulable_taint = { "node.kubernetes.io/unschedulable", NULL, PP_EFFECT_NO_SCHEDULE };

static const char *const core_reasons[N_CORE_RES] = {
	"Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
};

static int64_t scalar_of(const struct sres *v, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return v[i].value;
	return 0;
}

static i128 scalar_req_of(const struct node *n, uint32_t id)
{
	for (size_t i = 0; i < n->n_req_scalar; i++)
		if (n->req_scalar[i].id == id)
			return n->req_scalar[i].value;
	return 0;
}

/* Reports one failure reason; r may be NULL when only the verdict matters. */
static int fail(struct sfit_reasons *r, uint32_t rej, const char *reason)
{
	if (!r)
		return 0;
	r->rejectors |= rej;
	return sfit_reasons_add(r, reason);
}

/*
 * One filter pass. extra: nominated pods counted on the node; ignore_terminating: the node's
 * terminating pods do not count (resources and pod count). Returns 1 fits, 0 does not (reasons
 * added to r), or -errno.
 */
static int filter_pass(struct ctx *x, const struct node *n, struct pod *const *extra, size_t n_extra,
                       bool ignore_terminating, struct sfit_reasons *r)
{
	const struct pod *p = x->p;
	int q;

	if (n->unschedulable && !pod_tolerates(p, &unschedulable_taint))
		return (q = fail(r, SCHED_REJ_UNSCHEDULABLE, "node(s) were unschedulable")) < 0 ? q : 0;

	for (size_t i = 0; i < n->n_taints; i++) {
		const pp_taint *t = &n->taints[i];
		if (t->effect != PP_EFFECT_NO_SCHEDULE && t->effect != PP_EFFECT_NO_EXECUTE)
			continue;
		if (!pod_tolerates(p, t)) {
			char buf[600];
			if (!r)
				return 0;
			snprintf(buf, sizeof(buf), "node(s) had untolerated taint {%s: %s}", t->key, t->value ? t->value : "");
			return (q = fail(r, SCHED_REJ_TAINT, buf)) < 0 ? q : 0;
		}
	}

	if ((p->n_node_selector || p->has_node_affinity) && !pod_matches_node_affinity(p, n))
		return (q = fail(r, SCHED_REJ_NODE_AFFINITY, "node(s) didn't match Pod's node affinity/selector")) < 0 ? q : 0;

	/* NodeResourcesFit: every insufficiency is reported. */
	{
		i128 used[N_CORE_RES];
		int64_t pods = (int64_t)n->n_pods + (int64_t)n_extra;
		bool ok = true;
		for (int k = 0; k < N_CORE_RES; k++) {
			used[k] = n->psum[n->n_pods][k];
			for (size_t e = 0; e < n_extra; e++)
				used[k] += extra[e]->req[k];
		}
		if (ignore_terminating)
			for (size_t j = 0; j < n->n_pods; j++)
				if (n->slots[j].pod->terminating) {
					pods--;
					for (int k = 0; k < N_CORE_RES; k++)
						used[k] -= n->slots[j].req[k];
				}
		if (pods + 1 > n->max_pods) {
			ok = false;
			if (!r)
				return 0;
			if ((q = fail(r, SCHED_REJ_RESOURCES, "Too many pods")) < 0)
				return q;
		}
		if (!p->zero_request) {
			for (int k = 0; k < N_CORE_RES; k++) {
				if (p->req[k] > 0 && (i128)p->req[k] > (i128)n->alloc[k] - used[k]) {
					ok = false;
					if (!r)
						return 0;
					if ((q = fail(r, SCHED_REJ_RESOURCES, core_reasons[k])) < 0)
						return q;
				}
			}
			for (size_t i = 0; i < p->n_scalar; i++) {
				const struct sres *s = &p->scalar[i];
				if (s->value <= 0)
					continue;
				i128 u = scalar_req_of(n, s->id);
				for (size_t e = 0; e < n_extra; e++)
					u += scalar_of(extra[e]->scalar, extra[e]->n_scalar, s->id);
				if (ignore_terminating)
					for (size_t j = 0; j < n->n_pods; j++)
						if (n->slots[j].pod->terminating)
							u -= scalar_of(n->slots[j].pod->scalar, n->slots[j].pod->n_scalar, s->id);
				if ((i128)s->value > (i128)scalar_of(n->alloc_scalar, n->n_alloc_scalar, s->id) - u) {
					char buf[600];
					ok = false;
					if (!r)
						return 0;
					snprintf(buf, sizeof(buf), "Insufficient %s", x->c->res_names[s->id]);
					if ((q = fail(r, SCHED_REJ_RESOURCES, buf)) < 0)
						return q;
				}
			}
		}
		if (!ok)
			return 0;
	}

	if (!x->ipa)
		return 1;

	/* InterPodAffinity, in kube's order: the pod's affinity, its anti-affinity, then the
	 * anti-affinity of the pods already there. Nominated pods count as if on this node. */
	if (p->n_affinity) {
		bool exist = true;
		for (size_t i = 0; i < p->n_affinity; i++) {
			const char *tk = p->affinity[i].topology_key;
			const char *v = labels_get(n->labels, n->n_labels, tk);
			if (!v)
				return (q = fail(r, SCHED_REJ_POD_AFFINITY, "node(s) didn't match pod affinity rules")) < 0 ? q : 0;
			size_t cnt = tp_get(&x->aff, tk, v);
			for (size_t e = 0; e < n_extra; e++)
				cnt += matches_all_affinity(p, extra[e]);
			if (cnt == 0)
				exist = false;
		}
		if (!exist) {
			bool any = x->aff.n > 0;
			for (size_t e = 0; e < n_extra && !any; e++)
				any = matches_all_affinity(p, extra[e]);
			if (any || !x->self_affinity)
				return (q = fail(r, SCHED_REJ_POD_AFFINITY, "node(s) didn't match pod affinity rules")) < 0 ? q : 0;
		}
	}
	for (size_t i = 0; i < p->n_anti_affinity; i++) {
		const pp_pod_affinity_term *t = &p->anti_affinity[i];
		const char *v = labels_get(n->labels, n->n_labels, t->topology_key);
		if (!v)
			continue;
		size_t cnt = tp_get(&x->anti, t->topology_key, v);
		for (size_t e = 0; e < n_extra; e++)
			cnt += affinity_term_matches(t, p->ns, extra[e]);
		if (cnt > 0)
			return (q = fail(r, SCHED_REJ_POD_ANTI, "node(s) didn't match pod anti-affinity rules")) < 0 ? q : 0;
	}
	{
		bool clash = false;
		for (size_t i = 0; i < n->n_labels && !clash; i++)
			clash = tp_get(&x->existing_anti, n->labels[i].key, n->labels[i].value) > 0;
		for (size_t e = 0; e < n_extra && !clash; e++)
			for (size_t i = 0; i < extra[e]->n_anti_affinity && !clash; i++) {
				const pp_pod_affinity_term *t = &extra[e]->anti_affinity[i];
				clash = labels_get(n->labels, n->n_labels, t->topology_key) &&
				        affinity_term_matches(t, extra[e]->ns, p);
			}
		if (clash)
			return (q = fail(r, SCHED_REJ_POD_ANTI, "node(s) didn't satisfy existing pods anti-affinity rules")) < 0 ? q : 0;
	}
	return 1;
}

/* Both passes of RunFilterPluginsWithNominatedPods. */
static int filter_node(struct ctx *x, const struct node *n, bool ignore_terminating, struct sfit_reasons *r)
{
	struct pod *extra[MAX_EXTRA];
	size_t n_extra = 0;
	for (size_t i = 0; i < n->n_nominated && n_extra < MAX_EXTRA; i++) {
		struct pod *o = n->nominated[i];
		if (o != x->p && o->priority >= x->p->priority)
			extra[n_extra++] = o;
	}
	if (n_extra > 0) {
		int q = filter_pass(x, n, extra, n_extra, ignore_terminating, r);
		if (q <= 0)
			return q;
	}
	return filter_pass(x, n, NULL, 0, ignore_terminating, r);
}

static int64_t least_allocated(const struct pod *p, const struct node *n)
{
	int64_t sum = 0, weights = 0;
	for (int k = RES_CPU; k <= RES_MEMORY; k++) {
		int64_t cap = n->alloc[k];
		if (cap <= 0)
			continue;
		i128 req = n->psum[n->n_pods][k] + p->req[k];
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

int sfit_fits_on(const pp_cluster *c, const char *ns, const char *name, const char *node,
                 bool ignore_terminating, bool *ret)
{
	struct pod *p = find_pod(c, ns, name);
	const struct node *n = find_node(c, node);
	struct ctx x;
	int r;

	if (!p || !n)
		return -ENOENT;
	r = ctx_init(&x, c, p);
	if (r < 0)
		return r;
	r = filter_node(&x, n, ignore_terminating, NULL);
	ctx_done(&x);
	if (r < 0)
		return r;
	*ret = r > 0;
	return 0;
}

int sfit_select_node(const pp_cluster *c, const char *ns, const char *name, const char **ret_node,
                     struct sfit_reasons *reasons)
{
	/* Reasons cost string work on every failing node: gather them only when asked. */
	struct pod *p = find_pod(c, ns, name);
	const struct node *best = NULL;
	int64_t best_score = -1;
	struct ctx x;
	int r;

	if (!p)
		return -ENOENT;
	if (reasons) {
		sfit_reasons_clear(reasons);
		reasons->n_nodes = c->n_nodes;
		if (c->n_nodes == 0)
			reasons->rejectors = SCHED_REJ_NODES;
	}
	r = ctx_init(&x, c, p);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = c->nodes[i];
		r = filter_node(&x, n, false, reasons);
		if (r < 0)
			break;
		if (r == 0)
			continue;
		int64_t score = least_allocated(p, n);
		if (score > best_score) { /* strictly: ties keep the smaller name (nodes are in name order) */
			best = n;
			best_score = score;
		}
	}
	ctx_done(&x);
	if (r < 0)
		return r;
	*ret_node = best ? best->name : NULL;
	return 0;
}
