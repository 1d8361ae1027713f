/* SPDX-License-Identifier: MIT */
/* Label, node and pod-affinity selectors, tolerations and PDB membership (select.c). */
#ifndef PP_SELECT_H
#define PP_SELECT_H

#include "cluster_model.h"

const char *pp__labels_get(const pp_label *labels, size_t n, const char *key);
bool pp__label_selector_matches(const pp_label_selector *sel, const pp_label *labels, size_t n);
bool pp__node_selector_term_matches(const pp_node_selector_term *t, const struct node *node);
bool pp__pod_matches_node_affinity(const struct pod *pod, const struct node *node);
bool pp__toleration_tolerates(const pp_toleration *t, const pp_taint *taint);
bool pp__pod_tolerates(const struct pod *pod, const pp_taint *taint);
bool pp__affinity_term_matches(const pp_pod_affinity_term *t, const char *term_ns, const struct pod *pod);
bool pp__pdb_matches_pod(const struct pdb *pdb, const struct pod *pod);
bool pp__pdb_disrupted(const struct pdb *pdb, const char *pod_name);

#endif
