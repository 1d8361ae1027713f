/* SPDX-License-Identifier: MIT */
/*
 * ResourceQuotas and the ResourceQuota admission plugin: the set, validation and the quota
 * controller's usage (quota.c), read by admission (quota_admit.c); the pod evaluator is below it
 * (quota_pod.h).
 * Nothing here is exported.
 */
#ifndef PP_QUOTA_H
#define PP_QUOTA_H

#include "quota_pod.h"

struct pp_quota {
	char *ns, *name;
	struct pp_rlist hard; /* status.hard, or spec.hard when the input had no status */
	struct pp_rlist used; /* status.used, or what the controller would count (zeros first) */
	bool computed;        /* used is counted from pp_quotas_count_pod() */
	/* getScopeSelectorsFromQuota: spec.scopes as Exists, then spec.scopeSelector */
	struct pp_scope_req *sel;
	size_t n_sel;
	char *info_hard, *info_used, *info_exceeded; /* pp_quotas_info()'s strings */
};

struct pp_limited {
	char *group, *resource;
	char **contains;
	size_t n_contains;
	struct pp_scope_req *scopes;
	size_t n_scopes;
};

struct pp_quotas {
	struct pp_quota *v; /* sorted by namespace, then name */
	size_t n, cap;
	struct pp_limited *lim; /* limitedResources, in configuration order */
	size_t n_lim;
};

/* The first quota of namespace ns (index into q->v), and one past the last. */
size_t pp__quotas_ns_begin(const pp_quotas *q, const char *ns);
size_t pp__quotas_ns_end(const pp_quotas *q, const char *ns, size_t begin);

/* Go's %v of a ScopedResourceSelectorRequirement, {PriorityClass In [a b]}, into buf (size at
 * least pp__scope_req_len() + 1), and its length. */
void pp__scope_req_format(const struct pp_scope_req *s, char *buf, size_t size);
size_t pp__scope_req_len(const struct pp_scope_req *s);

#endif
