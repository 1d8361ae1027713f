/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Node signals, computed as the kubelet does on cgroup v2 (reference §2):
 *   memory.available            = MemTotal - (anon + file - inactive_file) of the root memory.stat
 *   allocatableMemory.available = allocatable - (memory.current - inactive_file)(kubepods), where
 *                                 allocatable is memory.max(kubepods) when node allocatable is
 *                                 enforced on pods, else MemTotal - kubeReserved - systemReserved
 *                                 - the hard memory.available threshold (as the kubelet publishes it)
 *   nodefs/imagefs.available    = f_frsize * f_bavail of statvfs(path), capacity f_frsize * f_blocks
 *   nodefs/imagefs.inodesFree   = f_ffree, capacity f_files
 *   pid.available               = min(pid_max, threads-max) - tasks ("running/TOTAL" of loadavg)
 *   memory.some / memory.full   = avg10 of <proc>/pressure/memory (beyond the kubelet)
 * A signal the machine cannot provide is marked unknown with the reason, never estimated.
 */

#include "cgdiscover.h"
#include "config.h"
#include "snapshot.h"

/*
 * Descriptors the daemon's idle tick keeps between reads (idle CPU budget: a path walk and an
 * open/close per file per second are most of a tick's kernel work). -1 = not open; opened on
 * first use, closed again on any error and by node_cache_reset(), which the daemon calls on
 * every full read so that a filesystem newly mounted on nodefs-path is picked up there.
 */
typedef struct node_cache {
	int nodefs_fd, imagefs_fd; /* O_PATH descriptors of nodefs-path and imagefs-path */
	int memory_stat_fd;        /* the v2 root's memory.stat */
} node_cache;

#define NODE_CACHE_INIT { .nodefs_fd = -1, .imagefs_fd = -1, .memory_stat_fd = -1 }

/* Closes what is open; the cache stays usable. */
void node_cache_reset(node_cache *c);

typedef struct node_sources {
	int cg_root_fd;         /* the v2 root, or -1 when there is none */
	int proc_fd;            /* proc-root */
	const cg_info *cg;
	const char *kubepods;   /* the allocatable cgroup relative to the root, or NULL */
	const char *nodefs_path;
	const char *imagefs_path;
	node_cache *cache;      /* NULL: every read opens its files by path */
	/*
	 * Node allocatable where the kubepods cgroup does not carry it ([agent] kube-reserved-memory,
	 * system-reserved-memory, enforce-node-allocatable, the hard memory.available threshold);
	 * NULL: only the cgroup's memory.max.
	 */
	const evictd_config *cfg;
} node_sources;

/* Fills every signal (known or not, with a reason). Never fails. */
void node_signals_read(const node_sources *src, node_signals *ret);

/*
 * The same for the signals in want[] only (NULL: all); the others in *ret are left as they were.
 * The daemon's idle tick reads just the signals that have a threshold (idle CPU budget).
 */
void node_signals_read_some(const node_sources *src, const bool want[_SIGNAL_MAX], node_signals *ret);

/* The kubelet's allocatable cgroup: the first of kubepods.slice, kubepods that exists; or NULL. */
const char *node_find_kubepods(int cg_root_fd);

/*
 * The online CPUs: the "cpuN" lines of <proc-root>/stat (the kernel lists online CPUs only), so
 * that a fixture proc-root can stand for any node. -errno when there is none to count.
 */
int node_online_cpus(int proc_fd, unsigned *ret);
