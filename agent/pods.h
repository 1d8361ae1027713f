/* SPDX-License-Identifier: MIT */
#pragma once

/* Pod discovery: glob patterns under the cgroup root; UID and QoS class from the path. */

#include <stddef.h>

#include "snapshot.h"

/*
 * Expands the patterns (relative to root) into pods, sorted by cgroup path, without duplicates
 * and without cgroups nested in another match. Each pod has cgroup, uid and qos set, the rest
 * zeroed. Pods whose UID cannot be derived are skipped. Returns 0 or -ENOMEM.
 */
int pods_discover(const char *root, char *const *patterns, pod_info **ret, size_t *ret_n);

/*
 * UID and QoS from a cgroup path relative to the root:
 *   kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b_3c.slice -> "1a2b-3c", Burstable
 *   kubepods/besteffort/pod1a2b-3c -> "1a2b-3c", BestEffort; kubepods/pod1a2b-3c -> Guaranteed
 *   anything else: the last component without .slice/.scope/.service, QoS unknown.
 * The UID is restricted to [A-Za-z0-9._-] (it names a file in the metadata directory), not
 * starting with '.'. Returns 0 or -EINVAL.
 */
int pod_parse_path(const char *cgroup, char uid[POD_UID_MAX], pod_qos *ret_qos);
