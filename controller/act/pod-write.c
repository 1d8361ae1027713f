/* SPDX-License-Identifier: MIT */
#include "pod-write.h"

#include <stdio.h>

char *pod_write_path(const char *ns, const char *name, const char *sub)
{
	char *p = NULL;
	if (asprintf(&p, "/api/v1/namespaces/%s/pods/%s%s%s", ns, name, sub ? "/" : "", sub ? sub : "") < 0)
		return NULL;
	return p;
}

/* A pod without a uid (never from an API server) gets an empty one: no write about it is wanted. */
write_chain *pod_write_chain(const decision_pod *p)
{
	return write_chain_new(p->namespace_, p->name, p->uid);
}

const char *pod_write_permission(cluster_write w)
{
	switch (w) {
	case CLUSTER_WRITE_BIND: return "create on pods/binding";
	case CLUSTER_WRITE_STATUS:
	case CLUSTER_WRITE_CONDITION: return "patch on pods/status";
	case CLUSTER_WRITE_DELETE: return "delete on pods";
	case CLUSTER_WRITE_EVENT: return "create on events (events.k8s.io)";
	case CLUSTER_WRITE_EVICT: return "create on pods/eviction";
	case CLUSTER_WRITE_LEASE_EVENT: return "create on events (events.k8s.io)";
	}
	return "?";
}
