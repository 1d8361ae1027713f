/* SPDX-License-Identifier: MIT */
/* A decoded pod's requests through libpreempt, so that preemptctl and the node agent sum them
 * exactly as kube-scheduler does. */
#include <errno.h>

#include "k8s.h"

static const pp_quantity_kv *quantities(karena *a, const k8s_rlist *l, bool *oom)
{
	pp_quantity_kv *q = karena_calloc(a, l->n, sizeof(*q));
	if (!q)
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
		cr[i] = (pp_container_requests){ PP_CONTAINER, quantities(a, &p->containers[i].requests, &oom),
		                                 p->containers[i].requests.n };
		max += p->containers[i].requests.n;
	}
	for (size_t i = 0; cr && i < p->ninit_containers; i++) {
		const struct k8s_container *c = &p->init_containers[i];
		cr[p->ncontainers + i] = (pp_container_requests){ c->restartable ? PP_SIDECAR : PP_INIT_CONTAINER,
		                                                  quantities(a, &c->requests, &oom), c->requests.n };
		max += c->requests.n;
	}
	const pp_quantity_kv *pod = quantities(a, &p->pod_requests, &oom);
	const pp_quantity_kv *overhead = quantities(a, &p->overhead, &oom);
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
