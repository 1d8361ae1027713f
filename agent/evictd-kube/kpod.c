/* SPDX-License-Identifier: MIT */
#include "kpod.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "k8s.h"
#include "preempt.h"

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

/* The request for name, -1 when none; str (optional) gets it as written when it fits a descriptor word. */
static int64_t request(const k8s_rlist *l, const char *name, bool milli, char *str, size_t str_size)
{
	int64_t q;
	pp_err e;

	if (str)
		str[0] = '\0';
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, name) == 0) {
			if ((milli ? pp_quantity_parse_milli(l->v[i].value, &q, &e) : pp_quantity_parse(l->v[i].value, &q, &e)) < 0)
				return -1;
			if (str && strlen(l->v[i].value) < str_size && !strpbrk(l->v[i].value, " \t\n\r"))
				snprintf(str, str_size, "%s", l->v[i].value);
			return q;
		}
	return -1;
}

static const char *annotation(const struct k8s_pod *kp, const char *key)
{
	for (size_t i = 0; i < kp->annotations.n; i++)
		if (strcmp(kp->annotations.v[i].key, key) == 0)
			return kp->annotations.v[i].value;
	return NULL;
}

/* k8s_decode_pod with its messages in err[] (bounded) rather than on stderr. */
static int decode(const kval *obj, karena *a, const char *source, struct k8s_pod *kp, char *err, size_t err_size)
{
	FILE *f = fmemopen(err, err_size, "w");
	diag d;
	int r;

	if (!f)
		return -ENOMEM;
	diag_init(&d, f);
	r = k8s_decode_pod(a, &d, source, obj, kp);
	fclose(f);
	err[err_size - 1] = '\0';
	diag_one_line(err);
	return r;
}

static void set_container(kpod *p, const struct k8s_pod *kp, const struct k8s_container *c, bool init)
{
	kpod_container *k = &p->containers[p->n_containers];

	if (strlen(c->name) >= sizeof(k->name) || strpbrk(c->name, " \t\n"))
		return;
	snprintf(k->name, sizeof(k->name), "%s", c->name);
	k->memory = request(&c->requests, "memory", false, k->memory_str, sizeof(k->memory_str));
	k->storage = request(&c->requests, "ephemeral-storage", false, k->storage_str, sizeof(k->storage_str));
	k->cpu_milli = request(&c->requests, "cpu", true, NULL, 0);
	size_t n = init ? kp->ninit_container_statuses : kp->ncontainer_statuses;
	for (size_t s = 0; s < n; s++) {
		const struct k8s_container_status *st = init ? &kp->init_container_statuses[s] : &kp->container_statuses[s];
		if (st->container_id && strcmp(st->name, c->name) == 0 && strlen(st->container_id) < sizeof(k->id) &&
		    !strpbrk(st->container_id, " \t\n\r"))
			snprintf(k->id, sizeof(k->id), "%s", st->container_id);
	}
	p->n_containers++;
}

int kpod_decode(const kval *obj, karena *a, const char *source, kpod *p, char *err, size_t err_size)
{
	struct k8s_pod kp;
	pp_resource *res;
	size_t nres;
	pp_err e;
	int r;

	memset(p, 0, sizeof(*p));
	r = decode(obj, a, source, &kp, err, err_size);
	if (r < 0)
		return r;
	/* the decoder says "default" for an absent namespace; the descriptor leaves it out then */
	const kval *ns = kval_get(kval_get(obj, "metadata"), "namespace");
	if ((r = copy(p->uid, sizeof(p->uid), kp.uid, "metadata.uid", err, err_size)) < 0 ||
	    (r = copy(p->namespace_, sizeof(p->namespace_), kval_len(ns) ? kp.namespace_ : NULL, "metadata.namespace",
	              err, err_size)) < 0 ||
	    (r = copy(p->name, sizeof(p->name), kp.name, "metadata.name", err, err_size)) < 0 ||
	    (r = copy(p->node_name, sizeof(p->node_name), kp.node_name, "spec.nodeName", err, err_size)) < 0 ||
	    (r = copy(p->priority_class, sizeof(p->priority_class), kp.priority_class_name, "spec.priorityClassName",
	              err, err_size)) < 0 ||
	    (r = copy(p->preemption_policy, sizeof(p->preemption_policy), kp.preemption_policy, "spec.preemptionPolicy",
	              err, err_size)) < 0 ||
	    (r = copy(p->qos, sizeof(p->qos), kp.qos_class, "status.qosClass", err, err_size)) < 0)
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
	p->deleting = kp.has_deletion;
	p->has_priority = kp.has_priority;
	p->priority = kp.priority;
	p->has_grace = kp.has_grace;
	p->grace_seconds = kp.grace_seconds;
	/* pkg/kubelet/types: IsStaticPod (config.source != "api") || IsMirrorPod (config.mirror) */
	const char *src = annotation(&kp, "kubernetes.io/config.source");
	p->static_or_mirror = (src && strcmp(src, "api") != 0) || annotation(&kp, "kubernetes.io/config.mirror");

	for (size_t i = 0; i < kp.ncontainers && p->n_containers < KPOD_CONTAINERS_MAX; i++)
		set_container(p, &kp, &kp.containers[i], false);
	/* init and sidecar containers too: the kubelet's eviction message names them since 1.31 */
	for (size_t i = 0; i < kp.ninit_containers && p->n_containers < KPOD_CONTAINERS_MAX; i++)
		set_container(p, &kp, &kp.init_containers[i], true);
	p->req_memory = p->req_cpu_milli = p->req_storage = -1;
	r = k8s_pod_requests(&kp, a, &res, &nres, &e);
	if (r == -EINVAL) {
		snprintf(err, err_size, "spec: %s", e.msg);
		return r;
	}
	if (r < 0)
		return r;
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
		/* requests as the pod spec wrote them ("1G"): the kubelet's message prints them so */
		if (c->memory >= 0 && c->memory_str[0])
			ADD(" memory=%s", c->memory_str);
		else if (c->memory >= 0)
			ADD(" memory=%" PRId64, c->memory);
		if (c->storage >= 0 && c->storage_str[0])
			ADD(" ephemeral-storage=%s", c->storage_str);
		else if (c->storage >= 0)
			ADD(" ephemeral-storage=%" PRId64, c->storage);
		if (c->cpu_milli >= 0)
			ADD(" cpu=%" PRId64 "m", c->cpu_milli);
		ADD("\n");
	}
#undef ADD
	return len < size ? (int)len : -ENOBUFS;
}
