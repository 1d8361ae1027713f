/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * evictd's configuration: /etc/evictd/evictd.conf, then evictd.conf.d/ *.conf in strcmp() order
 * (later files win), ini syntax (inih), values in Kubernetes syntax. Every key is documented in
 * conf/evictd.conf; defaults are the kubelet's Linux defaults.
 *
 * Loading is transactional: a set of files is parsed into a fresh evictd_config, validated as a
 * whole, and only then handed out, so a bad file can never leave a half-applied configuration.
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "preempt.h"
#include "signals.h"

#define EVICTD_CONFIG_PATH "/etc/evictd/evictd.conf"

#define USEC_PER_SEC UINT64_C(1000000)

/* The kubelet's configuration as kubeadm writes it ([kubernetes] kubelet-config). */
#define KUBELET_CONFIG_PATH "/var/lib/kubelet/config.yaml"

/*
 * Where a setting came from: "FILE:LINE" (evictd.conf or a drop-in), "kubelet FILE:LINE ..."
 * (the kubelet's configuration, config-kubelet.c), "" or "default" for a built-in default.
 */
#define CONFIG_ORIGIN_MAX 192
/* Room for the key table (config-keys.c asserts it fits). */
#define CONFIG_KEYS_MAX 64

/* [eviction] node-reclaim: what evictd does with unused images before a disk eviction. */
typedef enum node_reclaim_mode {
	NODE_RECLAIM_IMAGES = 0, /* removes them through the CRI (RemoveImage), least recently used first */
	NODE_RECLAIM_ACCOUNT,    /* leaves them to the kubelet, counting them as pending like dead containers */
	NODE_RECLAIM_OFF,        /* neither: pods are evicted as if the runtime held nothing reclaimable */
} node_reclaim_mode;

/* Default CRI sockets, tried in this order when no endpoint is configured (container-runtimes doc). */
#define CONTAINERD_SOCKET "/run/containerd/containerd.sock"
#define CRIO_SOCKET "/var/run/crio/crio.sock"

typedef enum evictd_action {
	ACTION_KILL = 0,
	ACTION_EXEC,
} evictd_action;

/* A threshold or a minimum reclaim: a quantity, or a percentage of the signal's capacity. */
typedef struct threshold_value {
	bool set;       /* false: no threshold ("0%"/"100%" disable one, as in the kubelet) */
	bool percent;
	float fraction; /* the kubelet keeps percentages as float32; so do we, for identical results */
	int64_t quantity;
	int64_t margin;  /* added after resolution: a quantity kubelet-margin over a kubelet percentage */
	char origin[CONFIG_ORIGIN_MAX]; /* "file:line" that set it, "default", or "kubelet ..." */
} threshold_value;

/*
 * A file as a configuration read it (stat(2) just before the read): the daemon compares it with
 * the file as it is once its watch is in place, so that a change between the read and the watch
 * is not lost (kubelet-watch.c).
 */
typedef struct config_file_stamp {
	bool exists;
	uint64_t dev, ino, size, mtime_nsec, ctime_nsec;
} config_file_stamp;

typedef struct priority_class_def {
	char *name;
	int32_t value;
	bool global_default;
	pp_preemption_policy policy;
	char *description;
	char origin[96];
} priority_class_def;

typedef struct evictd_config {
	/* [agent] */
	uint64_t interval_usec;
	char *cgroup_root;      /* NULL: "auto", found via libcgroup */
	char **pods;            /* NULL-terminated glob patterns relative to the cgroup root */
	char *pod_metadata_dir;
	char *proc_root;
	char *nodefs_path;      /* statvfs() target for nodefs.*; follows kubelet_root_dir unless set */
	char *kubelet_root_dir; /* pods/<uid>/volumes/kubernetes.io~empty-dir: per-pod nodefs usage */
	char *pod_logs_dir;     /* <namespace>_<name>_<uid>/: container logs, per-pod nodefs usage */
	uint64_t pod_disk_walk_limit; /* directory entries counted per pod before usage is a lower bound */
	char *imagefs_path;     /* statvfs() target for imagefs.*; the runtime's image store */
	/*
	 * The CRI runtime's socket: NULL for "auto" (the kubelet's containerRuntimeEndpoint when its
	 * configuration was read, else containerd's socket, else CRI-O's, whichever exists), "" for
	 * "none" (no runtime: images and writable layers are not seen). A path, without "unix://".
	 */
	char *runtime_endpoint;
	uint64_t runtime_timeout_usec; /* every CRI call's deadline */
	bool dry_run;
	evictd_action action;
	char **exec_argv;       /* NULL-terminated; placeholders {namespace} {name} {uid} {grace} */
	uint64_t exec_timeout_usec;
	bool exec_fallback_kill;
	char *status_file;
	char *metrics_file;     /* node_exporter textfile collector output; NULL: off */
	char *run_dir;          /* lock file, in-flight evictions; NULL: status-file's directory */
	/*
	 * The fastest rates at which a signal can plausibly fall, per second. The cheap node-signal
	 * poll runs when a signal could first reach its threshold at that rate (earlyoom's adaptive
	 * sleep, generalised): fast near a threshold, one read per interval on an idle node.
	 */
	int64_t memory_max_rate;  /* bytes/s: memory.available, allocatableMemory.available */
	int64_t disk_max_rate;    /* bytes/s: nodefs.available, imagefs.available */
	int64_t inodes_max_rate;  /* inodes/s: nodefs.inodesFree, imagefs.inodesFree */
	int64_t pid_max_rate;     /* tasks/s: pid.available */
	/* memory and pid rates not set by a key: derived from the online CPUs at start
	 * (cadence_derive_rates), which then records the count here (0: not derived yet) */
	bool memory_max_rate_auto, pid_max_rate_auto;
	unsigned online_cpus;

	/* [eviction-hard], [eviction-soft], [eviction-soft-grace-period], [eviction-minimum-reclaim] */
	threshold_value hard[_SIGNAL_MAX];
	threshold_value soft[_SIGNAL_MAX];
	threshold_value min_reclaim[_SIGNAL_MAX];
	uint64_t soft_grace_usec[_SIGNAL_MAX];
	bool soft_grace_set[_SIGNAL_MAX];
	/* Where a PSI hard threshold was set under each of its names, "" when not: [eviction-hard]
	 * memory.some/full ([0]) and their alias [eviction] psi-memory-some/full ([1]). Both set,
	 * in any files, is an error: one would silently win. */
	char psi_origin[2][2][96];

	/* [eviction] */
	uint64_t max_pod_grace_usec;          /* 0: the pod's own termination grace period */
	uint64_t pressure_transition_usec;
	uint64_t retry_backoff_usec;          /* a pod whose eviction failed waits this, doubling */
	uint64_t retry_backoff_max_usec;      /* ... up to this */
	uint64_t reclaim_timeout_usec;        /* an evicted pod reclaims until its cgroup is gone or this passes; 0: no wait */
	node_reclaim_mode node_reclaim;       /* before a disk eviction: remove unused images, count them, or neither */
	uint64_t image_min_gc_age_usec;       /* the kubelet's imageMinimumGCAge: younger images are kept */
	uint64_t image_usage_refresh_usec;    /* images' last use refreshed this often between disk episodes; 0: not */

	/* [kubernetes]: shared by evictd (spool, descriptor dir) and evictd-kube (the rest) */
	struct {
		bool enable;               /* evictd writes the eviction spool; evictd-kube runs */
		char *kubeconfig;
		char *node_name;           /* NULL: the lower-cased hostname, as the kubelet */
		bool eviction_api;         /* POST pods/eviction instead of DELETE */
		char *descriptor_dir;      /* evictd-kube's pod descriptors; pod-metadata-dir wins */
		char *spool_dir;           /* eviction records evictd → evictd-kube */
		unsigned spool_max;        /* records kept at most; the oldest are dropped (logged) */
		uint64_t request_timeout_usec;
		uint64_t watch_timeout_usec;
		uint64_t retry_max_usec;   /* cap of the jittered exponential backoff */
		uint64_t condition_heartbeat_usec; /* evictd's Node conditions re-posted this often */
	} kube;

	/* [priority-class NAME] */
	priority_class_def *classes;
	size_t n_classes;

	/* [eviction] kubelet-margin: how far above the kubelet's thresholds evictd's own are taken */
	threshold_value kubelet_margin;
	/* [agent] node allocatable, as the kubelet computes it (kubeReserved, systemReserved) */
	/* [eviction-hard] allocatableMemory.available is memory.available's, copied (neither evictd.conf
	 * nor the kubelet names it), as the kubelet's addAllocatableThresholds does */
	bool allocatable_follows_memory;
	int64_t kube_reserved_memory;
	int64_t system_reserved_memory;
	bool enforce_node_allocatable_pods; /* the kubepods cgroup's memory.max is node allocatable */

	/*
	 * The kubelet's configuration as read ([kubernetes] kubelet-config), for the ordering check
	 * and --dump-config. path is empty when none was read (off, missing or broken).
	 */
	struct {
		char *config_path;          /* the key's value; NULL: none */
		char path[PATH_MAX];        /* the file the values below came from; "" none */
		threshold_value hard[_SIGNAL_MAX]; /* the kubelet's effective thresholds (its defaults applied) */
		threshold_value soft[_SIGNAL_MAX];
		char warning[PATH_MAX + 600];    /* a broken kubelet configuration: "file:line: what" */
		/* kubelet-config set in a file to a path that does not exist (a typo, or a kubelet not
		 * installed yet): said at start and on each reload; the default path stays silent */
		char missing[PATH_MAX + CONFIG_ORIGIN_MAX + 160];
		config_file_stamp stamp[2];      /* config_path and kubeadm-flags.env beside it, as read */
		char runtime_endpoint[PATH_MAX]; /* containerRuntimeEndpoint without "unix://"; "" unset */
	} kubelet;

	/* Where every key of config_keys() got its value (index = the table's); "" = default. */
	char key_origin[CONFIG_KEYS_MAX][CONFIG_ORIGIN_MAX];
	char soft_grace_origin[_SIGNAL_MAX][CONFIG_ORIGIN_MAX];
	pp_pcset *pcset; /* the classes above plus the two system classes, validated by libpreempt */

	/* The files that made this configuration, for logs: "a.conf b.conf" (may be empty). */
	char *sources;
} evictd_config;

typedef struct config_error {
	char file[PATH_MAX];
	unsigned line;  /* 0 when the error is not tied to a line (e.g. cannot open) */
	char msg[512];  /* what is wrong, without the location */
	char text[PATH_MAX + 600]; /* "file:line: msg", ready to print */
} config_error;

/* Command-line settings that win over every file (and are re-applied after a reload). */
typedef struct config_overrides {
	const char *cgroup_root;
	const char *pod_metadata_dir;
	const char *proc_root;
	bool dry_run; /* only ever turns dry-run on */
} config_overrides;

/* One section/key pair the configuration accepts (see config_keys()). */
typedef struct config_key {
	const char *section; /* "agent", ..., or CONFIG_SECTION_CLASS */
	const char *key;     /* or CONFIG_KEY_SIGNAL: every signal name (signal_name()) */
} config_key;

#define CONFIG_SECTION_CLASS "priority-class NAME"
#define CONFIG_KEY_SIGNAL    "SIGNAL"

/* Every section and key the parser accepts; *n is set to their number. */
const config_key *config_keys(size_t *n);

/* The index of section/key in config_keys() (signal sections: the CONFIG_KEY_SIGNAL row), or -1. */
int config_key_index(const char *section, const char *key);

/* The origin of a key as --dump-config prints it: "default" for an empty one. */
const char *config_origin(const evictd_config *c, const char *section, const char *key);

/* A configuration holding only the defaults. Returns 0 or -ENOMEM. */
int config_new_default(evictd_config **ret);

/*
 * Loads main_path, then every regular, non-hidden "*.conf" in main_path + ".d/" in strcmp()
 * order. A missing main file is fine unless must_exist (an explicit --config); a missing
 * drop-in directory always is. Returns 0 and a new configuration in *ret, or -EINVAL (bad
 * content), -ENOENT / -EACCES / -EIO / -ENOMEM with err describing "file:line: what".
 */
int config_load(const char *main_path, bool must_exist, evictd_config **ret, config_error *err);

/*
 * Parses one ini text (tests and fuzzing); name is used in messages. Same returns as above. The
 * kubelet's configuration is read only when the text names one ([kubernetes] kubelet-config).
 */
int config_load_string(const char *text, const char *name, evictd_config **ret, config_error *err);

/*
 * Reload: on success replaces *current (freeing the old one) and returns 0; on failure leaves
 * *current untouched and returns the error. Overrides (may be NULL) are applied to the new one.
 */
int config_reload(evictd_config **current, const char *main_path, bool must_exist,
                  const config_overrides *ov, config_error *err);

int config_apply_overrides(evictd_config *c, const config_overrides *ov);

evictd_config *config_free(evictd_config *c);

/*
 * Resolves a threshold against a capacity as the kubelet's GetThresholdQuantity does:
 * int64(float64(capacity) * float64(float32 fraction)) for percentages.
 */
int64_t config_threshold_resolve(const threshold_value *t, int64_t capacity);

/* config_threshold_resolve(), except PSI percentages, which are rounded to the nearest centipercent. */
int64_t config_threshold_resolve_signal(evictd_signal s, const threshold_value *t, int64_t capacity);

/* Formats a threshold as written ("100Mi", "10%") into buf. */
const char *config_threshold_format(const threshold_value *t, char *buf, size_t size);

/* True when a soft threshold with grace 0 must be treated as hard (the kubelet's rule). */
bool config_soft_is_hard(const evictd_config *c, evictd_signal s);

/* The hard threshold in force for s, including allocatableMemory.available derived from memory. */
const threshold_value *config_hard(const evictd_config *c, evictd_signal s);

/*
 * One threshold of evictd at or below the kubelet's of the same kind (hard with hard, soft with
 * soft; config-kubelet.c): the kubelet may evict first.
 */
typedef struct kubelet_conflict {
	evictd_signal signal;
	bool hard;
	const threshold_value *evictd, *kubelet;
	char key[64];  /* what the operator wrote and can change: "[eviction-hard] memory.available" */
	char text[3 * CONFIG_ORIGIN_MAX + 400]; /* the warning, naming both values and both files */
} kubelet_conflict;

/*
 * Calls cb for every conflicting signal. capacity[] (may be NULL, -1 = unknown) resolves a
 * percentage against a quantity; without it such a pair is compared only when both are the same
 * kind. Returns the number of conflicts.
 */
unsigned config_kubelet_conflicts(const evictd_config *c, const int64_t *capacity,
                                  void (*cb)(const kubelet_conflict *k, void *userdata), void *userdata);

/*
 * Every effective setting with its value in evictd.conf syntax and its origin, in the order of
 * config_keys() (signals: those with a value; priority classes last). cb gets section, key,
 * value and origin ("default" for a built-in). Used by --dump-config and --once.
 */
void config_foreach_setting(const evictd_config *c,
                            void (*cb)(const char *section, const char *key, const char *value,
                                       const char *origin, void *userdata),
                            void *userdata);
