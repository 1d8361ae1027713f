/* SPDX-License-Identifier: MIT */
/* The quota system's pod evaluator (quota_pod.c): what a pod uses and which quota scopes it
 * matches. Nothing here is exported. */
#ifndef PP_QUOTA_POD_H
#define PP_QUOTA_POD_H

#include "qty.h"

/* A ScopedResourceSelectorRequirement, owned. */
struct pp_scope_req {
	char *scope, *op; /* op "" when the configuration left it out */
	char **values;
	size_t n_values;
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
/* Whether every selector of a quota (sel, n) matches (generic.Matches without the resource part). */
bool pp__qpod_matches_scopes(const struct pp_qpod *p, const struct pp_scope_req *sel, size_t n);
/* Constraints: NULL when satisfied, else the malloc'd "must specify ..." text in *ret (or -ENOMEM). */
int pp__qpod_constraints(const struct pp_qpod *p, const struct pp_rlist *hard, char **ret);

/* The pod evaluator's MatchingResources for one quota resource name. */
bool pp__quota_pod_resource(const char *name);
/* IsExtendedResourceName as the quota evaluator applies it. */
bool pp__is_extended_resource_name(const char *name);

#endif
