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

typedef struct model {
	pp_pcset *classes;
	pp_cluster *cluster;
	size_t nterminal; /* Succeeded/Failed pods, left out as the scheduler does */
	size_t npending, nbound;
} model;

/*
 * Builds the model. Returns 0 (maybe with warnings), -EINVAL when d received errors (the model
 * is then still usable for further checks but must not be used to decide), -ENOMEM.
 */
int model_build(model *m, const k8s_cluster *c, diag *d);

/*
 * Loads the live cluster of kubeconfig (NULL: none), then every file, into c (an initialised cluster) and builds m from it, going on after errors so
 * that d reports every problem at once. Returns 0 (maybe with warnings), -EINVAL when d received
 * errors, -ENOMEM. m must be zeroed first; model_done it (and k8s_cluster_done c) on every path.
 */
int model_load(model *m, k8s_cluster *c, const char *kubeconfig, const char *const *files, size_t nfiles,
               diag *d);

/* model_load for the commands that decide (preempt, schedule): a rejected input is also said so. */
int model_load_to_decide(model *m, k8s_cluster *c, const char *kubeconfig, const char *const *files,
                         size_t nfiles, diag *d);
void model_done(model *m);

#endif
