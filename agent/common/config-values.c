/* SPDX-License-Identifier: MIT */
/* Configuration values in Kubernetes syntax (quantities, percentages, durations, rates, lists),
 * one handler per section, the defaults, and the validation of the whole once every file is read.
 * Over ~600 lines on purpose: a key's parser, its default and its cross-check against other keys
 * are read together when a key changes; the table is config-keys.c, the file reader config-load.c. */
#include "config-parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "exec-argv.h"

static bool parse_bool(const char *v, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };
	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*ret = true;
			return true;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*ret = false;
			return true;
		}
	}
	return false;
}

int config_parse_duration_usec(parse_state *p, const char *key, const char *v, uint64_t *ret)
{
	pp_err e;
	int64_t ns;

	if (pp_duration_parse(v, &ns, &e) < 0)
		return config_fail(p, "%s: %s", key, e.msg); /* e.msg quotes the value */
	*ret = (uint64_t)ns / 1000;
	return 1;
}

static void set_origin(parse_state *p, char *origin, size_t size)
{
	snprintf(origin, size, "%s:%u", p->fname, p->lineno);
}

/*
 * Kubernetes threshold value: a quantity ("100Mi", "500000") or a percentage ("10%").
 * min_reclaim: quantities may be 0, percentages must be > 0 (parseMinimumReclaims);
 * thresholds: quantities must be > 0, "0%"/"100%" disable (parseThresholdStatement).
 */
int config_parse_threshold(parse_state *p, const char *section, evictd_signal sig, const char *v,
                           bool min_reclaim, threshold_value *ret)
{
	threshold_value t = { 0 };
	size_t n = strlen(v);

	if (n > 0 && v[n - 1] == '%') {
		char num[64], *end;
		if (n - 1 >= sizeof(num) || n == 1)
			return config_fail(p, "[%s] %s: invalid percentage \"%s\"", section, signal_name(sig), v);
		memcpy(num, v, n - 1);
		num[n - 1] = '\0';
		errno = 0;
		double d = strtod(num, &end);
		if (errno || end == num || *end || !isfinite(d) || isspace((unsigned char)num[0]))
			return config_fail(p, "[%s] %s: invalid percentage \"%s\"", section, signal_name(sig), v);
		if (d < 0 || d > 100)
			return config_fail(p, "[%s] %s: percentage %s out of range (0%%-100%%)", section,
			            signal_name(sig), v);
		if (min_reclaim && d == 0)
			return config_fail(p, "[%s] %s: minimum reclaim percentage must be greater than 0%%", section,
			            signal_name(sig));
		t.percent = true;
		t.fraction = (float)(d / 100.0);
		/* The kubelet drops exactly 0% and 100% thresholds: it is how one is disabled. */
		t.set = min_reclaim || (d != 0 && d != 100);
	} else {
		pp_err e;
		int64_t q;
		if (signal_is_psi(sig))
			return config_fail(p, "[%s] %s: PSI thresholds are percentages (e.g. \"40%%\"), not \"%s\"",
			            section, signal_name(sig), v);
		if (pp_quantity_parse(v, &q, &e) < 0)
			return config_fail(p, "[%s] %s: %s", section, signal_name(sig), e.msg);
		if (min_reclaim ? q < 0 : q <= 0)
			return config_fail(p, "[%s] %s: %s \"%s\" out of range (must be %s)", section, signal_name(sig),
			            min_reclaim ? "minimum reclaim" : "threshold", v,
			            min_reclaim ? "zero or positive" : "positive; use 0% to disable");
		t.set = true;
		t.quantity = q;
	}
	set_origin(p, t.origin, sizeof(t.origin));
	*ret = t;
	return 1;
}

/*
 * A PSI hard threshold has two names: [eviction-hard] memory.some/full, like every threshold, and
 * the older [eviction] psi-memory-some/full, kept as an alias. Setting both (in one file or
 * across drop-ins) is an error naming both places: whichever came last would win silently.
 */
int config_psi_name_used(parse_state *p, evictd_signal s, bool alias)
{
	char (*o)[96] = p->c->psi_origin[s == SIGNAL_MEMORY_FULL];
	const char *canon = s == SIGNAL_MEMORY_FULL ? "memory.full" : "memory.some";
	if (o[!alias][0])
		return config_fail(p, "[eviction-hard] %s and [eviction] psi-memory-%s name the same threshold and both are "
		                   "set (here and at %s): keep [eviction-hard] %s only",
		                   canon, canon + 7, o[!alias], canon);
	set_origin(p, o[alias], sizeof(o[alias]));
	return 1;
}

static int replace_str(parse_state *p, char **dst, const char *v)
{
	char *s = strdup(v);
	if (!s)
		return config_fail(p, "out of memory");
	free(*dst);
	*dst = s;
	return 1;
}

static size_t strv_length(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

/* Appends the whitespace-separated words of v to *list (no quoting: argv entries have no spaces). */
static int strv_append_words(parse_state *p, char ***list, const char *v)
{
	size_t n = strv_length(*list);
	const char *s = v;

	for (;;) {
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			return 1;
		size_t len = 0;
		while (s[len] && !isspace((unsigned char)s[len]))
			len++;
		char **nl = realloc(*list, (n + 2) * sizeof(char *));
		if (!nl)
			return config_fail(p, "out of memory");
		*list = nl;
		nl[n] = strndup(s, len);
		nl[n + 1] = NULL;
		if (!nl[n])
			return config_fail(p, "out of memory");
		n++;
		s += len;
	}
}

/* Added for reaction latency (*-max-rate): a quantity per second; "/s" may be written out. */
static int parse_rate(parse_state *p, const char *name, const char *v, int64_t *ret)
{
	char q[64];
	size_t n = strlen(v);
	int64_t r;
	pp_err e;

	if (n >= 2 && strcmp(v + n - 2, "/s") == 0)
		n -= 2;
	if (n == 0 || n >= sizeof(q))
		return config_fail(p, "%s: invalid rate \"%s\" (a quantity per second, e.g. \"2Gi\" or \"2Gi/s\")", name, v);
	memcpy(q, v, n);
	q[n] = '\0';
	if (pp_quantity_parse(q, &r, &e) < 0)
		return config_fail(p, "%s: invalid rate \"%s\": %s", name, v, e.msg);
	if (r <= 0)
		return config_fail(p, "%s \"%s\" out of range (must be positive)", name, v);
	*ret = r;
	return 1;
}

/* Long on purpose (~150 lines): one branch per key of [agent], each with its syntax and range where the key
 * is named, as the other sections' handlers; grouped into helpers, a key would be looked for in two places. */
int config_handle_agent(parse_state *p, const char *name, const char *v, bool continuation)
{
	evictd_config *c = p->c;

	if (strcmp(name, "interval") == 0) {
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		if (u < 10000 || u > 3600 * USEC_PER_SEC)
			return config_fail(p, "interval \"%s\" out of range (10ms-1h)", v);
		c->interval_usec = u;
	} else if (strcmp(name, "cgroup-root") == 0) {
		if (strcmp(v, "auto") == 0) {
			free(c->cgroup_root);
			c->cgroup_root = NULL;
		} else if (v[0] != '/')
			return config_fail(p, "cgroup-root \"%s\" must be \"auto\" or an absolute path", v);
		else
			return replace_str(p, &c->cgroup_root, v);
	} else if (strcmp(name, "pods") == 0) {
		if (!continuation)
			c->pods = config_strv_free(c->pods);
		if (!strv_append_words(p, &c->pods, v))
			return 0;
		for (char **i = c->pods; i && *i; i++)
			if ((*i)[0] == '/' || strstr(*i, ".."))
				return config_fail(p, "pods pattern \"%s\" must be relative to the cgroup root, without \"..\"", *i);
		if (!c->pods)
			return config_fail(p, "pods: at least one pattern is needed");
	} else if (strcmp(name, "pod-metadata-dir") == 0 || strcmp(name, "proc-root") == 0 ||
	           strcmp(name, "nodefs-path") == 0 || strcmp(name, "imagefs-path") == 0 ||
	           strcmp(name, "status-file") == 0 || strcmp(name, "kubelet-root-dir") == 0 ||
	           strcmp(name, "pod-logs-dir") == 0 || strcmp(name, "run-directory") == 0) {
		char **dst = strcmp(name, "pod-metadata-dir") == 0 ? &c->pod_metadata_dir
		           : strcmp(name, "run-directory") == 0    ? &c->run_dir
		           : strcmp(name, "pod-logs-dir") == 0     ? &c->pod_logs_dir
		           : strcmp(name, "kubelet-root-dir") == 0 ? &c->kubelet_root_dir
		           : name[0] == 'p'                        ? &c->proc_root
		           : name[0] == 'n'                        ? &c->nodefs_path
		           : name[0] == 'i'                        ? &c->imagefs_path
		                                                   : &c->status_file;
		if (dst == &c->nodefs_path)
			p->nodefs_explicit = true;
		if (v[0] != '/')
			return config_fail(p, "%s \"%s\" must be an absolute path", name, v);
		return replace_str(p, dst, v);
	} else if (strcmp(name, "metrics-file") == 0) {
		if (strcmp(v, "none") == 0) {
			free(c->metrics_file);
			c->metrics_file = NULL;
			return 1;
		}
		/* node_exporter's textfile collector reads only *.prom files */
		size_t n = strlen(v);
		if (v[0] != '/' || n < 6 || strcmp(v + n - 5, ".prom") != 0 || v[n - 6] == '/')
			return config_fail(p, "metrics-file \"%s\" must be \"none\" or an absolute path ending in .prom", v);
		return replace_str(p, &c->metrics_file, v);
	} else if (strcmp(name, "dry-run") == 0) {
		if (!parse_bool(v, &c->dry_run))
			return config_fail(p, "dry-run: expected yes or no, not \"%s\"", v);
	} else if (strcmp(name, "action") == 0) {
		if (strcmp(v, "kill") == 0)
			c->action = ACTION_KILL;
		else if (strcmp(v, "exec") == 0)
			c->action = ACTION_EXEC;
		else
			return config_fail(p, "action: expected kill or exec, not \"%s\"", v);
	} else if (strcmp(name, "exec") == 0) {
		if (!continuation)
			c->exec_argv = config_strv_free(c->exec_argv);
		if (!strv_append_words(p, &c->exec_argv, v))
			return 0;
		const char *bad = NULL;
		if (!c->exec_argv || exec_argv_validate(c->exec_argv, &bad) < 0)
			return config_fail(p, "exec: invalid command line (argv[0] must be an absolute path; "
			               "placeholders are {namespace} {name} {uid} {grace}): \"%s\"",
			            bad ? bad : v);
	} else if (strcmp(name, "exec-timeout") == 0) {
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		if (u == 0 || u > 3600 * USEC_PER_SEC)
			return config_fail(p, "exec-timeout \"%s\" out of range (more than 0, at most 1h)", v);
		c->exec_timeout_usec = u;
	} else if (strcmp(name, "memory-max-rate") == 0 || strcmp(name, "disk-max-rate") == 0 ||
	           strcmp(name, "inodes-max-rate") == 0 || strcmp(name, "pid-max-rate") == 0) {
		int64_t *dst = name[0] == 'm' ? &c->memory_max_rate : name[0] == 'd' ? &c->disk_max_rate
		             : name[0] == 'i' ? &c->inodes_max_rate : &c->pid_max_rate;
		if (name[0] == 'm')
			c->memory_max_rate_auto = false;
		else if (name[0] == 'p')
			c->pid_max_rate_auto = false;
		return parse_rate(p, name, v, dst);
	} else if (strcmp(name, "kube-reserved-memory") == 0 || strcmp(name, "system-reserved-memory") == 0) {
		int64_t q;
		pp_err e;
		if (pp_quantity_parse(v, &q, &e) < 0)
			return config_fail(p, "%s: %s", name, e.msg);
		if (q < 0)
			return config_fail(p, "%s \"%s\" out of range (must be zero or positive)", name, v);
		*(name[0] == 'k' ? &c->kube_reserved_memory : &c->system_reserved_memory) = q;
	} else if (strcmp(name, "enforce-node-allocatable") == 0) {
		if (strcmp(v, "pods") == 0)
			c->enforce_node_allocatable_pods = true;
		else if (strcmp(v, "none") == 0)
			c->enforce_node_allocatable_pods = false;
		else
			return config_fail(p, "enforce-node-allocatable: expected pods or none, not \"%s\"", v);
	} else if (strcmp(name, "pod-disk-walk-limit") == 0) {
		int64_t q;
		pp_err e;
		if (pp_quantity_parse(v, &q, &e) < 0)
			return config_fail(p, "pod-disk-walk-limit: invalid number \"%s\": %s", v, e.msg);
		if (q < 1 || q > 100000000)
			return config_fail(p, "pod-disk-walk-limit \"%s\" out of range (1-100M directory entries)", v);
		c->pod_disk_walk_limit = (uint64_t)q;
	} else if (strcmp(name, "container-runtime-endpoint") == 0) {
		/* the kubelet's syntax: unix:// and an absolute path; a bare path is taken as one */
		const char *path = strncmp(v, "unix://", 7) == 0 ? v + 7 : v;
		if (strcmp(v, "auto") == 0) {
			free(c->runtime_endpoint);
			c->runtime_endpoint = NULL;
			return 1;
		}
		if (strcmp(v, "none") == 0)
			path = "";
		else if (path[0] != '/' || strlen(path) > 107)
			return config_fail(p, "container-runtime-endpoint \"%s\" must be auto, none or unix:///PATH "
			                   "(an absolute path of at most 107 bytes)", v);
		return replace_str(p, &c->runtime_endpoint, path);
	} else if (strcmp(name, "runtime-request-timeout") == 0) {
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		if (u < USEC_PER_SEC / 100 || u > 60 * USEC_PER_SEC)
			return config_fail(p, "runtime-request-timeout \"%s\" out of range (10ms-60s)", v);
		c->runtime_timeout_usec = u;
	} else if (strcmp(name, "exec-fallback") == 0) {
		if (strcmp(v, "kill") == 0)
			c->exec_fallback_kill = true;
		else if (strcmp(v, "none") == 0)
			c->exec_fallback_kill = false;
		else
			return config_fail(p, "exec-fallback: expected kill or none, not \"%s\"", v);
	} else
		return config_fail(p, "unknown key \"%s\" in section [agent]", name);
	return 1;
}

int config_handle_eviction(parse_state *p, const char *name, const char *v)
{
	evictd_config *c = p->c;

	if (strcmp(name, "max-pod-grace-period") == 0)
		return config_parse_duration_usec(p, name, v, &c->max_pod_grace_usec);
	if (strcmp(name, "pressure-transition-period") == 0)
		return config_parse_duration_usec(p, name, v, &c->pressure_transition_usec);
	if (strcmp(name, "retry-backoff") == 0 || strcmp(name, "retry-backoff-max") == 0) {
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		if (u < USEC_PER_SEC / 10 || u > 24 * 3600 * USEC_PER_SEC)
			return config_fail(p, "%s \"%s\" out of range (100ms-24h)", name, v);
		*(name[13] ? &c->retry_backoff_max_usec : &c->retry_backoff_usec) = u;
		return 1;
	}
	if (strcmp(name, "reclaim-timeout") == 0) {
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		if (u > 3600 * USEC_PER_SEC)
			return config_fail(p, "%s \"%s\" out of range (0-1h)", name, v);
		c->reclaim_timeout_usec = u;
		return 1;
	}
	if (strcmp(name, "node-reclaim") == 0) {
		if (strcmp(v, "images") == 0)
			c->node_reclaim = NODE_RECLAIM_IMAGES;
		else if (strcmp(v, "account") == 0)
			c->node_reclaim = NODE_RECLAIM_ACCOUNT;
		else if (strcmp(v, "off") == 0)
			c->node_reclaim = NODE_RECLAIM_OFF;
		else
			return config_fail(p, "node-reclaim: expected images, account or off, not \"%s\"", v);
		return 1;
	}
	if (strcmp(name, "image-minimum-gc-age") == 0) {
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		if (u > 24 * 3600 * USEC_PER_SEC)
			return config_fail(p, "%s \"%s\" out of range (0-24h)", name, v);
		c->image_min_gc_age_usec = u;
		return 1;
	}
	if (strcmp(name, "image-usage-refresh") == 0) {
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		/* below a second it would be a poll of the runtime, not a refresh */
		if (u != 0 && (u < USEC_PER_SEC || u > 24 * 3600 * USEC_PER_SEC))
			return config_fail(p, "%s \"%s\" out of range (0 for off, or 1s-24h)", name, v);
		c->image_usage_refresh_usec = u;
		return 1;
	}
	if (strcmp(name, "kubelet-margin") == 0) {
		/* A percentage of the kubelet's threshold, or a quantity added to it; 0 or 0% for none. */
		if (strcmp(v, "0%") == 0 || strcmp(v, "0") == 0) {
			c->kubelet_margin = (threshold_value){ .set = false };
			set_origin(p, c->kubelet_margin.origin, sizeof(c->kubelet_margin.origin));
			return 1;
		}
		if (!config_parse_threshold(p, "eviction", SIGNAL_MEMORY_AVAILABLE, v, true, &c->kubelet_margin))
			return 0;
		if (c->kubelet_margin.percent && c->kubelet_margin.fraction > 1.0f)
			return config_fail(p, "kubelet-margin \"%s\" out of range (at most 100%%)", v);
		return 1;
	}
	if (strcmp(name, "psi-memory-some") == 0 || strcmp(name, "psi-memory-full") == 0) {
		evictd_signal s = name[11] == 's' ? SIGNAL_MEMORY_SOME : SIGNAL_MEMORY_FULL;
		if (!config_psi_name_used(p, s, true))
			return 0;
		return config_parse_threshold(p, "eviction", s, v, false, &c->hard[s]);
	}
	return config_fail(p, "unknown key \"%s\" in section [eviction]", name);
}

int config_handle_kubernetes(parse_state *p, const char *name, const char *v)
{
	evictd_config *c = p->c;

	if (strcmp(name, "enable") == 0) {
		if (!parse_bool(v, &c->kube.enable))
			return config_fail(p, "[kubernetes] enable: expected yes or no, not \"%s\"", v);
	} else if (strcmp(name, "kubeconfig") == 0 || strcmp(name, "descriptor-dir") == 0 ||
	           strcmp(name, "spool-dir") == 0) {
		char **dst = name[0] == 'k' ? &c->kube.kubeconfig : name[0] == 'd' ? &c->kube.descriptor_dir
		                                                                  : &c->kube.spool_dir;
		if (v[0] != '/')
			return config_fail(p, "[kubernetes] %s \"%s\" must be an absolute path", name, v);
		return replace_str(p, dst, v);
	} else if (strcmp(name, "kubelet-config") == 0) {
		if (strcmp(v, "none") == 0) {
			free(c->kubelet.config_path);
			c->kubelet.config_path = NULL;
			return 1;
		}
		if (v[0] != '/')
			return config_fail(p, "[kubernetes] kubelet-config \"%s\" must be \"none\" or an absolute path", v);
		return replace_str(p, &c->kubelet.config_path, v);
	} else if (strcmp(name, "node-name") == 0) {
		if (!pp_is_dns_subdomain(v))
			return config_fail(p, "[kubernetes] node-name \"%s\" is not a valid node name (lower-case DNS subdomain)", v);
		return replace_str(p, &c->kube.node_name, v);
	} else if (strcmp(name, "eviction-api") == 0) {
		if (strcmp(v, "delete") == 0)
			c->kube.eviction_api = false;
		else if (strcmp(v, "eviction") == 0)
			c->kube.eviction_api = true;
		else
			return config_fail(p, "[kubernetes] eviction-api: expected delete or eviction, not \"%s\"", v);
	} else if (strcmp(name, "spool-max") == 0) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (errno || end == v || *end || n < 1 || n > 100000)
			return config_fail(p, "[kubernetes] spool-max \"%s\" out of range (1-100000)", v);
		c->kube.spool_max = (unsigned)n;
	} else if (strcmp(name, "request-timeout") == 0 || strcmp(name, "watch-timeout") == 0 ||
	           strcmp(name, "retry-max-interval") == 0) {
		uint64_t *dst = name[0] == 'r' && name[2] == 'q' ? &c->kube.request_timeout_usec
		              : name[0] == 'w'                   ? &c->kube.watch_timeout_usec
		                                                 : &c->kube.retry_max_usec;
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		if (u < USEC_PER_SEC || u > 3600 * USEC_PER_SEC)
			return config_fail(p, "[kubernetes] %s \"%s\" out of range (1s-1h)", name, v);
		*dst = u;
	} else if (strcmp(name, "condition-heartbeat") == 0) {
		uint64_t u = 0;
		if (!config_parse_duration_usec(p, name, v, &u))
			return 0;
		if (u < USEC_PER_SEC || u > 3600 * USEC_PER_SEC)
			return config_fail(p, "[kubernetes] %s \"%s\" out of range (1s-1h)", name, v);
		c->kube.condition_heartbeat_usec = u;
	} else
		return config_fail(p, "unknown key \"%s\" in section [kubernetes]", name);
	return 1;
}

static priority_class_def *find_class(evictd_config *c, const char *name)
{
	for (size_t i = 0; i < c->n_classes; i++)
		if (strcmp(c->classes[i].name, name) == 0)
			return &c->classes[i];
	return NULL;
}

int config_handle_class(parse_state *p, const char *cname, const char *name, const char *v)
{
	evictd_config *c = p->c;
	priority_class_def *pc = find_class(c, cname);

	if (!pc) {
		priority_class_def *n = realloc(c->classes, (c->n_classes + 1) * sizeof(*n));
		if (!n)
			return config_fail(p, "out of memory");
		c->classes = n;
		pc = &n[c->n_classes];
		*pc = (priority_class_def){ .value = INT32_MIN };
		pc->name = strdup(cname);
		if (!pc->name)
			return config_fail(p, "out of memory");
		c->n_classes++;
		set_origin(p, pc->origin, sizeof(pc->origin));
	}
	if (strcmp(name, "value") == 0) {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (errno || end == v || *end)
			return config_fail(p, "[priority-class %s] value: not an integer: \"%s\"", cname, v);
		if (x < INT32_MIN || x > INT32_MAX)
			return config_fail(p, "[priority-class %s] value %s out of range (32-bit integer)", cname, v);
		pc->value = (int32_t)x;
		set_origin(p, pc->origin, sizeof(pc->origin));
	} else if (strcmp(name, "global-default") == 0) {
		if (!parse_bool(v, &pc->global_default))
			return config_fail(p, "[priority-class %s] global-default: expected yes or no, not \"%s\"", cname, v);
	} else if (strcmp(name, "preemption-policy") == 0) {
		pp_err e;
		if (pp_preemption_policy_parse(v, &pc->policy, &e) < 0)
			return config_fail(p, "[priority-class %s] %s", cname, e.msg);
	} else if (strcmp(name, "description") == 0) {
		char *d = strdup(v);
		if (!d)
			return config_fail(p, "out of memory");
		free(pc->description);
		pc->description = d;
	} else
		return config_fail(p, "unknown key \"%s\" in section [priority-class %s]", name, cname);
	return 1;
}

static void default_threshold(threshold_value *t, bool percent, double pct, int64_t q)
{
	*t = (threshold_value){ .set = true, .percent = percent, .fraction = (float)(pct / 100.0), .quantity = q };
	snprintf(t->origin, sizeof(t->origin), "default");
}

int config_new_default(evictd_config **ret)
{
	evictd_config *c = calloc(1, sizeof(*c));
	static const char *const pods[] = {
		"kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice",
		"kubepods.slice/kubepods-pod*.slice",
		"kubepods/*/pod*",
		"kubepods/pod*",
	};

	if (!c)
		return -ENOMEM;
	c->interval_usec = USEC_PER_SEC;
	c->pods = calloc(ELEMENTSOF(pods) + 1, sizeof(char *));
	/* No default command: none is shipped (on Kubernetes, evictd-kube reports evictions), so
	 * action = exec must name one. */
	c->exec_argv = calloc(1, sizeof(char *));
	c->pod_metadata_dir = strdup("/run/evictd/pods");
	c->proc_root = strdup("/proc");
	c->nodefs_path = strdup("/var/lib/kubelet");
	c->imagefs_path = strdup("/var/lib/containerd");
	c->kubelet_root_dir = strdup("/var/lib/kubelet");
	c->pod_logs_dir = strdup("/var/log/pods");
	c->pod_disk_walk_limit = 100000;
	c->status_file = strdup("/run/evictd/status.json");
	c->sources = strdup("");
	c->kube.kubeconfig = strdup("/etc/kubernetes/kubelet.conf");
	c->kube.descriptor_dir = strdup("/run/evictd/kube-pods");
	c->kube.spool_dir = strdup("/run/evictd/evictions");
	c->kube.spool_max = 1000;
	c->kube.request_timeout_usec = 10 * USEC_PER_SEC;
	c->kube.watch_timeout_usec = 300 * USEC_PER_SEC;
	c->kube.retry_max_usec = 30 * USEC_PER_SEC;
	/* node-problem-detector's --k8s-exporter-heartbeat-period */
	c->kube.condition_heartbeat_usec = 300 * USEC_PER_SEC;
	c->kubelet.config_path = strdup(KUBELET_CONFIG_PATH);
	/* README "Beside the kubelet": a quarter above the kubelet's thresholds. */
	default_threshold(&c->kubelet_margin, true, 25, 0);
	c->enforce_node_allocatable_pods = true;
	if (!c->kubelet.config_path ||!c->pods || !c->exec_argv || !c->pod_metadata_dir || !c->proc_root || !c->nodefs_path ||
	    !c->imagefs_path || !c->kubelet_root_dir || !c->pod_logs_dir || !c->status_file || !c->sources ||
	    !c->kube.kubeconfig || !c->kube.descriptor_dir || !c->kube.spool_dir) {
		config_free(c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ELEMENTSOF(pods); i++)
		if (!(c->pods[i] = strdup(pods[i]))) {
			config_free(c);
			return -ENOMEM;
		}
	c->action = ACTION_KILL;
	c->exec_timeout_usec = 30 * USEC_PER_SEC;
	/* earlyoom's 6000 MiB/s (the fastest fill it measured with stress) and a fork bomb, per CPU:
	 * scaled to the node's online CPUs at start (cadence_derive_rates); PCIe 4.0 NVMe writes; a
	 * file-creating loop. Why each: conf/evictd.conf. */
	c->memory_max_rate = 6LL << 30;
	c->memory_max_rate_auto = true;
	c->disk_max_rate = 4LL << 30;
	c->inodes_max_rate = 100000;
	c->pid_max_rate = 10000;
	c->pid_max_rate_auto = true;
	/* The kubelet's Linux evictionHard defaults (pkg/kubelet/eviction/defaults_linux.go). */
	default_threshold(&c->hard[SIGNAL_MEMORY_AVAILABLE], false, 0, 100LL << 20);
	default_threshold(&c->hard[SIGNAL_NODEFS_AVAILABLE], true, 10, 0);
	default_threshold(&c->hard[SIGNAL_NODEFS_INODES_FREE], true, 5, 0);
	default_threshold(&c->hard[SIGNAL_IMAGEFS_AVAILABLE], true, 15, 0);
	default_threshold(&c->hard[SIGNAL_IMAGEFS_INODES_FREE], true, 5, 0);
	c->max_pod_grace_usec = 0;
	c->pressure_transition_usec = 300 * USEC_PER_SEC;
	c->retry_backoff_usec = 10 * USEC_PER_SEC;
	c->retry_backoff_max_usec = 300 * USEC_PER_SEC;
	c->reclaim_timeout_usec = 30 * USEC_PER_SEC; /* the kubelet's podCleanupTimeout */
	c->node_reclaim = NODE_RECLAIM_IMAGES;
	c->image_min_gc_age_usec = 120 * USEC_PER_SEC; /* the kubelet's imageMinimumGCAge default */
	c->image_usage_refresh_usec = 300 * USEC_PER_SEC; /* the kubelet's image manager's detectImages period */
	c->runtime_timeout_usec = 2 * USEC_PER_SEC;
	*ret = c;
	return 0;
}

/* Cross-key rules, checked once every file has been read. */
int config_finalize(parse_state *p)
{
	evictd_config *c = p->c;
	pp_err e;
	int r;

	for (int s = 0; s < _SIGNAL_MAX; s++) {
		if (c->soft[s].set && !c->soft_grace_set[s]) {
			char file[PATH_MAX];
			unsigned line = 0;
			snprintf(file, sizeof(file), "%s", c->soft[s].origin);
			char *colon = strrchr(file, ':');
			if (colon) {
				*colon = '\0';
				line = (unsigned)strtoul(colon + 1, NULL, 10);
			}
			config_set_error(p->err, file, line,
			          "[eviction-soft] %s needs a grace period in [eviction-soft-grace-period]",
			          signal_name(s));
			return -EINVAL;
		}
	}
	if (c->action == ACTION_EXEC && (!c->exec_argv || !c->exec_argv[0])) {
		config_set_error(p->err, c->sources ? c->sources : "", 0,
		          "[agent] action = exec needs exec = COMMAND (no command is shipped; on a Kubernetes "
		          "node evictd-kube reports evictions to the API server)");
		return -EINVAL;
	}
	if (c->retry_backoff_max_usec < c->retry_backoff_usec) {
		config_set_error(p->err, c->sources ? c->sources : "", 0,
		          "[eviction] retry-backoff-max must not be shorter than retry-backoff");
		return -EINVAL;
	}
	/*
	 * allocatableMemory.available follows the hard memory.available threshold, as the kubelet's
	 * addAllocatableThresholds does with the default enforceNodeAllocatable=[pods].
	 */
	if (!p->hard_explicit[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] && c->hard[SIGNAL_MEMORY_AVAILABLE].set) {
		c->hard[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = c->hard[SIGNAL_MEMORY_AVAILABLE];
		c->allocatable_follows_memory = true;
		if (!c->min_reclaim[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].set)
			c->min_reclaim[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = c->min_reclaim[SIGNAL_MEMORY_AVAILABLE];
	}

	/* nodefs is the filesystem holding the kubelet's root dir (cAdvisor RootFsInfo). */
	if (!p->nodefs_explicit && strcmp(c->nodefs_path, c->kubelet_root_dir) != 0) {
		char *d = strdup(c->kubelet_root_dir);
		if (!d)
			return -ENOMEM;
		free(c->nodefs_path);
		c->nodefs_path = d;
		int i = config_key_index("agent", "nodefs-path");
		if (i >= 0)
			snprintf(c->key_origin[i], sizeof(c->key_origin[i]), "follows kubelet-root-dir");
	}

	c->pcset = pp_pcset_free(c->pcset);
	r = pp_pcset_new(&c->pcset);
	if (r < 0)
		return r;
	for (size_t i = 0; i < c->n_classes; i++) {
		priority_class_def *pc = &c->classes[i];
		char file[PATH_MAX];
		unsigned line = 0;
		snprintf(file, sizeof(file), "%s", pc->origin);
		char *colon = strrchr(file, ':');
		if (colon) {
			*colon = '\0';
			line = (unsigned)strtoul(colon + 1, NULL, 10);
		}
		if (pc->value == INT32_MIN) {
			config_set_error(p->err, file, line, "[priority-class %s] has no value", pc->name);
			return -EINVAL;
		}
		r = pp_pcset_add(c->pcset, pc->name, pc->value, pc->global_default, pc->policy, &e);
		if (r < 0) {
			config_set_error(p->err, file, line, "[priority-class %s]: %s", pc->name, e.msg);
			return -EINVAL;
		}
	}
	return 0;
}

int config_apply_overrides(evictd_config *c, const config_overrides *ov)
{
	struct {
		const char *v;
		char **dst;
		const char *key, *option;
	} s[] = {
		{ ov ? ov->cgroup_root : NULL, &c->cgroup_root, "cgroup-root", "--cgroup-root" },
		{ ov ? ov->pod_metadata_dir : NULL, &c->pod_metadata_dir, "pod-metadata-dir", "--metadata-dir" },
		{ ov ? ov->proc_root : NULL, &c->proc_root, "proc-root", "--proc-root" },
	};

	if (!ov)
		return 0;
	for (size_t i = 0; i < ELEMENTSOF(s); i++) {
		if (!s[i].v)
			continue;
		char *d = strdup(s[i].v);
		if (!d)
			return -ENOMEM;
		free(*s[i].dst);
		*s[i].dst = d;
		snprintf(c->key_origin[config_key_index("agent", s[i].key)], CONFIG_ORIGIN_MAX, "command line (%s)", s[i].option);
	}
	if (ov->dry_run) {
		c->dry_run = true;
		snprintf(c->key_origin[config_key_index("agent", "dry-run")], CONFIG_ORIGIN_MAX, "command line (--dry-run)");
	}
	return 0;
}

int config_fail(parse_state *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (p->err && p->err->line == 0 && p->err->msg[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		config_set_error(p->err, p->fname, p->lineno, "%s", msg);
	}
	return 0;
}
