/* SPDX-License-Identifier: MIT */
/*
 * The cluster model: nodes, pods and PDBs with per-node aggregates (pods in importance order,
 * prefix sums of their requests, scalar sums, nominated pods) kept current on every mutation.
 *
 * Why one file of over 700 lines: every mutation (a node, a pod, a PDB added, updated, bound,
 * nominated, removed) must leave all of these aggregates, the PDB membership of pods, the node
 * summaries (struct nsum) and the preemption cache's notice consistent with each other, and those
 * invariants are kept by the static helpers of this file alone. Split by object kind, the helpers
 * that keep them (slot order, prefix sums, summary refresh) would have to be exported to each
 * part, and a mutation could then change an aggregate without the rest. What does not touch them
 * lives below: change.c (what an update changes), spec_copy.c (copies of specs), select.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cluster.h"
#include "filter.h"
#include "pcache.h"
#include "pdb.h"
#include "select.h"
#include "spec_copy.h"
#include "strmap.h"

/* ----------------------------------------------------------------------------------------- */

int pp_cluster_new(pp_cluster **ret)
{
	if (!ret)
		return -EINVAL;
	pp_cluster *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->max_start = INT64_MIN;
	c->pcache = pp__pcache_new();
	if (!c->pcache) {
		free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

static void node_free(struct node *n)
{
	if (!n)
		return;
	free(n->slots);
	free(n->psum);
	free(n->req_scalar);
	free(n->nominated);
	pp__arena_done(&n->arena);
	free(n);
}

static void pod_free(struct pod *p)
{
	if (!p)
		return;
	free(p->pdbs);
	pp__arena_done(&p->arena);
	free(p);
}

static void pdb_free(struct pdb *p)
{
	if (!p)
		return;
	pp__arena_done(&p->arena);
	free(p);
}

pp_cluster *pp_cluster_free(pp_cluster *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n_pods; i++)
		pod_free(c->pods[i]);
	for (size_t i = 0; i < c->n_nodes; i++)
		node_free(c->nodes[i]);
	for (size_t i = 0; i < c->n_pdbs; i++)
		pdb_free(c->pdbs[i]);
	for (size_t i = 0; i < c->n_res; i++)
		free(c->res_names[i]);
	free(c->res_names);
	free(c->pods);
	free(c->nodes);
	free(c->pdbs);
	pp__strmap_done(&c->node_map);
	pp__strmap_done(&c->pod_map);
	pp__strmap_done(&c->pdb_map);
	pp__strmap_done(&c->res_map);
	pp__pcache_free(c->pcache);
	free(c->sum);
	free(c);
	return NULL;
}

/* ----------------------------------------------------------------------------------------- */
/* Nodes */

static int node_fill(pp_cluster *c, struct node *n, const pp_node_spec *spec, pp_err *err)
{
	char what[600];
	int r;

	if (!pp__copy_str(&n->arena, spec->name, &n->name))
		return -ENOMEM;
	snprintf(what, sizeof(what), "nodes/%.200s: metadata.labels", spec->name);
	r = pp__copy_labels(&n->arena, spec->labels, spec->n_labels, &n->labels, what, err);
	if (r < 0)
		return r;
	n->n_labels = spec->n_labels;
	if (spec->n_taints && !spec->taints)
		return pp_fail(err, -EINVAL, "nodes/%.200s: spec.taints: NULL array", spec->name);
	if (spec->n_taints) {
		n->taints = pp__arena_alloc(&n->arena, spec->n_taints * sizeof(*n->taints));
		if (!n->taints)
			return -ENOMEM;
	}
	for (size_t i = 0; i < spec->n_taints; i++) {
		const pp_taint *t = &spec->taints[i];
		if (!t->key || !*t->key)
			return pp_fail(err, -EINVAL, "nodes/%.200s: spec.taints[%zu].key: Required value", spec->name, i);
		if (t->effect < PP_EFFECT_NO_SCHEDULE || t->effect > PP_EFFECT_NO_EXECUTE)
			return pp_fail(err, -EINVAL, "nodes/%.200s: spec.taints[%zu].effect: Unsupported value", spec->name, i);
		n->taints[i].effect = t->effect;
		if (!pp__copy_str(&n->arena, t->key, &n->taints[i].key) || !pp__copy_str(&n->arena, t->value, &n->taints[i].value))
			return -ENOMEM;
	}
	n->n_taints = spec->n_taints;
	snprintf(what, sizeof(what), "nodes/%.200s: status.allocatable", spec->name);
	r = pp__copy_resources(c, &n->arena, spec->allocatable, spec->n_allocatable, n->alloc, &n->max_pods,
	                   &n->alloc_scalar, &n->n_alloc_scalar, what, err);
	if (r < 0)
		return r;
	n->unschedulable = spec->unschedulable;
	return 0;
}

static struct node *find_node(const pp_cluster *c, const char *name)
{
	return name ? pp__strmap_get(&c->node_map, name) : NULL;
}

struct node *pp__cluster_find_node(const pp_cluster *c, const char *name)
{
	return find_node(c, name);
}

int pp_cluster_add_node(pp_cluster *c, const pp_node_spec *spec, pp_err *err)
{
	if (!c || !spec)
		return -EINVAL;
	if (!pp__valid_name(spec->name))
		return pp_fail(err, -EINVAL, "node: metadata.name: Required value");
	if (find_node(c, spec->name))
		return pp_fail(err, -EEXIST, "nodes/%.200s: already exists", spec->name);
	if (pp__grow((void **)&c->nodes, &c->cap_nodes, c->n_nodes + 1, sizeof(*c->nodes)) < 0 ||
	    pp__grow((void **)&c->sum, &c->cap_sum, c->n_nodes + 1, sizeof(*c->sum)) < 0)
		return -ENOMEM;
	struct node *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->psum = calloc(1, sizeof(*n->psum));
	int r = n->psum ? node_fill(c, n, spec, err) : -ENOMEM;
	if (r >= 0)
		r = pp__strmap_put(&c->node_map, n->name, n);
	if (r < 0) {
		node_free(n);
		return r;
	}
	/* Name order, so that every scan meets nodes in the order the tie-breaks want. */
	size_t lo = 0, hi = c->n_nodes;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(c->nodes[mid]->name, n->name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(c->nodes + lo + 1, c->nodes + lo, (c->n_nodes - lo) * sizeof(*c->nodes));
	memmove(c->sum + lo + 1, c->sum + lo, (c->n_nodes - lo) * sizeof(*c->sum));
	c->nodes[lo] = n;
	c->n_nodes++;
	for (size_t i = lo; i < c->n_nodes; i++)
		c->nodes[i]->idx = i;
	pp__pcache_reset(c); /* indices moved */
	pp__node_changed(c, n);
	return 0;
}

int pp__cluster_update_node(pp_cluster *c, const pp_node_spec *spec, pp_err *err, bool *ret_changed)
{
	if (!c || !spec)
		return -EINVAL;
	struct node *n = find_node(c, spec->name);
	if (!n)
		return pp_fail(err, -ENOENT, "nodes/%.200s: not found", spec->name ? spec->name : "");
	/* Fill a scratch node first so that a rejected update leaves the node as it was. */
	struct node tmp = { 0 };
	int r = node_fill(c, &tmp, spec, err);
	if (r < 0) {
		pp__arena_done(&tmp.arena);
		return r;
	}
	*ret_changed = n->absent || !pp__node_same(n, &tmp);
	if (n->absent) { /* its Node object is back */
		n->absent = false;
		c->n_absent--;
	}
	if (!*ret_changed) {
		/* a heartbeat: the node's cached preemption result still holds */
		pp__arena_done(&tmp.arena);
		return 0;
	}
	pp__strmap_remove(&c->node_map, n->name);
	pp__arena_done(&n->arena);
	n->arena = tmp.arena;
	n->name = tmp.name;
	n->labels = tmp.labels;
	n->n_labels = tmp.n_labels;
	n->taints = tmp.taints;
	n->n_taints = tmp.n_taints;
	memcpy(n->alloc, tmp.alloc, sizeof(n->alloc));
	n->max_pods = tmp.max_pods;
	n->alloc_scalar = tmp.alloc_scalar;
	n->n_alloc_scalar = tmp.n_alloc_scalar;
	n->unschedulable = tmp.unschedulable;
	pp__node_changed(c, n);
	/* cannot fail: the key was present a moment ago, so there is room */
	return pp__strmap_put(&c->node_map, n->name, n);
}

int pp__cluster_set_node_absent(pp_cluster *c, const char *name, bool absent)
{
	struct node *n = c && name ? find_node(c, name) : NULL;

	if (!n)
		return -ENOENT;
	if (n->absent == absent)
		return 0;
	n->absent = absent;
	if (absent)
		c->n_absent++;
	else
		c->n_absent--;
	pp__node_changed(c, n);
	return 0;
}

int pp_cluster_update_node(pp_cluster *c, const pp_node_spec *spec, pp_err *err)
{
	bool changed;
	return pp__cluster_update_node(c, spec, err, &changed);
}

int pp_cluster_remove_node(pp_cluster *c, const char *name, pp_err *err)
{
	if (!c || !name)
		return -EINVAL;
	struct node *n = find_node(c, name);
	if (!n)
		return pp_fail(err, -ENOENT, "nodes/%.200s: not found", name);
	if (n->n_pods || n->n_nominated)
		return pp_fail(err, -EBUSY, "nodes/%.200s: %zu pod(s) are bound or nominated to it", name,
		               n->n_pods + n->n_nominated);
	pp__strmap_remove(&c->node_map, n->name);
	if (n->absent)
		c->n_absent--;
	size_t i = n->idx;
	memmove(c->nodes + i, c->nodes + i + 1, (c->n_nodes - i - 1) * sizeof(*c->nodes));
	memmove(c->sum + i, c->sum + i + 1, (c->n_nodes - i - 1) * sizeof(*c->sum));
	c->n_nodes--;
	for (; i < c->n_nodes; i++)
		c->nodes[i]->idx = i;
	pp__pcache_reset(c); /* indices moved */
	node_free(n);
	return 0;
}

/* ----------------------------------------------------------------------------------------- */
/* Per-node aggregates */

static bool fits_int64(i128 v)
{
	return v >= INT64_MIN && v <= INT64_MAX;
}

static void node_sum_update(const pp_cluster *c, const struct node *n)
{
	struct nsum *s = &c->sum[n->idx];
	*s = (struct nsum){ .max_pods = n->max_pods, .max_start = INT64_MIN, .slots = n->slots,
		            .psum = (const i128(*)[N_CORE_RES])n->psum, .n_pods = n->n_pods,
		            .min_prio = n->min_prio, .max_prio = n->max_prio };
	bool general = n->unschedulable || n->absent || n->n_nominated;
	for (size_t i = 0; i < n->n_taints; i++)
		general |= n->taints[i].effect != PP_EFFECT_PREFER_NO_SCHEDULE;
	for (int k = 0; k < N_CORE_RES; k++) {
		i128 f = (i128)n->alloc[k] - n->req_total[k];
		general |= !fits_int64(f);
		s->free[k] = fits_int64(f) ? (int64_t)f : 0;
		s->alloc[k] = n->alloc[k];
	}
	for (int k = RES_CPU; k <= RES_MEMORY; k++) {
		general |= !fits_int64(n->nonzero_total[k]);
		s->nz_used[k] = fits_int64(n->nonzero_total[k]) ? (int64_t)n->nonzero_total[k] : 0;
	}
	for (size_t i = 0; i < n->n_pods; i++) {
		const struct slot *sl = &n->slots[i];
		for (int k = 0; k < N_CORE_RES; k++)
			if (sl->req[k] > s->max_req[k])
				s->max_req[k] = sl->req[k];
		if (sl->has_start && sl->start > s->max_start)
			s->max_start = sl->start;
		general |= sl->pod->stuck; /* not a victim although of lower priority */
	}
	for (size_t j = 0; j < NS_TAIL && j < n->n_pods; j++) {
		const struct slot *sl = &n->slots[n->n_pods - 1 - j];
		s->tail_start[j] = sl->start;
		s->tail_nostart |= (unsigned)!sl->has_start << j;
	}
	s->flags = (general ? NS_GENERAL : 0) | (n->n_pdb_pods || n->n_protected ? NS_PDB : 0) |
	           (n->n_nostart ? NS_NOSTART : 0);
}

void pp__node_changed(const pp_cluster *c, const struct node *n)
{
	node_sum_update(c, n);
	pp__pcache_node_changed(c, n);
}

/* Stored order: "no start time" sorts after every start time (it means "now"); pp__slot_cmp_now()
 * gives the exact order for a given now, which equals this one whenever now > every start. */
static int slot_cmp_stored(const struct slot *a, const struct slot *b)
{
	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->has_start != b->has_start)
		return a->has_start ? -1 : 1;
	if (a->has_start && a->start != b->start)
		return a->start < b->start ? -1 : 1;
	int r = strcmp(a->pod->ns, b->pod->ns);
	return r ? r : strcmp(a->pod->name, b->pod->name);
}

int pp__slot_cmp_now(const struct slot *a, const struct slot *b, int64_t now)
{
	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	int64_t sa = a->has_start ? a->start : now, sb = b->has_start ? b->start : now;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	int r = strcmp(a->pod->ns, b->pod->ns);
	return r ? r : strcmp(a->pod->name, b->pod->name);
}

static void recompute_psum(struct node *n, size_t from)
{
	for (size_t i = from; i < n->n_pods; i++)
		for (int k = 0; k < N_CORE_RES; k++)
			n->psum[i + 1][k] = n->psum[i][k] + n->slots[i].req[k];
	memcpy(n->req_total, n->psum[n->n_pods], sizeof(n->req_total));
	if (n->n_pods) {
		n->max_prio = n->slots[0].prio;
		n->min_prio = n->slots[n->n_pods - 1].prio;
	}
}

/* n->req_scalar stays sorted by id, like every pod's scalar list (pp__copy_resources), so adding a
 * pod is a merge and lookups are binary searches: a pod with 10^5 extended resources on a node
 * with as many costs n log n, not n^2. */
static int req_scalar_add(struct node *n, const struct pod *p, int sign)
{
	size_t added = 0;
	for (size_t i = 0, j = 0; i < p->n_scalar; i++) {
		while (j < n->n_req_scalar && n->req_scalar[j].id < p->scalar[i].id)
			j++;
		if (j < n->n_req_scalar && n->req_scalar[j].id == p->scalar[i].id)
			n->req_scalar[j].value += sign * (i128)p->scalar[i].value;
		else
			added++;
	}
	if (added == 0)
		return 0;
	if (pp__grow((void **)&n->req_scalar, &n->cap_req_scalar, n->n_req_scalar + added, sizeof(*n->req_scalar)) < 0)
		return -ENOMEM;
	/* Merge the new ids in from the back; ids already present were summed above. */
	size_t w = n->n_req_scalar + added, j = n->n_req_scalar, i = p->n_scalar;
	while (w > j) {
		const struct sres *ps = &p->scalar[i - 1];
		if (j > 0 && n->req_scalar[j - 1].id >= ps->id) {
			if (n->req_scalar[j - 1].id == ps->id)
				i--;
			n->req_scalar[--w] = n->req_scalar[--j];
		} else {
			n->req_scalar[--w] = (struct sres128){ .id = ps->id, .value = sign * (i128)ps->value };
			i--;
		}
	}
	n->n_req_scalar += added;
	return 0;
}

static int node_attach(pp_cluster *c, struct node *n, struct pod *p)
{
	/* reserve everything before changing anything, so that failure leaves no trace (but for
	 * moved arrays, which the summary points into) */
	int r = pp__grow((void **)&n->slots, &n->cap_pods, n->n_pods + 1, sizeof(*n->slots));
	if (r >= 0) {
		i128(*ps)[N_CORE_RES] = realloc(n->psum, (n->n_pods + 2) * sizeof(*n->psum));
		if (ps)
			n->psum = ps;
		else
			r = -ENOMEM;
	}
	if (r >= 0)
		r = pp__grow((void **)&n->req_scalar, &n->cap_req_scalar, n->n_req_scalar + p->n_scalar,
		         sizeof(*n->req_scalar));
	if (r < 0) {
		node_sum_update(c, n);
		return r;
	}
	struct slot s = { .prio = p->priority, .has_start = p->has_start, .start = p->start, .pod = p };
	memcpy(s.req, p->req, sizeof(s.req));
	size_t lo = 0, hi = n->n_pods;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (slot_cmp_stored(&n->slots[mid], &s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(n->slots + lo + 1, n->slots + lo, (n->n_pods - lo) * sizeof(*n->slots));
	n->slots[lo] = s;
	n->n_pods++;
	recompute_psum(n, lo);
	(void)req_scalar_add(n, p, +1); /* room reserved above */
	p->node = n;
	n->n_pdb_pods += p->n_pdbs > 0;
	n->n_protected += p->protected_;
	n->n_nostart += !p->has_start;
	for (int k = RES_CPU; k <= RES_MEMORY; k++)
		n->nonzero_total[k] += pp__pod_nonzero_request(p, k);
	pp__node_changed(c, n);
	if (p->n_anti_affinity) {
		n->n_anti++;
		c->n_anti++;
	}
	return 0;
}

static void node_detach(pp_cluster *c, struct pod *p)
{
	struct node *n = p->node;
	size_t i = 0;
	while (i < n->n_pods && n->slots[i].pod != p)
		i++;
	if (i == n->n_pods)
		return;
	memmove(n->slots + i, n->slots + i + 1, (n->n_pods - i - 1) * sizeof(*n->slots));
	n->n_pods--;
	recompute_psum(n, i);
	(void)req_scalar_add(n, p, -1); /* existing entries only: cannot allocate */
	n->n_pdb_pods -= p->n_pdbs > 0;
	n->n_protected -= p->protected_;
	n->n_nostart -= !p->has_start;
	for (int k = RES_CPU; k <= RES_MEMORY; k++)
		n->nonzero_total[k] -= pp__pod_nonzero_request(p, k);
	pp__node_changed(c, n);
	if (p->n_anti_affinity) {
		n->n_anti--;
		c->n_anti--;
	}
	p->node = NULL;
}

static int nominate(pp_cluster *c, struct node *n, struct pod *p)
{
	if (pp__grow((void **)&n->nominated, &n->cap_nominated, n->n_nominated + 1, sizeof(*n->nominated)) < 0)
		return -ENOMEM;
	p->nom_idx = n->n_nominated;
	n->nominated[n->n_nominated++] = p;
	p->nominated = n;
	c->n_nom_anti += p->n_anti_affinity > 0;
	pp__node_changed(c, n);
	return 0;
}

static void unnominate(pp_cluster *c, struct pod *p)
{
	struct node *n = p->nominated;
	if (!n)
		return;
	c->n_nom_anti -= p->n_anti_affinity > 0;
	n->nominated[p->nom_idx] = n->nominated[--n->n_nominated];
	n->nominated[p->nom_idx]->nom_idx = p->nom_idx;
	p->nominated = NULL;
	pp__node_changed(c, n);
}

/* ----------------------------------------------------------------------------------------- */
/* PDB membership (preemption sense) */

static int pod_add_pdb(pp_cluster *c, struct pod *p, struct pdb *b)
{
	struct pdb **v = realloc(p->pdbs, (p->n_pdbs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->pdbs = v;
	p->pdbs[p->n_pdbs++] = b;
	if (p->n_pdbs == 1 && p->node)
		p->node->n_pdb_pods++;
	if (p->node)
		pp__node_changed(c, p->node);
	return 0;
}

static int pod_match_pdbs(pp_cluster *c, struct pod *p)
{
	for (size_t i = 0; i < c->n_pdbs; i++)
		if (pp__pdb_matches_pod(c->pdbs[i], p)) {
			int r = pod_add_pdb(c, p, c->pdbs[i]);
			if (r < 0)
				return r;
		}
	return 0;
}

/* ----------------------------------------------------------------------------------------- */
/* Pods */

/* Pods and PDBs are keyed by ns "\x1f" name. */
static void *find_namespaced(const struct strmap *m, const char *ns, const char *name)
{
	char key[520];
	size_t a, b;
	if (!ns || !name || (a = strlen(ns)) + (b = strlen(name)) + 2 > sizeof(key))
		return NULL;
	memcpy(key, ns, a);
	key[a] = '\x1f';
	memcpy(key + a + 1, name, b + 1);
	return pp__strmap_get(m, key);
}

static struct pod *find_pod(const pp_cluster *c, const char *ns, const char *name)
{
	return find_namespaced(&c->pod_map, ns, name);
}

/* spec.tolerations into p's arena, validated. */
static int pod_copy_tolerations(struct pod *p, const pp_pod_spec *spec, const char *id, pp_err *err)
{
	if (spec->n_tolerations && !spec->tolerations)
		return pp_fail(err, -EINVAL, "%s: spec.tolerations: NULL array", id);
	if (spec->n_tolerations) {
		p->tolerations = pp__arena_alloc(&p->arena, spec->n_tolerations * sizeof(*p->tolerations));
		if (!p->tolerations)
			return -ENOMEM;
	}
	for (size_t i = 0; i < spec->n_tolerations; i++) {
		const pp_toleration *t = &spec->tolerations[i];
		if (t->op != PP_TOLERATION_EQUAL && t->op != PP_TOLERATION_EXISTS)
			return pp_fail(err, -EINVAL, "%s: spec.tolerations[%zu].operator: Unsupported value", id, i);
		if (t->effect > PP_EFFECT_NO_EXECUTE)
			return pp_fail(err, -EINVAL, "%s: spec.tolerations[%zu].effect: Unsupported value", id, i);
		p->tolerations[i] = (pp_toleration){ .op = t->op, .effect = t->effect };
		if (!pp__copy_str(&p->arena, t->key, &p->tolerations[i].key) ||
		    !pp__copy_str(&p->arena, t->value, &p->tolerations[i].value))
			return -ENOMEM;
	}
	p->n_tolerations = spec->n_tolerations;
	return 0;
}

/* The required node affinity's terms into p's arena, validated. */
static int pod_copy_node_affinity(struct pod *p, const pp_pod_spec *spec, const char *id, pp_err *err)
{
	char what[1200];
	int r;

	if (spec->n_node_affinity && !spec->node_affinity)
		return pp_fail(err, -EINVAL, "%s: nodeSelectorTerms: NULL array", id);
	if (spec->has_node_affinity && spec->n_node_affinity) {
		p->node_affinity = pp__arena_alloc(&p->arena, spec->n_node_affinity * sizeof(*p->node_affinity));
		if (!p->node_affinity)
			return -ENOMEM;
		for (size_t i = 0; i < spec->n_node_affinity; i++) {
			const pp_node_selector_term *t = &spec->node_affinity[i];
			snprintf(what, sizeof(what),
			         "%s: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
			         "nodeSelectorTerms[%zu].matchExpressions", id, i);
			r = pp__copy_requirements(&p->arena, t->match_expressions, t->n_match_expressions, true,
			                      &p->node_affinity[i].match_expressions, what, err);
			if (r < 0)
				return r;
			p->node_affinity[i].n_match_expressions = t->n_match_expressions;
			snprintf(what, sizeof(what),
			         "%s: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
			         "nodeSelectorTerms[%zu].matchFields", id, i);
			r = pp__copy_requirements(&p->arena, t->match_fields, t->n_match_fields, true,
			                      &p->node_affinity[i].match_fields, what, err);
			if (r < 0)
				return r;
			p->node_affinity[i].n_match_fields = t->n_match_fields;
		}
		p->n_node_affinity = spec->n_node_affinity;
	}
	return 0;
}

static int pod_build(pp_cluster *c, const pp_pod_spec *spec, struct pod **ret, pp_err *err)
{
	char what[1200], id[600];
	int r;

	if (!pp__valid_name(spec->name) || !pp__valid_name(spec->namespace_) || strlen(spec->namespace_) > 63)
		return pp_fail(err, -EINVAL, "pod: metadata.name and metadata.namespace are required (\"%.100s/%.100s\")",
		               spec->namespace_ ? spec->namespace_ : "", spec->name ? spec->name : "");
	snprintf(id, sizeof(id), "pods/%s/%s", spec->namespace_, spec->name);
	if (spec->preemption_policy != PP_PREEMPT_LOWER_PRIORITY && spec->preemption_policy != PP_PREEMPT_NEVER)
		return pp_fail(err, -EINVAL, "%s: spec.preemptionPolicy: Unsupported value", id);

	struct pod *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	char *key = pp__arena_alloc(&p->arena, strlen(spec->namespace_) + strlen(spec->name) + 2);
	if (!key) {
		r = -ENOMEM;
		goto free_pod;
	}
	sprintf(key, "%s\x1f%s", spec->namespace_, spec->name);
	p->key = key;
	if (!pp__copy_str(&p->arena, spec->namespace_, &p->ns) || !pp__copy_str(&p->arena, spec->name, &p->name)) {
		r = -ENOMEM;
		goto free_pod;
	}
	snprintf(what, sizeof(what), "%s: metadata.labels", id);
	r = pp__copy_labels(&p->arena, spec->labels, spec->n_labels, &p->labels, what, err);
	if (r < 0)
		goto free_pod;
	p->n_labels = spec->n_labels;
	p->priority = spec->priority;
	p->policy = spec->preemption_policy;
	snprintf(what, sizeof(what), "%s: requests", id);
	r = pp__copy_resources(c, &p->arena, spec->requests, spec->n_requests, p->req, NULL, &p->scalar, &p->n_scalar, what,
	                   err);
	if (r < 0)
		goto free_pod;
	p->zero_request = p->req[RES_CPU] == 0 && p->req[RES_MEMORY] == 0 && p->req[RES_EPHEMERAL] == 0 &&
	                  p->n_scalar == 0;
	p->has_start = spec->has_start_time;
	p->start = spec->start_time_ns;
	p->terminating = spec->terminating;
	p->deletion = spec->deletion_time_ns;
	p->preempted_by_scheduler = spec->preempted_by_scheduler;
	p->not_ready = spec->not_ready;
	p->grace = spec->termination_grace_period_s;
	r = pod_copy_tolerations(p, spec, id, err);
	if (r < 0)
		goto free_pod;
	/* the messages' prefixes cost a printf each: only for fields that are there (most pods have
	 * no selector or affinity, and a snapshot has tens of thousands of pods) */
	if (spec->n_node_selector)
		snprintf(what, sizeof(what), "%s: spec.nodeSelector", id);
	r = pp__copy_labels(&p->arena, spec->node_selector, spec->n_node_selector, &p->node_selector, what, err);
	if (r < 0)
		goto free_pod;
	p->n_node_selector = spec->n_node_selector;
	p->has_node_affinity = spec->has_node_affinity;
	r = pod_copy_node_affinity(p, spec, id, err);
	if (r < 0)
		goto free_pod;
	if (spec->n_affinity)
		snprintf(what, sizeof(what), "%s: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution",
		         id);
	r = pp__copy_affinity_terms(&p->arena, spec->affinity, spec->n_affinity, &p->affinity, what, err);
	if (r < 0)
		goto free_pod;
	p->n_affinity = spec->n_affinity;
	if (spec->n_anti_affinity)
		snprintf(what, sizeof(what), "%s: spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution",
		         id);
	r = pp__copy_affinity_terms(&p->arena, spec->anti_affinity, spec->n_anti_affinity, &p->anti_affinity, what, err);
	if (r < 0)
		goto free_pod;
	p->n_anti_affinity = spec->n_anti_affinity;
	*ret = p;
	return 0;
free_pod:
	pod_free(p);
	return r;
}

/* Links a built pod into the cluster; on failure nothing is linked. */
static int pod_link(pp_cluster *c, struct pod *p, const pp_pod_spec *spec, pp_err *err)
{
	struct node *bound = NULL, *nom = NULL;
	int r;

	if (spec->node_name && *spec->node_name) {
		bound = find_node(c, spec->node_name);
		if (!bound)
			return pp_fail(err, -ENOENT, "pods/%s/%s: spec.nodeName: node \"%.200s\" not found", p->ns, p->name,
			               spec->node_name);
	} else if (spec->nominated_node_name && *spec->nominated_node_name) {
		nom = find_node(c, spec->nominated_node_name);
		if (!nom)
			return pp_fail(err, -ENOENT, "pods/%s/%s: status.nominatedNodeName: node \"%.200s\" not found", p->ns,
			               p->name, spec->nominated_node_name);
	}
	if (pp__grow((void **)&c->pods, &c->cap_pods, c->n_pods + 1, sizeof(*c->pods)) < 0)
		return -ENOMEM;
	r = pod_match_pdbs(c, p);
	if (r < 0)
		return r;
	r = pp__strmap_put(&c->pod_map, p->key, p);
	if (r < 0)
		return r;
	if (bound)
		r = node_attach(c, bound, p);
	else if (nom)
		r = nominate(c, nom, p);
	if (r < 0) {
		pp__strmap_remove(&c->pod_map, p->key);
		return r;
	}
	p->idx = c->n_pods;
	c->pods[c->n_pods++] = p;
	c->n_stuck += p->stuck;
	if (p->has_start) {
		c->any_start = true;
		if (p->start > c->max_start)
			c->max_start = p->start;
	}
	return 0;
}

static void pod_unlink(pp_cluster *c, struct pod *p)
{
	c->n_stuck -= p->stuck;
	if (p->node)
		node_detach(c, p);
	unnominate(c, p);
	pp__strmap_remove(&c->pod_map, p->key);
	c->pods[p->idx] = c->pods[--c->n_pods];
	c->pods[p->idx]->idx = p->idx;
}

int pp_cluster_add_pod(pp_cluster *c, const pp_pod_spec *spec, pp_err *err)
{
	struct pod *p = NULL;
	int r;

	if (!c || !spec)
		return -EINVAL;
	if (find_pod(c, spec->namespace_, spec->name))
		return pp_fail(err, -EEXIST, "pods/%.100s/%.100s: already exists", spec->namespace_, spec->name);
	r = pod_build(c, spec, &p, err);
	if (r < 0)
		return r;
	r = pod_link(c, p, spec, err);
	if (r < 0)
		pod_free(p);
	return r;
}

int pp__cluster_update_pod(pp_cluster *c, const pp_pod_spec *spec, pp_err *err, enum pp__change *ret_change)
{
	struct pod *p = NULL;
	int r;

	if (!c || !spec)
		return -EINVAL;
	struct pod *old = find_pod(c, spec->namespace_, spec->name);
	if (!old)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", spec->namespace_ ? spec->namespace_ : "",
		               spec->name ? spec->name : "");
	r = pod_build(c, spec, &p, err);
	if (r < 0)
		return r;
	*ret_change = pp__pod_compare(old, p, spec->node_name, spec->nominated_node_name);
	if (*ret_change == PP_CHANGE_NONE) {
		/* a status update the model does not keep: its node's cached results still hold */
		pod_free(p);
		return 0;
	}
	p->protected_ = old->protected_; /* what the API server refused stays refused */
	/* what the scheduler concluded of a pod stuck terminating holds while it still terminates */
	p->stuck = old->stuck && p->terminating;
	pod_unlink(c, old);
	r = pod_link(c, p, spec, err);
	if (r < 0) {
		pod_free(p);
		/* Re-linking the old pod only needs memory that was just released. */
		struct node *n = old->node;
		old->node = NULL;
		struct node *nom = old->nominated;
		old->nominated = NULL;
		free(old->pdbs);
		old->pdbs = NULL;
		old->n_pdbs = 0;
		pp_pod_spec back = { .node_name = n ? n->name : NULL, .nominated_node_name = nom ? nom->name : NULL };
		if (pod_link(c, old, &back, NULL) < 0)
			pod_free(old);
		return r;
	}
	pod_free(old);
	return 0;
}

int pp_cluster_update_pod(pp_cluster *c, const pp_pod_spec *spec, pp_err *err)
{
	enum pp__change change;
	return pp__cluster_update_pod(c, spec, err, &change);
}

int pp__cluster_set_pod_state(pp_cluster *c, const char *ns, const char *name, const pp_pod_state *st, pp_err *err,
                              enum pp__change *ret_change)
{
	if (!c || !st)
		return -EINVAL;
	const struct pod *p = find_pod(c, ns, name);
	if (!p)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	/* The pod as it is, but for its state: the strings stay valid while the update copies them. */
	pp_resource req[N_CORE_RES + 64];
	size_t n_req = 0;
	static const char *const core_names[N_CORE_RES] = { PP_RESOURCE_CPU, PP_RESOURCE_MEMORY,
	                                                    PP_RESOURCE_EPHEMERAL_STORAGE };
	if (p->n_scalar > 64)
		return pp_fail(err, -E2BIG, "pods/%s/%s: too many extended resources to restate", p->ns, p->name);
	for (size_t i = 0; i < N_CORE_RES; i++)
		if (p->req[i])
			req[n_req++] = (pp_resource){ core_names[i], p->req[i] };
	for (size_t i = 0; i < p->n_scalar; i++)
		req[n_req++] = (pp_resource){ c->res_names[p->scalar[i].id], p->scalar[i].value };
	pp_pod_spec spec = {
		.namespace_ = p->ns, .name = p->name, .labels = p->labels, .n_labels = p->n_labels,
		.priority = p->priority, .preemption_policy = p->policy, .requests = req, .n_requests = n_req,
		.node_name = st->node_name, .nominated_node_name = st->nominated_node_name,
		.has_start_time = st->has_start_time, .start_time_ns = st->start_time_ns,
		.terminating = st->terminating, .deletion_time_ns = st->deletion_time_ns,
		.preempted_by_scheduler = st->preempted_by_scheduler, .not_ready = st->not_ready,
		.termination_grace_period_s = p->grace, .tolerations = p->tolerations, .n_tolerations = p->n_tolerations,
		.node_selector = p->node_selector, .n_node_selector = p->n_node_selector,
		.has_node_affinity = p->has_node_affinity, .node_affinity = p->node_affinity,
		.n_node_affinity = p->n_node_affinity, .affinity = p->affinity, .n_affinity = p->n_affinity,
		.anti_affinity = p->anti_affinity, .n_anti_affinity = p->n_anti_affinity,
	};
	return pp__cluster_update_pod(c, &spec, err, ret_change);
}

int pp_cluster_remove_pod(pp_cluster *c, const char *ns, const char *name, pp_err *err)
{
	if (!c)
		return -EINVAL;
	struct pod *p = find_pod(c, ns, name);
	if (!p)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	pod_unlink(c, p);
	pod_free(p);
	return 0;
}

int pp_cluster_bind_pod(pp_cluster *c, const char *ns, const char *name, const char *node, pp_err *err)
{
	if (!c)
		return -EINVAL;
	struct pod *p = find_pod(c, ns, name);
	if (!p)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	if (p->node)
		return pp_fail(err, -EBUSY, "pods/%s/%s: already bound to %s", p->ns, p->name, p->node->name);
	struct node *n = find_node(c, node);
	if (!n)
		return pp_fail(err, -ENOENT, "nodes/%.200s: not found", node ? node : "");
	int r = node_attach(c, n, p);
	if (r < 0)
		return r;
	unnominate(c, p);
	return 0;
}

int pp_cluster_set_nominated_node(pp_cluster *c, const char *ns, const char *name, const char *node, pp_err *err)
{
	if (!c)
		return -EINVAL;
	struct pod *p = find_pod(c, ns, name);
	if (!p)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	if (!node || !*node) {
		unnominate(c, p);
		return 0;
	}
	struct node *n = find_node(c, node);
	if (!n)
		return pp_fail(err, -ENOENT, "nodes/%.200s: not found", node);
	if (p->node)
		return pp_fail(err, -EBUSY, "pods/%s/%s: already bound to %s", p->ns, p->name, p->node->name);
	if (p->nominated == n)
		return 0;
	if (pp__grow((void **)&n->nominated, &n->cap_nominated, n->n_nominated + 1, sizeof(*n->nominated)) < 0)
		return -ENOMEM;
	unnominate(c, p);
	return nominate(c, n, p);
}

int pp_cluster_mark_terminating(pp_cluster *c, const char *ns, const char *name, int64_t deletion_time_ns,
                                bool by_preemption, pp_err *err)
{
	if (!c)
		return -EINVAL;
	struct pod *p = find_pod(c, ns, name);
	if (!p)
		return pp_fail(err, -ENOENT, "pods/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	if (!p->terminating)
		p->deletion = deletion_time_ns;
	if (p->node)
		pp__node_changed(c, p->node);
	if (p->nominated)
		pp__node_changed(c, p->nominated);
	p->terminating = true;
	p->preempted_by_scheduler |= by_preemption;
	return 0;
}

/* ----------------------------------------------------------------------------------------- */
/* PDBs */

static struct pdb *find_pdb(const pp_cluster *c, const char *ns, const char *name)
{
	return find_namespaced(&c->pdb_map, ns, name);
}

static int check_iop(const pp_int_or_percent *v, const char *id, const char *field, pp_err *err)
{
	if (v->kind > PP_IOP_PERCENT)
		return pp_fail(err, -EINVAL, "%s: spec.%s: invalid kind", id, field);
	if (v->kind != PP_IOP_UNSET && v->value < 0)
		return pp_fail(err, -EINVAL, "%s: spec.%s: Invalid value: %d: must be greater than or equal to 0", id, field,
		               (int)v->value);
	if (v->kind == PP_IOP_PERCENT && v->value > 100)
		return pp_fail(err, -EINVAL, "%s: spec.%s: Invalid value: \"%d%%\": must not be greater than 100%%", id,
		               field, (int)v->value);
	return 0;
}

/* A budget built from spec (validated, copied), not linked into the cluster. */
static int pdb_build(const pp_pdb_spec *spec, struct pdb **ret, pp_err *err)
{
	char id[600], what[700];
	int r;

	if (!pp__valid_name(spec->name) || !pp__valid_name(spec->namespace_) || strlen(spec->namespace_) > 63)
		return pp_fail(err, -EINVAL, "poddisruptionbudget: metadata.name and metadata.namespace are required");
	snprintf(id, sizeof(id), "poddisruptionbudgets/%s/%s", spec->namespace_, spec->name);
	r = check_iop(&spec->min_available, id, "minAvailable", err);
	if (r < 0)
		return r;
	r = check_iop(&spec->max_unavailable, id, "maxUnavailable", err);
	if (r < 0)
		return r;
	if (spec->min_available.kind != PP_IOP_UNSET && spec->max_unavailable.kind != PP_IOP_UNSET)
		return pp_fail(err, -EINVAL, "%s: spec: Invalid value: minAvailable and maxUnavailable cannot be both set", id);
	if (spec->n_disrupted_pods && !spec->disrupted_pods)
		return pp_fail(err, -EINVAL, "%s: status.disruptedPods: NULL array", id);

	struct pdb *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	char *key = pp__arena_alloc(&b->arena, strlen(spec->namespace_) + strlen(spec->name) + 2);
	if (!key || !pp__copy_str(&b->arena, spec->namespace_, &b->ns) || !pp__copy_str(&b->arena, spec->name, &b->name)) {
		r = -ENOMEM;
		goto free_pdb;
	}
	sprintf(key, "%s\x1f%s", spec->namespace_, spec->name);
	b->key = key;
	snprintf(what, sizeof(what), "%s: spec.selector", id);
	r = pp__copy_label_selector(&b->arena, &spec->selector, &b->selector, what, err);
	if (r < 0)
		goto free_pdb;
	b->preempt_selectable = b->selector.present && (b->selector.n_match_labels || b->selector.n_match_expressions);
	b->min_available = spec->min_available;
	b->max_unavailable = spec->max_unavailable;
	b->has_disruptions_allowed = spec->has_disruptions_allowed;
	b->disruptions_allowed = spec->disruptions_allowed;
	if (spec->n_disrupted_pods) {
		b->disrupted = pp__arena_alloc(&b->arena, spec->n_disrupted_pods * sizeof(*b->disrupted));
		if (!b->disrupted) {
			r = -ENOMEM;
			goto free_pdb;
		}
		for (size_t i = 0; i < spec->n_disrupted_pods; i++)
			if (!pp__copy_str(&b->arena, spec->disrupted_pods[i], &b->disrupted[i])) {
				r = -ENOMEM;
				goto free_pdb;
			}
		b->n_disrupted = spec->n_disrupted_pods;
	}
	*ret = b;
	return 0;
free_pdb:
	pdb_free(b);
	return r;
}

/* Links a built budget into the cluster: the pods it covers learn of it. */
static int pdb_link(pp_cluster *c, struct pdb *b)
{
	int r;

	if (pp__grow((void **)&c->pdbs, &c->cap_pdbs, c->n_pdbs + 1, sizeof(*c->pdbs)) < 0)
		return -ENOMEM;
	r = pp__strmap_put(&c->pdb_map, b->key, b);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_pods; i++)
		if (pp__pdb_matches_pod(b, c->pods[i]) && (r = pod_add_pdb(c, c->pods[i], b)) < 0) {
			for (size_t j = 0; j < i; j++) { /* undo */
				struct pod *q = c->pods[j];
				if (!q->n_pdbs || q->pdbs[q->n_pdbs - 1] != b)
					continue;
				if (--q->n_pdbs == 0 && q->node)
					q->node->n_pdb_pods--;
				if (q->node)
					pp__node_changed(c, q->node);
			}
			pp__strmap_remove(&c->pdb_map, b->key);
			return r;
		}
	b->idx = c->n_pdbs;
	c->pdbs[c->n_pdbs++] = b;
	return 0;
}

static bool requirements_equal(const pp_requirement *a, size_t na, const pp_requirement *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		if (a[i].op != b[i].op || strcmp(a[i].key, b[i].key) != 0 || a[i].n_values != b[i].n_values)
			return false;
		for (size_t k = 0; k < a[i].n_values; k++)
			if (strcmp(a[i].values[k], b[i].values[k]) != 0)
				return false;
	}
	return true;
}

/* Equal as written (the same labels and expressions in the same order). */
static bool selectors_equal(const pp_label_selector *a, const pp_label_selector *b)
{
	if (a->present != b->present || a->n_match_labels != b->n_match_labels)
		return false;
	for (size_t i = 0; i < a->n_match_labels; i++)
		if (strcmp(a->match_labels[i].key, b->match_labels[i].key) != 0 ||
		    strcmp(a->match_labels[i].value ? a->match_labels[i].value : "",
		           b->match_labels[i].value ? b->match_labels[i].value : "") != 0)
			return false;
	return requirements_equal(a->match_expressions, a->n_match_expressions, b->match_expressions,
	                          b->n_match_expressions);
}

/* Adds the budget of spec (update: replaces the one of its namespace and name). */
static int pdb_put(pp_cluster *c, const pp_pdb_spec *spec, bool update, pp_err *err)
{
	struct pdb *b = NULL, *old;
	int r;

	if (!c || !spec)
		return -EINVAL;
	r = pdb_build(spec, &b, err);
	if (r < 0)
		return r;
	old = find_pdb(c, b->ns, b->name);
	if (update ? !old : old != NULL) {
		r = update ? pp_fail(err, -ENOENT, "poddisruptionbudgets/%s/%s: not found", b->ns, b->name)
		           : pp_fail(err, -EEXIST, "poddisruptionbudgets/%s/%s: already exists", b->ns, b->name);
		pdb_free(b);
		return r;
	}
	if (old && selectors_equal(&old->selector, &b->selector)) {
		/* The status changed, as it does all the time: the same pods, the same nodes. The old
		 * record takes the new contents (pods point at it) and keeps its place; the old contents
		 * go with b. Budgets are read afresh by every decision and nodes with PDB pods are never
		 * cached: nothing to refresh. */
		struct pdb gone = *old;
		*old = *b;
		old->idx = gone.idx;
		*b = gone;
		/* the map's key points into the old arena: the entry takes the new key in place (found
		 * by comparing with the old one, still there: no allocation, cannot fail), then the old
		 * contents go */
		r = pp__strmap_put(&c->pdb_map, old->key, old);
		pdb_free(b);
		return r;
	}
	r = old ? pp_cluster_remove_pdb(c, b->ns, b->name, err) : 0;
	if (r >= 0)
		r = pdb_link(c, b);
	if (r < 0)
		pdb_free(b);
	return r;
}

int pp_cluster_add_pdb(pp_cluster *c, const pp_pdb_spec *spec, pp_err *err)
{
	return pdb_put(c, spec, false, err);
}

int pp_cluster_update_pdb(pp_cluster *c, const pp_pdb_spec *spec, pp_err *err)
{
	return pdb_put(c, spec, true, err);
}

int pp_cluster_remove_pdb(pp_cluster *c, const char *ns, const char *name, pp_err *err)
{
	if (!c)
		return -EINVAL;
	struct pdb *b = find_pdb(c, ns, name);
	if (!b)
		return pp_fail(err, -ENOENT, "poddisruptionbudgets/%.100s/%.100s: not found", ns ? ns : "", name ? name : "");
	for (size_t i = 0; i < c->n_pods; i++) {
		struct pod *p = c->pods[i];
		for (size_t j = 0; j < p->n_pdbs; j++)
			if (p->pdbs[j] == b) {
				memmove(p->pdbs + j, p->pdbs + j + 1, (p->n_pdbs - j - 1) * sizeof(*p->pdbs));
				if (--p->n_pdbs == 0 && p->node)
					p->node->n_pdb_pods--;
				if (p->node)
					pp__node_changed(c, p->node);
				break;
			}
	}
	pp__strmap_remove(&c->pdb_map, b->key);
	c->pdbs[b->idx] = c->pdbs[--c->n_pdbs];
	c->pdbs[b->idx]->idx = b->idx;
	pdb_free(b);
	return 0;
}

/* ----------------------------------------------------------------------------------------- */
/* Read access */

size_t pp_cluster_node_count(const pp_cluster *c)
{
	return c ? c->n_nodes : 0;
}

size_t pp_cluster_pod_count(const pp_cluster *c)
{
	return c ? c->n_pods : 0;
}

const char *pp_cluster_node_name(const pp_cluster *c, size_t i)
{
	return c && i < c->n_nodes ? c->nodes[i]->name : NULL;
}

void pp__pod_info_fill(const struct pod *p, pp_pod_info *ret)
{
	*ret = (pp_pod_info){
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
}

int pp_cluster_pod_info(const pp_cluster *c, const char *ns, const char *name, pp_pod_info *ret)
{
	if (!c || !ret)
		return -EINVAL;
	struct pod *p = find_pod(c, ns, name);
	if (!p)
		return -ENOENT;
	pp__pod_info_fill(p, ret);
	return 0;
}

int pp_cluster_pdb_disruptions_allowed(const pp_cluster *c, const char *ns, const char *name, int32_t *ret)
{
	if (!c || !ret)
		return -EINVAL;
	struct pdb *b = find_pdb(c, ns, name);
	if (!b)
		return -ENOENT;
	*ret = pp__pdb_disruptions_allowed(c, b);
	return 0;
}

const char *pp_cluster_node_label(const pp_cluster *c, const char *node, const char *key)
{
	const struct node *n = c && node && key ? find_node(c, node) : NULL;
	return n ? pp__labels_get(n->labels, n->n_labels, key) : NULL;
}

struct pod *pp__cluster_find_pod(const pp_cluster *c, const char *ns, const char *name)
{
	return find_pod(c, ns, name);
}

struct pdb *pp__cluster_find_pdb(const pp_cluster *c, const char *ns, const char *name)
{
	return find_pdb(c, ns, name);
}
