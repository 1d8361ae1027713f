/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * evictd's side of the Kubernetes reporting ([kubernetes] enable = yes): writes the spool
 * records (spool.h) for evictions it starts and thresholds first met. Never in dry-run mode.
 * Failures are logged and never stop an eviction: the local kill is the fast path.
 */

#include "config.h"
#include "decide.h"
#include "snapshot.h"
#include "spool.h"

/*
 * The containers' usage for the kubelet's message, read before the eviction starts: a hard
 * eviction writes cgroup.kill at once, after which the container cgroups are empty or gone.
 */
void kube_spool_measure(const evictd_config *c, const char *cgroup_path, const pod_info *p,
                        const eviction_choice *ch, spool_container ctr[POD_CONTAINERS_MAX]);
/* The record of an eviction that started, with the figures kube_spool_measure() read. */
void kube_spool_eviction(const evictd_config *c, const pod_info *p, const eviction_choice *ch, int64_t usage,
                         const spool_container *ctr);

/*
 * Node Event records for thresholds first met, and the records of evictd's own Node conditions
 * (EvictdMemoryPressure, ...) for the conditions that changed.
 */
void kube_spool_thresholds(const evictd_config *c, const evaluation *ev, const snapshot *s);

/* Every condition's record as it is now (all) or the changed ones: at start, a condition a
 * previous process left True is cleared. */
void kube_spool_conditions(const evictd_config *c, const evaluation *ev, const node_signals *node, bool all);
/*
 * Every condition's record for an orderly stop, from the last evaluation (node NULL: none was
 * made): reason EvictdStopped, False where the pressure is known to be gone, else Unknown
 * (kube-spool.c says what "known" is). Never False for a pressure that may still be there.
 */
void kube_spool_conditions_stopped(const evictd_config *c, const evaluation *ev, const node_signals *node);
