/* SPDX-License-Identifier: MIT */
/*
 * What the scheduling cycle asks of the filters (filter.c, shared with preemption): a verdict
 * on one node, or every node filtered with the failure reasons counted as kube's FitError does
 * and the feasible node with the best LeastAllocated score chosen (ties: smaller node name,
 * DESIGN §3).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "filter.h"
#include "sched_fit.h"
#include "strmap.h"

/* ---- reasons ------------------------------------------------------------------------------ */

void pp__sfit_reasons_clear(struct sfit_reasons *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].reason);
	r->n = 0;
	r->n_nodes = 0;
	r->rejectors = 0;
	r->err = 0;
}

void pp__sfit_reasons_done(struct sfit_reasons *r)
{
	pp__sfit_reasons_clear(r);
	free(r->v);
	*r = (struct sfit_reasons){ 0 };
}

/* Adds n nodes that failed for reason. */
static int reasons_add_n(struct sfit_reasons *r, const char *reason, size_t n)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].reason, reason) == 0) {
			r->v[i].nodes += n;
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
	r->v[r->n++] = (struct sfit_reason){ s, n };
	return 0;
}

int pp__sfit_reasons_add(struct sfit_reasons *r, const char *reason)
{
	return reasons_add_n(r, reason, 1);
}

/* Many nodes failed the same way (a plain pod on plain nodes): their reasons added at once. */
struct collect_n {
	struct sfit_reasons *r;
	size_t n;
};

static void collect_n(const char *reason, void *ud)
{
	struct collect_n *c = ud;
	int q = reasons_add_n(c->r, reason, c->n);
	if (q < 0 && !c->r->err)
		c->r->err = q;
}

void pp__sfit_reasons_collect(const char *reason, void *ud)
{
	struct sfit_reasons *r = ud;
	int q = pp__sfit_reasons_add(r, reason);
	if (q < 0 && !r->err)
		r->err = q;
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

/* "0/N nodes are available:" (head) and the counted reasons, sorted; "." and post after them. */
static int reasons_print(struct sfit_reasons *r, bool head, const char *post, char **ret)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	if (r->n) /* no reason at all (v NULL): qsort's pointer must still be valid */
		qsort(r->v, r->n, sizeof(*r->v), reason_cmp);
	if (head)
		fprintf(f, "0/%zu nodes are available:", r->n_nodes);
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "%s%zu %s", i ? ", " : head ? " " : "", r->v[i].nodes, r->v[i].reason);
	if (r->n && head)
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

int pp__sfit_reasons_format(struct sfit_reasons *r, const char *post, char **ret)
{
	return reasons_print(r, true, post, ret);
}

int pp__sfit_reasons_list(struct sfit_reasons *r, char **ret)
{
	return reasons_print(r, false, NULL, ret);
}

/* ---- lookups ------------------------------------------------------------------------------ */

static struct node *find_node(const pp_cluster *c, const char *name)
{
	return pp__strmap_get(&c->node_map, name);
}

int pp__sfit_foreach_pod(const pp_cluster *c, int (*fn)(const pp_pod_info *pi, void *ud), void *ud)
{
	for (size_t i = 0; i < c->n_pods; i++) {
		const struct pod *p = c->pods[i];
		pp_pod_info pi;
		pp__pod_info_fill(p, &pi);
		int r = fn(&pi, ud);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- the cycle's questions ------------------------------------------------------------------ */

static uint32_t rejectors_of(unsigned mask)
{
	uint32_t r = 0;
	if (mask & F_UNSCHEDULABLE)
		r |= SCHED_REJ_UNSCHEDULABLE;
	if (mask & F_TAINT)
		r |= SCHED_REJ_TAINT;
	if (mask & F_NODE_AFFINITY)
		r |= SCHED_REJ_NODE_AFFINITY;
	if (mask & F_RESOURCES)
		r |= SCHED_REJ_RESOURCES;
	if (mask & F_POD_AFFINITY)
		r |= SCHED_REJ_POD_AFFINITY;
	if (mask & (F_POD_ANTI_AFFINITY | F_EXISTING_ANTI_AFFINITY))
		r |= SCHED_REJ_POD_ANTI;
	return r;
}

int pp__sfit_fits_on(const pp_cluster *c, const char *ns, const char *name, const char *node,
                 bool ignore_terminating, bool *ret)
{
	const struct pod *p = pp__cluster_find_pod(c, ns, name);
	const struct node *n = find_node(c, node);
	struct filter x;
	struct filter_failures f;

	if (!p || !n)
		return -ENOENT;
	int r = pp__filter_init(&x, c, p);
	if (r < 0)
		return r;
	*ret = pp__filter_node(&x, n, ignore_terminating, &f) == 0;
	pp__filter_done(&x);
	return 0;
}

/* The nodes that share the best score so far (pp_cluster_bind_nodes). */
struct ties {
	const struct node **v;
	size_t n, cap;
	int err;
};

/* n scored score, against the best so far: a new best starts the list again, an equal one joins. */
static void tie(struct ties *t, const struct node *n, int64_t score, int64_t best_score)
{
	if (!t || score < best_score || t->err)
		return;
	if (score > best_score)
		t->n = 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		const struct node **v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			t->err = -ENOMEM;
			return;
		}
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = n;
}

static int select_node(const pp_cluster *c, const char *ns, const char *name, const char **ret_node,
                       struct sfit_reasons *reasons, struct ties *ties)
{
	const struct pod *p = pp__cluster_find_pod(c, ns, name);
	const struct node *best = NULL;
	int64_t best_score = -1;
	struct filter x;
	int r;

	if (!p)
		return -ENOENT;
	if (reasons) {
		pp__sfit_reasons_clear(reasons);
		reasons->n_nodes = pp__cluster_present_nodes(c);
		if (reasons->n_nodes == 0)
			reasons->rejectors = SCHED_REJ_NODES;
	}
	r = pp__filter_init(&x, c, p);
	if (r < 0)
		return r;
	/* Most pods ask for cpu and memory and nothing else, and most nodes have no taint, no cordon
	 * and no nominated pod (NS_GENERAL): then fit and score read only the contiguous summaries,
	 * a sequential scan instead of a walk through every node's structure. */
	bool plain = !x.aff && !p->n_node_selector && !p->has_node_affinity && !p->n_scalar;
	/* plain nodes a plain pod does not fit, by failure (Too many pods, Insufficient cpu, memory,
	 * ephemeral-storage: four bits), counted here and told once each at the end */
	size_t plain_fails[16] = { 0 };
	static const unsigned plain_bits[N_CORE_RES] = { F_CPU, F_MEMORY, F_EPHEMERAL };
	const int64_t want[2] = { pp__pod_nonzero_request(p, RES_CPU), pp__pod_nonzero_request(p, RES_MEMORY) };
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node *n = c->nodes[i];
		struct nsum *s = &c->sum[i];
		struct filter_failures f;
		if (plain && !(s->flags & NS_GENERAL)) {
			bool fits = s->n_pods < (size_t)(s->max_pods > 0 ? s->max_pods : 0);
			for (int k = 0; k < N_CORE_RES && fits && !p->zero_request; k++)
				fits = p->req[k] <= 0 || p->req[k] <= s->free[k];
			if (fits) {
				if (s->score_for[0] != want[0] || s->score_for[1] != want[1]) {
					const i128 used[2] = { s->nz_used[0], s->nz_used[1] };
					s->score = pp__least_allocated(s->alloc, used, want);
					s->score_for[0] = want[0];
					s->score_for[1] = want[1];
				}
				int64_t score = s->score;
				tie(ties, n, score, best_score);
				if (score > best_score) {
					best = n;
					best_score = score;
				}
				continue;
			}
			if (reasons) {
				unsigned m = s->n_pods < (size_t)(s->max_pods > 0 ? s->max_pods : 0) ? 0 : F_PODS;
				for (int k = 0; k < N_CORE_RES && !p->zero_request; k++)
					if (p->req[k] > 0 && p->req[k] > s->free[k])
						m |= plain_bits[k];
				plain_fails[(m & F_PODS ? 1 : 0) | (m & F_CPU ? 2 : 0) | (m & F_MEMORY ? 4 : 0) |
				            (m & F_EPHEMERAL ? 8 : 0)]++;
			}
			continue;
		}
		if (pp__filter_node(&x, n, false, &f)) {
			/* Reasons cost string work on every failing node: gathered only when asked. */
			if (reasons) {
				reasons->rejectors |= rejectors_of(f.mask);
				pp__filter_reasons(c, &f, pp__sfit_reasons_collect, reasons);
				if (reasons->err < 0) {
					r = reasons->err;
					break;
				}
			}
			continue;
		}
		int64_t score = pp__score_least_allocated(p, n);
		tie(ties, n, score, best_score);
		if (score > best_score) { /* strictly: ties keep the smaller name (nodes are in name order) */
			best = n;
			best_score = score;
		}
	}
	for (unsigned b = 1; reasons && r >= 0 && b < 16; b++) {
		if (!plain_fails[b])
			continue;
		struct filter_failures f = { .mask = (b & 1 ? F_PODS : 0) | (b & 2 ? F_CPU : 0) | (b & 4 ? F_MEMORY : 0) |
		                          (b & 8 ? F_EPHEMERAL : 0) };
		struct collect_n cn = { reasons, plain_fails[b] };
		reasons->rejectors |= rejectors_of(f.mask);
		pp__filter_reasons(c, &f, collect_n, &cn);
		r = reasons->err;
	}
	pp__filter_done(&x);
	if (r >= 0 && ties)
		r = ties->err;
	if (r < 0)
		return r;
	*ret_node = best ? best->name : NULL;
	return 0;
}

int pp__sfit_select_node(const pp_cluster *c, const char *ns, const char *name, const char **ret_node,
                         struct sfit_reasons *reasons)
{
	return select_node(c, ns, name, ret_node, reasons, NULL);
}

int pp_cluster_bind_nodes(const pp_cluster *c, const char *ns, const char *name,
                          void (*fn)(const char *node, void *userdata), void *userdata, pp_err *err)
{
	const struct pod *p = c && ns && name ? pp__cluster_find_pod(c, ns, name) : NULL;
	struct ties t = { 0 };
	const char *best;
	bool fits = false;
	int r;

	if (!p)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	if (p->node)
		return pp_fail(err, -EINVAL, "pods/%s/%s: already bound to %s", p->ns, p->name, p->node->name);
	/* the cycle tries the nominated node first and takes it when the pod fits */
	if (p->nominated && pp__sfit_fits_on(c, ns, name, p->nominated->name, false, &fits) >= 0 && fits) {
		if (fn)
			fn(p->nominated->name, userdata);
		return 1;
	}
	r = select_node(c, ns, name, &best, NULL, &t);
	if (r < 0) {
		free(t.v);
		return pp_fail(err, r, "out of memory");
	}
	size_t n = best ? t.n : 0;
	for (size_t i = 0; i < n && fn; i++)
		fn(t.v[i]->name, userdata);
	free(t.v);
	return (int)(n > INT32_MAX ? INT32_MAX : n);
}
