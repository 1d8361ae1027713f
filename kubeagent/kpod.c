/* SPDX-License-Identifier: MIT */
#include "kpod.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "preempt.h"

yajl_val ytree_get(yajl_val v, const char *a, const char *b, const char *c)
{
	const char *path[] = { a, b, c, NULL };

	if (!v || !a)
		return v;
	return yajl_tree_get(v, path, yajl_t_any);
}

const char *ytree_str(yajl_val v, const char *a, const char *b, const char *c)
{
	return YAJL_GET_STRING(ytree_get(v, a, b, c));
}

static int copy(char *dst, size_t size, const char *s, const char *field, char *err, size_t err_size)
{
	if (!s) {
		dst[0] = '\0';
		return 0;
	}
	if (strlen(s) >= size || strpbrk(s, "\n\r")) {
		snprintf(err, err_size, "%s: invalid value", field);
		return -EINVAL;
	}
	snprintf(dst, size, "%s", s);
	return 0;
}

#define REQ_MAX 16

/* Collects resources.requests of one container (or a pod-level map) as quantity strings. */
static size_t requests_of(yajl_val map, pp_quantity_kv *kv, size_t max)
{
	size_t n = 0;

	if (!YAJL_IS_OBJECT(map))
		return 0;
	for (size_t i = 0; i < map->u.object.len && n < max; i++) {
		const char *v = YAJL_GET_STRING(map->u.object.values[i]);
		if (v)
			kv[n++] = (pp_quantity_kv){ map->u.object.keys[i], v };
	}
	return n;
}

static int64_t request(const pp_quantity_kv *kv, size_t n, const char *name, bool milli)
{
	int64_t q;
	pp_err e;

	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].name, name) == 0) {
			if ((milli ? pp_quantity_parse_milli(kv[i].value, &q, &e) : pp_quantity_parse(kv[i].value, &q, &e)) < 0)
				return -1;
			return q;
		}
	return -1;
}

int kpod_decode(yajl_val obj, kpod *p, char *err, size_t err_size)
{
	yajl_val meta = ytree_get(obj, "metadata", NULL, NULL), spec = ytree_get(obj, "spec", NULL, NULL);
	yajl_val v, ann, conts, inits, statuses;
	pp_container_requests cr[2 * KPOD_CONTAINERS_MAX];
	pp_quantity_kv kv[2 * KPOD_CONTAINERS_MAX][REQ_MAX], podlevel[REQ_MAX], overhead[REQ_MAX];
	size_t ncr = 0, npl, noh;
	pp_resource res[REQ_MAX * 2];
	size_t nres = 0;
	pp_err e;
	int r;

	memset(p, 0, sizeof(*p));
	if (!YAJL_IS_OBJECT(obj) || !YAJL_IS_OBJECT(meta)) {
		snprintf(err, err_size, "not a Pod object (no metadata)");
		return -EINVAL;
	}
	const char *kind = ytree_str(obj, "kind", NULL, NULL);
	if (kind && strcmp(kind, "Pod") != 0) {
		snprintf(err, err_size, "kind \"%.40s\" is not Pod", kind);
		return -EINVAL;
	}
	if ((r = copy(p->uid, sizeof(p->uid), ytree_str(meta, "uid", NULL, NULL), "metadata.uid", err, err_size)) < 0 ||
	    (r = copy(p->namespace_, sizeof(p->namespace_), ytree_str(meta, "namespace", NULL, NULL), "metadata.namespace",
	              err, err_size)) < 0 ||
	    (r = copy(p->name, sizeof(p->name), ytree_str(meta, "name", NULL, NULL), "metadata.name", err, err_size)) < 0 ||
	    (r = copy(p->resource_version, sizeof(p->resource_version), ytree_str(meta, "resourceVersion", NULL, NULL),
	              "metadata.resourceVersion", err, err_size)) < 0 ||
	    (r = copy(p->node_name, sizeof(p->node_name), ytree_str(spec, "nodeName", NULL, NULL), "spec.nodeName", err,
	              err_size)) < 0 ||
	    (r = copy(p->priority_class, sizeof(p->priority_class), ytree_str(spec, "priorityClassName", NULL, NULL),
	              "spec.priorityClassName", err, err_size)) < 0 ||
	    (r = copy(p->preemption_policy, sizeof(p->preemption_policy), ytree_str(spec, "preemptionPolicy", NULL, NULL),
	              "spec.preemptionPolicy", err, err_size)) < 0 ||
	    (r = copy(p->qos, sizeof(p->qos), ytree_str(obj, "status", "qosClass", NULL), "status.qosClass", err,
	              err_size)) < 0 ||
	    (r = copy(p->phase, sizeof(p->phase), ytree_str(obj, "status", "phase", NULL), "status.phase", err, err_size)) < 0)
		return r;
	if (!p->uid[0] || !p->name[0]) {
		snprintf(err, err_size, "metadata.uid or metadata.name missing");
		return -EINVAL;
	}
	/* the uid names a file in the descriptor directory */
	if (p->uid[0] == '.' || strspn(p->uid, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
	                            strlen(p->uid)) {
		snprintf(err, err_size, "metadata.uid \"%s\" is not a UID", p->uid);
		return -EINVAL;
	}
	if (p->namespace_[0] && !pp_is_dns_subdomain(p->namespace_)) {
		snprintf(err, err_size, "metadata.namespace is not a DNS label");
		return -EINVAL;
	}
	if (!pp_is_dns_subdomain(p->name)) {
		snprintf(err, err_size, "metadata.name is not a DNS subdomain");
		return -EINVAL;
	}
	if (p->priority_class[0] && !pp_is_dns_subdomain(p->priority_class))
		p->priority_class[0] = '\0';
	if (p->preemption_policy[0] && strcmp(p->preemption_policy, "Never") != 0 &&
	    strcmp(p->preemption_policy, "PreemptLowerPriority") != 0)
		p->preemption_policy[0] = '\0';
	if (p->qos[0] && strcmp(p->qos, "Guaranteed") != 0 && strcmp(p->qos, "Burstable") != 0 &&
	    strcmp(p->qos, "BestEffort") != 0)
		p->qos[0] = '\0';
	p->deleting = ytree_get(meta, "deletionTimestamp", NULL, NULL) &&
	              !YAJL_IS_NULL(ytree_get(meta, "deletionTimestamp", NULL, NULL));
	v = ytree_get(spec, "priority", NULL, NULL);
	if (YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= INT32_MIN && YAJL_GET_INTEGER(v) <= INT32_MAX) {
		p->has_priority = true;
		p->priority = (int32_t)YAJL_GET_INTEGER(v);
	}
	v = ytree_get(spec, "terminationGracePeriodSeconds", NULL, NULL);
	if (YAJL_IS_INTEGER(v) && YAJL_GET_INTEGER(v) >= 0) {
		p->has_grace = true;
		p->grace_seconds = YAJL_GET_INTEGER(v);
	}
	/* pkg/kubelet/types: IsStaticPod (config.source != "api") || IsMirrorPod (config.mirror) */
	ann = ytree_get(meta, "annotations", NULL, NULL);
	if (YAJL_IS_OBJECT(ann)) {
		const char *src = ytree_str(ann, "kubernetes.io/config.source", NULL, NULL);
		if ((src && strcmp(src, "api") != 0) || ytree_get(ann, "kubernetes.io/config.mirror", NULL, NULL))
			p->static_or_mirror = true;
	}

	conts = ytree_get(spec, "containers", NULL, NULL);
	inits = ytree_get(spec, "initContainers", NULL, NULL);
	statuses = ytree_get(obj, "status", "containerStatuses", NULL);
	for (int pass = 0; pass < 2; pass++) {
		yajl_val arr = pass == 0 ? inits : conts;
		if (!YAJL_IS_ARRAY(arr))
			continue;
		for (size_t i = 0; i < arr->u.array.len && ncr < 2 * KPOD_CONTAINERS_MAX; i++) {
			yajl_val c = arr->u.array.values[i];
			yajl_val reqs = ytree_get(c, "resources", "requests", NULL);
			size_t n = requests_of(reqs, kv[ncr], REQ_MAX);
			const char *rp = ytree_str(c, "restartPolicy", NULL, NULL);
			cr[ncr] = (pp_container_requests){
				.kind = pass == 1 ? PP_CONTAINER : rp && strcmp(rp, "Always") == 0 ? PP_SIDECAR : PP_INIT_CONTAINER,
				.requests = kv[ncr], .n_requests = n,
			};
			if (pass == 1 && p->n_containers < KPOD_CONTAINERS_MAX) {
				kpod_container *k = &p->containers[p->n_containers];
				const char *nm = ytree_str(c, "name", NULL, NULL);
				if (nm && strlen(nm) < sizeof(k->name) && !strpbrk(nm, " \t\n")) {
					snprintf(k->name, sizeof(k->name), "%s", nm);
					k->memory = request(kv[ncr], n, "memory", false);
					k->storage = request(kv[ncr], n, "ephemeral-storage", false);
					k->cpu_milli = request(kv[ncr], n, "cpu", true);
					for (size_t s = 0; YAJL_IS_ARRAY(statuses) && s < statuses->u.array.len; s++) {
						yajl_val st = statuses->u.array.values[s];
						const char *sn = ytree_str(st, "name", NULL, NULL);
						const char *id = ytree_str(st, "containerID", NULL, NULL);
						if (sn && id && strcmp(sn, nm) == 0 && strlen(id) < sizeof(k->id) &&
						    !strpbrk(id, " \t\n\r"))
							snprintf(k->id, sizeof(k->id), "%s", id);
					}
					p->n_containers++;
				}
			}
			ncr++;
		}
	}
	npl = requests_of(ytree_get(spec, "resources", "requests", NULL), podlevel, REQ_MAX);
	noh = requests_of(ytree_get(spec, "overhead", NULL, NULL), overhead, REQ_MAX);
	p->req_memory = p->req_cpu_milli = p->req_storage = -1;
	r = pp_pod_requests(cr, ncr, podlevel, npl, overhead, noh, res, sizeof(res) / sizeof(res[0]), &nres, &e);
	if (r < 0) {
		snprintf(err, err_size, "spec: %s", e.msg);
		return -EINVAL;
	}
	for (size_t i = 0; i < nres; i++) {
		if (strcmp(res[i].name, PP_RESOURCE_MEMORY) == 0)
			p->req_memory = res[i].value;
		else if (strcmp(res[i].name, PP_RESOURCE_CPU) == 0)
			p->req_cpu_milli = res[i].value;
		else if (strcmp(res[i].name, PP_RESOURCE_EPHEMERAL_STORAGE) == 0)
			p->req_storage = res[i].value;
	}
	return 0;
}

bool kpod_critical(const kpod *p)
{
	return p->static_or_mirror || (p->has_priority && pp_priority_is_critical(p->priority));
}

int kpod_descriptor(const kpod *p, char *buf, size_t size)
{
	size_t len = 0;

#define ADD(...)                                                                   \
	do {                                                                         \
		int n_ = snprintf(buf + len, len < size ? size - len : 0, __VA_ARGS__); \
		if (n_ < 0)                                                              \
			return -ENOBUFS;                                                     \
		len += (size_t)n_;                                                       \
	} while (0)

	ADD("# Written by evictd-kube from the API server; an operator's descriptor in pod-metadata-dir wins.\n");
	ADD("[pod]\nuid = %s\n", p->uid);
	if (p->namespace_[0])
		ADD("namespace = %s\n", p->namespace_);
	ADD("name = %s\n", p->name);
	/* spec.priority was resolved by admission: the class is informative then (node identities
	 * cannot read PriorityClasses); without it evictd resolves the class from its own config. */
	if (p->has_priority) {
		ADD("priority = %" PRId32 "\n", p->priority);
		if (p->priority_class[0])
			ADD("# priority-class: %s\n", p->priority_class);
	} else if (p->priority_class[0])
		ADD("priority-class = %s\n", p->priority_class);
	if (p->preemption_policy[0])
		ADD("preemption-policy = %s\n", p->preemption_policy);
	if (p->qos[0])
		ADD("qos-class = %s\n", p->qos);
	ADD("critical = %s\n", kpod_critical(p) ? "yes" : "no");
	if (p->req_memory >= 0)
		ADD("memory-request = %" PRId64 "\n", p->req_memory);
	if (p->req_cpu_milli >= 0)
		ADD("cpu-request = %" PRId64 "m\n", p->req_cpu_milli);
	if (p->req_storage >= 0)
		ADD("ephemeral-storage-request = %" PRId64 "\n", p->req_storage);
	if (p->has_grace)
		ADD("termination-grace-period = %" PRId64 "s\n", p->grace_seconds);
	for (size_t i = 0; i < p->n_containers; i++) {
		const kpod_container *c = &p->containers[i];
		ADD("container = %s %s", c->name, c->id[0] ? c->id : "-");
		if (c->memory >= 0)
			ADD(" memory=%" PRId64, c->memory);
		if (c->storage >= 0)
			ADD(" ephemeral-storage=%" PRId64, c->storage);
		if (c->cpu_milli >= 0)
			ADD(" cpu=%" PRId64 "m", c->cpu_milli);
		ADD("\n");
	}
#undef ADD
	return len < size ? (int)len : -ENOBUFS;
}
