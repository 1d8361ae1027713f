/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A pod's nodefs usage, as the kubelet defines it for a node with a dedicated image filesystem
 * (reference §7.3): its emptyDir volumes (<kubelet-root>/pods/<uid>/volumes/kubernetes.io~empty-dir/
 * *, except medium: Memory, which is a tmpfs mount) plus its container logs
 * (<pod-logs-dir>/<namespace>_<name>_<uid>/). Container writable layers are in the runtime's
 * snapshotter and cannot be attributed to a pod without the CRI, so they are not counted.
 *
 * Measuring walks directories, which costs time proportional to the files a pod has: it is done
 * only when a nodefs threshold is actionable (and in --once), never in the normal scan, and each
 * walk is bounded (depth, entries). It never follows a symlink and never crosses into another
 * filesystem.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Directory levels below a walked directory that are entered; deeper ones make a lower bound. */
#define PODDISK_MAX_DEPTH 32

typedef struct du_totals {
	int64_t bytes;      /* st_blocks * 512 of every entry counted */
	int64_t inodes;     /* entries counted (each directory, file, symlink, ...) */
	uint64_t entries_left; /* the walk's entry budget */
	bool partial;       /* a limit was hit: the totals are a lower bound */
	char why[256];      /* what stopped it (for the warning), "" when complete */
} du_totals;

/*
 * Adds the directory dirfd (taking ownership of the fd) and everything beneath it on the same
 * filesystem to t, as du does: symlinks are counted, never followed; mount points are skipped;
 * at most max_depth levels below dirfd are entered. label names the directory in t->why.
 */
void poddisk_du_walk(int dirfd, unsigned max_depth, const char *label, du_totals *t);

/* One measuring pass over many pods: the directories are opened once and closed at the end. */
typedef struct poddisk_pass {
	int pods_fd;     /* <kubelet-root>/pods, -1 when absent */
	int logs_fd;     /* <pod-logs-dir>, -1 when absent */
	uint64_t limit;  /* entries per pod */
	char **log_names; /* the log directory's entries, read on first need (pods without descriptor) */
	size_t n_log_names, cap_log_names;
	bool listed;
} poddisk_pass;

typedef struct pod_disk_usage {
	bool known;     /* false: neither directory exists on this node (not a kubelet node) */
	bool partial;   /* a lower bound; why says where and why */
	int64_t bytes, inodes;               /* volumes + logs */
	int64_t volume_bytes, volume_inodes; /* the emptyDir volumes alone (the rest: logs) */
	char why[320];
} pod_disk_usage;

/* Opens the two directories (either may be missing). Returns 0 or -ENOMEM. */
int poddisk_pass_open(const char *kubelet_root, const char *pod_logs_dir, uint64_t limit, poddisk_pass *ret);
void poddisk_pass_close(poddisk_pass *p);

/*
 * Measures one pod. namespace_/name may be NULL or "" (no descriptor): the log directory is then
 * found by its "_<uid>" suffix. Returns 0 or -ENOMEM.
 */
int poddisk_measure(poddisk_pass *p, const char *uid, const char *namespace_, const char *name, pod_disk_usage *ret);

/*
 * The reclaim of an evicted pod's disk (act/reclaim.h): where its two parts are, and whether what
 * was counted in them is gone.
 *
 * poddisk_locate: the absolute paths of the pod's emptyDir volumes directory
 * (<kubelet-root>/pods/<uid>/volumes/kubernetes.io~empty-dir) and its log directory (found as
 * poddisk_measure finds it), each "" when it does not exist. Returns 0 or -ENOMEM/-ENAMETOOLONG.
 */
int poddisk_locate(const char *kubelet_root, const char *pod_logs_dir, const char *uid, const char *namespace_,
                   const char *name, char *volumes, size_t volumes_size, char *logs, size_t logs_size);

/*
 * Whether anything counted is left under path (the parts poddisk_locate names): 1 when a file (any
 * entry but a directory) is left on path's filesystem, 0 when only directories are (the kubelet or
 * the runtime removed what it held; a memory-backed emptyDir mounted there is not nodefs and is not
 * looked into), -ENOENT when path is gone, another -errno when it cannot be read. Stops at the
 * first file; at most `limit` entries are looked at (then 1: not known to be empty).
 */
int poddisk_files_left(const char *path, uint64_t limit);
