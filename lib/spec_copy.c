/* SPDX-License-Identifier: MIT */
/*
 * Deep copies of caller-owned spec fragments into a node's, pod's or PDB's arena, validated on the
 * way (empty keys, duplicates, negative quantities), and the resource-name interning that gives
 * scalar resources small ids. Shared by the node, pod and PDB mutations of the cluster model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "spec_copy.h"
#include "strmap.h"

/* ----------------------------------------------------------------------------------------- */
/* Deep copies of spec fragments, validated on the way. */

bool pp__copy_str(struct arena *a, const char *s, const char **ret)
{
	*ret = pp__arena_strdup(a, s ? s : "");
	return *ret != NULL;
}

/* Names repeated in a list: short lists (the usual case) compare with the names before, longer
 * ones go through a hash set, so that an object with 10^5 labels or resources is still checked in
 * linear time. Returns 1 when key was seen, 0 when it is new, -ENOMEM. */
#define DUP_LINEAR_MAX 16
static int dup_seen(struct strmap *seen, const char *key)
{
	if (pp__strmap_get(seen, key))
		return 1;
	return pp__strmap_put(seen, key, (void *)key);
}

int pp__copy_labels(struct arena *a, const pp_label *in, size_t n, pp_label **ret, const char *what,
                    pp_err *err)
{
	*ret = NULL;
	if (n == 0)
		return 0;
	if (!in)
		return pp_fail(err, -EINVAL, "%s: NULL array", what);
	pp_label *l = pp__arena_alloc(a, n * sizeof(*l));
	if (!l)
		return -ENOMEM;
	struct strmap seen = { 0 };
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++) {
		if (!in[i].key || !*in[i].key) {
			r = pp_fail(err, -EINVAL, "%s: empty key", what);
			break;
		}
		int d = 0;
		if (n > DUP_LINEAR_MAX)
			d = dup_seen(&seen, in[i].key);
		else
			for (size_t j = 0; j < i && !d; j++)
				d = strcmp(in[j].key, in[i].key) == 0;
		if (d > 0)
			r = pp_fail(err, -EINVAL, "%s: duplicate key \"%.100s\"", what, in[i].key);
		else if (d < 0 || !pp__copy_str(a, in[i].key, &l[i].key) || !pp__copy_str(a, in[i].value, &l[i].value))
			r = -ENOMEM;
	}
	pp__strmap_done(&seen);
	if (r < 0)
		return r;
	*ret = l;
	return 0;
}

int pp__copy_requirements(struct arena *a, const pp_requirement *in, size_t n, bool node_selector,
                          const pp_requirement **ret, const char *what, pp_err *err)
{
	*ret = NULL;
	if (n == 0)
		return 0;
	if (!in)
		return pp_fail(err, -EINVAL, "%s: NULL array", what);
	pp_requirement *r = pp__arena_alloc(a, n * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const pp_requirement *q = &in[i];
		if (!q->key || !*q->key)
			return pp_fail(err, -EINVAL, "%s[%zu].key: Required value", what, i);
		if (q->n_values && !q->values)
			return pp_fail(err, -EINVAL, "%s[%zu].values: NULL array", what, i);
		switch (q->op) {
		case PP_OP_IN:
		case PP_OP_NOT_IN:
			if (q->n_values == 0)
				return pp_fail(err, -EINVAL,
				               "%s[%zu].values: Required value: must be specified when `operator` is 'In' or "
				               "'NotIn'", what, i);
			break;
		case PP_OP_EXISTS:
		case PP_OP_DOES_NOT_EXIST:
			if (q->n_values != 0)
				return pp_fail(err, -EINVAL,
				               "%s[%zu].values: Forbidden: may not be specified when `operator` is 'Exists' or "
				               "'DoesNotExist'", what, i);
			break;
		case PP_OP_GT:
		case PP_OP_LT:
			if (!node_selector)
				return pp_fail(err, -EINVAL, "%s[%zu].operator: Unsupported value: Gt/Lt are for node selectors",
				               what, i);
			if (q->n_values != 1)
				return pp_fail(err, -EINVAL, "%s[%zu].values: must be specified single value when `operator` is "
				               "'Lt' or 'Gt'", what, i);
			break;
		default:
			return pp_fail(err, -EINVAL, "%s[%zu].operator: Unsupported value", what, i);
		}
		const char **v = NULL;
		if (q->n_values) {
			v = pp__arena_alloc(a, q->n_values * sizeof(*v));
			if (!v)
				return -ENOMEM;
			for (size_t j = 0; j < q->n_values; j++)
				if (!pp__copy_str(a, q->values[j], &v[j]))
					return -ENOMEM;
		}
		r[i] = (pp_requirement){ .op = q->op, .values = v, .n_values = q->n_values };
		if (!pp__copy_str(a, q->key, &r[i].key))
			return -ENOMEM;
	}
	*ret = r;
	return 0;
}

int pp__copy_label_selector(struct arena *a, const pp_label_selector *in, pp_label_selector *out,
                            const char *what, pp_err *err)
{
	char w[1500];
	int r;

	*out = (pp_label_selector){ .present = in->present };
	if (!in->present)
		return 0;
	snprintf(w, sizeof(w), "%s.matchLabels", what);
	pp_label *l;
	r = pp__copy_labels(a, in->match_labels, in->n_match_labels, &l, w, err);
	if (r < 0)
		return r;
	out->match_labels = l;
	out->n_match_labels = in->n_match_labels;
	snprintf(w, sizeof(w), "%s.matchExpressions", what);
	r = pp__copy_requirements(a, in->match_expressions, in->n_match_expressions, false, &out->match_expressions, w,
	                      err);
	if (r < 0)
		return r;
	out->n_match_expressions = in->n_match_expressions;
	return 0;
}

int pp__copy_affinity_terms(struct arena *a, const pp_pod_affinity_term *in, size_t n, pp_pod_affinity_term **ret,
                            const char *what, pp_err *err)
{
	*ret = NULL;
	if (n == 0)
		return 0;
	if (!in)
		return pp_fail(err, -EINVAL, "%s: NULL array", what);
	pp_pod_affinity_term *t = pp__arena_alloc(a, n * sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char w[1400];
		snprintf(w, sizeof(w), "%s[%zu].labelSelector", what, i);
		int r = pp__copy_label_selector(a, &in[i].selector, &t[i].selector, w, err);
		if (r < 0)
			return r;
		if (!in[i].topology_key || !*in[i].topology_key)
			return pp_fail(err, -EINVAL, "%s[%zu].topologyKey: Required value: can not be empty", what, i);
		if (!pp__copy_str(a, in[i].topology_key, &t[i].topology_key))
			return -ENOMEM;
		if (in[i].n_namespaces && !in[i].namespaces)
			return pp_fail(err, -EINVAL, "%s[%zu].namespaces: NULL array", what, i);
		const char **ns = NULL;
		if (in[i].n_namespaces) {
			ns = pp__arena_alloc(a, in[i].n_namespaces * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			for (size_t j = 0; j < in[i].n_namespaces; j++)
				if (!pp__copy_str(a, in[i].namespaces[j], &ns[j]))
					return -ENOMEM;
		}
		t[i].namespaces = ns;
		t[i].n_namespaces = in[i].n_namespaces;
	}
	*ret = t;
	return 0;
}

/* Resource names are interned: scalar resources get small integer ids. */
static int res_id(pp_cluster *c, const char *name, uint32_t *ret)
{
	uintptr_t v = (uintptr_t)pp__strmap_get(&c->res_map, name);
	if (v) {
		*ret = (uint32_t)(v - 1);
		return 0;
	}
	if (c->n_res == c->cap_res) {
		size_t cap = c->cap_res ? c->cap_res * 2 : 8;
		char **n = realloc(c->res_names, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->res_names = n;
		c->cap_res = cap;
	}
	char *s = strdup(name);
	if (!s)
		return -ENOMEM;
	if (pp__strmap_put(&c->res_map, s, (void *)(uintptr_t)(c->n_res + 1)) < 0) {
		free(s);
		return -ENOMEM;
	}
	c->res_names[c->n_res] = s;
	*ret = (uint32_t)c->n_res++;
	return 0;
}

static int core_index(const char *name)
{
	if (strcmp(name, PP_RESOURCE_CPU) == 0)
		return RES_CPU;
	if (strcmp(name, PP_RESOURCE_MEMORY) == 0)
		return RES_MEMORY;
	if (strcmp(name, PP_RESOURCE_EPHEMERAL_STORAGE) == 0)
		return RES_EPHEMERAL;
	return -1;
}

static int sres_cmp(const void *a, const void *b)
{
	const struct sres *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* Splits a resource list into core amounts, the pod limit and sorted scalar amounts. */
int pp__copy_resources(pp_cluster *c, struct arena *a, const pp_resource *in, size_t n, int64_t core[N_CORE_RES],
                       int64_t *pods, struct sres **ret_scalar, size_t *ret_n, const char *what, pp_err *err)
{
	size_t ns = 0;
	struct sres *s = NULL;

	memset(core, 0, N_CORE_RES * sizeof(*core));
	if (pods)
		*pods = 0;
	if (n && !in)
		return pp_fail(err, -EINVAL, "%s: NULL array", what);
	if (n) {
		s = pp__arena_alloc(a, n * sizeof(*s));
		if (!s)
			return -ENOMEM;
	}
	struct strmap seen = { 0 };
	for (size_t i = 0; i < n; i++) {
		if (!in[i].name || !*in[i].name) {
			pp__strmap_done(&seen);
			return pp_fail(err, -EINVAL, "%s: empty resource name", what);
		}
		if (in[i].value < 0) {
			pp__strmap_done(&seen);
			return pp_fail(err, -EINVAL, "%s.%.100s: must be greater than or equal to 0", what, in[i].name);
		}
		int d = 0;
		if (n > DUP_LINEAR_MAX)
			d = dup_seen(&seen, in[i].name);
		else
			for (size_t j = 0; j < i && !d; j++)
				d = strcmp(in[j].name, in[i].name) == 0;
		if (d != 0) {
			pp__strmap_done(&seen);
			return d < 0 ? d : pp_fail(err, -EINVAL, "%s: duplicate resource \"%.100s\"", what, in[i].name);
		}
		int k = core_index(in[i].name);
		if (k >= 0) {
			core[k] = in[i].value;
			continue;
		}
		if (strcmp(in[i].name, PP_RESOURCE_PODS) == 0) {
			if (pods)
				*pods = in[i].value;
			continue; /* a pod's own "pods" request means nothing to the scheduler */
		}
		uint32_t id;
		int r = res_id(c, in[i].name, &id);
		if (r < 0) {
			pp__strmap_done(&seen);
			return r;
		}
		s[ns++] = (struct sres){ .id = id, .value = in[i].value };
	}
	pp__strmap_done(&seen);
	if (ns)
		qsort(s, ns, sizeof(*s), sres_cmp);
	*ret_scalar = s;
	*ret_n = ns;
	return 0;
}

bool pp__valid_name(const char *s)
{
	return s && *s && strlen(s) <= 253 && !strchr(s, '\x1f');
}

/* ----------------------------------------------------------------------------------------- */
/* Growing arrays */

int pp__grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 4;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}
