/* SPDX-License-Identifier: MIT */
/*
 * The quota system's pod evaluator (pkg/quota/v1/evaluator/core/pods.go): what a pod uses
 * (PodUsageFunc over resourcehelper.PodRequests/PodLimits), which scopes it matches
 * (podMatchesScopeFunc), and the old cpu/memory constraint (Constraints).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qty.h"
#include "quantity.h"
#include "quota_pod.h"
#include "requests.h"

/* IsNativeResource: unqualified, or in the kubernetes.io/ domain — except DRA's implicit
 * extended resources "deviceclass.resource.kubernetes.io/<class>", which the quota evaluator
 * counts as extended (pods_test.go TestPodEvaluatorUsage, "container implicit extended
 * resources"). */
static bool is_native(const char *name)
{
	return !strchr(name, '/') ||
	       (strstr(name, "kubernetes.io/") && !pp__has_prefix(name, "deviceclass.resource.kubernetes.io/"));
}

bool pp__is_extended_resource_name(const char *name)
{
	char quota[600];
	if (is_native(name) || pp__has_prefix(name, "requests.") || strlen(name) > 512)
		return false;
	snprintf(quota, sizeof(quota), "requests.%s", name);
	return pp__is_qualified_name(quota);
}

/* podResources, podResourcePrefixes and isExtendedResourceNameForQuota. */
bool pp__quota_pod_resource(const char *name)
{
	static const char *const pod_resources[] = {
		"count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
		"requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
	};
	for (size_t i = 0; i < PP_ELEMENTSOF(pod_resources); i++)
		if (strcmp(name, pod_resources[i]) == 0)
			return true;
	return pp__has_prefix(name, "hugepages-") || pp__has_prefix(name, "requests.hugepages-") ||
	       (!is_native(name) && pp__has_prefix(name, "requests."));
}

/* IsSupportedPodLevelResource */
static bool pod_level_resource(const char *name)
{
	return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 || pp__has_prefix(name, "hugepages-");
}

static bool any_pod_level(const pp_quantity_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (kv[i].name && pod_level_resource(kv[i].name))
			return true;
	return false;
}

static int parse_list(struct pp_rlist *l, const pp_quantity_kv *kv, size_t n, const char *field, pp_err *err)
{
	if (n && !kv)
		return -EINVAL;
	return pp__rlist_parse(l, kv, n, field, err);
}

/*
 * aggregateContainerResourcesByFn: the sum of the containers and sidecars, or the largest init
 * step (an init container plus the sidecars started before it) when that is larger — with the
 * quantities' own formats kept as Go's addResourceList/maxResourceList keep them.
 */
static int aggregate(const pp_quota_pod *p, bool limits, struct pp_rlist *ret, pp_err *err)
{
	struct pp_rlist result = { 0 }, sidecars = { 0 }, init = { 0 };
	size_t n_regular = 0, n_init = 0;
	int r = 0;

	for (int pass = 0; pass < 2 && r >= 0; pass++)
		for (size_t i = 0; i < p->n_containers && r >= 0; i++) {
			const pp_container_resources *c = &p->containers[i];
			bool regular = c->kind == PP_CONTAINER;
			struct pp_rlist own = { 0 }, step = { 0 };
			char field[80];
			if (regular != (pass == 0))
				continue;
			snprintf(field, sizeof(field), "%s[%zu].resources.%s", regular ? "containers" : "initContainers",
			         regular ? n_regular++ : n_init++, limits ? "limits" : "requests");
			r = limits ? parse_list(&own, c->limits, c->n_limits, field, err)
			           : parse_list(&own, c->requests, c->n_requests, field, err);
			if (r >= 0 && regular)
				r = pp__rlist_add_all(&result, &own);
			else if (r >= 0 && c->kind == PP_SIDECAR) {
				if ((r = pp__rlist_add_all(&result, &own)) >= 0 && (r = pp__rlist_add_all(&sidecars, &own)) >= 0)
					r = pp__rlist_max_all(&init, &sidecars);
			} else if (r >= 0) {
				if ((r = pp__rlist_copy(&step, &own)) >= 0 && (r = pp__rlist_add_all(&step, &sidecars)) >= 0)
					r = pp__rlist_max_all(&init, &step);
			}
			pp__rlist_done(&own);
			pp__rlist_done(&step);
		}
	if (r >= 0)
		r = pp__rlist_max_all(&result, &init);
	pp__rlist_done(&sidecars);
	pp__rlist_done(&init);
	if (r < 0) {
		pp__rlist_done(&result);
		return r;
	}
	*ret = result;
	return 0;
}

/* PodRequests / PodLimits: the aggregate, pod-level resources over it, then the overhead (added
 * to requests, and to the limits the pod has and that are not zero). */
static int pod_resources(const pp_quota_pod *p, bool limits, struct pp_rlist *ret, pp_err *err)
{
	struct pp_rlist res = { 0 }, level = { 0 }, overhead = { 0 };
	bool pod_level = limits ? any_pod_level(p->pod_requests, p->n_pod_requests) ||
	                                  any_pod_level(p->pod_limits, p->n_pod_limits)
	                        : any_pod_level(p->pod_requests, p->n_pod_requests);
	int r = aggregate(p, limits, &res, err);

	if (r >= 0)
		r = limits ? parse_list(&level, p->pod_limits, p->n_pod_limits, "resources.limits", err)
		           : parse_list(&level, p->pod_requests, p->n_pod_requests, "resources.requests", err);
	for (size_t i = 0; r >= 0 && pod_level && i < level.n; i++)
		if (pod_level_resource(level.v[i].name))
			r = pp__rlist_set(&res, level.v[i].name, &level.v[i].q);
	if (r >= 0)
		r = parse_list(&overhead, p->overhead, p->n_overhead, "overhead", err);
	for (size_t i = 0; r >= 0 && i < overhead.n; i++) {
		struct pp_rentry *e = pp__rlist_find(&res, overhead.v[i].name);
		if (!limits)
			r = pp__rlist_add(&res, overhead.v[i].name, &overhead.v[i].q);
		else if (e && e->q.nano != 0)
			pp__qty_add(&e->q, &overhead.v[i].q);
	}
	pp__rlist_done(&level);
	pp__rlist_done(&overhead);
	if (r < 0) {
		pp__rlist_done(&res);
		return r;
	}
	*ret = res;
	return 0;
}

static int set_prefixed(struct pp_rlist *l, const char *prefix, const char *name, const struct pp_qty *q)
{
	char buf[700];
	snprintf(buf, sizeof(buf), "%s%s", prefix, name);
	return pp__rlist_set(l, buf, q);
}

/* podComputeUsageHelper */
static int compute_usage(struct pp_rlist *u, const struct pp_rlist *req, const struct pp_rlist *lim)
{
	static const char *const compute[] = { "cpu", "memory", "ephemeral-storage" };
	struct pp_qty one;
	int r = pp__qty_parse("1", &one, NULL); /* resource.MustParse("1") */

	if (r >= 0)
		r = pp__rlist_set(u, "pods", &one);
	pp__qty_done(&one);
	for (size_t i = 0; r >= 0 && i < PP_ELEMENTSOF(compute); i++) {
		const struct pp_rentry *e = pp__rlist_find(req, compute[i]);
		if (e && (r = pp__rlist_set(u, compute[i], &e->q)) >= 0)
			r = set_prefixed(u, "requests.", compute[i], &e->q);
		if (r >= 0 && (e = pp__rlist_find(lim, compute[i])))
			r = set_prefixed(u, "limits.", compute[i], &e->q);
	}
	for (size_t i = 0; r >= 0 && i < req->n; i++) {
		const struct pp_rentry *e = &req->v[i];
		if (pp__has_prefix(e->name, "hugepages-") && (r = pp__rlist_set(u, e->name, &e->q)) >= 0)
			r = set_prefixed(u, "requests.", e->name, &e->q);
		if (r >= 0 && pp__is_extended_resource_name(e->name))
			r = set_prefixed(u, "requests.", e->name, &e->q);
	}
	return r;
}

static bool positive_cpu_memory(const pp_quantity_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		__int128 v;
		if (kv[i].name && (strcmp(kv[i].name, "cpu") == 0 || strcmp(kv[i].name, "memory") == 0) &&
		    pp__quantity_parse_nano(kv[i].value, &v, NULL) == 0 && v > 0)
			return true;
	}
	return false;
}

/* GetPodQOS == BestEffort: no positive cpu or memory request or limit anywhere (pod-level
 * resources, when set, decide alone); status.qosClass when the pod has one. */
static bool best_effort(const pp_quota_pod *p)
{
	if (p->qos_class && *p->qos_class)
		return strcmp(p->qos_class, "BestEffort") == 0;
	if (p->n_pod_requests || p->n_pod_limits)
		return !positive_cpu_memory(p->pod_requests, p->n_pod_requests) &&
		       !positive_cpu_memory(p->pod_limits, p->n_pod_limits);
	for (size_t i = 0; i < p->n_containers; i++) {
		const pp_container_resources *c = &p->containers[i];
		if (positive_cpu_memory(c->requests, c->n_requests) || positive_cpu_memory(c->limits, c->n_limits))
			return false;
	}
	return true;
}

int pp__qpod_init(struct pp_qpod *p, const pp_quota_pod *spec, bool charged, pp_err *err)
{
	struct pp_qpod x = { .spec = spec };
	struct pp_rlist req = { 0 }, lim = { 0 };
	struct pp_qty one = pp__qty_int(1); /* resource.NewQuantity(1, DecimalSI) */
	int r;

	if (!spec->namespace_ || !spec->name || (spec->n_containers && !spec->containers))
		return pp_fail(err, -EINVAL, "a pod needs a namespace and a name");
	x.class_name = spec->priority_class_name ? spec->priority_class_name : "";
	x.best_effort = best_effort(spec);
	x.terminating = spec->has_active_deadline && spec->active_deadline_s >= 0;
	/* Quantities are validated even when the pod is not charged: a bad one is an input error. */
	r = pod_resources(spec, false, &req, err);
	if (r >= 0)
		r = pod_resources(spec, true, &lim, err);
	if (r >= 0)
		r = pp__rlist_set(&x.usage, "count/pods", &one);
	if (r >= 0 && charged)
		r = compute_usage(&x.usage, &req, &lim);
	pp__rlist_done(&req);
	pp__rlist_done(&lim);
	if (r < 0) {
		pp__rlist_done(&x.usage);
		return r;
	}
	*p = x;
	return 0;
}

void pp__qpod_done(struct pp_qpod *p)
{
	pp__rlist_done(&p->usage);
}

static bool has_value(const struct pp_scope_req *s, const char *v)
{
	for (size_t i = 0; i < s->n_values; i++)
		if (strcmp(s->values[i], v) == 0)
			return true;
	return false;
}

/* podMatchesScopeFunc. The operator counts only for PriorityClass (a label selector over
 * {"PriorityClass": name}, empty when the pod has no class); the other scopes ignore it. */
bool pp__qpod_matches(const struct pp_qpod *p, const struct pp_scope_req *s)
{
	bool has_class = *p->class_name != '\0';

	if (strcmp(s->scope, "Terminating") == 0)
		return p->terminating;
	if (strcmp(s->scope, "NotTerminating") == 0)
		return !p->terminating;
	if (strcmp(s->scope, "BestEffort") == 0)
		return p->best_effort;
	if (strcmp(s->scope, "NotBestEffort") == 0)
		return !p->best_effort;
	if (strcmp(s->scope, "CrossNamespacePodAffinity") == 0)
		return p->spec->cross_namespace_affinity;
	if (strcmp(s->scope, "PriorityClass") != 0)
		return false;
	if (strcmp(s->op, "Exists") == 0)
		return has_class;
	if (strcmp(s->op, "DoesNotExist") == 0)
		return !has_class;
	if (strcmp(s->op, "In") == 0)
		return has_class && has_value(s, p->class_name);
	if (strcmp(s->op, "NotIn") == 0)
		return !has_class || !has_value(s, p->class_name);
	return false; /* refused when the quota or the configuration was added */
}

bool pp__qpod_matches_scopes(const struct pp_qpod *p, const struct pp_scope_req *sel, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!pp__qpod_matches(p, &sel[i]))
			return false;
	return true;
}

/* validationSet of pods.go: the resources a quota makes every container state. */
static const char *const validation_set[] = { "cpu", "limits.cpu", "limits.memory", "memory", "requests.cpu", "requests.memory" };

/* Whether a container states resource k of the validation set (podComputeUsageHelper's keys). */
static bool container_states(const pp_container_resources *c, const char *k)
{
	bool limit = pp__has_prefix(k, "limits.");
	const char *base = strchr(k, '.') ? strchr(k, '.') + 1 : k;
	const pp_quantity_kv *kv = limit ? c->limits : c->requests;
	size_t n = limit ? c->n_limits : c->n_requests;
	for (size_t i = 0; i < n; i++)
		if (kv[i].name && strcmp(kv[i].name, base) == 0)
			return true;
	return false;
}

/*
 * Constraints: "must specify cpu for: bar,foo; memory for: bar,foo" — every resource of the
 * validation set that a matching quota limits must be stated by every container (containers
 * first, then init containers; names sorted). Skipped when the pod sets pod-level resources
 * (pods_test.go TestPodConstraintsFunc, "pod-level resource set, container-level required
 * resources missing").
 */
int pp__qpod_constraints(const struct pp_qpod *p, const struct pp_rlist *hard, char **ret)
{
	const pp_quota_pod *s = p->spec;
	size_t cap = 1, len = 0;
	char *msg = NULL;

	*ret = NULL;
	if (any_pod_level(s->pod_requests, s->n_pod_requests) || any_pod_level(s->pod_limits, s->n_pod_limits))
		return 0;
	for (size_t k = 0; k < PP_ELEMENTSOF(validation_set); k++) {
		const char *res = validation_set[k];
		const char **names;
		size_t n = 0;
		if (!pp__rlist_find(hard, res))
			continue;
		if (!(names = calloc(s->n_containers + 1, sizeof(*names)))) {
			free(msg);
			return -ENOMEM;
		}
		for (size_t i = 0; i < s->n_containers; i++)
			if (!container_states(&s->containers[i], res))
				names[n++] = s->containers[i].name ? s->containers[i].name : "";
		qsort(names, n, sizeof(*names), pp__strptr_cmp);
		for (size_t i = 0; i < n; i++) {
			if (i && strcmp(names[i], names[i - 1]) == 0)
				continue; /* a sets.String */
			size_t need = len + strlen(res) + strlen(names[i]) + 32;
			if (need > cap) {
				char *m = realloc(msg, cap = need * 2);
				if (!m) {
					free(msg);
					free(names);
					return -ENOMEM;
				}
				msg = m;
			}
			if (i == 0)
				len += (size_t)snprintf(msg + len, cap - len, "%s%s for: %s", len ? "; " : "must specify ", res,
				                        names[i]);
			else
				len += (size_t)snprintf(msg + len, cap - len, ",%s", names[i]);
		}
		free(names);
	}
	*ret = msg;
	return 0;
}
