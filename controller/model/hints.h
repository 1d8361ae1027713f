/* SPDX-License-Identifier: MIT */
/* preemptctl's next-step words: what to do when the input is rejected, which pending pods a --pod
 * that names none could have meant, and the pod a pod file names when --pod is left out. */
#ifndef CTL_HINTS_H
#define CTL_HINTS_H

#include <stdio.h>

#include "k8s.h"
#include "model.h"

/*
 * The line after the problems of a rejected input: for a file that cannot be read, how to make
 * it (a CLUSTER snapshot) or what it should be (a pod file, the admission configuration); else
 * that nothing is decided until the problems shown are fixed.
 */
void hint_rejected(FILE *out, unsigned nerrors, const struct model_input *in);

/* "; the pending pods: a/b, c/d" (all when few), or "; the closest of N pending pods: ..." (the
 * nearest names to NAMESPACE/NAME; name "": "N pending pods, the first: ..." by name), or
 * nothing when none is pending. */
void hint_pending_pods(FILE *out, const k8s_cluster *c, const char *namespace_, const char *name);

/*
 * The pods of the pod files — every file after CLUSTER (every file with --kubeconfig, the cluster
 * then coming from the API server): *count of them, and the first one (NULL when none).
 */
const struct k8s_pod *hint_pod_file_pods(const k8s_cluster *c, const char *kubeconfig, const char *const *files,
                                         size_t nfiles, size_t *count);

#endif
