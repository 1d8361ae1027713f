/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What one scan saw: node signals and pods. Produced by scanner_scan() (scan.h), consumed by the
 * pure decision code (decide.h), the --once report and the daemon. Plain data, no fds.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "signals.h"

typedef struct signal_obs {
	bool known;        /* false: the machine cannot provide it now; reason says why */
	int64_t available; /* bytes / inodes / pids; PSI: stall share in centipercent (avg10 × 100) */
	int64_t capacity;  /* PSI: 10000 */
	char reason[192];
} signal_obs;

typedef struct node_signals {
	signal_obs s[_SIGNAL_MAX];
} node_signals;

typedef enum pod_qos {
	QOS_UNKNOWN = 0, /* not a kubelet layout */
	QOS_GUARANTEED,
	QOS_BURSTABLE,
	QOS_BESTEFFORT,
} pod_qos;

/*
 * Where the container runtime keeps images and writable layers, from its ImageFsInfo compared with
 * the kubelet's root directory (the kubelet's HasDedicatedImageFs, IsContainerFsSeparateFromImageFs;
 * reference cri.md §4). It decides which node-level reclaim and which pod usage each disk signal has.
 */
typedef enum disk_layout {
	LAYOUT_UNKNOWN = 0, /* no runtime listing: emptyDir + logs for nodefs, priority alone for imagefs */
	LAYOUT_SINGLE,      /* images and writable layers on the nodefs filesystem */
	LAYOUT_DEDICATED,   /* both on another filesystem (imagefs = containerfs != nodefs) */
	LAYOUT_SPLIT,       /* images on imagefs, writable layers on nodefs (containerfs = nodefs) */
} disk_layout;

typedef enum meta_source {
	META_NONE = 0,   /* nothing known: default applies */
	META_DESCRIPTOR, /* /run/evictd/pods/<uid>.conf */
	META_CGROUP,     /* derived from memory.min / cpu.weight */
	META_DEFAULT,    /* the globalDefault class, or 0 */
} meta_source;

#define POD_UID_MAX 64
#define POD_CONTAINERS_MAX 32

/* One container as the descriptor lists it (evictd-kube writes them from the Pod). */
typedef struct pod_container {
	char name[64];
	char id[128];            /* "containerd://<hex>", "" when not yet known */
	int64_t memory_request;  /* bytes, -1 when none */
	int64_t storage_request; /* ephemeral-storage bytes, -1 when none */
	char memory_request_str[32];  /* as the pod spec wrote it ("1G"), for the kubelet's message */
	char storage_request_str[32];
} pod_container;

typedef struct pod_info {
	char *cgroup;            /* relative to the cgroup root, e.g. "kubepods/burstable/pod1234" */
	char uid[POD_UID_MAX];
	pod_qos qos;

	/* metadata */
	char *namespace_;        /* "" without a descriptor */
	char *name;              /* the UID without a descriptor */
	char *priority_class;    /* NULL when none */
	int32_t priority;
	meta_source priority_src;
	int64_t memory_request;  /* bytes */
	meta_source memory_request_src;
	int64_t cpu_request_milli;
	meta_source cpu_request_src;
	int64_t storage_request; /* ephemeral-storage, bytes */
	uint64_t termination_grace_usec; /* Kubernetes' default 30 s unless the descriptor says */
	bool has_descriptor;
	struct {                 /* identity of the descriptor the metadata came from (cache key) */
		bool present;
		uint64_t dev, ino, size;
		int64_t mtime_ns, ctime_ns;
	} descriptor_id;
	bool critical;           /* priority >= 2,000,000,000 or declared: ranked, never evicted */
	bool declared_critical;  /* descriptor "critical = yes": a static or mirror pod */
	pod_container *containers; /* from the descriptor; NULL when it lists none */
	size_t n_containers;
	bool is_self;            /* evictd runs in this cgroup: never evicted */

	/* usage */
	bool has_memory;
	int64_t memory_current, inactive_file, working_set; /* working set = current - inactive_file */
	bool has_cpu;
	uint64_t cpu_usage_usec;
	bool has_cpu_rate;
	double cpu_rate;         /* cores, between the previous scan and this one */
	bool has_pids;
	int64_t pids;            /* pids.current: tasks (threads) in the subtree */
	bool has_psi;
	double psi_some_avg10, psi_full_avg10;

	/*
	 * nodefs usage: emptyDir volumes + container logs (poddisk.h). Measured only when a nodefs
	 * threshold is actionable and in --once (scanner_measure_disk), then kept for
	 * SCAN_DISK_TTL_USEC across scans; has_disk is false until then.
	 */
	bool has_disk;
	bool disk_partial;        /* a lower bound: the walk hit its limits */
	int64_t disk_bytes, disk_inodes;
	uint64_t disk_measured_usec;
	bool disk_warned;         /* the lower-bound warning was logged and the pod is still partial */
	int64_t volume_bytes, volume_inodes; /* the emptyDir part of disk_* */
	int64_t log_bytes, log_inodes;       /* the logs part */

	/*
	 * From the container runtime (observe/runtime-disk.c), when a listing is known: the writable
	 * layers of the pod's running containers (ContainerStats), its logs from the runtime's log
	 * paths, and disk_* (nodefs) and imagefs_* set as the kubelet ranks each signal for the layout.
	 */
	bool has_rootfs;
	int64_t rootfs_bytes, rootfs_inodes;
	bool cri_logs;            /* log_* came from the runtime's log paths, not the guessed directory */
	bool has_imagefs;         /* imagefs_* are attributed (writable layers, and logs on one disk) */
	int64_t imagefs_bytes, imagefs_inodes;
} pod_info;

typedef struct snapshot {
	uint64_t timestamp_usec; /* CLOCK_MONOTONIC at the start of the scan */
	node_signals node;
	pod_info *pods;          /* sorted by cgroup path */
	size_t n_pods;
	disk_layout layout;      /* LAYOUT_UNKNOWN without a runtime listing */
} snapshot;

/* "single filesystem", "dedicated imagefs", "split (images apart from writable layers)", "unknown". */
const char *snapshot_disk_layout_name(disk_layout l);

/* "ns/name", or the name alone when the namespace is empty. */
const char *snapshot_pod_display_name(const pod_info *p, char *buf, size_t size);
const char *snapshot_pod_qos_name(pod_qos q);
/* Releases what a pod owns (not the struct). */
void snapshot_pod_info_done(pod_info *p);
/* Frees pods and resets the snapshot. */
void snapshot_done(snapshot *s);
