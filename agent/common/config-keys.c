/* SPDX-License-Identifier: MIT */
/* Every section and key the parser accepts: the one table the parser, `evictd --dump-config-keys`
 * and the man page test share. */
#include "config-parse.h"

#include <string.h>

/*
 * Every section and key the parser accepts, in the order of conf/evictd.conf. The handlers refuse
 * a key that is not here before they look at it, so this list cannot fall behind the parser;
 * `evictd --dump-config-keys` prints it and the man page test checks evictd.conf(5) against it.
 */
static const config_key keys[] = {
	{ "agent", "interval" },
	{ "agent", "cgroup-root" },
	{ "agent", "pods" },
	{ "agent", "pod-metadata-dir" },
	{ "agent", "proc-root" },
	{ "agent", "kubelet-root-dir" },
	{ "agent", "nodefs-path" },
	{ "agent", "pod-logs-dir" },
	{ "agent", "pod-disk-walk-limit" },
	{ "agent", "imagefs-path" },
	{ "agent", "container-runtime-endpoint" },
	{ "agent", "runtime-request-timeout" },
	{ "agent", "kube-reserved-memory" },
	{ "agent", "system-reserved-memory" },
	{ "agent", "enforce-node-allocatable" },
	{ "agent", "dry-run" },
	{ "agent", "action" },
	{ "agent", "exec" },
	{ "agent", "exec-timeout" },
	{ "agent", "exec-fallback" },
	{ "agent", "status-file" },
	{ "agent", "metrics-file" },
	{ "agent", "run-directory" },
	{ "agent", "memory-max-rate" },
	{ "agent", "disk-max-rate" },
	{ "agent", "inodes-max-rate" },
	{ "agent", "pid-max-rate" },
	{ "eviction-hard", CONFIG_KEY_SIGNAL },
	{ "eviction-soft", CONFIG_KEY_SIGNAL },
	{ "eviction-soft-grace-period", CONFIG_KEY_SIGNAL },
	{ "eviction-minimum-reclaim", CONFIG_KEY_SIGNAL },
	{ "eviction", "max-pod-grace-period" },
	{ "eviction", "pressure-transition-period" },
	{ "eviction", "psi-memory-some" },
	{ "eviction", "psi-memory-full" },
	{ "eviction", "retry-backoff" },
	{ "eviction", "retry-backoff-max" },
	{ "eviction", "reclaim-timeout" },
	{ "eviction", "kubelet-margin" },
	{ "eviction", "node-reclaim" },
	{ "eviction", "image-minimum-gc-age" },
	{ "eviction", "image-usage-refresh" },
	{ "kubernetes", "enable" },
	{ "kubernetes", "kubelet-config" },
	{ "kubernetes", "kubeconfig" },
	{ "kubernetes", "node-name" },
	{ "kubernetes", "eviction-api" },
	{ "kubernetes", "descriptor-dir" },
	{ "kubernetes", "spool-dir" },
	{ "kubernetes", "spool-max" },
	{ "kubernetes", "request-timeout" },
	{ "kubernetes", "watch-timeout" },
	{ "kubernetes", "retry-max-interval" },
	{ "kubernetes", "condition-heartbeat" },
	{ CONFIG_SECTION_CLASS, "value" },
	{ CONFIG_SECTION_CLASS, "global-default" },
	{ CONFIG_SECTION_CLASS, "preemption-policy" },
	{ CONFIG_SECTION_CLASS, "description" },
};

_Static_assert(ELEMENTSOF(keys) <= CONFIG_KEYS_MAX, "CONFIG_KEYS_MAX: evictd_config.key_origin is too small");

const config_key *config_keys(size_t *n)
{
	*n = ELEMENTSOF(keys);
	return keys;
}

/* The table's name for a section: "priority-class NAME" for every class section. */
const char *config_section_kind(const char *name, size_t n)
{
	/* [priority-class NAME]; the name itself is validated when its keys arrive */
	if (n > 15 && memcmp(name, "priority-class ", 15) == 0)
		return CONFIG_SECTION_CLASS;
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (strlen(keys[i].section) == n && memcmp(keys[i].section, name, n) == 0)
			return keys[i].section;
	return NULL;
}

bool config_known_section(const char *name, size_t n)
{
	return config_section_kind(name, n) != NULL;
}

bool config_known_key(const char *section, const char *name)
{
	const char *kind = config_section_kind(section, strlen(section));
	for (size_t i = 0; kind && i < ELEMENTSOF(keys); i++)
		if (strcmp(keys[i].section, kind) == 0 &&
		    (strcmp(keys[i].key, name) == 0 || strcmp(keys[i].key, CONFIG_KEY_SIGNAL) == 0))
			return true;
	return false;
}

bool config_is_list_key(const char *section, const char *name)
{
	return strcmp(section, "agent") == 0 && (strcmp(name, "pods") == 0 || strcmp(name, "exec") == 0);
}

int config_key_index(const char *section, const char *key)
{
	const char *kind = config_section_kind(section, strlen(section));
	for (size_t i = 0; kind && i < ELEMENTSOF(keys); i++)
		if (strcmp(keys[i].section, kind) == 0 &&
		    (strcmp(keys[i].key, key) == 0 || strcmp(keys[i].key, CONFIG_KEY_SIGNAL) == 0))
			return (int)i;
	return -1;
}
