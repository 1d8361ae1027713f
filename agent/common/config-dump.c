/* SPDX-License-Identifier: MIT */
/*
 * Every effective setting in evictd.conf syntax with where it came from: `evictd --dump-config`
 * and the configuration part of `--once`, one row per setting (an alias is shown under the key it
 * names). Walks the key table (config-keys.c), so a key added there without a formatter here
 * prints "?" and the dump test fails.
 */
#include "config-parse.h"

#include <inttypes.h>
#include <string.h>

#include "spool.h"

typedef void (*setting_cb)(const char *section, const char *key, const char *value, const char *origin,
                           void *userdata);

static const char *duration(uint64_t usec, char *buf, size_t size)
{
	if (usec == 0)
		snprintf(buf, size, "0s");
	else if (usec % USEC_PER_SEC == 0)
		snprintf(buf, size, "%" PRIu64 "s", usec / USEC_PER_SEC);
	else if (usec % 1000 == 0)
		snprintf(buf, size, "%" PRIu64 "ms", usec / 1000);
	else
		snprintf(buf, size, "%" PRIu64 "us", usec);
	return buf;
}

static const char *strv(char *const *v, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = '\0';
	for (size_t i = 0; v && v[i] && l < size; i++)
		l += (size_t)snprintf(buf + l, size - l, "%s%s", i ? " " : "", v[i]);
	return buf;
}

static const char *threshold_text(evictd_signal s, const threshold_value *t, char *buf, size_t size)
{
	char q[32];
	if (!t->set)
		return t->percent ? "0%" : "none";
	if (t->percent && t->margin) {
		snprintf(buf, size, "%g%%+%s", (double)t->fraction * 100.0, spool_quantity(t->margin, q, sizeof(q)));
		return buf;
	}
	if (!t->percent && !signal_is_psi(s) && strcmp(signal_unit(s), "bytes") == 0)
		return spool_quantity(t->quantity, buf, size);
	return config_threshold_format(t, buf, size);
}

const char *config_origin(const evictd_config *c, const char *section, const char *key)
{
	int i = config_key_index(section, key);
	return i >= 0 && c->key_origin[i][0] ? c->key_origin[i] : "default";
}

static const char *or_none(const char *s)
{
	return s ? s : "none";
}

/* The value of a non-signal key; NULL for a key without a formatter (a bug the test catches). Long on
 * purpose (~120 lines): one line per key, in the order --dump-config prints them. */
static const char *value_of(const evictd_config *c, const char *sec, const char *key, char *buf, size_t size)
{
#define K(s, k) (strcmp(sec, s) == 0 && strcmp(key, k) == 0)
	char q[32];
	if (K("agent", "interval"))
		return duration(c->interval_usec, buf, size);
	if (K("agent", "cgroup-root"))
		return c->cgroup_root ? c->cgroup_root : "auto";
	if (K("agent", "pods"))
		return strv(c->pods, buf, size);
	if (K("agent", "pod-metadata-dir"))
		return c->pod_metadata_dir;
	if (K("agent", "proc-root"))
		return c->proc_root;
	if (K("agent", "kubelet-root-dir"))
		return c->kubelet_root_dir;
	if (K("agent", "nodefs-path"))
		return c->nodefs_path;
	if (K("agent", "pod-logs-dir"))
		return c->pod_logs_dir;
	if (K("agent", "pod-disk-walk-limit"))
		return snprintf(buf, size, "%" PRIu64, c->pod_disk_walk_limit), buf;
	if (K("agent", "imagefs-path"))
		return c->imagefs_path;
	if (K("agent", "container-runtime-endpoint")) {
		if (!c->runtime_endpoint && c->kubelet.runtime_endpoint[0])
			return snprintf(buf, size, "unix://%.107s", c->kubelet.runtime_endpoint), buf;
		if (!c->runtime_endpoint)
			return "auto (" CONTAINERD_SOCKET ", else " CRIO_SOCKET ")";
		return c->runtime_endpoint[0] ? (snprintf(buf, size, "unix://%.107s", c->runtime_endpoint), buf) : "none";
	}
	if (K("agent", "runtime-request-timeout"))
		return duration(c->runtime_timeout_usec, buf, size);
	if (K("agent", "kube-reserved-memory"))
		return spool_quantity(c->kube_reserved_memory, buf, size);
	if (K("agent", "system-reserved-memory"))
		return spool_quantity(c->system_reserved_memory, buf, size);
	if (K("agent", "enforce-node-allocatable"))
		return c->enforce_node_allocatable_pods ? "pods" : "none";
	if (K("agent", "dry-run"))
		return c->dry_run ? "yes" : "no";
	if (K("agent", "action"))
		return c->action == ACTION_EXEC ? "exec" : "kill";
	if (K("agent", "exec"))
		return c->exec_argv && c->exec_argv[0] ? strv(c->exec_argv, buf, size) : "none";
	if (K("agent", "exec-timeout"))
		return duration(c->exec_timeout_usec, buf, size);
	if (K("agent", "exec-fallback"))
		return c->exec_fallback_kill ? "kill" : "none";
	if (K("agent", "status-file"))
		return or_none(c->status_file);
	if (K("agent", "metrics-file"))
		return or_none(c->metrics_file);
	if (K("agent", "run-directory"))
		return c->run_dir ? c->run_dir : "(status-file's directory)";
	/* memory and pid rates without a key: derived from the online CPUs (cadence_derive_rates) */
	if (K("agent", "memory-max-rate") && c->memory_max_rate_auto && c->online_cpus)
		return snprintf(buf, size, "%s/s (for %u CPU%s)", spool_quantity(c->memory_max_rate, q, sizeof(q)),
		                c->online_cpus, c->online_cpus == 1 ? "" : "s"), buf;
	if (K("agent", "memory-max-rate") && c->memory_max_rate_auto)
		return "6Gi/s per online CPU, at most 256Gi/s";
	if (K("agent", "pid-max-rate") && c->pid_max_rate_auto && c->online_cpus)
		return snprintf(buf, size, "%" PRId64 "/s (for %u CPU%s)", c->pid_max_rate, c->online_cpus,
		                c->online_cpus == 1 ? "" : "s"), buf;
	if (K("agent", "pid-max-rate") && c->pid_max_rate_auto)
		return "10000/s per online CPU, at most 1000000/s";
	if (K("agent", "memory-max-rate") || K("agent", "disk-max-rate")) {
		snprintf(buf, size, "%s/s", spool_quantity(key[0] == 'm' ? c->memory_max_rate : c->disk_max_rate, q, sizeof(q)));
		return buf;
	}
	if (K("agent", "inodes-max-rate") || K("agent", "pid-max-rate"))
		return snprintf(buf, size, "%" PRId64 "/s", key[0] == 'i' ? c->inodes_max_rate : c->pid_max_rate), buf;
	if (K("eviction", "max-pod-grace-period"))
		return duration(c->max_pod_grace_usec, buf, size);
	if (K("eviction", "pressure-transition-period"))
		return duration(c->pressure_transition_usec, buf, size);
	if (K("eviction", "retry-backoff"))
		return duration(c->retry_backoff_usec, buf, size);
	if (K("eviction", "retry-backoff-max"))
		return duration(c->retry_backoff_max_usec, buf, size);
	if (K("eviction", "reclaim-timeout"))
		return duration(c->reclaim_timeout_usec, buf, size);
	if (K("eviction", "node-reclaim"))
		return c->node_reclaim == NODE_RECLAIM_IMAGES ? "images" : c->node_reclaim == NODE_RECLAIM_ACCOUNT ? "account" : "off";
	if (K("eviction", "image-minimum-gc-age"))
		return duration(c->image_min_gc_age_usec, buf, size);
	if (K("eviction", "image-usage-refresh"))
		return duration(c->image_usage_refresh_usec, buf, size);
	if (K("eviction", "kubelet-margin")) {
		if (!c->kubelet_margin.set)
			return "0";
		if (c->kubelet_margin.percent)
			return config_threshold_format(&c->kubelet_margin, buf, size);
		return spool_quantity(c->kubelet_margin.quantity, buf, size);
	}
	if (K("kubernetes", "enable"))
		return c->kube.enable ? "yes" : "no";
	if (K("kubernetes", "kubelet-config"))
		return or_none(c->kubelet.config_path);
	if (K("kubernetes", "kubeconfig"))
		return or_none(c->kube.kubeconfig);
	if (K("kubernetes", "node-name"))
		return c->kube.node_name ? c->kube.node_name : "(the host name)";
	if (K("kubernetes", "eviction-api"))
		return c->kube.eviction_api ? "eviction" : "delete";
	if (K("kubernetes", "descriptor-dir"))
		return or_none(c->kube.descriptor_dir);
	if (K("kubernetes", "spool-dir"))
		return or_none(c->kube.spool_dir);
	if (K("kubernetes", "spool-max"))
		return snprintf(buf, size, "%u", c->kube.spool_max), buf;
	if (K("kubernetes", "request-timeout"))
		return duration(c->kube.request_timeout_usec, buf, size);
	if (K("kubernetes", "watch-timeout"))
		return duration(c->kube.watch_timeout_usec, buf, size);
	if (K("kubernetes", "retry-max-interval"))
		return duration(c->kube.retry_max_usec, buf, size);
	if (K("kubernetes", "condition-heartbeat"))
		return duration(c->kube.condition_heartbeat_usec, buf, size);
#undef K
	return NULL;
}

static void signal_rows(const evictd_config *c, const char *section, setting_cb cb, void *userdata)
{
	char buf[64];
	for (int i = 0; i < _SIGNAL_MAX; i++) {
		evictd_signal s = (evictd_signal)i;
		const char *name = signal_name(s);
		/* PSI thresholds are hard only ([eviction] psi-memory-* are their older names) */
		if (signal_is_psi(s) && strcmp(section, "eviction-hard") != 0)
			continue;
		if (strcmp(section, "eviction-soft-grace-period") == 0) {
			if (c->soft_grace_set[i])
				cb(section, name, duration(c->soft_grace_usec[i], buf, sizeof(buf)),
				   c->soft_grace_origin[i][0] ? c->soft_grace_origin[i] : "default", userdata);
			continue;
		}
		const threshold_value *t = strcmp(section, "eviction-hard") == 0 ? config_hard(c, s)
		                         : strcmp(section, "eviction-soft") == 0 ? &c->soft[i]
		                                                                 : &c->min_reclaim[i];
		/* an unset threshold is shown only when something unset it (a file, the kubelet) */
		if (!t->set && (!t->origin[0] || strcmp(t->origin, "default") == 0))
			continue;
		const char *origin = t->origin[0] ? t->origin : "default";
		char via[CONFIG_ORIGIN_MAX + 48];
		if (signal_is_psi(s) && c->psi_origin[s == SIGNAL_MEMORY_FULL][1][0]) {
			/* set under its older name: shown once, here, saying which name the file used */
			snprintf(via, sizeof(via), "%s ([eviction] psi-%s)", origin, s == SIGNAL_MEMORY_FULL ? "memory-full"
			                                                                                       : "memory-some");
			origin = via;
		}
		cb(section, name, threshold_text(s, t, buf, sizeof(buf)), origin, userdata);
	}
}

/* [eviction] psi-memory-some/full name [eviction-hard] memory.some/full: one setting, one row. */
static bool is_alias(const config_key *k)
{
	return strcmp(k->section, "eviction") == 0 && strncmp(k->key, "psi-memory-", 11) == 0;
}

void config_foreach_setting(const evictd_config *c, setting_cb cb, void *userdata)
{
	size_t n;
	const config_key *k = config_keys(&n);
	char buf[4096];

	for (size_t i = 0; i < n; i++) {
		if (strcmp(k[i].section, CONFIG_SECTION_CLASS) == 0 || is_alias(&k[i]))
			continue;
		if (strcmp(k[i].key, CONFIG_KEY_SIGNAL) == 0) {
			signal_rows(c, k[i].section, cb, userdata);
			continue;
		}
		const char *v = value_of(c, k[i].section, k[i].key, buf, sizeof(buf));
		cb(k[i].section, k[i].key, v ? v : "?", c->key_origin[i][0] ? c->key_origin[i] : "default", userdata);
	}
	for (size_t i = 0; i < c->n_classes; i++) {
		const priority_class_def *pc = &c->classes[i];
		char sec[300];
		snprintf(sec, sizeof(sec), "priority-class %s", pc->name);
		snprintf(buf, sizeof(buf), "%d", (int)pc->value);
		cb(sec, "value", buf, pc->origin, userdata);
		cb(sec, "global-default", pc->global_default ? "yes" : "no", pc->origin, userdata);
		cb(sec, "preemption-policy", pc->policy == PP_PREEMPT_NEVER ? "Never" : "PreemptLowerPriority",
		   pc->origin, userdata);
		if (pc->description)
			cb(sec, "description", pc->description, pc->origin, userdata);
	}
}
