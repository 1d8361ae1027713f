/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The container runtime's disk, as the kubelet sees it (reference cri.md §4, §5): the layout from
 * ImageFsInfo, the size of containers' log files, and each pod's share — its running containers'
 * writable layers and logs — attributed to the disk signals the layout says.
 */

#include <stddef.h>

#include "cri.h"
#include "snapshot.h"

/*
 * The layout: dedicated when the image filesystem's device is not the kubelet root's; split when
 * the runtime names a container filesystem other than the image one; else single. mountpoint gets
 * the image filesystem's mount point ("" when the runtime named none: LAYOUT_UNKNOWN).
 */
disk_layout runtime_layout(const cri_listing *l, const char *kubelet_root, char *mountpoint, size_t size);

/*
 * Log sizes, st_blocks as du counts them: for a running container every regular file of its log
 * directory (rotated ones included: the kubelet's getPodContainerLogStats), for a dead one its own
 * log file and its rotations (what the kubelet's container GC deletes with it).
 */
void runtime_measure_logs(cri_listing *l);

/* Containers whose own io.kubernetes.pod.uid label named another pod than their sandbox: logged
 * once each (while they are listed). Zero-initialised; runtime_label_notes_done frees it. */
typedef struct runtime_label_notes {
	char **ids;
	size_t n, cap;
} runtime_label_notes;
void runtime_label_notes_done(runtime_label_notes *notes);

/*
 * Sets each pod's rootfs, logs and, per the layout, disk_* (nodefs) and imagefs_* from the
 * listing: its containers as the kubelet's CRI stats provider finds them — through the
 * container's sandbox (pod_sandbox_id) to that sandbox's uid, never by the container's own label,
 * which anything that can create a container may set (a container whose sandbox is not listed
 * counts for no pod) — running ones only (the kubelet's removeTerminatedContainers). A container
 * whose label disagrees with its sandbox is logged once per notes (NULL: not logged). A pod whose
 * emptyDir volumes were not measured keeps has_disk false for nodefs. snap->layout is set.
 */
void runtime_attribute(snapshot *snap, const cri_listing *l, disk_layout layout, runtime_label_notes *notes);
