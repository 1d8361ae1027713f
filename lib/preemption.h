/* SPDX-License-Identifier: MIT */
/* What the scheduling cycle needs from the preemption decision (preemption.c) beyond the public
 * API. */
#ifndef PP_PREEMPTION_H
#define PP_PREEMPTION_H

#include <stdint.h>

#include "preempt.h"

/*
 * pp_cluster_preempt() with the pods started after *protect_after (or without a start time)
 * spared: no victims (pp_sched_set_min_runtime's first pass). protect_after NULL: none spared.
 */
int pp__cluster_preempt(const pp_cluster *c, const char *ns, const char *name, const pp_preempt_options *opts,
                        const int64_t *protect_after, pp_preemption **ret, pp_err *err);

#endif
