/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The kubelet's own configuration, read as plain data: a KubeletConfiguration
 * (kubelet.config.k8s.io/v1beta1, kubeadm's /var/lib/kubelet/config.yaml) and the --root-dir of
 * kubeadm's flags file next to it (kubeadm-flags.env). Only what evictd can use is kept, each
 * value with the line that set it; config-kubelet.c merges it under evictd.conf.
 *
 * In common/ rather than observe/ because the configuration layer calls it: the file's path is
 * itself a key of evictd.conf, and the kubelet's values must be in place before the configuration
 * is validated as a whole.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

typedef struct kubelet_item {
	bool set;
	unsigned line;
} kubelet_item;

typedef struct kubelet_config {
	char path[PATH_MAX];
	/* evictionHard/Soft/MinimumReclaim/SoftGracePeriod: per signal, as written */
	kubelet_item hard_map, soft_map; /* the maps themselves (line of the key) */
	threshold_value hard[_SIGNAL_MAX];
	threshold_value soft[_SIGNAL_MAX];
	threshold_value min_reclaim[_SIGNAL_MAX];
	uint64_t soft_grace_usec[_SIGNAL_MAX];
	kubelet_item soft_grace[_SIGNAL_MAX];
	kubelet_item merge_defaults;           /* mergeDefaultEvictionSettings: true */
	uint64_t pressure_transition_usec;
	kubelet_item pressure_transition;
	int64_t max_pod_grace_sec;
	kubelet_item max_pod_grace;
	char cgroup_driver[16];                /* "systemd" or "cgroupfs"; "" unset */
	kubelet_item cgroup_driver_item;
	char cgroup_root[256];
	kubelet_item cgroup_root_item;
	bool cgroups_per_qos;
	kubelet_item cgroups_per_qos_item;
	int64_t kube_reserved_memory, system_reserved_memory;
	kubelet_item kube_reserved, system_reserved;
	bool enforce_pods;                     /* enforceNodeAllocatable lists "pods" */
	kubelet_item enforce;
	char pod_logs_dir[PATH_MAX];
	kubelet_item pod_logs_dir_item;
	char runtime_endpoint[PATH_MAX];       /* containerRuntimeEndpoint without "unix://" */
	kubelet_item runtime_endpoint_item;
	uint64_t image_min_gc_age_usec;        /* imageMinimumGCAge */
	kubelet_item image_min_gc_age;
	/* kubeadm-flags.env next to the configuration */
	char flags_path[PATH_MAX];
	char root_dir[PATH_MAX];
	kubelet_item root_dir_item;
} kubelet_config;

/*
 * Reads path (and kubeadm-flags.env in its directory). Returns 0 and a new kubelet_config, -ENOENT
 * when path does not exist (no kubelet on this node: not an error), or another -errno with err
 * naming the file and line (bad YAML, unknown apiVersion or kind, a value evictd cannot parse).
 */
int kubelet_config_read(const char *path, kubelet_config **ret, config_error *err);

/* The same from memory (tests, fuzzing): name is used in messages; no flags file is read. */
int kubelet_config_parse(const char *text, size_t len, const char *name, kubelet_config **ret,
                         config_error *err);

/* The --root-dir of a kubeadm flags file's KUBELET_KUBEADM_ARGS, into k (root_dir, its line). */
int kubelet_flags_parse(const char *text, const char *name, kubelet_config *k, config_error *err);

/* kubeadm's flags file beside the configuration at path: "DIR/kubeadm-flags.env". -ENAMETOOLONG. */
int kubelet_flags_path(const char *path, char *buf, size_t size);

/* The configuration at path and the flags file beside it, as they are now ([0], [1]). */
void kubelet_files_stamp(const char *path, config_file_stamp stamp[2]);
bool config_file_stamp_equal(const config_file_stamp *a, const config_file_stamp *b);
