/* SPDX-License-Identifier: MIT */
/* Validated deep copies of spec fragments into an object's arena (spec_copy.c). */
#ifndef PP_SPEC_COPY_H
#define PP_SPEC_COPY_H

#include "cluster_model.h"

bool pp__copy_str(struct arena *a, const char *s, const char **ret);
int pp__copy_labels(struct arena *a, const pp_label *in, size_t n, pp_label **ret, const char *what,
                    pp_err *err);
int pp__copy_requirements(struct arena *a, const pp_requirement *in, size_t n, bool node_selector,
                          const pp_requirement **ret, const char *what, pp_err *err);
int pp__copy_label_selector(struct arena *a, const pp_label_selector *in, pp_label_selector *out,
                            const char *what, pp_err *err);
int pp__copy_affinity_terms(struct arena *a, const pp_pod_affinity_term *in, size_t n, pp_pod_affinity_term **ret,
                            const char *what, pp_err *err);
/* Splits a resource list into core amounts, the pod limit (pods may be NULL) and scalar amounts
 * sorted by interned id. */
int pp__copy_resources(pp_cluster *c, struct arena *a, const pp_resource *in, size_t n, int64_t core[N_CORE_RES],
                       int64_t *pods, struct sres **ret_scalar, size_t *ret_n, const char *what, pp_err *err);
/* An object name the model can key on: non-empty, at most 253 bytes, no unit separator. */
bool pp__valid_name(const char *s);
/* Grows *p (of *cap elements of elem bytes) to hold need elements, doubling. 0 or -ENOMEM. */
int pp__grow(void **p, size_t *cap, size_t need, size_t elem);

#endif
