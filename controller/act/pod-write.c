/* SPDX-License-Identifier: MIT */
#include "pod-write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"

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

/* The request of a write about pod p of kind k: verb, content type and path. */
static int pod_write_request(const decision_pod *p, cluster_write k, const char **ret_verb, const char **ret_type,
                             char **ret_path)
{
	const char *sub = NULL;

	*ret_verb = "POST";
	*ret_type = "application/json";
	switch (k) {
	case CLUSTER_WRITE_BIND: sub = "binding"; break;
	case CLUSTER_WRITE_EVICT: sub = "eviction"; break;
	case CLUSTER_WRITE_STATUS:
	case CLUSTER_WRITE_CONDITION:
		*ret_verb = "PATCH";
		*ret_type = "application/strategic-merge-patch+json";
		sub = "status";
		break;
	case CLUSTER_WRITE_DELETE: *ret_verb = "DELETE"; break;
	case CLUSTER_WRITE_EVENT:
	case CLUSTER_WRITE_LEASE_EVENT:
		if (asprintf(ret_path, "/apis/events.k8s.io/v1/namespaces/%s/events", p->namespace_) < 0)
			*ret_path = NULL;
		return *ret_path ? 0 : -ENOMEM;
	}
	*ret_path = pod_write_path(p->namespace_, p->name, sub);
	return *ret_path ? 0 : -ENOMEM;
}

/* The body of write wr about pod p (NULL with errno when not built). */
static char *pod_write_body(const decision_pod *p, const char *node, const pod_write *wr)
{
	switch (wr->kind) {
	case CLUSTER_WRITE_BIND: return k8s_body_binding(p->namespace_, p->name, p->uid, node);
	case CLUSTER_WRITE_EVICT: return k8s_body_eviction(p->namespace_, p->name, p->uid, -1);
	case CLUSTER_WRITE_STATUS:
	case CLUSTER_WRITE_CONDITION:
		return k8s_body_pod_status_patch(p->uid, wr->condition, wr->set_nomination, wr->nominate);
	case CLUSTER_WRITE_DELETE: return k8s_body_delete_options(p->uid, -1);
	case CLUSTER_WRITE_EVENT:
	case CLUSTER_WRITE_LEASE_EVENT:
		if (wr->event)
			return k8s_body_event_v1(wr->event);
		break;
	}
	errno = EINVAL;
	return NULL;
}

int pod_write_send(writer *w, const decision_pod *p, const char *node, const pod_write *writes, size_t n,
                   write_end_fn on_end, void *userdata)
{
	write_step steps[WRITER_STEPS_MAX] = { { 0 } };
	int r = 0, s;

	if (n > WRITER_STEPS_MAX) {
		n = WRITER_STEPS_MAX;
		r = -E2BIG;
	}
	for (size_t i = 0; i < n && r >= 0; i++) {
		steps[i].kind = writes[i].kind;
		if ((r = pod_write_request(p, writes[i].kind, &steps[i].verb, &steps[i].content_type, &steps[i].path)) >= 0 &&
		    !(steps[i].body = pod_write_body(p, node, &writes[i])))
			r = errno == E2BIG ? -E2BIG : -ENOMEM;
	}
	/* a step not prepared goes down all the same: the writer refuses it and drops the chain with
	 * what the steps before it assumed, as it drops every chain that cannot go out */
	s = writer_send(w, p->namespace_, p->name, p->uid, node, steps, n, on_end, userdata);
	if (r >= 0)
		r = s;
	if (r < 0)
		journal_msg(LOG_ERR, "Cannot prepare a write: %s", strerror(-r));
	return r;
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
