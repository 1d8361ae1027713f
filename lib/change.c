/* SPDX-License-Identifier: MIT */
/*
 * What an update changes. A live scheduler hears about every object many times: a kubelet's
 * heartbeat rewrites its Node, container statuses rewrite their Pod. Most of these touch nothing
 * a filter or a preemption reads; treating them as changes would drop the node's cached
 * preemption result and send every unschedulable pod back to activeQ (kube-scheduler's
 * QueueingHints ask the same question). These compare a freshly built object with the one in the
 * cluster, field by field, over what the model keeps.
 */
#include <string.h>

#include "change.h"

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool labels_eq(const pp_label *a, size_t na, const pp_label *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!str_eq(a[i].key, b[i].key) || !str_eq(a[i].value, b[i].value))
			return false;
	return true;
}

static bool sres_eq(const struct sres *a, size_t na, const struct sres *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].id != b[i].id || a[i].value != b[i].value)
			return false;
	return true;
}

static bool reqs_eq(const pp_requirement *a, size_t na, const pp_requirement *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		if (!str_eq(a[i].key, b[i].key) || a[i].op != b[i].op || a[i].n_values != b[i].n_values)
			return false;
		for (size_t j = 0; j < a[i].n_values; j++)
			if (!str_eq(a[i].values[j], b[i].values[j]))
				return false;
	}
	return true;
}

static bool selector_eq(const pp_label_selector *a, const pp_label_selector *b)
{
	return a->present == b->present &&
	       labels_eq(a->match_labels, a->n_match_labels, b->match_labels, b->n_match_labels) &&
	       reqs_eq(a->match_expressions, a->n_match_expressions, b->match_expressions, b->n_match_expressions);
}

static bool affinity_eq(const pp_pod_affinity_term *a, size_t na, const pp_pod_affinity_term *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		if (!selector_eq(&a[i].selector, &b[i].selector) || !str_eq(a[i].topology_key, b[i].topology_key) ||
		    a[i].n_namespaces != b[i].n_namespaces)
			return false;
		for (size_t j = 0; j < a[i].n_namespaces; j++)
			if (!str_eq(a[i].namespaces[j], b[i].namespaces[j]))
				return false;
	}
	return true;
}

static bool tolerations_eq(const pp_toleration *a, size_t na, const pp_toleration *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!str_eq(a[i].key, b[i].key) || a[i].op != b[i].op || !str_eq(a[i].value, b[i].value) ||
		    a[i].effect != b[i].effect)
			return false;
	return true;
}

static bool node_terms_eq(const struct pod *a, const struct pod *b)
{
	if (a->has_node_affinity != b->has_node_affinity || a->n_node_affinity != b->n_node_affinity)
		return false;
	for (size_t i = 0; i < a->n_node_affinity; i++) {
		const pp_node_selector_term *x = &a->node_affinity[i], *y = &b->node_affinity[i];
		if (!reqs_eq(x->match_expressions, x->n_match_expressions, y->match_expressions, y->n_match_expressions) ||
		    !reqs_eq(x->match_fields, x->n_match_fields, y->match_fields, y->n_match_fields))
			return false;
	}
	return true;
}

bool pp__node_same(const struct node *a, const struct node *b)
{
	if (a->n_taints != b->n_taints || a->unschedulable != b->unschedulable || a->max_pods != b->max_pods ||
	    memcmp(a->alloc, b->alloc, sizeof(a->alloc)) != 0 ||
	    !labels_eq(a->labels, a->n_labels, b->labels, b->n_labels) ||
	    !sres_eq(a->alloc_scalar, a->n_alloc_scalar, b->alloc_scalar, b->n_alloc_scalar))
		return false;
	for (size_t i = 0; i < a->n_taints; i++)
		if (!str_eq(a->taints[i].key, b->taints[i].key) || !str_eq(a->taints[i].value, b->taints[i].value) ||
		    a->taints[i].effect != b->taints[i].effect)
			return false;
	return true;
}

enum pp__change pp__pod_compare(const struct pod *old, const struct pod *fresh, const char *node, const char *nominated)
{
	const char *old_node = old->node ? old->node->name : NULL;
	/* a bound pod's nomination means nothing (the library drops it when linking) */
	const char *old_nom = old->nominated ? old->nominated->name : NULL;
	const char *new_nom = node && *node ? NULL : nominated;

	if (!str_eq(old_node, node) || !str_eq(old_nom, new_nom) || old->priority != fresh->priority ||
	    old->policy != fresh->policy || memcmp(old->req, fresh->req, sizeof(old->req)) != 0 ||
	    !sres_eq(old->scalar, old->n_scalar, fresh->scalar, fresh->n_scalar) ||
	    !labels_eq(old->labels, old->n_labels, fresh->labels, fresh->n_labels) ||
	    !tolerations_eq(old->tolerations, old->n_tolerations, fresh->tolerations, fresh->n_tolerations) ||
	    !labels_eq(old->node_selector, old->n_node_selector, fresh->node_selector, fresh->n_node_selector) ||
	    !node_terms_eq(old, fresh) || !affinity_eq(old->affinity, old->n_affinity, fresh->affinity, fresh->n_affinity) ||
	    !affinity_eq(old->anti_affinity, old->n_anti_affinity, fresh->anti_affinity, fresh->n_anti_affinity))
		return PP_CHANGE_SPEC;
	if (old->has_start != fresh->has_start || (old->has_start && old->start != fresh->start) ||
	    old->terminating != fresh->terminating || (old->terminating && old->deletion != fresh->deletion) ||
	    old->preempted_by_scheduler != fresh->preempted_by_scheduler || old->not_ready != fresh->not_ready ||
	    old->grace != fresh->grace)
		return PP_CHANGE_STATE;
	return PP_CHANGE_NONE;
}
