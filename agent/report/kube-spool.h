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

void kube_spool_thresholds(const evictd_config *c, const evaluation *ev, const snapshot *s);
