/* SPDX-License-Identifier: MIT */
/*
 * Decoded objects (k8s.h) -> libpreempt: PriorityClasses into a pp_pcset, every pod through
 * priority admission, nodes, pods and PDBs into a pp_cluster. Every problem is reported through
 * the diag, naming the object (and the file and line it came from).
 */
#ifndef CTL_MODEL_H
#define CTL_MODEL_H

#include <preempt.h>

#include "diag.h"
#include "k8s.h"

/* A pod the API server would refuse at creation (ResourceQuota admission). */
typedef struct model_refusal {
	const struct k8s_pod *pod;
	pp_admission *admission;
} model_refusal;

typedef struct model {
	pp_pcset *classes;
	pp_cluster *cluster;
	pp_quotas *quotas;
	size_t nterminal; /* Succeeded/Failed pods, left out as the scheduler does */
	size_t npending, nbound;
	/* new pods (model-quota.h) refused at admission, in input order; not in the cluster */
	model_refusal *refused;
	size_t nrefused, cap_refused;
} model;

/* What a command reads. */
struct model_input {
	const char *kubeconfig; /* a live cluster, or NULL */
	const char *const *files;
	size_t nfiles;
	const char *admission_config; /* --admission-config, or NULL */
	int64_t now_ns;               /* the quota controller's clock (pods stuck terminating) */
};

/*
 * Builds the model. Returns 0 (maybe with warnings), -EINVAL when d received errors (the model
 * is then still usable for further checks but must not be used to decide), -ENOMEM.
 */
int model_build(model *m, const k8s_cluster *c, int64_t now_ns, diag *d);

/*
 * Loads the live cluster of in->kubeconfig, every file and the admission configuration into c (an
 * initialised cluster) and builds m from it, going on after errors so that d reports every problem
 * at once. Returns 0 (maybe with warnings), -EINVAL when d received errors, -ENOMEM. m must be
 * zeroed first; model_done it (and k8s_cluster_done c) on every path.
 */
int model_load(model *m, k8s_cluster *c, const struct model_input *in, diag *d);

/* model_load for the commands that decide (preempt, schedule): a rejected input is also said so. */
int model_load_to_decide(model *m, k8s_cluster *c, const struct model_input *in, diag *d);
void model_done(model *m);

/* The refusal of pod ns/name, or NULL. */
const model_refusal *model_find_refusal(const model *m, const char *namespace_, const char *name);

#endif
