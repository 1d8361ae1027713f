/* SPDX-License-Identifier: MIT */
#include "model-quota.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "karena.h"
#include "grow.h"

bool quota_pod_is_new(const struct k8s_pod *p)
{
	return !p->has_creation && !(p->node_name && *p->node_name);
}

static const pp_scope_requirement *scope_reqs(karena *a, const struct k8s_scope_req *s, size_t n, bool *oom)
{
	pp_scope_requirement *r = n ? karena_calloc(a, n, sizeof(*r)) : NULL;
	if (n && !r)
		*oom = true;
	for (size_t i = 0; r && i < n; i++)
		r[i] = (pp_scope_requirement){ s[i].scope_name, s[i].op, s[i].values, s[i].nvalues };
	return r;
}

static int add_quota(model *m, karena *a, const struct k8s_quota *q, diag *d)
{
	char label[K8S_LABEL_MAX];
	bool oom = false;
	pp_err err;
	pp_quota_spec s = {
		.namespace_ = q->namespace_,
		.name = q->name,
		.hard = k8s_quantities(a, &q->hard, &oom),
		.n_hard = q->hard.n,
		.scopes = q->scopes,
		.n_scopes = q->nscopes,
		.scope_selector = scope_reqs(a, q->selector, q->nselector, &oom),
		.n_scope_selector = q->nselector,
		.has_status = q->has_status,
		.status_hard = k8s_quantities(a, &q->status_hard, &oom),
		.n_status_hard = q->status_hard.n,
		.status_used = k8s_quantities(a, &q->status_used, &oom),
		.n_status_used = q->status_used.n,
	};
	if (oom)
		return -ENOMEM;
	int r = pp_quotas_add(m->quotas, &s, &err);
	snprintf(label, sizeof(label), "resourcequotas/%s/%s", q->namespace_, q->name);
	if (r == -EEXIST)
		diag_error(d, &q->loc, label, "listed twice");
	else if (r < 0 && r != -ENOMEM)
		diag_error(d, &q->loc, label, "%s", err.msg);
	return r;
}

static int add_limited(model *m, karena *a, const struct k8s_limited_resource *l, size_t i, diag *d)
{
	bool oom = false;
	pp_err err;
	pp_limited_resource lr = {
		.api_group = l->api_group,
		.resource = l->resource,
		.match_contains = l->contains,
		.n_match_contains = l->ncontains,
		.match_scopes = scope_reqs(a, l->scopes, l->nscopes, &oom),
		.n_match_scopes = l->nscopes,
	};
	if (oom)
		return -ENOMEM;
	int r = pp_quotas_add_limited_resource(m->quotas, &lr, &err);
	if (r < 0 && r != -ENOMEM) {
		/* the library counts the entries it accepted; the file's index is i */
		const char *rest = strncmp(err.msg, "limitedResources[", 17) == 0 ? strchr(err.msg, ']') + 1 : err.msg;
		diag_error(d, &l->loc, "ResourceQuota plugin configuration", "limitedResources[%zu]%s", i, rest);
	}
	return r;
}

int quota_build(model *m, const k8s_cluster *c, int64_t now_ns, diag *d)
{
	karena a = { 0 };
	int r = pp_quotas_new(&m->quotas), ret = 0;

	if (r < 0)
		return r;
	for (size_t i = 0; i < c->nquotas && ret != -ENOMEM; i++, karena_reset(&a))
		if ((r = add_quota(m, &a, &c->quotas[i], d)) < 0)
			ret = r == -ENOMEM ? r : -EINVAL;
	for (size_t i = 0; i < c->nlimited && ret != -ENOMEM; i++, karena_reset(&a))
		if ((r = add_limited(m, &a, &c->limited[i], i, d)) < 0)
			ret = r == -ENOMEM ? r : -EINVAL;
	/* the quota controller's count, over every pod stored (quotas with a status have it already) */
	for (size_t i = 0; i < c->npods && ret != -ENOMEM; i++, karena_reset(&a)) {
		const struct k8s_pod *p = &c->pods[i];
		pp_quota_pod qp;
		pp_err err;
		if (quota_pod_is_new(p))
			continue;
		if ((r = k8s_quota_pod(p, p->priority_class_name, &a, &qp)) >= 0)
			r = pp_quotas_count_pod(m->quotas, &qp, now_ns, &err);
		if (r < 0 && r != -ENOMEM) {
			char label[K8S_LABEL_MAX];
			k8s_pod_label(p, label, sizeof(label));
			diag_error(d, &p->loc, label, "spec.%s", err.msg);
			ret = -EINVAL;
		} else if (r == -ENOMEM) {
			ret = r;
		}
	}
	karena_free(&a);
	return ret;
}

int quota_admit_new(model *m, const struct k8s_pod *p, const char *class_name, diag *d)
{
	karena a = { 0 };
	pp_quota_pod qp;
	pp_admission *adm = NULL;
	pp_err err;
	int r = k8s_quota_pod(p, class_name, &a, &qp);

	if (r >= 0)
		r = pp_quotas_admit(m->quotas, &qp, 0, &adm, &err);
	karena_free(&a);
	if (r < 0) {
		char label[K8S_LABEL_MAX];
		k8s_pod_label(p, label, sizeof(label));
		if (r != -ENOMEM)
			diag_error(d, &p->loc, label, "spec.%s", err.msg);
		return r;
	}
	if (pp_admission_refusal(adm) == PP_REFUSAL_NONE) {
		pp_admission_free(adm);
		return 0;
	}
	if (GROW_ARRAY(&m->refused, &m->cap_refused, m->nrefused + 1) < 0) {
		pp_admission_free(adm);
		return -ENOMEM;
	}
	m->refused[m->nrefused++] = (model_refusal){ p, adm };
	return 1;
}

/* "name=value" of each ","-separated name in names, out of a printed resource list */
static void pick(const char *list, const char *names, char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = '\0';
	for (const char *n = names; *n && at < size;) {
		size_t len = strcspn(n, ",");
		for (const char *p = list; *p;) {
			size_t plen = strcspn(p, ",");
			if (plen > len && strncmp(p, n, len) == 0 && p[len] == '=')
				at += (size_t)snprintf(buf + at, size - at, "%s%.*s", at ? "," : "", (int)plen, p);
			p += plen + (p[plen] == ',');
		}
		n += len + (n[len] == ',');
	}
}

static const struct k8s_quota *find_quota(const k8s_cluster *c, const char *ns, const char *name)
{
	for (size_t i = 0; i < c->nquotas; i++)
		if (strcmp(c->quotas[i].namespace_, ns) == 0 && strcmp(c->quotas[i].name, name) == 0)
			return &c->quotas[i];
	return NULL;
}

struct uncovered {
	const struct k8s_pod *first;
	const char *class_name;
	char *message;
	size_t pods;
};

static void report_uncovered(diag *d, const struct uncovered *u)
{
	char label[K8S_LABEL_MAX], at_class[300] = "";
	const char *ns = u->first->namespace_;
	k8s_pod_label(u->first, label, sizeof(label));
	if (*u->class_name)
		snprintf(at_class, sizeof(at_class), " at PriorityClass %s", u->class_name);
	diag_warn(d, &u->first->loc, label,
	          "namespace %s runs %zu %s%s that the admission configuration limits (limitedResources) and no "
	          "ResourceQuota of %s covers: a pod like %s, created now, is refused: %s",
	          ns, u->pods, u->pods == 1 ? "pod" : "pods", at_class, ns, u->pods == 1 ? "it" : "them", u->message);
}

int quota_report(model *m, const k8s_cluster *c, diag *d)
{
	struct uncovered *groups = NULL;
	size_t ngroups = 0, cap_groups = 0;
	karena a = { 0 };
	int r = 0;

	for (size_t i = 0; i < pp_quotas_count(m->quotas) && r >= 0; i++) {
		pp_quota_info info;
		char used[512], hard[512], label[K8S_LABEL_MAX];
		if ((r = pp_quotas_info(m->quotas, i, &info)) < 0 || !*info.exceeded)
			continue;
		const struct k8s_quota *q = find_quota(c, info.namespace_, info.name);
		pick(info.used, info.exceeded, used, sizeof(used));
		pick(info.hard, info.exceeded, hard, sizeof(hard));
		snprintf(label, sizeof(label), "resourcequotas/%s/%s", info.namespace_, info.name);
		diag_warn(d, q ? &q->loc : NULL, label,
		          "usage above the limit (used: %s, limited: %s): new pods of %s that use %s are refused", used, hard,
		          info.namespace_, info.exceeded);
	}
	for (size_t i = 0; i < c->npods && r >= 0; i++, karena_reset(&a)) {
		const struct k8s_pod *p = &c->pods[i];
		const char *cls = p->priority_class_name ? p->priority_class_name : "";
		pp_quota_pod qp;
		pp_admission *adm = NULL;
		if (quota_pod_is_new(p) || p->phase == K8S_PHASE_SUCCEEDED || p->phase == K8S_PHASE_FAILED)
			continue;
		if ((r = k8s_quota_pod(p, cls, &a, &qp)) < 0 ||
		    (r = pp_quotas_admit(m->quotas, &qp, PP_ADMIT_COVERAGE_ONLY, &adm, NULL)) < 0)
			break;
		const char *msg = pp_admission_message(adm);
		size_t g = 0;
		while (g < ngroups && !(strcmp(groups[g].first->namespace_, p->namespace_) == 0 &&
		                        strcmp(groups[g].class_name, cls) == 0 && strcmp(groups[g].message, msg) == 0))
			g++;
		if (!*msg) {
			/* covered */
		} else if (g < ngroups) {
			groups[g].pods++;
		} else {
			char *copy = strdup(msg);
			if (GROW_ARRAY(&groups, &cap_groups, ngroups + 1) < 0 || !copy) {
				free(copy);
				r = -ENOMEM;
			} else {
				groups[ngroups++] = (struct uncovered){ p, cls, copy, 1 };
			}
		}
		pp_admission_free(adm);
	}
	for (size_t g = 0; g < ngroups; g++) {
		if (r >= 0)
			report_uncovered(d, &groups[g]);
		free(groups[g].message);
	}
	free(groups);
	karena_free(&a);
	return r == -ENOMEM ? r : 0;
}
