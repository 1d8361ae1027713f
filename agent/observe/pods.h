/* SPDX-License-Identifier: MIT */
#pragma once

/* Pod discovery: glob patterns under the cgroup root; UID and QoS class from the path. */

#include <stddef.h>

#include "snapshot.h"

/* Deepest pattern followed (components separated by '/'). */
#define PODS_PATTERN_MAX_DEPTH 16

/* Told about each symlink that matches a pattern component: it is not followed. */
typedef void (*pods_symlink_cb)(const char *path, void *userdata);

/*
 * Expands the patterns (glob syntax per component, relative to the directory root_fd) into pods,
 * sorted by cgroup path, without duplicates and without cgroups nested in another match. Only
 * real directories are entered or matched: a symlink (which could lead out of the cgroup root)
 * is never followed and is passed to cb (may be NULL). Each pod has cgroup, uid and qos set, the
 * rest zeroed. Pods whose UID cannot be derived are skipped. Returns 0 or -ENOMEM.
 */
int pods_discover(int root_fd, char *const *patterns, pods_symlink_cb cb, void *userdata, pod_info **ret,
                  size_t *ret_n);

/*
 * UID and QoS from a cgroup path relative to the root:
 *   kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b_3c.slice -> "1a2b-3c", Burstable
 *   kubepods/besteffort/pod1a2b-3c -> "1a2b-3c", BestEffort; kubepods/pod1a2b-3c -> Guaranteed
 *   anything else: the last component without .slice/.scope/.service, QoS unknown.
 * The UID is restricted to [A-Za-z0-9._-] (it names a file in the metadata directory), not
 * starting with '.'. Returns 0 or -EINVAL.
 */
int pod_parse_path(const char *cgroup, char uid[POD_UID_MAX], pod_qos *ret_qos);
