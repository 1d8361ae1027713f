/* SPDX-License-Identifier: MIT */
/*
 * ResourceQuota objects (core/v1) into struct k8s_quota: spec.hard, spec.scopes,
 * spec.scopeSelector.matchExpressions and the status the quota controller wrote. The API server's
 * own validation of the quota (resource names, scopes valid for the resources, operators) is
 * libpreempt's pp_quotas_add(), which names the field it refuses; here is the shape.
 */
#include "k8s_quota.h"

int k8s_scope_req(yv *v, const kval *e, void *elem)
{
	struct k8s_scope_req *s = elem;
	int bad = 0;
	bad |= yv_string(v, e, "scopeName", true, &s->scope_name) < 0;
	bad |= yv_string(v, e, "operator", false, &s->op) < 0;
	bad |= yv_string_list(v, e, "values", &s->nvalues, &s->values) < 0;
	return bad ? -1 : 0;
}

int k8s_decode_quota(yv *v, const kval *obj, struct k8s_quota *q)
{
	bool bad = false;
	size_t mark, m2;
	const kval *n, *sel;
	int r;

	if ((n = yv_sub(v, obj, "spec", &mark, &bad))) {
		bad |= yv_rlist(v, n, "hard", &q->hard) < 0;
		bad |= yv_string_list(v, n, "scopes", &q->nscopes, &q->scopes) < 0;
		if ((sel = yv_sub(v, n, "scopeSelector", &m2, &bad))) {
			bad |= yv_list(v, sel, "matchExpressions", sizeof(struct k8s_scope_req), &q->nselector,
			               (void **)&q->selector, k8s_scope_req) < 0;
			yv_pop(v, m2);
		}
		yv_pop(v, mark);
	}
	/* status.hard is the controller's copy of spec.hard: without it, nothing has been counted */
	if ((n = yv_sub(v, obj, "status", &mark, &bad))) {
		bad |= (r = yv_rlist(v, n, "hard", &q->status_hard)) < 0;
		q->has_status = r > 0;
		bad |= yv_rlist(v, n, "used", &q->status_used) < 0;
		yv_pop(v, mark);
	}
	return bad ? -1 : 0;
}
