/* SPDX-License-Identifier: MIT */
/*
 * ResourceQuotas and the ResourceQuota admission plugin, shared by quota.c (the set, validation,
 * the quota controller's usage), quota_pod.c (the pod evaluator) and quota_admit.c (admission).
 * Nothing here is exported.
 */
#ifndef PP_QUOTA_H
#define PP_QUOTA_H

#include "qty.h"

/* A ScopedResourceSelectorRequirement, owned. */
struct pp_scope_req {
	char *scope, *op; /* op "" when the configuration left it out */
	char **values;
	size_t n_values;
};

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

/* The pod evaluator's view of one pod (pkg/quota/v1/evaluator/core/pods.go). */
struct pp_qpod {
	const pp_quota_pod *spec;
	const char *class_name; /* "" when none */
	bool best_effort, terminating;
	struct pp_rlist usage; /* PodUsageFunc */
};

/* Computes usage and the scope facts; charged = false: only count/pods (QuotaV1Pod false). */
int pp__qpod_init(struct pp_qpod *p, const pp_quota_pod *spec, bool charged, pp_err *err);
void pp__qpod_done(struct pp_qpod *p);
/* podMatchesScopeFunc */
bool pp__qpod_matches(const struct pp_qpod *p, const struct pp_scope_req *s);
/* Whether every selector of the quota matches (generic.Matches without the resource part). */
bool pp__quota_scopes_match(const struct pp_quota *q, const struct pp_qpod *p);
/* Constraints: NULL when satisfied, else the malloc'd "must specify ..." text in *ret (or -ENOMEM). */
int pp__qpod_constraints(const struct pp_qpod *p, const struct pp_rlist *hard, char **ret);

/* The pod evaluator's MatchingResources for one quota resource name. */
bool pp__quota_pod_resource(const char *name);
/* IsExtendedResourceName as the quota evaluator applies it. */
bool pp__is_extended_resource_name(const char *name);

/* The first quota of namespace ns (index into q->v), and one past the last. */
size_t pp__quotas_ns_begin(const pp_quotas *q, const char *ns);
size_t pp__quotas_ns_end(const pp_quotas *q, const char *ns, size_t begin);

/* Go's %v of a ScopedResourceSelectorRequirement, {PriorityClass In [a b]}, into buf (size at
 * least pp__scope_req_len() + 1), and its length. */
void pp__scope_req_format(const struct pp_scope_req *s, char *buf, size_t size);
size_t pp__scope_req_len(const struct pp_scope_req *s);

#endif
