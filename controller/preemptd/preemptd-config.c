/* SPDX-License-Identifier: MIT */
#include "preemptd-config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <ini.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <preempt.h>

#ifndef PREEMPTD_VERSION
#define PREEMPTD_VERSION "0.1.0"
#endif

typedef enum key_type {
	K_STRING, K_PATH, K_BOOL, K_DURATION, K_UINT, K_LEASE, K_LOG_TARGET, K_LOG_LEVEL, K_PDB,
	K_NOMINATION_TIMEOUT, K_LIMIT, K_POOL_LIMIT, K_DURATION_OFF, K_NAME, K_IDENTITY, K_LISTEN,
} key_type;

/* One setting: its key in [preemptd] and its flag (the same name), where it lands, what it is. */
struct key {
	const char *name;
	key_type type;
	size_t offset;
	const char *help;
};

static const char *metavar(key_type t)
{
	static const char *const names[] = { [K_STRING] = "NAME", [K_PATH] = "FILE", [K_BOOL] = "yes|no",
		                             [K_DURATION] = "DURATION", [K_UINT] = "N", [K_LEASE] = "NS/NAME",
		                             [K_LOG_TARGET] = "TARGET", [K_LOG_LEVEL] = "LEVEL", [K_PDB] = "prefer|strict",
		                             [K_NOMINATION_TIMEOUT] = "TIMEOUT", [K_LIMIT] = "N",
		                             [K_POOL_LIMIT] = "LABEL=N", [K_DURATION_OFF] = "DURATION",
		                             [K_NAME] = "NAME", [K_IDENTITY] = "NAME", [K_LISTEN] = "ADDR:PORT" };
	return names[t];
}

#define OFF(f) offsetof(preemptd_config, f)
static const struct key keys[] = {
	{ "kubeconfig", K_PATH, OFF(kubeconfig), "kubeconfig of the API server (default: the in-cluster service account)" },
	{ "scheduler-name", K_NAME, OFF(scheduler_name), "spec.schedulerName of the pods to schedule (default preemptd)" },
	{ "leader-elect", K_BOOL, OFF(leader_elect), "yes|no: one active instance through a Lease (default yes)" },
	{ "lease", K_LEASE, OFF(lease_namespace), "NAMESPACE/NAME of the Lease (default kube-system/preemptd)" },
	{ "identity", K_IDENTITY, OFF(identity), "holderIdentity in the Lease (default HOSTNAME_RANDOM)" },
	{ "leader-elect-lease-duration", K_DURATION, OFF(lease_duration_usec), "how long a lease lasts unrenewed (15s)" },
	{ "leader-elect-renew-deadline", K_DURATION, OFF(renew_deadline_usec), "the leader stops after failing to renew this long (10s)" },
	{ "leader-elect-retry-period", K_DURATION, OFF(retry_period_usec), "between two tries to acquire or renew (2s)" },
	{ "listen", K_LISTEN, OFF(listen), "ADDRESS:PORT of /healthz /livez /readyz /metrics (127.0.0.1:10271; \"\": none)" },
	{ "log-target", K_LOG_TARGET, OFF(log_target), "auto|journal|stderr (default auto)" },
	{ "log-level", K_LOG_LEVEL, OFF(log_level), "info|debug (default info)" },
	{ "pod-initial-backoff", K_DURATION, OFF(pod_initial_backoff_usec), "backoff after a pod's first failed attempt (1s)" },
	{ "pod-max-backoff", K_DURATION, OFF(pod_max_backoff_usec), "the longest backoff (10s)" },
	{ "pod-max-unschedulable", K_DURATION, OFF(max_unschedulable_usec), "unschedulable pods are retried after this anyway (5m)" },
	{ "nomination-timeout", K_NOMINATION_TIMEOUT, OFF(nomination_timeout_usec),
	  "grace+DURATION|DURATION|never: when a nomination whose pod is not bound is withdrawn (grace+30s)" },
	{ "max-victims-per-minute", K_LIMIT, OFF(max_victims_per_minute), "pods preemption may delete in any minute (none: no limit)" },
	{ "max-victims-per-minute-per-pool", K_POOL_LIMIT, OFF(pool_label),
	  "N per node pool: each value of node label LABEL (none)" },
	{ "min-runtime", K_DURATION_OFF, OFF(min_runtime_usec), "younger pods are victims only if nothing else fits (0: off)" },
	{ "max-in-flight", K_UINT, OFF(max_in_flight), "API writes at once (32)" },
	{ "retry-max", K_DURATION, OFF(retry_max_usec), "the longest wait before a failed write or watch is retried (30s)" },
	{ "watch-timeout", K_DURATION, OFF(watch_timeout_usec), "shortest timeoutSeconds of a watch, each random in [t, 2t) (5m)" },
	{ "page-limit", K_UINT, OFF(page_limit), "objects per list page (500)" },
	{ "shadow", K_BOOL, OFF(shadow), "yes|no: decide for another scheduler's pods, write nothing, count agreement (no)" },
	{ "shadow-scheduler", K_NAME, OFF(shadow_scheduler), "the scheduler --shadow compares with (default-scheduler)" },
	{ "pdb", K_PDB, OFF(pdb_policy), "victims deleted, budgets preferred as kube-scheduler does (prefer), or evicted, no "
	                                 "PodDisruptionBudget broken (strict; default prefer)" },
};

void preemptd_config_usage(FILE *f)
{
	fputs("Usage: preemptd [OPTIONS]\n"
	      "A second Kubernetes scheduler for the pods that name it (spec.schedulerName): kube-scheduler's\n"
	      "queue, filters and preemption (libpreempt), acting on the API server.\n\n"
	      "  --config FILE                          settings ([preemptd] section; default " PREEMPTD_CONFIG_PATH ")\n",
	      f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char flag[64];
		snprintf(flag, sizeof(flag), "--%s %s", keys[i].name, metavar(keys[i].type));
		fprintf(f, "  %-38s %s\n", flag, keys[i].help);
	}
	fputs("  -h, --help                             this text\n"
	      "  -V, --version                          the version\n\n"
	      "Every key of the configuration file is also a flag of the same name; a flag wins.\n"
	      "Durations: 90s, 1m30s, 500ms.\n",
	      f);
}

static int set_str(char **dst, const char *v)
{
	char *n = strdup(v);
	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

/* A duration of at least a microsecond, in microseconds. */
static int parse_usec(const struct key *k, const char *v, uint64_t *ret, char *why, size_t why_size)
{
	int64_t ns = 0;
	pp_err err;

	if (pp_duration_parse(v, &ns, &err) < 0) {
		snprintf(why, why_size, "%s: %s", k->name, err.msg);
		return -EINVAL;
	}
	if (ns < 1000) {
		snprintf(why, why_size, "%s: \"%s\" is not a positive duration", k->name, v);
		return -EINVAL;
	}
	*ret = (uint64_t)ns / 1000;
	return 0;
}

/* 1 to 1000000. */
static int parse_count(const struct key *k, const char *v, unsigned *ret, char *why, size_t why_size)
{
	char *end;
	unsigned long x = strtoul(v, &end, 10);

	if (!*v || *end || *v == '-' || *v == '+' || x == 0 || x > 1000000) {
		snprintf(why, why_size, "%s: expected a number from 1 to 1000000, not \"%s\"", k->name, v);
		return -EINVAL;
	}
	*ret = (unsigned)x;
	return 0;
}

/* A label key as the API server validates one: [DNS-subdomain prefix "/"] name, the name up to
 * 63 characters of [A-Za-z0-9-_.] starting and ending alphanumeric. */
static bool label_key_ok(const char *key, size_t len)
{
	const char *slash = memchr(key, '/', len);
	const char *name = slash ? slash + 1 : key;
	size_t n = len - (size_t)(name - key);

	if (slash) {
		char prefix[254];
		size_t p = (size_t)(slash - key);
		if (p == 0 || p >= sizeof(prefix))
			return false;
		memcpy(prefix, key, p);
		prefix[p] = '\0';
		if (!pp_is_dns_subdomain(prefix))
			return false;
	}
	if (n == 0 || n > 63 || !isalnum((unsigned char)name[0]) || !isalnum((unsigned char)name[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
			return false;
	return true;
}

/* ADDRESS:PORT as httpd_new takes it: a numeric IPv4 or [IPv6] address (or none: every address)
 * and a port from 0 to 65535 — checked here so that 99999 is refused rather than truncated. */
static bool listen_ok(const char *v)
{
	const char *colon = strrchr(v, ':'), *port;
	char host[INET6_ADDRSTRLEN + 2];
	unsigned char addr[sizeof(struct in6_addr)];
	size_t hl;
	unsigned long p;
	char *end;

	if (!colon)
		return false;
	port = colon + 1;
	if (!*port || strlen(port) > 5 || strspn(port, "0123456789") != strlen(port))
		return false;
	p = strtoul(port, &end, 10);
	if (p > 65535)
		return false;
	hl = (size_t)(colon - v);
	if (hl == 0)
		return true;
	if (hl >= sizeof(host))
		return false;
	if (v[0] == '[') {
		if (hl < 3 || v[hl - 1] != ']')
			return false;
		memcpy(host, v + 1, hl - 2);
		host[hl - 2] = '\0';
		return inet_pton(AF_INET6, host, addr) == 1;
	}
	memcpy(host, v, hl);
	host[hl] = '\0';
	return inet_pton(AF_INET, host, addr) == 1;
}

/* lease: NAMESPACE/NAME, the name a DNS subdomain. */
static int parse_lease(preemptd_config *cfg, const struct key *k, const char *v, char *why, size_t why_size)
{
	const char *slash = strchr(v, '/');

	if (!slash || slash == v || !slash[1] || strchr(slash + 1, '/') || !pp_is_dns_subdomain(slash + 1)) {
		snprintf(why, why_size, "%s: expected NAMESPACE/NAME, not \"%s\"", k->name, v);
		return -EINVAL;
	}
	char *ns_ = strndup(v, (size_t)(slash - v));
	if (!ns_)
		return -ENOMEM;
	free(cfg->lease_namespace);
	cfg->lease_namespace = ns_;
	return set_str(&cfg->lease_name, slash + 1);
}

/* nomination-timeout: grace+DURATION (after the victims' grace period), DURATION, or never. */
static int parse_nomination_timeout(preemptd_config *cfg, const struct key *k, const char *v, char *why,
                                    size_t why_size)
{
	cfg->nomination_timeout_usec = cfg->nomination_after_grace_usec = 0;
	if (!strcmp(v, "never"))
		return 0;
	if (!strncmp(v, "grace+", 6))
		return parse_usec(k, v + 6, &cfg->nomination_after_grace_usec, why, why_size);
	if (parse_usec(k, v, &cfg->nomination_timeout_usec, why, why_size) < 0) {
		snprintf(why, why_size, "%s: expected grace+DURATION (e.g. grace+30s), DURATION or never, not \"%s\"",
		         k->name, v);
		return -EINVAL;
	}
	return 0;
}

/* max-victims-per-minute-per-pool: LABEL=N (a node label key and a count), or none. */
static int parse_pool_limit(preemptd_config *cfg, const struct key *k, const char *v, char *why, size_t why_size)
{
	const char *eq = strrchr(v, '=');

	free(cfg->pool_label);
	cfg->pool_label = NULL;
	cfg->max_victims_per_pool = 0;
	if (!strcmp(v, "none"))
		return 0;
	if (!eq || !label_key_ok(v, (size_t)(eq - v))) {
		snprintf(why, why_size, "%s: expected LABEL=N (a node label key and a number), or none, not \"%s\"",
		         k->name, v);
		return -EINVAL;
	}
	if (parse_count(k, eq + 1, &cfg->max_victims_per_pool, why, why_size) < 0)
		return -EINVAL;
	return (cfg->pool_label = strndup(v, (size_t)(eq - v))) ? 0 : -ENOMEM;
}

/* Applies value to key k. why[] says what is wrong (without the location). */
static int apply(preemptd_config *cfg, const struct key *k, const char *v, char *why, size_t why_size)
{
	void *field = (char *)cfg + k->offset;

	switch (k->type) {
	case K_STRING:
	case K_PATH:
		if (k->type == K_PATH && !*v) {
			snprintf(why, why_size, "%s: empty path", k->name);
			return -EINVAL;
		}
		return set_str(field, v);
	case K_NAME:
		if (!pp_is_dns_subdomain(v)) {
			snprintf(why, why_size, "%s: \"%s\" is not a valid name (lower-case letters, digits, '-' and '.')",
			         k->name, v);
			return -EINVAL;
		}
		return set_str(field, v);
	case K_IDENTITY:
		/* holderIdentity: any string the API server stores, but an empty one means "no holder" */
		if (!*v || strlen(v) > 253) {
			snprintf(why, why_size, "%s: \"%s\" is not an identity (1 to 253 characters)", k->name, v);
			return -EINVAL;
		}
		return set_str(field, v);
	case K_LISTEN:
		if (*v && !listen_ok(v)) {
			snprintf(why, why_size,
			         "%s: expected ADDRESS:PORT (a numeric address, a port from 0 to 65535) or \"\", not \"%s\"",
			         k->name, v);
			return -EINVAL;
		}
		return set_str(field, v);
	case K_BOOL:
		if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
			*(bool *)field = true;
		else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
			*(bool *)field = false;
		else {
			snprintf(why, why_size, "%s: expected yes or no, not \"%s\"", k->name, v);
			return -EINVAL;
		}
		return 0;
	case K_DURATION:
		return parse_usec(k, v, field, why, why_size);
	case K_UINT:
		return parse_count(k, v, field, why, why_size);
	case K_LEASE:
		return parse_lease(cfg, k, v, why, why_size);
	case K_LOG_TARGET:
		if (logging_target_parse(v, field) < 0) {
			snprintf(why, why_size, "%s: expected auto, journal or stderr, not \"%s\"", k->name, v);
			return -EINVAL;
		}
		return 0;
	case K_PDB: {
		pp_err err;
		if (pp_pdb_policy_parse(v, field, &err) < 0) {
			snprintf(why, why_size, "%s: %s", k->name, err.msg);
			return -EINVAL;
		}
		return 0;
	}
	case K_NOMINATION_TIMEOUT:
		return parse_nomination_timeout(cfg, k, v, why, why_size);
	case K_LIMIT:
		*(unsigned *)field = 0;
		return !strcmp(v, "none") ? 0 : parse_count(k, v, field, why, why_size);
	case K_POOL_LIMIT:
		return parse_pool_limit(cfg, k, v, why, why_size);
	case K_DURATION_OFF:
		*(uint64_t *)field = 0;
		return !strcmp(v, "0") || !strcmp(v, "none") ? 0 : parse_usec(k, v, field, why, why_size);
	case K_LOG_LEVEL:
		if (!strcmp(v, "info"))
			*(int *)field = LOG_INFO;
		else if (!strcmp(v, "debug"))
			*(int *)field = LOG_DEBUG;
		else {
			snprintf(why, why_size, "%s: expected info or debug, not \"%s\"", k->name, v);
			return -EINVAL;
		}
		return 0;
	}
	return -EINVAL;
}

static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

struct ini_ctx {
	preemptd_config *cfg;
	char why[512];
	bool oom;
};

static int on_ini_line(void *user, const char *section, const char *name, const char *value)
{
	struct ini_ctx *c = user;
	const struct key *k;

	if (strcmp(section, "preemptd") != 0) {
		snprintf(c->why, sizeof(c->why), "unknown section [%s] (only [preemptd])", section);
		return 0;
	}
	if (!(k = find_key(name))) {
		snprintf(c->why, sizeof(c->why), "unknown key \"%s\" in [preemptd]", name);
		return 0;
	}
	int r = apply(c->cfg, k, value, c->why, sizeof(c->why));
	c->oom |= r == -ENOMEM;
	return r < 0 ? 0 : 1;
}

static void defaults(preemptd_config *cfg)
{
	*cfg = (preemptd_config){
		.leader_elect = true,
		.lease_duration_usec = 15000000,
		.renew_deadline_usec = 10000000,
		.retry_period_usec = 2000000,
		.log_target = LOGGING_AUTO,
		.log_level = LOG_INFO,
		.pod_initial_backoff_usec = 1000000,
		.pod_max_backoff_usec = 10000000,
		.max_unschedulable_usec = 300000000,
		.max_in_flight = 32,
		.retry_max_usec = 30000000,
		.watch_timeout_usec = 300000000,
		.page_limit = 500,
		.nomination_after_grace_usec = 30000000,
	};
}

/* The line of the first section header other than [preemptd] (why[] says which), or 0. */
static int first_bad_section(FILE *f, char *why, size_t why_size)
{
	char buf[1024];
	int line = 0;
	bool line_start = true;

	while (fgets(buf, sizeof(buf), f)) {
		const char *p = buf, *end, *name;
		size_t n;
		bool at_start = line_start;

		line_start = strchr(buf, '\n') != NULL;
		if (!at_start)
			continue; /* the rest of a long line */
		line++;
		p += strspn(p, " \t");
		if (*p != '[')
			continue;
		name = p + 1 + strspn(p + 1, " \t");
		end = strchr(name, ']');
		n = end ? (size_t)(end - name) : strcspn(name, "\r\n");
		while (n > 0 && isspace((unsigned char)name[n - 1]))
			n--;
		if (!end || n != strlen("preemptd") || strncmp(name, "preemptd", n) != 0) {
			snprintf(why, why_size, "%s section [%.*s] (only [preemptd])", end ? "unknown" : "unterminated",
			         (int)(n > 100 ? 100 : n), name);
			return line;
		}
	}
	return 0;
}

static int load_file(preemptd_config *cfg)
{
	struct ini_ctx c = { .cfg = cfg };
	FILE *f = fopen(cfg->config_path, "re");
	int line;

	if (!f) {
		if (errno == ENOENT && !cfg->config_explicit)
			return 0; /* the default file is optional */
		fprintf(stderr, "preemptd: %s: %s\n", cfg->config_path, strerror(errno));
		return -EINVAL;
	}
	/* inih reports a section only with its first key: a misspelt [preemptd] is named at its own line */
	line = first_bad_section(f, c.why, sizeof(c.why));
	if (line == 0) {
		rewind(f);
		line = ini_parse_file(f, on_ini_line, &c);
	}
	fclose(f);
	if (c.oom) {
		fputs("preemptd: out of memory\n", stderr);
		return -ENOMEM;
	}
	if (line != 0) {
		fprintf(stderr, "preemptd: %s:%d: %s\n", cfg->config_path, line,
		        c.why[0] ? c.why : line < 0 ? "cannot read" : "not a key = value line");
		return -EINVAL;
	}
	return 0;
}

/* A duration as the flags take it: 1m30s, 500ms. */
static const char *fmt_usec(uint64_t usec, char *buf, size_t size)
{
	uint64_t ms = usec / 1000, s = ms / 1000;

	if (ms % 1000)
		snprintf(buf, size, "%" PRIu64 "ms", ms);
	else if (s >= 60 && s % 60)
		snprintf(buf, size, "%" PRIu64 "m%" PRIu64 "s", s / 60, s % 60);
	else if (s >= 60)
		snprintf(buf, size, "%" PRIu64 "m", s / 60);
	else
		snprintf(buf, size, "%" PRIu64 "s", s);
	return buf;
}

static int check(const preemptd_config *cfg)
{
	char a[32], b[32], c[32];

	/* the defaults are valid and every value set was checked: these are the settings' relations */
	if (cfg->leader_elect && (cfg->renew_deadline_usec >= cfg->lease_duration_usec ||
	                          cfg->retry_period_usec >= cfg->renew_deadline_usec)) {
		fprintf(stderr,
		        "preemptd: leader election needs retry-period < renew-deadline < lease-duration "
		        "(a leader must stop before its lease can expire), not %s, %s, %s\n",
		        fmt_usec(cfg->retry_period_usec, a, sizeof(a)), fmt_usec(cfg->renew_deadline_usec, b, sizeof(b)),
		        fmt_usec(cfg->lease_duration_usec, c, sizeof(c)));
		return -EINVAL;
	}
	if (cfg->pod_initial_backoff_usec > cfg->pod_max_backoff_usec) {
		fprintf(stderr, "preemptd: pod-initial-backoff %s is longer than pod-max-backoff %s\n",
		        fmt_usec(cfg->pod_initial_backoff_usec, a, sizeof(a)),
		        fmt_usec(cfg->pod_max_backoff_usec, b, sizeof(b)));
		return -EINVAL;
	}
	return 0;
}

static bool is_option(const struct option *opts, const char *arg)
{
	size_t n = strcspn(arg, "=");

	for (; opts->name; opts++)
		if (strlen(opts->name) == n && !strncmp(opts->name, arg, n))
			return true;
	return false;
}

int preemptd_config_parse(int argc, char **argv, preemptd_config *cfg)
{
	enum { OPT_CONFIG = 256, OPT_KEY0 = 300 };
	struct option opts[sizeof(keys) / sizeof(keys[0]) + 4];
	size_t n = 0;
	int c, r;

	defaults(cfg);
	opts[n++] = (struct option){ "config", required_argument, NULL, OPT_CONFIG };
	opts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	opts[n++] = (struct option){ "version", no_argument, NULL, 'V' };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		opts[n++] = (struct option){ keys[i].name, required_argument, NULL, OPT_KEY0 + (int)i };
	opts[n] = (struct option){ 0 };

	/* first pass: --config, --help, --version; the file goes under the flags */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
		if (c == 'h') {
			preemptd_config_usage(stdout);
			return 1;
		}
		if (c == 'V') {
			printf("preemptd %s (libpreempt %d.%d)\n", PREEMPTD_VERSION, PP_VERSION_MAJOR, PP_VERSION_MINOR);
			return 1;
		}
		/* "--leader-elect --log-target stderr": the flag took the next option as its value */
		if ((c >= OPT_KEY0 || c == OPT_CONFIG) && optarg && optarg[0] == '-' && optarg[1] == '-' &&
		    is_option(opts, optarg + 2)) {
			fprintf(stderr, "preemptd: --%s: missing value (\"%s\" is the next option)\n",
			        c == OPT_CONFIG ? "config" : keys[c - OPT_KEY0].name, optarg);
			return -EINVAL;
		}
		if (c == OPT_CONFIG) {
			if ((r = set_str(&cfg->config_path, optarg)) < 0)
				return r;
			cfg->config_explicit = true;
		} else if (c == ':' || c == '?') {
			fprintf(stderr, "preemptd: %s '%s' (try 'preemptd --help')\n",
			        c == ':' ? "option needs an argument:" : "unknown option", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "preemptd: unexpected argument '%s' (try 'preemptd --help')\n", argv[optind]);
		return -EINVAL;
	}
	if (!cfg->config_path && set_str(&cfg->config_path, PREEMPTD_CONFIG_PATH) < 0)
		return -ENOMEM;
	if (set_str(&cfg->scheduler_name, "preemptd") < 0 || set_str(&cfg->lease_namespace, "kube-system") < 0 ||
	    set_str(&cfg->lease_name, "preemptd") < 0 || set_str(&cfg->listen, "127.0.0.1:10271") < 0 ||
	    set_str(&cfg->shadow_scheduler, "default-scheduler") < 0)
		return -ENOMEM;
	r = load_file(cfg);
	if (r < 0)
		return r;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
		char why[512];
		if (c < OPT_KEY0)
			continue;
		r = apply(cfg, &keys[c - OPT_KEY0], optarg, why, sizeof(why));
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			fprintf(stderr, "preemptd: --%s\n", why);
			return r;
		}
	}
	return check(cfg);
}

void preemptd_config_free(preemptd_config *cfg)
{
	free(cfg->config_path);
	free(cfg->kubeconfig);
	free(cfg->scheduler_name);
	free(cfg->lease_namespace);
	free(cfg->lease_name);
	free(cfg->identity);
	free(cfg->listen);
	free(cfg->pool_label);
	free(cfg->shadow_scheduler);
	memset(cfg, 0, sizeof(*cfg));
}

int preemptd_config_default_identity(preemptd_config *cfg)
{
	char host[256] = "", id[320];

	if (cfg->identity)
		return 0;
	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		snprintf(host, sizeof(host), "preemptd");
	snprintf(id, sizeof(id), "%s_%08lx%04lx", host, (unsigned long)random() & 0xffffffffUL,
	         (unsigned long)random() & 0xffffUL);
	return set_str(&cfg->identity, id);
}
