/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Pod metadata: the descriptor /run/evictd/pods/<uid>.conf ([pod] namespace, name,
 * priority-class | priority, memory-request, cpu-request, ephemeral-storage-request,
 * termination-grace-period), trusted only when it is a regular file owned by root, not writable
 * by group or others and with a single link (untrusted tenants must not raise their own
 * priority); then cgroup-derived defaults (memory.min, cpu.weight); then the globalDefault class.
 */

#include <stddef.h>
#include <sys/stat.h>

#include "preempt.h"
#include "snapshot.h"

/* Larger descriptors are rejected: eight keys need far less. */
#define POD_DESCRIPTOR_MAX 16384

/* Kubernetes' default terminationGracePeriodSeconds. */
#define POD_DEFAULT_GRACE_USEC (30ULL * 1000000ULL)

/*
 * Whether descriptors in the directory metadir_fd may be trusted at all: the directory must be
 * owned by root and writable by nobody else (no group/other write bit, sticky or not), else a
 * tenant could rename another pod's root-owned descriptor to its own UID; each ancestor up to /
 * must be root-owned and not group/other-writable either, except that a sticky ancestor (/tmp)
 * is accepted: others cannot rename or remove root's entries in it. Returns 0, -EPERM with why[]
 * naming the directory and its owner/mode, or -errno.
 */
int podmeta_dir_check(int metadir_fd, char *why, size_t why_size);

/*
 * Looks at metadir_fd/<uid>.conf without following symlinks. Returns 0 and *st when there is a
 * file (of any kind) to look at, -ENOENT when there is none, -errno otherwise.
 */
int podmeta_stat(int metadir_fd, const char *uid, struct stat *st);

/*
 * Reads and applies the descriptor to pod (namespace, name, priority, requests, grace).
 * Returns 1 when applied, 0 when there is no descriptor, or a negative errno with why[] saying
 * why it was ignored: -EPERM (not trusted: owner, mode, links, symlink), -EFBIG, -EINVAL
 * (malformed, with "line N: ..."), -ENOENT never (0 instead). On failure pod is unchanged.
 */
int podmeta_apply_descriptor(int metadir_fd, const pod_info *in, const pp_pcset *pcset, pod_info *pod,
                             char *why, size_t why_size);

/*
 * Fills what the descriptor did not give: memory request from memory.min, cpu request from
 * cpu.weight (inverse of the kubelet's shares->weight mapping), priority from the globalDefault
 * class (else 0), name = UID, namespace = "", grace = 30 s. Returns 0 or -ENOMEM.
 */
int podmeta_defaults(int pod_dirfd, const pp_pcset *pcset, pod_info *pod);

/* The smallest cpu request (millicores) whose kubelet cpu.weight is `weight`; 0 for weight <= 1. */
int64_t podmeta_weight_to_millicpu(uint64_t weight);
