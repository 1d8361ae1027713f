/* SPDX-License-Identifier: MIT */
/* A decoded pod as libpreempt sees it: its requests summed exactly as kube-scheduler does
 * (preemptctl, the node agent), and its resources and scope facts for the quota system. */
#include <errno.h>

#include "k8s.h"

const pp_quantity_kv *k8s_quantities(karena *a, const k8s_rlist *l, bool *oom)
{
	pp_quantity_kv *q = l->n ? karena_calloc(a, l->n, sizeof(*q)) : NULL;
	if (!q && l->n)
		*oom = true;
	for (size_t i = 0; q && i < l->n; i++)
		q[i] = (pp_quantity_kv){ l->v[i].key, l->v[i].value };
	return q;
}

int k8s_pod_requests(const struct k8s_pod *p, karena *a, pp_resource **ret, size_t *ret_n, pp_err *err)
{
	size_t nc = p->ncontainers + p->ninit_containers, max = p->overhead.n + p->pod_requests.n + 1, n = 0;
	pp_container_requests *cr = karena_calloc(a, nc, sizeof(*cr));
	bool oom = !cr;

	for (size_t i = 0; cr && i < p->ncontainers; i++) {
		cr[i] = (pp_container_requests){ PP_CONTAINER, k8s_quantities(a, &p->containers[i].requests, &oom),
		                                 p->containers[i].requests.n };
		max += p->containers[i].requests.n;
	}
	for (size_t i = 0; cr && i < p->ninit_containers; i++) {
		const struct k8s_container *c = &p->init_containers[i];
		cr[p->ncontainers + i] = (pp_container_requests){ c->restartable ? PP_SIDECAR : PP_INIT_CONTAINER,
		                                                  k8s_quantities(a, &c->requests, &oom), c->requests.n };
		max += c->requests.n;
	}
	const pp_quantity_kv *pod = k8s_quantities(a, &p->pod_requests, &oom);
	const pp_quantity_kv *overhead = k8s_quantities(a, &p->overhead, &oom);
	pp_resource *res = karena_calloc(a, max, sizeof(*res));
	if (oom || !res)
		return -ENOMEM;
	int r = pp_pod_requests(cr, nc, pod, p->pod_requests.n, overhead, p->overhead.n, res, max, &n, err);
	if (r < 0)
		return r;
	*ret = res;
	*ret_n = n;
	return 0;
}

int k8s_quota_pod(const struct k8s_pod *p, const char *class_name, karena *a, pp_quota_pod *ret)
{
	size_t nc = p->ncontainers + p->ninit_containers;
	pp_container_resources *cr = karena_calloc(a, nc, sizeof(*cr));
	bool oom = !cr && nc;

	/* the quota evaluator walks spec.containers, then spec.initContainers */
	for (size_t i = 0; cr && i < nc; i++) {
		bool init = i >= p->ncontainers;
		const struct k8s_container *c = init ? &p->init_containers[i - p->ncontainers] : &p->containers[i];
		cr[i] = (pp_container_resources){
			.kind = !init ? PP_CONTAINER : c->restartable ? PP_SIDECAR : PP_INIT_CONTAINER,
			.name = c->name,
			.requests = k8s_quantities(a, &c->requests, &oom),
			.n_requests = c->requests.n,
			.limits = k8s_quantities(a, &c->limits, &oom),
			.n_limits = c->limits.n,
		};
	}
	pp_quota_pod q = {
		.namespace_ = p->namespace_,
		.name = p->name,
		.priority_class_name = class_name,
		.containers = cr,
		.n_containers = nc,
		.pod_requests = k8s_quantities(a, &p->pod_requests, &oom),
		.n_pod_requests = p->pod_requests.n,
		.pod_limits = k8s_quantities(a, &p->pod_limits, &oom),
		.n_pod_limits = p->pod_limits.n,
		.overhead = k8s_quantities(a, &p->overhead, &oom),
		.n_overhead = p->overhead.n,
		.qos_class = p->qos_class,
		.has_active_deadline = p->has_active_deadline,
		.active_deadline_s = p->active_deadline_seconds,
		.cross_namespace_affinity = p->cross_namespace_affinity,
		.terminal = p->phase == K8S_PHASE_SUCCEEDED || p->phase == K8S_PHASE_FAILED,
		.has_deletion_grace = p->has_deletion && p->has_deletion_grace,
		.deletion_time_ns = p->deletion_ns,
		.deletion_grace_s = p->deletion_grace_seconds,
	};
	if (oom)
		return -ENOMEM;
	*ret = q;
	return 0;
}
