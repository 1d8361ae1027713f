/* SPDX-License-Identifier: MIT */
/*
 * One Kubernetes object (a libfyaml node) -> the structs of k8s.h. Objects with errors are
 * reported field by field and not added, so that one pass reports every problem.
 * Over ~700 lines on purpose: one decoder per kind (Pod with its affinity, Node, PriorityClass,
 * PodDisruptionBudget) and the kind dispatch, sharing one field walker and one error convention
 * (KIND/NS/NAME: field: what); in separate files each would need the walker's internals exported.
 * Quantities are kparse.c, the admission configuration k8s_admission.c, ResourceQuota k8s_quota.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_decode.h"
#include "k8s_quota.h"
#include "yamlval.h"

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* --- selectors -------------------------------------------------------------------------------- */

static int requirement(yv *v, const kval *e, struct k8s_req *r, const char *const *ops,
                       bool node_selector)
{
	int bad = 0;
	bad |= yv_string(v, e, "key", true, &r->key) < 0;
	bad |= yv_string(v, e, "operator", true, &r->op) < 0;
	bad |= yv_string_list(v, e, "values", &r->nvalues, &r->values) < 0;
	if (bad)
		return -1;
	size_t mark = yv_push_key(v, "operator");
	if (!one_of(r->op, ops)) {
		yv_error(v, yv_get(e, "operator"), "unsupported operator \"%s\"", r->op);
		bad = 1;
	}
	yv_pop(v, mark);
	if (bad)
		return -1;
	mark = yv_push_key(v, "values");
	bool in = !strcmp(r->op, "In") || !strcmp(r->op, "NotIn");
	bool exists = !strcmp(r->op, "Exists") || !strcmp(r->op, "DoesNotExist");
	if (in && r->nvalues == 0) {
		yv_error(v, e, "must be specified when operator is \"%s\"", r->op);
		bad = 1;
	} else if (exists && r->nvalues) {
		yv_error(v, yv_get(e, "values"), "may not be specified when operator is \"%s\"", r->op);
		bad = 1;
	} else if (node_selector && (!strcmp(r->op, "Gt") || !strcmp(r->op, "Lt"))) {
		char *end;
		if (r->nvalues != 1) {
			yv_error(v, e, "must be a single integer when operator is \"%s\"", r->op);
			bad = 1;
		} else if ((strtoll(r->values[0], &end, 10), *end || !*r->values[0])) {
			yv_error(v, yv_get(e, "values"), "\"%s\" is not an integer", r->values[0]);
			bad = 1;
		}
	}
	yv_pop(v, mark);
	return bad ? -1 : 0;
}

static const char *const label_ops[] = { "In", "NotIn", "Exists", "DoesNotExist", NULL };
static const char *const node_ops[] = { "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", NULL };

static int label_req(yv *v, const kval *e, void *elem)
{
	return requirement(v, e, elem, label_ops, false);
}

static int node_req(yv *v, const kval *e, void *elem)
{
	return requirement(v, e, elem, node_ops, true);
}

static int label_selector(yv *v, const kval *map, const char *key, struct k8s_label_selector *ret)
{
	bool bad = false;
	size_t mark;
	const kval *n = yv_sub(v, map, key, &mark, &bad);
	if (!n)
		return bad ? -1 : 0;
	ret->present = true;
	bad |= yv_string_map(v, n, "matchLabels", &ret->match_labels) < 0;
	bad |= yv_list(v, n, "matchExpressions", sizeof(struct k8s_req), &ret->nexprs,
	                  (void **)&ret->exprs, label_req) < 0;
	yv_pop(v, mark);
	return bad ? -1 : 1;
}

static int node_term(yv *v, const kval *e, void *elem)
{
	struct k8s_node_selector_term *t = elem;
	int bad = 0;
	bad |= yv_list(v, e, "matchExpressions", sizeof(struct k8s_req), &t->nexprs,
	                  (void **)&t->exprs, node_req) < 0;
	bad |= yv_list(v, e, "matchFields", sizeof(struct k8s_req), &t->nfields,
	                  (void **)&t->fields, node_req) < 0;
	for (size_t i = 0; !bad && i < t->nfields; i++)
		if (strcmp(t->fields[i].key, "metadata.name") != 0) {
			size_t m = yv_push_key(v, "matchFields");
			m = (yv_push_index(v, i), m);
			yv_error(v, e, "key: unsupported field selector \"%s\" (only metadata.name)", t->fields[i].key);
			yv_pop(v, m);
			bad = 1;
		}
	return bad ? -1 : 0;
}

static int pod_affinity_term(yv *v, const kval *e, void *elem)
{
	struct k8s_pod_affinity_term *t = elem;
	int bad = 0;
	bad |= label_selector(v, e, "labelSelector", &t->selector) < 0;
	bad |= yv_string(v, e, "topologyKey", true, &t->topology_key) < 0;
	bad |= yv_string_list(v, e, "namespaces", &t->nnamespaces, &t->namespaces) < 0;
	bad |= label_selector(v, e, "namespaceSelector", &t->namespace_selector) < 0;
	return bad ? -1 : 0;
}

/* --- nodes -------------------------------------------------------------------------------------- */

static const char *const taint_effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };

static int taint(yv *v, const kval *e, void *elem)
{
	struct k8s_taint *t = elem;
	int bad = 0;
	bad |= yv_string(v, e, "key", true, &t->key) < 0;
	bad |= yv_string(v, e, "value", false, &t->value) < 0;
	bad |= yv_string(v, e, "effect", true, &t->effect) < 0;
	if (!t->value)
		t->value = "";
	if (!bad && !one_of(t->effect, taint_effects)) {
		size_t m = yv_push_key(v, "effect");
		yv_error(v, yv_get(e, "effect"), "unsupported value \"%s\" (NoSchedule, PreferNoSchedule or NoExecute)",
		         t->effect);
		yv_pop(v, m);
		bad = 1;
	}
	return bad ? -1 : 0;
}

static int decode_node(yv *v, const kval *obj, const kval *meta, struct k8s_node *nd)
{
	bool bad = false;
	size_t mark;
	const kval *n;

	mark = yv_push_key(v, "metadata");
	bad |= yv_string_map(v, meta, "labels", &nd->labels) < 0;
	yv_pop(v, mark);

	if ((n = yv_sub(v, obj, "spec", &mark, &bad))) {
		bad |= yv_list(v, n, "taints", sizeof(struct k8s_taint), &nd->ntaints,
		                  (void **)&nd->taints, taint) < 0;
		bad |= yv_bool(v, n, "unschedulable", &nd->unschedulable) < 0;
		yv_pop(v, mark);
	}
	int r = 0;
	if ((n = yv_sub(v, obj, "status", &mark, &bad))) {
		r = yv_rlist(v, n, "allocatable", &nd->allocatable);
		/* The API server copies capacity into allocatable when the kubelet leaves it out. */
		if (r == 0)
			r = yv_rlist(v, n, "capacity", &nd->allocatable);
		bad |= r < 0;
		yv_pop(v, mark);
	}
	if (r == 0 && !bad)
		yv_warn(v, obj, "status.allocatable and status.capacity are absent: the node admits no pods");
	return bad ? -1 : 0;
}

/* --- pods --------------------------------------------------------------------------------------- */

/*
 * SetDefaults_Pod, which the API server applies to every pod it receives: a limit without a request
 * makes the request (keep: only those resources; NULL: all). Pods read back from a cluster have it
 * done already; manifests need it so that the scheduler and the quota see what the API server will
 * store.
 */
static int default_requests(yv *v, k8s_rlist *req, const k8s_rlist *lim, bool (*keep)(const char *name))
{
	size_t extra = 0;
	struct k8s_kv *kv;

	for (size_t i = 0; i < lim->n; i++)
		extra += (!keep || keep(lim->v[i].key)) && !k8s_rlist_get(req, lim->v[i].key);
	if (!extra)
		return 0;
	if (!(kv = yv_calloc(v, req->n + extra, sizeof(*kv))))
		return -1;
	if (req->n)
		memcpy(kv, req->v, req->n * sizeof(*kv));
	for (size_t i = 0, n = req->n; i < lim->n; i++)
		if ((!keep || keep(lim->v[i].key)) && !k8s_rlist_get(req, lim->v[i].key))
			kv[n++] = lim->v[i];
	req->v = kv;
	req->n += extra;
	return 0;
}

/* IsSupportedPodLevelResource */
static bool pod_level_resource(const char *name)
{
	return !strcmp(name, "cpu") || !strcmp(name, "memory") || !strncmp(name, "hugepages-", 10);
}

static int container(yv *v, const kval *e, void *elem)
{
	struct k8s_container *c = elem;
	bool bad = false;
	size_t mark;
	const kval *res;
	const char *restart = NULL;

	bad |= yv_string(v, e, "name", true, &c->name) < 0;
	if ((res = yv_sub(v, e, "resources", &mark, &bad))) {
		bad |= yv_rlist(v, res, "requests", &c->requests) < 0;
		bad |= yv_rlist(v, res, "limits", &c->limits) < 0;
		bad |= default_requests(v, &c->requests, &c->limits, NULL) < 0;
		yv_pop(v, mark);
	}
	int r = yv_string(v, e, "restartPolicy", false, &restart);
	bad |= r < 0;
	if (r > 0) {
		if (strcmp(restart, "Always") == 0) {
			c->restartable = true;
		} else {
			mark = yv_push_key(v, "restartPolicy");
			yv_error(v, yv_get(e, "restartPolicy"), "unsupported value \"%s\" (only Always)", restart);
			yv_pop(v, mark);
			bad = true;
		}
	}
	return bad ? -1 : 0;
}

static const char *const toleration_ops[] = { "", "Exists", "Equal", NULL };
static const char *const toleration_effects[] = { "", "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };

static int toleration(yv *v, const kval *e, void *elem)
{
	struct k8s_toleration *t = elem;
	int bad = 0, r;
	bad |= yv_string(v, e, "key", false, &t->key) < 0;
	bad |= yv_string(v, e, "operator", false, &t->op) < 0;
	bad |= yv_string(v, e, "value", false, &t->value) < 0;
	bad |= yv_string(v, e, "effect", false, &t->effect) < 0;
	bad |= (r = yv_int64(v, e, "tolerationSeconds", &t->seconds)) < 0;
	t->has_seconds = r > 0;
	if (bad)
		return -1;
	if (!t->key) t->key = "";
	if (!t->op) t->op = "";
	if (!t->value) t->value = "";
	if (!t->effect) t->effect = "";
	size_t mark;
	if (!one_of(t->op, toleration_ops)) {
		mark = yv_push_key(v, "operator");
		yv_error(v, yv_get(e, "operator"), "unsupported value \"%s\" (Exists or Equal)", t->op);
		yv_pop(v, mark);
		bad = 1;
	} else if (!strcmp(t->op, "Exists") && *t->value) {
		mark = yv_push_key(v, "value");
		yv_error(v, yv_get(e, "value"), "must be empty when operator is Exists");
		yv_pop(v, mark);
		bad = 1;
	} else if (strcmp(t->op, "Exists") != 0 && !*t->key) {
		mark = yv_push_key(v, "operator");
		yv_error(v, e, "must be Exists when key is empty");
		yv_pop(v, mark);
		bad = 1;
	}
	if (!one_of(t->effect, toleration_effects)) {
		mark = yv_push_key(v, "effect");
		yv_error(v, yv_get(e, "effect"), "unsupported value \"%s\"", t->effect);
		yv_pop(v, mark);
		bad = 1;
	}
	return bad ? -1 : 0;
}

static int pod_affinity(yv *v, const kval *aff, const char *key, size_t *ret_n,
                        struct k8s_pod_affinity_term **ret, bool *cross_namespace)
{
	bool bad = false;
	size_t mark;
	const kval *n = yv_sub(v, aff, key, &mark, &bad), *pref;
	if (!n)
		return bad ? -1 : 0;
	bad |= yv_list(v, n, "requiredDuringSchedulingIgnoredDuringExecution",
	                  sizeof(struct k8s_pod_affinity_term), ret_n, (void **)ret, pod_affinity_term) < 0;
	for (size_t i = 0; !bad && i < *ret_n; i++)
		*cross_namespace |= (*ret)[i].nnamespaces || (*ret)[i].namespace_selector.present;
	/* usesCrossNamespacePodAffinity (the CrossNamespacePodAffinity quota scope) reads the
	 * preferred terms too, which nothing else here needs */
	pref = yv_get(n, "preferredDuringSchedulingIgnoredDuringExecution");
	for (size_t i = 0; i < kval_count(pref); i++) {
		const kval *t = yv_get(kval_at(pref, i), "podAffinityTerm");
		*cross_namespace |= kval_count(yv_get(t, "namespaces")) > 0 || yv_get(t, "namespaceSelector") != NULL;
	}
	yv_pop(v, mark);
	return bad ? -1 : 0;
}

static int decode_affinity(yv *v, const kval *spec, struct k8s_pod *p)
{
	bool bad = false;
	size_t mark, m2, m3;
	const kval *aff = yv_sub(v, spec, "affinity", &mark, &bad), *na, *req;
	if (!aff)
		return bad ? -1 : 0;
	if ((na = yv_sub(v, aff, "nodeAffinity", &m2, &bad))) {
		if ((req = yv_sub(v, na, "requiredDuringSchedulingIgnoredDuringExecution", &m3, &bad))) {
			p->has_node_affinity = true;
			int r = yv_list(v, req, "nodeSelectorTerms", sizeof(struct k8s_node_selector_term),
			                   &p->nnode_terms, (void **)&p->node_terms, node_term);
			if (r == 0) {
				yv_error(v, req, "nodeSelectorTerms: required field is missing");
				bad = true;
			}
			bad |= r < 0;
			yv_pop(v, m3);
		}
		yv_pop(v, m2);
	}
	bad |= pod_affinity(v, aff, "podAffinity", &p->naffinity, &p->affinity, &p->cross_namespace_affinity) < 0;
	bad |= pod_affinity(v, aff, "podAntiAffinity", &p->nanti_affinity, &p->anti_affinity,
	                    &p->cross_namespace_affinity) < 0;
	yv_pop(v, mark);
	return bad ? -1 : 0;
}

static int pod_status(yv *v, const kval *st, struct k8s_pod *p)
{
	static const char *const phases[] = { "Pending", "Running", "Succeeded", "Failed", "Unknown", "", NULL };
	static const enum k8s_pod_phase phase_values[] = { K8S_PHASE_PENDING, K8S_PHASE_RUNNING,
		K8S_PHASE_SUCCEEDED, K8S_PHASE_FAILED, K8S_PHASE_UNKNOWN, K8S_PHASE_UNKNOWN };
	bool bad = false;
	const char *phase = NULL;
	int r;

	bad |= (r = yv_string(v, st, "phase", false, &phase)) < 0;
	if (r > 0) {
		size_t i = 0;
		while (phases[i] && strcmp(phases[i], phase) != 0)
			i++;
		if (!phases[i]) {
			size_t m = yv_push_key(v, "phase");
			yv_error(v, yv_get(st, "phase"), "unknown phase \"%s\"", phase);
			yv_pop(v, m);
			bad = true;
		} else {
			p->phase = phase_values[i];
		}
	}
	bad |= yv_string(v, st, "nominatedNodeName", false, &p->nominated_node_name) < 0;
	bad |= (r = yv_time(v, st, "startTime", &p->start_ns)) < 0;
	p->has_start = r > 0;

	const kval *conds = yv_get(st, "conditions"), *c;
	if (conds) {
		size_t mark = yv_push_key(v, "conditions"), i = 0;
		if (!yv_expect_seq(v, conds))
			bad = true;
		else
			while ((c = kval_at(conds, i))) {
				size_t m2 = yv_push_index(v, i++);
				const char *type = NULL, *status = NULL, *reason = NULL;
				if (!yv_expect_map(v, c) || yv_string(v, c, "type", true, &type) < 0 ||
				    yv_string(v, c, "status", true, &status) < 0 ||
				    yv_string(v, c, "reason", false, &reason) < 0)
					bad = true;
				else if (!strcmp(type, "Ready") && strcmp(status, "True") != 0)
					p->ready_false = true;
				else if (!strcmp(type, "DisruptionTarget") && !strcmp(status, "True") && reason) {
					p->evicted_by_api |= !strcmp(reason, "EvictionByEvictionAPI");
					if (!strcmp(reason, "PreemptionByScheduler")) {
						p->preempted_by_scheduler = true;
						bad |= yv_string(v, c, "message", false, &p->preemption_message) < 0;
					}
				}
				else if (!strcmp(type, "PodScheduled")) {
					p->scheduled_status = status;
					p->scheduled_reason = reason;
					bad |= yv_string(v, c, "message", false, &p->scheduled_message) < 0;
				}
				yv_pop(v, m2);
			}
		yv_pop(v, mark);
	}
	return bad ? -1 : 0;
}

static int container_status(yv *v, const kval *e, void *elem)
{
	struct k8s_container_status *cs = elem;
	int bad = 0;
	bad |= yv_string(v, e, "name", true, &cs->name) < 0;
	bad |= yv_string(v, e, "containerID", false, &cs->container_id) < 0;
	return bad ? -1 : 0;
}

/* node: also the fields only the node agent needs */
static int decode_pod(yv *v, const kval *obj, const kval *meta, struct k8s_pod *p, bool node)
{
	bool bad = false;
	size_t mark;
	const kval *spec, *n;
	int r;

	mark = yv_push_key(v, "metadata");
	bad |= yv_string_map(v, meta, "labels", &p->labels) < 0;
	if (node) {
		bad |= yv_string(v, meta, "uid", false, &p->uid) < 0;
		bad |= yv_string_map(v, meta, "annotations", &p->annotations) < 0;
		bad |= yv_string(v, meta, "resourceVersion", false, &p->resource_version) < 0;
	}
	bad |= (r = yv_time(v, meta, "creationTimestamp", &p->creation_ns)) < 0;
	p->has_creation = r > 0;
	bad |= (r = yv_time(v, meta, "deletionTimestamp", &p->deletion_ns)) < 0;
	p->has_deletion = r > 0;
	bad |= (r = yv_int64(v, meta, "deletionGracePeriodSeconds", &p->deletion_grace_seconds)) < 0;
	p->has_deletion_grace = r > 0;
	yv_pop(v, mark);

	spec = yv_get(obj, "spec");
	mark = yv_push_key(v, "spec");
	if (!spec) {
		yv_error(v, obj, "required field is missing");
		bad = true;
	} else if (!yv_expect_map(v, spec)) {
		bad = true;
		spec = NULL;
	}
	if (spec) {
		bad |= yv_string(v, spec, "priorityClassName", false, &p->priority_class_name) < 0;
		bad |= (r = yv_int32(v, spec, "priority", false, &p->priority)) < 0;
		p->has_priority = r > 0;
		bad |= yv_string(v, spec, "preemptionPolicy", false, &p->preemption_policy) < 0;
		bad |= yv_string(v, spec, "nodeName", false, &p->node_name) < 0;
		if (node) {
			const kval *gates = yv_get(spec, "schedulingGates");
			bad |= yv_string(v, spec, "schedulerName", false, &p->scheduler_name) < 0;
			while (kval_type_of(gates) == KVAL_SEQ && kval_at(gates, p->nscheduling_gates))
				p->nscheduling_gates++;
		}
		r = yv_list(v, spec, "containers", sizeof(struct k8s_container), &p->ncontainers,
		               (void **)&p->containers, container);
		if (r == 0 || (r > 0 && p->ncontainers == 0)) {
			size_t m2 = yv_push_key(v, "containers");
			yv_error(v, spec, r == 0 ? "required field is missing" : "must have at least one container");
			yv_pop(v, m2);
			bad = true;
		}
		bad |= r < 0;
		bad |= yv_list(v, spec, "initContainers", sizeof(struct k8s_container),
		                  &p->ninit_containers, (void **)&p->init_containers, container) < 0;
		for (size_t i = 0; i < p->ncontainers && !bad; i++)
			if (p->containers[i].restartable) {
				size_t m2 = yv_push_key(v, "containers");
				yv_push_index(v, i);
				yv_push_key(v, "restartPolicy");
				yv_error(v, spec, "only init containers may set restartPolicy");
				yv_pop(v, m2);
				bad = true;
			}
		bad |= yv_rlist(v, spec, "overhead", &p->overhead) < 0;
		size_t m2;
		if ((n = yv_sub(v, spec, "resources", &m2, &bad))) {
			bad |= yv_rlist(v, n, "requests", &p->pod_requests) < 0;
			bad |= yv_rlist(v, n, "limits", &p->pod_limits) < 0;
			bad |= default_requests(v, &p->pod_requests, &p->pod_limits, pod_level_resource) < 0;
			yv_pop(v, m2);
		}
		bad |= (r = yv_int64(v, spec, "activeDeadlineSeconds", &p->active_deadline_seconds)) < 0;
		p->has_active_deadline = r > 0;
		bad |= yv_list(v, spec, "tolerations", sizeof(struct k8s_toleration), &p->ntolerations,
		                  (void **)&p->tolerations, toleration) < 0;
		bad |= yv_string_map(v, spec, "nodeSelector", &p->node_selector) < 0;
		bad |= decode_affinity(v, spec, p) < 0;
		bad |= (r = yv_int64(v, spec, "terminationGracePeriodSeconds", &p->grace_seconds)) < 0;
		p->has_grace = r > 0;
		if (r > 0 && p->grace_seconds < 0) {
			m2 = yv_push_key(v, "terminationGracePeriodSeconds");
			yv_error(v, yv_get(spec, "terminationGracePeriodSeconds"), "must not be negative");
			yv_pop(v, m2);
			bad = true;
		}
	}
	yv_pop(v, mark);

	if ((n = yv_sub(v, obj, "status", &mark, &bad))) {
		bad |= pod_status(v, n, p) < 0;
		bad |= yv_string(v, n, "qosClass", false, &p->qos_class) < 0;
		if (node) {
			bad |= yv_list(v, n, "containerStatuses", sizeof(struct k8s_container_status),
			                  &p->ncontainer_statuses, (void **)&p->container_statuses, container_status) < 0;
			bad |= yv_list(v, n, "initContainerStatuses", sizeof(struct k8s_container_status),
			                  &p->ninit_container_statuses, (void **)&p->init_container_statuses,
			                  container_status) < 0;
		}
		yv_pop(v, mark);
	}
	return bad ? -1 : 0;
}

/* --- PDBs and PriorityClasses ----------------------------------------------------------------- */

static int intstr(yv *v, const kval *map, const char *key, struct k8s_intstr *ret)
{
	const kval *n = yv_get(map, key);
	size_t mark = yv_push_key(v, key);
	int result = 0;

	if (!n)
		goto out;
	if (yv_is_int(n)) {
		int32_t x;
		yv_pop(v, mark); /* yv_int32 pushes the key itself */
		if (yv_int32(v, map, key, false, &x) < 0)
			return -1;
		mark = yv_push_key(v, key);
		ret->value = x;
	} else {
		const char *s;
		char *end;
		if (yv_node_string(v, n, &s) < 0) {
			result = -1;
			goto out;
		}
		size_t len = strlen(s);
		long x = len > 1 && s[len - 1] == '%' ? strtol(s, &end, 10) : -1;
		if (len < 2 || s[len - 1] != '%' || end != s + len - 1 || s[0] < '0' || s[0] > '9' || x > 100) {
			yv_error(v, n, "\"%s\" is neither an integer nor a percentage between 0%% and 100%%", s);
			result = -1;
			goto out;
		}
		ret->percent = true;
		ret->value = (int32_t)x;
	}
	if (ret->value < 0) {
		yv_error(v, n, "must not be negative");
		result = -1;
		goto out;
	}
	ret->present = true;
	result = 1;
out:
	yv_pop(v, mark);
	return result;
}

static int decode_pdb(yv *v, const kval *obj, struct k8s_pdb *b)
{
	bool bad = false;
	size_t mark;
	const kval *n;
	int r;

	if ((n = yv_sub(v, obj, "spec", &mark, &bad))) {
		bad |= label_selector(v, n, "selector", &b->selector) < 0;
		bad |= intstr(v, n, "minAvailable", &b->min_available) < 0;
		bad |= intstr(v, n, "maxUnavailable", &b->max_unavailable) < 0;
		if (b->min_available.present && b->max_unavailable.present) {
			yv_error(v, n, "minAvailable and maxUnavailable cannot be both set");
			bad = true;
		}
		yv_pop(v, mark);
	}
	if ((n = yv_sub(v, obj, "status", &mark, &bad))) {
		bad |= (r = yv_int32(v, n, "disruptionsAllowed", false, &b->disruptions_allowed)) < 0;
		b->has_disruptions_allowed = r > 0;
		const kval *dp = yv_get(n, "disruptedPods");
		if (dp) {
			size_t m2 = yv_push_key(v, "disruptedPods");
			if (!yv_expect_map(v, dp)) {
				bad = true;
			} else {
				size_t count = kval_count(dp);
				b->disrupted_pods = yv_calloc(v, count, sizeof(*b->disrupted_pods));
				for (size_t j = 0; b->disrupted_pods && j < count; j++) {
					const kval *k = kval_key_at(dp, j);
					if (k && yv_node_string(v, k, &b->disrupted_pods[b->ndisrupted]) == 0)
						b->ndisrupted++;
					else
						bad = true;
				}
			}
			yv_pop(v, m2);
		}
		yv_pop(v, mark);
	}
	return bad ? -1 : 0;
}

static int decode_priority_class(yv *v, const kval *obj, struct k8s_priority_class *pc)
{
	bool bad = false;
	bad |= yv_int32(v, obj, "value", true, &pc->value) < 0;
	bad |= yv_bool(v, obj, "globalDefault", &pc->global_default) < 0;
	bad |= yv_string(v, obj, "preemptionPolicy", false, &pc->preemption_policy) < 0;
	bad |= yv_string(v, obj, "description", false, &pc->description) < 0;
	return bad ? -1 : 0;
}

/* --- dispatch ---------------------------------------------------------------------------------- */

static const struct kind_info {
	const char *kind, *resource;
	bool namespaced;
} kinds[] = {
	{ "PriorityClass", "priorityclasses", false },
	{ "Node", "nodes", false },
	{ "Pod", "pods", true },
	{ "PodDisruptionBudget", "poddisruptionbudgets", true },
	{ "ResourceQuota", "resourcequotas", true },
};

static const struct kind_info *kind_info(const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].kind, kind) == 0)
			return &kinds[i];
	return NULL;
}

/*
 * Names the object (v->object: "pods/ns/name") and checks its metadata as the API server's
 * ValidateObjectMeta does for what matters here: a name, and no namespace on a cluster-scoped
 * kind. Returns 0, or -1 once reported. *ret_meta is the metadata mapping.
 */
static int object_meta(yv *v, const kval *obj, const struct kind_info *ki, const kval **ret_meta,
                       const char **ret_name, const char **ret_ns)
{
	const kval *meta = yv_get(obj, "metadata");
	const char *name = NULL, *ns = NULL;

	if (kval_type_of(meta) == KVAL_MAP) {
		/* read quietly here: errors are reported below, once the object has a label */
		const kval *nn = yv_get(meta, "name"), *nsn = yv_get(meta, "namespace");
		if (kval_is_scalar(nn))
			name = kval_str(nn);
		if (kval_is_scalar(nsn))
			ns = kval_str(nsn);
	}
	if (ki->namespaced)
		snprintf(v->object, sizeof(v->object), "%s/%s/%s", ki->resource, ns && *ns ? ns : "default",
		         name ? name : "(unnamed)");
	else
		snprintf(v->object, sizeof(v->object), "%s/%s", ki->resource, name ? name : "(unnamed)");

	/* metadata and its name are required for every kind */
	size_t mark = yv_push_key(v, "metadata");
	if (!meta) {
		yv_error(v, obj, "required field is missing");
		yv_pop(v, mark);
		return -1;
	}
	if (!yv_expect_map(v, meta)) {
		yv_pop(v, mark);
		return -1;
	}
	const char *mname = NULL, *mns = NULL;
	yv_string(v, meta, "name", true, &mname);
	if (mname && !*mname)
		yv_error(v, meta, "name: must not be empty");
	int r = yv_string(v, meta, "namespace", false, &mns);
	if (r > 0 && !ki->namespaced && *mns) {
		size_t m2 = yv_push_key(v, "namespace");
		yv_error(v, yv_get(meta, "namespace"), "Forbidden: not allowed on this type");
		yv_pop(v, m2);
	}
	yv_pop(v, mark);
	if (v->errors || v->oom)
		return -1;
	*ret_meta = meta;
	*ret_name = mname;
	*ret_ns = ki->namespaced && mns && *mns ? mns : "default";
	return 0;
}

static int decode(k8s_cluster *c, diag *d, const char *file, const kval *obj, int depth, const char *list_kind)
{
	yv v = { .arena = &c->arena, .diag = d, .file = file };
	const char *kind = NULL, *mname = NULL, *ns = NULL;
	const kval *meta = NULL;
	const struct kind_info *ki;
	int r = 0;

	if (yv_is_null(obj))
		return 0; /* an empty document ("---" twice) */
	if (!yv_expect_map(&v, obj))
		return -EINVAL;
	if (list_kind && !yv_get(obj, "kind"))
		kind = list_kind;
	else if (yv_string(&v, obj, "kind", true, &kind) < 0)
		return v.oom ? -ENOMEM : -EINVAL;

	/* A List inside a List (kstream splits the top-level one). */
	size_t klen = strlen(kind);
	if (klen >= 4 && strcmp(kind + klen - 4, "List") == 0 && yv_get(obj, "items")) {
		const kval *items = yv_get(obj, "items"), *e;
		size_t i = 0;
		int ret = 0;
		if (depth > 8) {
			yv_error(&v, obj, "Lists nested too deeply");
			return -EINVAL;
		}
		size_t mark = yv_push_key(&v, "items");
		if (!yv_expect_seq(&v, items)) {
			yv_pop(&v, mark);
			return -EINVAL;
		}
		yv_pop(&v, mark);
		while ((e = kval_at(items, i++))) {
			r = decode(c, d, file, e, depth + 1, NULL);
			if (r == -ENOMEM)
				return r;
			if (r < 0)
				ret = r;
		}
		return ret;
	}

	ki = kind_info(kind);
	if (!ki) {
		const kval *nn = yv_get(yv_get(obj, "metadata"), "name");
		snprintf(v.object, sizeof(v.object), "%s/%s", kind, kval_is_scalar(nn) ? kval_str(nn) : "(unnamed)");
		yv_warn(&v, obj, "kind %s is not used by preemptctl, ignored", kind);
		c->nignored++;
		return 0;
	}
	if (object_meta(&v, obj, ki, &meta, &mname, &ns) < 0)
		return v.oom ? -ENOMEM : -EINVAL;

	struct diag_loc loc = { .file = file, .line = yv_line(obj) };
	if (ki->kind[0] == 'P' && ki->kind[1] == 'r') {
		struct k8s_priority_class pc = { .loc = loc, .name = mname };
		pc.existing = yv_get(meta, "creationTimestamp") || yv_get(meta, "uid") || yv_get(meta, "resourceVersion");
		r = decode_priority_class(&v, obj, &pc);
		struct k8s_priority_class *e = NULL;
		const char **rej = NULL;
		if (r == 0 && !v.oom) {
			APPEND(c, classes, pc, e);
			v.oom = !e;
		} else if (!v.oom) {
			APPEND(c, rejected_classes, mname, rej);
			v.oom = !rej;
		}
	} else if (ki->kind[0] == 'N') {
		struct k8s_node nd = { .loc = loc, .name = mname };
		r = decode_node(&v, obj, meta, &nd);
		struct k8s_node *e = NULL;
		if (r == 0 && !v.oom) {
			APPEND(c, nodes, nd, e);
			v.oom = !e;
		}
	} else if (ki->kind[3] == 'D') {
		struct k8s_pdb b = { .loc = loc, .namespace_ = ns, .name = mname };
		r = decode_pdb(&v, obj, &b);
		struct k8s_pdb *e = NULL;
		if (r == 0 && !v.oom) {
			APPEND(c, pdbs, b, e);
			v.oom = !e;
		}
	} else if (strcmp(ki->kind, "ResourceQuota") == 0) {
		struct k8s_quota q = { .loc = loc, .namespace_ = ns, .name = mname };
		r = k8s_decode_quota(&v, obj, &q);
		struct k8s_quota *e = NULL;
		if (r == 0 && !v.oom) {
			APPEND(c, quotas, q, e);
			v.oom = !e;
		}
	} else {
		struct k8s_pod p = { .loc = loc, .namespace_ = ns, .name = mname };
		r = decode_pod(&v, obj, meta, &p, false);
		struct k8s_pod *e = NULL;
		if (r == 0 && !v.oom) {
			APPEND(c, pods, p, e);
			v.oom = !e;
		}
	}
	if (v.oom)
		return -ENOMEM;
	return r < 0 || v.errors ? -EINVAL : 0;
}

int k8s_decode_object(k8s_cluster *c, diag *d, const char *file, const kval *obj, int depth)
{
	return decode(c, d, file, obj, depth, NULL);
}

int k8s_decode_list_item(k8s_cluster *c, diag *d, const char *file, const kval *obj, const char *kind)
{
	return decode(c, d, file, obj, 0, kind);
}

int k8s_decode_pod(karena *a, diag *d, const char *file, const kval *obj, struct k8s_pod *ret)
{
	yv v = { .arena = a, .diag = d, .file = file };
	const kval *meta = NULL, *kind = kval_get(obj, "kind");
	const char *name = NULL, *ns = NULL;
	int r;

	if (kval_type_of(kind) == KVAL_STRING && strcmp(kval_str(kind), "Pod") != 0)
		return -EMEDIUMTYPE;
	if (!yv_expect_map(&v, obj))
		return -EINVAL;
	if (object_meta(&v, obj, kind_info("Pod"), &meta, &name, &ns) < 0)
		return v.oom ? -ENOMEM : -EINVAL;
	struct k8s_pod p = { .loc = { .file = file, .line = yv_line(obj) }, .namespace_ = ns, .name = name };
	r = decode_pod(&v, obj, meta, &p, true);
	if (v.oom)
		return -ENOMEM;
	if (r < 0 || v.errors)
		return -EINVAL;
	*ret = p;
	return 0;
}
