/* SPDX-License-Identifier: MIT */
#include "model.h"

#include "hints.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "karena.h"
#include "convert.h"
#include "model-quota.h"

struct build {
	model *m;
	const k8s_cluster *c;
	diag *d;
	karena scratch; /* one object's conversion arrays: the library copies what it keeps */
	karena keep;    /* what lives through the whole build */
	bool oom;
	/* classes that were rejected: pods naming them get one error, not a misleading "not found" */
	const char **bad_classes;
	size_t nbad_classes;
};

/* The library names the object in its messages; the diag line names it already. */
static const char *strip_label(const char *msg, const char *label)
{
	size_t n = strlen(label);
	if (strncmp(msg, label, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg;
}

static bool has_node(const k8s_cluster *c, const char *name)
{
	for (size_t i = 0; i < c->nnodes; i++)
		if (strcmp(c->nodes[i].name, name) == 0)
			return true;
	return false;
}

/* --- PriorityClasses ------------------------------------------------------------------------- */

static void add_classes(struct build *b)
{
	b->bad_classes = karena_calloc(&b->keep, b->c->nclasses, sizeof(*b->bad_classes));
	b->oom |= !b->bad_classes;
	for (size_t i = 0; b->bad_classes && i < b->c->nclasses; i++) {
		const struct k8s_priority_class *pc = &b->c->classes[i];
		pp_preemption_policy policy = PP_PREEMPT_LOWER_PRIORITY;
		pp_err err;
		int r = 0;

		const pp_priority_class *def = pp_pcset_default(b->m->classes);

		if (pc->preemption_policy)
			r = pp_preemption_policy_parse(pc->preemption_policy, &policy, &err);
		if (r < 0)
			diag_error(b->d, &pc->loc, NULL, "priorityclasses/%s: preemptionPolicy: %s", pc->name, err.msg);
		else if ((r = pc->existing ? pp_pcset_add_existing(b->m->classes, pc->name, pc->value, pc->global_default,
		                                                   policy, pc->description, &err)
		                           : pp_pcset_add_full(b->m->classes, pc->name, pc->value, pc->global_default,
		                                               policy, pc->description, &err)) < 0)
			diag_error(b->d, &pc->loc, NULL, "%s", err.msg);
		else if (pc->global_default && def) {
			/* the API server checks its cache only: a cluster can hold two (TestDefaultPriority) */
			const pp_priority_class *low = pp_pcset_default(b->m->classes);
			diag_warn(b->d, &pc->loc, NULL,
			          "priorityclasses/%s: globalDefault: PriorityClass %s is also marked as default; pods "
			          "without a priorityClassName get the lowest value, %s's %d", pc->name, def->name,
			          low->name, (int)low->value);
		}
		if (r == -ENOMEM)
			b->oom = true;
		if (r < 0)
			b->bad_classes[b->nbad_classes++] = pc->name;
	}
}

/* --- nodes ----------------------------------------------------------------------------------- */

static void add_nodes(struct build *b)
{
	for (size_t i = 0; i < b->c->nnodes && !b->oom; i++) {
		const struct k8s_node *n = &b->c->nodes[i];
		pp_node_spec spec;
		pp_err err;

		if (conv_node(&b->scratch, n, &spec) < 0) {
			b->oom = true;
			return;
		}
		int r = pp_cluster_add_node(b->m->cluster, &spec, &err);
		if (r == -ENOMEM)
			b->oom = true;
		else if (r == -EEXIST)
			diag_error(b->d, &n->loc, NULL, "nodes/%s: listed twice", n->name);
		else if (r < 0) {
			char label[K8S_LABEL_MAX];
			snprintf(label, sizeof(label), "nodes/%s", n->name);
			diag_error(b->d, &n->loc, label, "%s", strip_label(err.msg, label));
		}
		karena_reset(&b->scratch);
	}
}

/* --- pods ------------------------------------------------------------------------------------ */

static int pod_requests(struct build *b, const struct k8s_pod *p, const char *label, pp_resource **ret,
                        size_t *ret_n)
{
	pp_err err;
	int r = k8s_pod_requests(p, &b->scratch, ret, ret_n, &err);

	if (r == -ENOMEM)
		b->oom = true;
	else if (r < 0)
		diag_error(b->d, &p->loc, label, "spec.%s", err.msg);
	return r;
}

static bool class_is_bad(const struct build *b, const char *name)
{
	if (k8s_class_rejected(b->c, name))
		return true;
	for (size_t i = 0; name && i < b->nbad_classes; i++)
		if (strcmp(b->bad_classes[i], name) == 0)
			return true;
	return false;
}

/*
 * Priority admission runs when a pod is created. A pod read back from the API server
 * (creationTimestamp set) has been admitted already and carries spec.priority: if its class was
 * deleted or replaced since, Kubernetes keeps the pod's priority, and so do we (with a warning).
 */
static int admit(struct build *b, const struct k8s_pod *p, const char *label, int32_t *ret_prio,
                 pp_preemption_policy *ret_policy, const char **ret_class)
{
	pp_preemption_policy spec_policy;
	pp_err err;
	int r;

	if (p->preemption_policy &&
	    pp_preemption_policy_parse(p->preemption_policy, &spec_policy, &err) < 0) {
		diag_error(b->d, &p->loc, label, "spec.preemptionPolicy: %s", err.msg);
		return -EINVAL;
	}
	if (class_is_bad(b, p->priority_class_name)) {
		diag_error(b->d, &p->loc, label,
		           "spec.priorityClassName: PriorityClass %s was rejected (see its error)",
		           p->priority_class_name);
		return -EINVAL;
	}
	r = pp_pcset_admit(b->m->classes, p->priority_class_name, p->has_priority ? &p->priority : NULL,
	                   p->preemption_policy ? &spec_policy : NULL, ret_prio, ret_policy, ret_class, &err);
	if (r == -ENOMEM) {
		b->oom = true;
		return r;
	}
	if (r >= 0)
		return 0;
	if (p->has_creation && p->has_priority) {
		diag_warn(b->d, &p->loc, label, "%s; the pod was admitted before, keeping spec.priority %d",
		          err.msg, (int)p->priority);
		*ret_prio = p->priority;
		*ret_policy = p->preemption_policy ? spec_policy : PP_PREEMPT_LOWER_PRIORITY;
		return 0;
	}
	diag_error(b->d, &p->loc, label, "%s", err.msg);
	return r;
}

static void add_pod(struct build *b, const struct k8s_pod *p)
{
	char label[K8S_LABEL_MAX];
	pp_resource *req = NULL;
	size_t nreq = 0;
	int32_t prio = 0;
	pp_preemption_policy policy = PP_PREEMPT_LOWER_PRIORITY;
	pp_err err;
	bool bad = false;

	const char *class_name = NULL;
	snprintf(label, sizeof(label), "pods/%s/%s", p->namespace_, p->name);
	bad |= admit(b, p, label, &prio, &policy, &class_name) < 0;
	bad |= pod_requests(b, p, label, &req, &nreq) < 0;
	if (p->phase == K8S_PHASE_SUCCEEDED || p->phase == K8S_PHASE_FAILED) {
		b->m->nterminal++;
		return;
	}
	if (bad || b->oom)
		return;
	/* ResourceQuota admission comes after Priority admission (which named the default class) */
	if (quota_pod_is_new(p)) {
		int r = quota_admit_new(b->m, p, class_name, b->d);
		b->oom |= r == -ENOMEM;
		if (r != 0)
			return;
	}
	/* A nomination outlives a deleted node in a snapshot; kube-scheduler would just retry. */
	const char *nominated = p->nominated_node_name;
	if (nominated && *nominated && !has_node(b->c, nominated)) {
		diag_warn(b->d, &p->loc, label, "status.nominatedNodeName: node %s is not in the input, ignored",
		          nominated);
		nominated = NULL;
	}

	pp_pod_spec spec;
	if (conv_pod(&b->scratch, p, prio, policy, req, nreq, nominated, &spec) < 0) {
		b->oom = true;
		return;
	}
	int r = pp_cluster_add_pod(b->m->cluster, &spec, &err);
	if (r == -ENOMEM)
		b->oom = true;
	else if (r == -EEXIST)
		diag_error(b->d, &p->loc, label, "listed twice");
	else if (r == -ENOENT && p->node_name)
		diag_error(b->d, &p->loc, label, "spec.nodeName: node %s is not in the input", p->node_name);
	else if (r < 0)
		diag_error(b->d, &p->loc, label, "%s", strip_label(err.msg, label));
	else if (p->node_name && *p->node_name)
		b->m->nbound++;
	else
		b->m->npending++;
}

/* --- PDBs ------------------------------------------------------------------------------------ */

static void add_pdbs(struct build *b)
{
	for (size_t i = 0; i < b->c->npdbs && !b->oom; i++) {
		const struct k8s_pdb *p = &b->c->pdbs[i];
		pp_pdb_spec spec;
		pp_err err;
		if (conv_pdb(&b->scratch, p, &spec) < 0) {
			b->oom = true;
			return;
		}
		int r = pp_cluster_add_pdb(b->m->cluster, &spec, &err);
		if (r == -ENOMEM)
			b->oom = true;
		else if (r == -EEXIST)
			diag_error(b->d, &p->loc, NULL, "poddisruptionbudgets/%s/%s: listed twice", p->namespace_, p->name);
		else if (r < 0) {
			char label[K8S_LABEL_MAX];
			snprintf(label, sizeof(label), "poddisruptionbudgets/%s/%s", p->namespace_, p->name);
			diag_error(b->d, &p->loc, label, "%s", strip_label(err.msg, label));
		}
	}
}

int model_build(model *m, const k8s_cluster *c, int64_t now_ns, diag *d)
{
	struct build b = { .m = m, .c = c, .d = d };
	unsigned errors_before = d->nerrors;
	int r;

	memset(m, 0, sizeof(*m));
	if ((r = pp_pcset_new(&m->classes)) < 0 || (r = pp_cluster_new(&m->cluster)) < 0) {
		model_done(m);
		return r;
	}
	add_classes(&b);
	add_nodes(&b);
	if (!b.oom && quota_build(m, c, now_ns, d) == -ENOMEM)
		b.oom = true;
	for (size_t i = 0; i < c->npods && !b.oom; i++) {
		add_pod(&b, &c->pods[i]);
		karena_reset(&b.scratch);
	}
	add_pdbs(&b);
	karena_free(&b.scratch);
	karena_free(&b.keep);
	if (b.oom) {
		diag_error(d, NULL, NULL, "out of memory");
		return -ENOMEM;
	}
	return d->nerrors > errors_before ? -EINVAL : 0;
}

int model_load(model *m, k8s_cluster *c, const struct model_input *in, diag *d)
{
	int r = 0;

	if (in->kubeconfig)
		r = k8s_load_api(c, in->kubeconfig, d);
	for (size_t i = 0; i < in->nfiles && r != -ENOMEM; i++)
		r = k8s_load_file(c, in->files[i], d);
	if (in->admission_config && r != -ENOMEM)
		r = k8s_load_admission_config(c, in->admission_config, d);
	if (r != -ENOMEM)
		r = model_build(m, c, in->now_ns, d);
	diag_flush(d);
	return r == -ENOMEM ? r : d->nerrors ? -EINVAL : 0;
}

int model_load_to_decide(model *m, k8s_cluster *c, const struct model_input *in, diag *d)
{
	int r = model_load(m, c, in, d);
	/* an input that is no cluster at all has said so in its one line */
	if (r == -EINVAL && !(d->unusable && d->nerrors == 1))
		hint_rejected(d->out, d->nerrors, in);
	return r;
}

const model_refusal *model_find_refusal(const model *m, const char *namespace_, const char *name)
{
	for (size_t i = 0; i < m->nrefused; i++)
		if (strcmp(m->refused[i].pod->namespace_, namespace_) == 0 && strcmp(m->refused[i].pod->name, name) == 0)
			return &m->refused[i];
	return NULL;
}

void model_done(model *m)
{
	m->cluster = pp_cluster_free(m->cluster);
	m->classes = pp_pcset_free(m->classes);
	m->quotas = pp_quotas_free(m->quotas);
	for (size_t i = 0; i < m->nrefused; i++)
		pp_admission_free(m->refused[i].admission);
	free(m->refused);
	m->refused = NULL;
	m->nrefused = m->cap_refused = 0;
}
