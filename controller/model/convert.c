/* SPDX-License-Identifier: MIT */
#include "convert.h"

#include <errno.h>
#include <string.h>

static const pp_label *labels(karena *a, const struct k8s_map *m, bool *oom)
{
	pp_label *l = karena_calloc(a, m->n, sizeof(*l));
	*oom |= !l;
	for (size_t i = 0; l && i < m->n; i++)
		l[i] = (pp_label){ m->v[i].key, m->v[i].value };
	return l;
}

static pp_selector_op selector_op(const char *op)
{
	static const char *const names[] = { "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(op, names[i]) == 0)
			return (pp_selector_op)i;
	return PP_OP_IN; /* unreachable: the decoder accepts only these */
}

static const pp_requirement *requirements(karena *a, const struct k8s_req *r, size_t n, bool *oom)
{
	pp_requirement *q = karena_calloc(a, n, sizeof(*q));
	*oom |= !q;
	for (size_t i = 0; q && i < n; i++)
		q[i] = (pp_requirement){ r[i].key, selector_op(r[i].op), r[i].values, r[i].nvalues };
	return q;
}

static pp_label_selector label_selector(karena *a, const struct k8s_label_selector *s, bool *oom)
{
	return (pp_label_selector){
		.present = s->present,
		.match_labels = labels(a, &s->match_labels, oom),
		.n_match_labels = s->match_labels.n,
		.match_expressions = requirements(a, s->exprs, s->nexprs, oom),
		.n_match_expressions = s->nexprs,
	};
}

pp_taint_effect conv_effect(const char *e)
{
	if (!strcmp(e, "NoSchedule"))
		return PP_EFFECT_NO_SCHEDULE;
	if (!strcmp(e, "PreferNoSchedule"))
		return PP_EFFECT_PREFER_NO_SCHEDULE;
	if (!strcmp(e, "NoExecute"))
		return PP_EFFECT_NO_EXECUTE;
	return PP_EFFECT_ANY;
}

static const pp_resource *resources(karena *a, const k8s_rlist *l, bool *oom)
{
	pp_resource *res = karena_calloc(a, l->n, sizeof(*res));
	*oom |= !res;
	for (size_t i = 0; res && i < l->n; i++) {
		res[i].name = l->v[i].key;
		/* validated by the decoder */
		if (strcmp(l->v[i].key, PP_RESOURCE_CPU) == 0)
			(void)pp_quantity_parse_milli(l->v[i].value, &res[i].value, NULL);
		else
			(void)pp_quantity_parse(l->v[i].value, &res[i].value, NULL);
	}
	return res;
}

int conv_node(karena *a, const struct k8s_node *n, pp_node_spec *ret)
{
	pp_taint *t = karena_calloc(a, n->ntaints, sizeof(*t));
	bool oom = !t;

	for (size_t j = 0; t && j < n->ntaints; j++)
		t[j] = (pp_taint){ n->taints[j].key, n->taints[j].value, conv_effect(n->taints[j].effect) };
	*ret = (pp_node_spec){
		.name = n->name,
		.labels = labels(a, &n->labels, &oom),
		.n_labels = n->labels.n,
		.taints = t,
		.n_taints = n->ntaints,
		.allocatable = resources(a, &n->allocatable, &oom),
		.n_allocatable = n->allocatable.n,
		.unschedulable = n->unschedulable,
	};
	return oom ? -ENOMEM : 0;
}

static const pp_pod_affinity_term *affinity_terms(karena *a, const struct k8s_pod_affinity_term *t, size_t n,
                                                  bool *oom)
{
	pp_pod_affinity_term *v = karena_calloc(a, n, sizeof(*v));
	*oom |= !v;
	for (size_t i = 0; v && i < n; i++)
		v[i] = (pp_pod_affinity_term){ label_selector(a, &t[i].selector, oom), t[i].topology_key,
		                               t[i].namespaces, t[i].nnamespaces };
	return v;
}

int conv_pod(karena *a, const struct k8s_pod *p, int32_t priority, pp_preemption_policy policy,
             const pp_resource *requests, size_t n_requests, const char *nominated, pp_pod_spec *ret)
{
	pp_toleration *tol = karena_calloc(a, p->ntolerations, sizeof(*tol));
	pp_node_selector_term *terms = karena_calloc(a, p->nnode_terms, sizeof(*terms));
	bool oom = !tol || !terms;

	for (size_t i = 0; tol && i < p->ntolerations; i++) {
		const struct k8s_toleration *t = &p->tolerations[i];
		tol[i] = (pp_toleration){ t->key, strcmp(t->op, "Exists") == 0 ? PP_TOLERATION_EXISTS : PP_TOLERATION_EQUAL,
		                          t->value, conv_effect(t->effect) };
	}
	for (size_t i = 0; terms && i < p->nnode_terms; i++) {
		const struct k8s_node_selector_term *t = &p->node_terms[i];
		terms[i] = (pp_node_selector_term){ requirements(a, t->exprs, t->nexprs, &oom), t->nexprs,
		                                    requirements(a, t->fields, t->nfields, &oom), t->nfields };
	}
	*ret = (pp_pod_spec){
		.namespace_ = p->namespace_,
		.name = p->name,
		.labels = labels(a, &p->labels, &oom),
		.n_labels = p->labels.n,
		.priority = priority,
		.preemption_policy = policy,
		.requests = requests,
		.n_requests = n_requests,
		.node_name = p->node_name,
		.nominated_node_name = nominated,
		.has_start_time = p->has_start,
		.start_time_ns = p->start_ns,
		.terminating = p->has_deletion,
		.deletion_time_ns = p->deletion_ns,
		.preempted_by_scheduler = p->preempted_by_scheduler,
		.not_ready = p->ready_false,
		.termination_grace_period_s = p->has_grace ? p->grace_seconds : -1,
		.tolerations = tol,
		.n_tolerations = p->ntolerations,
		.node_selector = labels(a, &p->node_selector, &oom),
		.n_node_selector = p->node_selector.n,
		.has_node_affinity = p->has_node_affinity,
		.node_affinity = terms,
		.n_node_affinity = p->nnode_terms,
		.affinity = affinity_terms(a, p->affinity, p->naffinity, &oom),
		.n_affinity = p->naffinity,
		.anti_affinity = affinity_terms(a, p->anti_affinity, p->nanti_affinity, &oom),
		.n_anti_affinity = p->nanti_affinity,
	};
	return oom ? -ENOMEM : 0;
}

static pp_int_or_percent int_or_percent(const struct k8s_intstr *v)
{
	if (!v->present)
		return (pp_int_or_percent){ PP_IOP_UNSET, 0 };
	return (pp_int_or_percent){ v->percent ? PP_IOP_PERCENT : PP_IOP_INT, v->value };
}

int conv_pdb(karena *a, const struct k8s_pdb *p, pp_pdb_spec *ret)
{
	bool oom = false;

	*ret = (pp_pdb_spec){
		.namespace_ = p->namespace_,
		.name = p->name,
		.selector = label_selector(a, &p->selector, &oom),
		.min_available = int_or_percent(&p->min_available),
		.max_unavailable = int_or_percent(&p->max_unavailable),
		.has_disruptions_allowed = p->has_disruptions_allowed,
		.disruptions_allowed = p->disruptions_allowed,
		.disrupted_pods = p->disrupted_pods,
		.n_disrupted_pods = p->ndisrupted,
	};
	return oom ? -ENOMEM : 0;
}
