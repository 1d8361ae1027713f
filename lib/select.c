/* SPDX-License-Identifier: MIT */
/*
 * Label selectors, node selectors, tolerations and pod affinity terms, matched as
 * apimachinery's labels package and component-helpers' nodeaffinity/taints helpers do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "select.h"

const char *pp__labels_get(const pp_label *labels, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(labels[i].key, key) == 0)
			return labels[i].value;
	return NULL;
}

static bool in_values(const pp_requirement *r, const char *v)
{
	for (size_t i = 0; i < r->n_values; i++)
		if (strcmp(r->values[i], v) == 0)
			return true;
	return false;
}

/* strconv.ParseInt(s, 10, 64) */
static bool parse_int64(const char *s, int64_t *ret)
{
	const char *p = s;
	bool neg = false;
	unsigned __int128 v = 0;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return false;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + (unsigned)(*p - '0');
		if (v > (unsigned __int128)INT64_MAX + 1)
			return false;
	}
	if (!neg && v > (unsigned __int128)INT64_MAX)
		return false;
	*ret = neg ? (int64_t)(-(__int128)v) : (int64_t)v;
	return true;
}

static bool requirement_matches(const pp_requirement *r, const pp_label *labels, size_t n)
{
	const char *v = pp__labels_get(labels, n, r->key);
	int64_t a, b;

	switch (r->op) {
	case PP_OP_IN:
		return v && in_values(r, v);
	case PP_OP_NOT_IN:
		return !v || !in_values(r, v);
	case PP_OP_EXISTS:
		return v != NULL;
	case PP_OP_DOES_NOT_EXIST:
		return v == NULL;
	case PP_OP_GT:
	case PP_OP_LT:
		if (!v || r->n_values != 1 || !parse_int64(v, &a) || !parse_int64(r->values[0], &b))
			return false;
		return r->op == PP_OP_GT ? a > b : a < b;
	}
	return false;
}

bool pp__label_selector_matches(const pp_label_selector *sel, const pp_label *labels, size_t n)
{
	if (!sel->present)
		return false; /* LabelSelectorAsSelector(nil) = Nothing() */
	for (size_t i = 0; i < sel->n_match_labels; i++) {
		const char *v = pp__labels_get(labels, n, sel->match_labels[i].key);
		if (!v || strcmp(v, sel->match_labels[i].value) != 0)
			return false;
	}
	for (size_t i = 0; i < sel->n_match_expressions; i++)
		if (!requirement_matches(&sel->match_expressions[i], labels, n))
			return false;
	return true;
}

bool pp__node_selector_term_matches(const pp_node_selector_term *t, const struct node *node)
{
	if (t->n_match_expressions == 0 && t->n_match_fields == 0)
		return false;
	for (size_t i = 0; i < t->n_match_expressions; i++)
		if (!requirement_matches(&t->match_expressions[i], node->labels, node->n_labels))
			return false;
	for (size_t i = 0; i < t->n_match_fields; i++) {
		const pp_requirement *r = &t->match_fields[i];
		if (strcmp(r->key, "metadata.name") != 0 || r->n_values != 1 ||
		    (r->op != PP_OP_IN && r->op != PP_OP_NOT_IN))
			return false;
		bool eq = strcmp(r->values[0], node->name) == 0;
		if (eq != (r->op == PP_OP_IN))
			return false;
	}
	return true;
}

bool pp__pod_matches_node_affinity(const struct pod *pod, const struct node *node)
{
	for (size_t i = 0; i < pod->n_node_selector; i++) {
		const char *v = pp__labels_get(node->labels, node->n_labels, pod->node_selector[i].key);
		if (!v || strcmp(v, pod->node_selector[i].value) != 0)
			return false;
	}
	if (!pod->has_node_affinity)
		return true;
	for (size_t i = 0; i < pod->n_node_affinity; i++)
		if (pp__node_selector_term_matches(&pod->node_affinity[i], node))
			return true;
	return false;
}

bool pp__toleration_tolerates(const pp_toleration *t, const pp_taint *taint)
{
	if (t->effect != PP_EFFECT_ANY && t->effect != taint->effect)
		return false;
	if (t->key && *t->key && strcmp(t->key, taint->key) != 0)
		return false;
	if (t->op == PP_TOLERATION_EXISTS)
		return true;
	return strcmp(t->value ? t->value : "", taint->value ? taint->value : "") == 0;
}

bool pp__pod_tolerates(const struct pod *pod, const pp_taint *taint)
{
	for (size_t i = 0; i < pod->n_tolerations; i++)
		if (pp__toleration_tolerates(&pod->tolerations[i], taint))
			return true;
	return false;
}

bool pp__affinity_term_matches(const pp_pod_affinity_term *t, const char *term_ns, const struct pod *pod)
{
	bool ns_ok = false;
	if (t->n_namespaces == 0)
		ns_ok = strcmp(term_ns, pod->ns) == 0;
	for (size_t i = 0; i < t->n_namespaces && !ns_ok; i++)
		ns_ok = strcmp(t->namespaces[i], pod->ns) == 0;
	return ns_ok && pp__label_selector_matches(&t->selector, pod->labels, pod->n_labels);
}

bool pp__pdb_matches_pod(const struct pdb *pdb, const struct pod *pod)
{
	/* filterPodsWithPDBViolation: pods without labels and nil/{} selectors match nothing. */
	if (pod->n_labels == 0 || !pdb->preempt_selectable || strcmp(pdb->ns, pod->ns) != 0)
		return false;
	return pp__label_selector_matches(&pdb->selector, pod->labels, pod->n_labels);
}

bool pp__pdb_disrupted(const struct pdb *pdb, const char *pod_name)
{
	for (size_t i = 0; i < pdb->n_disrupted; i++)
		if (strcmp(pdb->disrupted[i], pod_name) == 0)
			return true;
	return false;
}
