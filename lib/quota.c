/* SPDX-License-Identifier: MIT */
/*
 * A cluster's ResourceQuotas and the ResourceQuota admission plugin's configuration: validation
 * as the API server's (pkg/apis/core/validation ValidateResourceQuota), the quota controller's
 * usage for quotas the input gives without status (CalculateUsageStats), and pp_quotas_info().
 * Admission itself is quota_admit.c, the pod evaluator quota_pod.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qty.h"
#include "quota.h"
#include "quota_pod.h"
#include "requests.h"

int pp_quotas_new(pp_quotas **ret)
{
	pp_quotas *q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	*ret = q;
	return 0;
}

static void scope_reqs_free(struct pp_scope_req *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].scope);
		free(s[i].op);
		for (size_t j = 0; j < s[i].n_values; j++)
			free(s[i].values[j]);
		free(s[i].values);
	}
	free(s);
}

static void quota_done(struct pp_quota *q)
{
	free(q->ns);
	free(q->name);
	pp__rlist_done(&q->hard);
	pp__rlist_done(&q->used);
	scope_reqs_free(q->sel, q->n_sel);
	free(q->info_hard);
	free(q->info_used);
	free(q->info_exceeded);
}

pp_quotas *pp_quotas_free(pp_quotas *q)
{
	if (!q)
		return NULL;
	for (size_t i = 0; i < q->n; i++)
		quota_done(&q->v[i]);
	for (size_t i = 0; i < q->n_lim; i++) {
		struct pp_limited *l = &q->lim[i];
		free(l->group);
		free(l->resource);
		for (size_t j = 0; j < l->n_contains; j++)
			free(l->contains[j]);
		free(l->contains);
		scope_reqs_free(l->scopes, l->n_scopes);
	}
	free(q->lim);
	free(q->v);
	free(q);
	return NULL;
}

/* --- validation (ValidateResourceQuotaSpec) ------------------------------------------------------ */

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return true;
	return false;
}

/* IsStandardQuotaResourceName */
static bool standard_quota_resource(const char *name)
{
	static const char *const std[] = {
		"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
		"requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
		"resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims",
		"configmaps", "services.nodeports", "services.loadbalancers",
	};
	return in_list(name, std, PP_ELEMENTSOF(std)) || pp__has_prefix(name, "hugepages-") ||
	       pp__has_prefix(name, "requests.hugepages-");
}

/* IsIntegerResourceName */
static bool integer_resource(const char *name)
{
	static const char *const ints[] = {
		"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
		"persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
	};
	return in_list(name, ints, PP_ELEMENTSOF(ints)) || pp__is_extended_resource_name(name);
}

static const char *const standard_scopes[] = {
	"Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
	"CrossNamespacePodAffinity", "VolumeAttributesClass",
};

/* Scopes that take no value: the operator must be Exists. */
static bool presence_scope(const char *scope)
{
	return strcmp(scope, "PriorityClass") != 0 && strcmp(scope, "VolumeAttributesClass") != 0;
}

/* IsResourceQuotaScopeValidForResource, for a standard quota resource name. */
static bool scope_valid_for(const char *scope, const char *resource)
{
	static const char *const pod_compute[] = { "pods", "cpu", "memory", "limits.cpu", "limits.memory",
		                                   "requests.cpu", "requests.memory" };
	static const char *const pvc[] = { "persistentvolumeclaims", "requests.storage" };
	if (strcmp(scope, "BestEffort") == 0)
		return strcmp(resource, "pods") == 0;
	if (strcmp(scope, "VolumeAttributesClass") == 0)
		return in_list(resource, pvc, PP_ELEMENTSOF(pvc));
	if (in_list(scope, standard_scopes, PP_ELEMENTSOF(standard_scopes)))
		return in_list(resource, pod_compute, PP_ELEMENTSOF(pod_compute));
	return true;
}

/* ValidateResourceQuotaResourceName and ValidateResourceQuantityValue over one list. */
static int validate_resources(const struct pp_rlist *l, const char *field, pp_err *err)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *name = l->v[i].name;
		__int128 milli_ceil = l->v[i].q.nano / 1000000 + (l->v[i].q.nano % 1000000 > 0);
		if (!pp__is_qualified_name(name))
			return pp_fail(err, -EINVAL, "%s[%.100s]: invalid resource name: must be a qualified name", field, name);
		if (!strchr(name, '/') && !standard_quota_resource(name))
			return pp_fail(err, -EINVAL, "%s[%.100s]: must be a standard resource for quota", field, name);
		if (l->v[i].q.nano < 0)
			return pp_fail(err, -EINVAL, "%s[%.100s]: must be greater than or equal to 0", field, name);
		if (integer_resource(name) && milli_ceil % 1000 != 0)
			return pp_fail(err, -EINVAL, "%s[%.100s]: must be an integer", field, name);
	}
	return 0;
}

static int dup_scope_req(struct pp_scope_req *d, const char *scope, const char *op, const char *const *values,
                         size_t n_values)
{
	memset(d, 0, sizeof(*d));
	if (!(d->scope = strdup(scope)) || !(d->op = strdup(op ? op : "")) ||
	    (n_values && !(d->values = calloc(n_values, sizeof(*d->values)))))
		return -ENOMEM;
	for (size_t i = 0; i < n_values; i++, d->n_values++)
		if (!(d->values[i] = strdup(values[i])))
			return -ENOMEM;
	return 0;
}

/*
 * One scope requirement, as validateScopedResourceSelectorRequirement (or, for the plugin's
 * configuration, as strictly: see pp_quotas_add_limited_resource). field names it.
 */
static int validate_scope_req(const pp_scope_requirement *s, const char *field, pp_err *err)
{
	const char *op = s->operator_ ? s->operator_ : "";
	if (!s->scope_name || !in_list(s->scope_name, standard_scopes, PP_ELEMENTSOF(standard_scopes)))
		return pp_fail(err, -EINVAL, "%s.scopeName: unsupported scope \"%.80s\"", field,
		               s->scope_name ? s->scope_name : "");
	if (s->n_values && !s->values)
		return -EINVAL;
	for (size_t i = 0; i < s->n_values; i++)
		if (!s->values[i])
			return -EINVAL;
	if (presence_scope(s->scope_name) && strcmp(op, "Exists") != 0)
		return pp_fail(err, -EINVAL, "%s.operator: must be Exists when scopeName is %s, got \"%.40s\"", field,
		               s->scope_name, op);
	if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
		if (s->n_values == 0)
			return pp_fail(err, -EINVAL, "%s.values: must be at least one value when operator is %s", field, op);
	} else if (strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0) {
		if (s->n_values)
			return pp_fail(err, -EINVAL, "%s.values: must be no value when operator is %s", field, op);
	} else {
		return pp_fail(err, -EINVAL, "%s.operator: not a valid selector operator \"%.40s\" (In, NotIn, Exists or "
		               "DoesNotExist)", field, op);
	}
	return 0;
}

/* validateResourceQuotaScopes / validateScopeSelector over the quota's selectors. */
static int validate_scopes(const pp_quota_spec *spec, const struct pp_rlist *hard, pp_err *err)
{
	bool seen[PP_ELEMENTSOF(standard_scopes)] = { false };
	size_t n = spec->n_scopes + spec->n_scope_selector;

	for (size_t i = 0; i < n; i++) {
		bool from_scopes = i < spec->n_scopes;
		const char *scope = from_scopes ? spec->scopes[i] : spec->scope_selector[i - spec->n_scopes].scope_name;
		char field[96];
		if (from_scopes)
			snprintf(field, sizeof(field), "spec.scopes[%zu]", i);
		else
			snprintf(field, sizeof(field), "spec.scopeSelector.matchExpressions[%zu]", i - spec->n_scopes);
		if (!scope || !in_list(scope, standard_scopes, PP_ELEMENTSOF(standard_scopes)))
			return pp_fail(err, -EINVAL, "%s%s: unsupported scope \"%.80s\"", field, from_scopes ? "" : ".scopeName",
			               scope ? scope : "");
		if (!from_scopes) {
			int r = validate_scope_req(&spec->scope_selector[i - spec->n_scopes], field, err);
			if (r < 0)
				return r;
		}
		for (size_t k = 0; k < hard->n; k++)
			if (standard_quota_resource(hard->v[k].name) && !scope_valid_for(scope, hard->v[k].name))
				return pp_fail(err, -EINVAL, "%s: unsupported scope applied to resource: %s cannot limit %.100s",
				               field, scope, hard->v[k].name);
		for (size_t s = 0; s < PP_ELEMENTSOF(standard_scopes); s++)
			if (strcmp(scope, standard_scopes[s]) == 0)
				seen[s] = true;
	}
	/* BestEffort/NotBestEffort and Terminating/NotTerminating exclude each other */
	if ((seen[2] && seen[3]) || (seen[0] && seen[1]))
		return pp_fail(err, -EINVAL, "spec.scopes: conflicting scopes %s and %s", seen[2] && seen[3] ? "BestEffort" :
		               "Terminating", seen[2] && seen[3] ? "NotBestEffort" : "NotTerminating");
	return 0;
}

/* --- the set ------------------------------------------------------------------------------------ */

static int cmp_key(const char *ns1, const char *n1, const char *ns2, const char *n2)
{
	int c = strcmp(ns1, ns2);
	return c ? c : strcmp(n1, n2);
}

size_t pp__quotas_ns_begin(const pp_quotas *q, const char *ns)
{
	size_t lo = 0, hi = q->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(q->v[mid].ns, ns) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t pp__quotas_ns_end(const pp_quotas *q, const char *ns, size_t begin)
{
	while (begin < q->n && strcmp(q->v[begin].ns, ns) == 0)
		begin++;
	return begin;
}

static int build_quota(struct pp_quota *x, const pp_quota_spec *spec, pp_err *err)
{
	struct pp_rlist spec_hard = { 0 };
	int r;

	if (!(x->ns = strdup(spec->namespace_)) || !(x->name = strdup(spec->name)))
		return -ENOMEM;
	if ((r = pp__rlist_parse(&spec_hard, spec->hard, spec->n_hard, "spec.hard", err)) < 0 ||
	    (r = validate_resources(&spec_hard, "spec.hard", err)) < 0 || (r = validate_scopes(spec, &spec_hard, err)) < 0)
		goto out;
	if (spec->has_status) {
		if ((r = pp__rlist_parse(&x->hard, spec->status_hard, spec->n_status_hard, "status.hard", err)) < 0 ||
		    (r = validate_resources(&x->hard, "status.hard", err)) < 0 ||
		    (r = pp__rlist_parse(&x->used, spec->status_used, spec->n_status_used, "status.used", err)) < 0 ||
		    (r = validate_resources(&x->used, "status.used", err)) < 0)
			goto out;
	} else {
		/* the controller's first sync: hard from the spec, zero usage of what pods can use */
		struct pp_qty zero = pp__qty_int(0);
		x->computed = true;
		x->hard = spec_hard;
		memset(&spec_hard, 0, sizeof(spec_hard));
		for (size_t i = 0; i < x->hard.n && r >= 0; i++)
			if (pp__quota_pod_resource(x->hard.v[i].name))
				r = pp__rlist_set(&x->used, x->hard.v[i].name, &zero);
		if (r < 0)
			goto out;
	}
	x->n_sel = spec->n_scopes + spec->n_scope_selector;
	if (x->n_sel && !(x->sel = calloc(x->n_sel, sizeof(*x->sel)))) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < spec->n_scopes && r >= 0; i++)
		r = dup_scope_req(&x->sel[i], spec->scopes[i], "Exists", NULL, 0);
	for (size_t i = 0; i < spec->n_scope_selector && r >= 0; i++) {
		const pp_scope_requirement *s = &spec->scope_selector[i];
		r = dup_scope_req(&x->sel[spec->n_scopes + i], s->scope_name, s->operator_, s->values, s->n_values);
	}
out:
	pp__rlist_done(&spec_hard);
	return r;
}

int pp_quotas_add(pp_quotas *q, const pp_quota_spec *spec, pp_err *err)
{
	struct pp_quota x = { 0 };
	int r;

	if (!q || !spec || !spec->namespace_ || !spec->name || (spec->n_hard && !spec->hard) ||
	    (spec->n_scopes && !spec->scopes) || (spec->n_scope_selector && !spec->scope_selector) ||
	    (spec->n_status_hard && !spec->status_hard) || (spec->n_status_used && !spec->status_used))
		return -EINVAL;
	for (size_t i = 0; i < spec->n_scopes; i++)
		if (!spec->scopes[i])
			return -EINVAL;
	if (!pp_is_dns_subdomain(spec->name))
		return pp_fail(err, -EINVAL, "metadata.name: \"%.100s\" is not a DNS subdomain", spec->name);
	size_t at = pp__quotas_ns_begin(q, spec->namespace_);
	while (at < q->n && cmp_key(q->v[at].ns, q->v[at].name, spec->namespace_, spec->name) < 0)
		at++;
	if (at < q->n && cmp_key(q->v[at].ns, q->v[at].name, spec->namespace_, spec->name) == 0)
		return pp_fail(err, -EEXIST, "resourcequotas/%.100s/%.100s: listed twice", spec->namespace_, spec->name);
	if ((r = build_quota(&x, spec, err)) < 0) {
		quota_done(&x);
		return r;
	}
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 8;
		struct pp_quota *v = reallocarray(q->v, cap, sizeof(*v));
		if (!v) {
			quota_done(&x);
			return -ENOMEM;
		}
		q->v = v;
		q->cap = cap;
	}
	memmove(&q->v[at + 1], &q->v[at], (q->n - at) * sizeof(*q->v));
	q->v[at] = x;
	q->n++;
	return 0;
}

int pp_quotas_add_limited_resource(pp_quotas *q, const pp_limited_resource *lr, pp_err *err)
{
	struct pp_limited l = { 0 };
	size_t idx;
	int r = 0;

	if (!q || !lr || (lr->n_match_contains && !lr->match_contains) || (lr->n_match_scopes && !lr->match_scopes))
		return -EINVAL;
	idx = q->n_lim;
	if (!lr->resource || !*lr->resource)
		return pp_fail(err, -EINVAL, "limitedResources[%zu].resource: Required value", idx);
	for (size_t i = 0; i < lr->n_match_contains; i++)
		if (!lr->match_contains[i])
			return -EINVAL;
	for (size_t i = 0; i < lr->n_match_scopes; i++) {
		char field[96];
		const pp_scope_requirement *s = &lr->match_scopes[i];
		snprintf(field, sizeof(field), "limitedResources[%zu].matchScopes[%zu]", idx, i);
		/* kube-apiserver's presence scopes ignore the operator, so "" means Exists there */
		pp_scope_requirement checked = *s;
		if (s->scope_name && presence_scope(s->scope_name) && (!s->operator_ || !*s->operator_))
			checked.operator_ = "Exists";
		if ((r = validate_scope_req(&checked, field, err)) < 0)
			return r;
	}
	if (!(l.group = strdup(lr->api_group ? lr->api_group : "")) || !(l.resource = strdup(lr->resource)) ||
	    (lr->n_match_contains && !(l.contains = calloc(lr->n_match_contains, sizeof(*l.contains)))) ||
	    (lr->n_match_scopes && !(l.scopes = calloc(lr->n_match_scopes, sizeof(*l.scopes)))))
		r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < lr->n_match_contains; i++, l.n_contains++)
		if (!(l.contains[i] = strdup(lr->match_contains[i])))
			r = -ENOMEM;
	for (size_t i = 0; r >= 0 && i < lr->n_match_scopes; i++, l.n_scopes++) {
		const pp_scope_requirement *s = &lr->match_scopes[i];
		r = dup_scope_req(&l.scopes[i], s->scope_name, s->operator_, s->values, s->n_values);
	}
	if (r >= 0 && q->n_lim % 8 == 0) {
		struct pp_limited *v = reallocarray(q->lim, q->n_lim + 8, sizeof(*v));
		if (!v)
			r = -ENOMEM;
		else
			q->lim = v;
	}
	if (r < 0) {
		free(l.group);
		free(l.resource);
		for (size_t i = 0; i < l.n_contains; i++)
			free(l.contains[i]);
		free(l.contains);
		scope_reqs_free(l.scopes, l.n_scopes);
		return r;
	}
	q->lim[q->n_lim++] = l;
	return 0;
}

/* --- the quota controller's usage --------------------------------------------------------------- */

/* QuotaV1Pod: terminal pods, and pods stuck terminating past their grace period, are not charged
 * for compute resources (count/pods counts every pod in storage). */
static bool charged(const pp_quota_pod *p, int64_t now_ns)
{
	if (p->terminal)
		return false;
	if (p->has_deletion_grace) {
		int64_t grace_ns = p->deletion_grace_s > INT64_MAX / 1000000000 ? INT64_MAX : p->deletion_grace_s * 1000000000;
		if (now_ns > pp__sat_add(p->deletion_time_ns, grace_ns))
			return false;
	}
	return true;
}

int pp_quotas_count_pod(pp_quotas *q, const pp_quota_pod *pod, int64_t now_ns, pp_err *err)
{
	struct pp_qpod p;
	int r;

	if (!q || !pod || !pod->namespace_)
		return -EINVAL;
	size_t b = pp__quotas_ns_begin(q, pod->namespace_), e = pp__quotas_ns_end(q, pod->namespace_, b), first = b;
	while (first < e && !q->v[first].computed)
		first++;
	if (first == e)
		return 0; /* nothing of its namespace counts pods: a large cluster's common case */
	if ((r = pp__qpod_init(&p, pod, charged(pod, now_ns), err)) < 0)
		return r;
	for (size_t i = b; i < e && r >= 0; i++) {
		struct pp_quota *x = &q->v[i];
		if (!x->computed || !pp__qpod_matches_scopes(&p, x->sel, x->n_sel))
			continue;
		/* CalculateUsageStats: used (zero DecimalSI per tracked resource) += the pod's usage */
		for (size_t k = 0; k < x->used.n; k++) {
			const struct pp_rentry *u = pp__rlist_find(&p.usage, x->used.v[k].name);
			if (u)
				pp__qty_add(&x->used.v[k].q, &u->q);
		}
	}
	pp__qpod_done(&p);
	return r;
}

/* --- reading back ------------------------------------------------------------------------------- */

size_t pp_quotas_count(const pp_quotas *q)
{
	return q ? q->n : 0;
}

/* The resources whose usage is above hard, sorted and ","-joined. */
static char *exceeded_names(const struct pp_quota *x)
{
	const char **names = calloc(x->used.n + 1, sizeof(*names));
	size_t n = 0, len = 1, at = 0;
	char *s;

	if (!names)
		return NULL;
	for (size_t k = 0; k < x->used.n; k++) {
		const struct pp_rentry *h = pp__rlist_find(&x->hard, x->used.v[k].name);
		if (h && pp__qty_cmp(&x->used.v[k].q, &h->q) > 0) {
			names[n++] = x->used.v[k].name;
			len += strlen(x->used.v[k].name) + 1;
		}
	}
	qsort(names, n, sizeof(*names), pp__strptr_cmp);
	if ((s = malloc(len))) {
		s[0] = '\0';
		for (size_t k = 0; k < n; k++)
			at += (size_t)snprintf(s + at, len - at, "%s%s", k ? "," : "", names[k]);
	}
	free(names);
	return s;
}

int pp_quotas_info(pp_quotas *q, size_t i, pp_quota_info *ret)
{
	struct pp_quota *x;
	char *hard, *used, *exceeded;

	if (!q || !ret || i >= q->n)
		return -EINVAL;
	x = &q->v[i];
	hard = pp__rlist_print(&x->hard, NULL, NULL);
	used = pp__rlist_print(&x->used, NULL, NULL);
	exceeded = exceeded_names(x);
	if (!hard || !used || !exceeded) {
		free(hard);
		free(used);
		free(exceeded);
		return -ENOMEM;
	}
	free(x->info_hard);
	free(x->info_used);
	free(x->info_exceeded);
	x->info_hard = hard;
	x->info_used = used;
	x->info_exceeded = exceeded;
	*ret = (pp_quota_info){ x->ns, x->name, x->computed, hard, used, exceeded };
	return 0;
}

size_t pp__scope_req_len(const struct pp_scope_req *s)
{
	size_t n = strlen("{  []}") + strlen(s->scope) + strlen(s->op);
	for (size_t i = 0; i < s->n_values; i++)
		n += strlen(s->values[i]) + (i ? 1 : 0);
	return n;
}

void pp__scope_req_format(const struct pp_scope_req *s, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "{%s %s [", s->scope, s->op);
	for (size_t i = 0; i < s->n_values && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? " " : "", s->values[i]);
	if (n < size)
		snprintf(buf + n, size - n, "]}");
}
