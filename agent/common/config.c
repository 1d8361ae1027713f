/* SPDX-License-Identifier: MIT */
/*
 * Configuration loader: inih over a line-counting reader, drop-ins in strcmp() order, Kubernetes
 * value syntax, transactional result.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec-argv.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* inih cuts section and key names at 49 characters (MAX_SECTION/MAX_NAME = 50) without a word. */
#define INI_NAME_MAX 49
/* A configuration file larger than this is refused: DESIGN §5 needs a few KiB. */
#define CONFIG_FILE_MAX (1024 * 1024)

typedef struct parse_state {
	evictd_config *c;
	FILE *f;
	const char *text; /* config_load_string(): parse from memory instead of f */
	size_t text_off;
	const char *fname;
	unsigned lineno;
	unsigned bad_line;    /* first line the reader itself rejects */
	char bad_msg[128];
	bool indented;        /* the current line starts with whitespace: inih's continuation */
	char prev_section[64];
	char prev_name[64];
	char seen[64][100];   /* "section\nkey" seen in this file: duplicates are errors */
	size_t n_seen;
	bool hard_explicit[_SIGNAL_MAX];
	bool nodefs_explicit;
	config_error *err;
} parse_state;

static void set_error(config_error *err, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void set_error(config_error *err, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(err->text, sizeof(err->text), "%s:%u: %s", err->file, line, err->msg);
	else
		snprintf(err->text, sizeof(err->text), "%s: %s", err->file, err->msg);
}

/* Records the first error of this parse; returns 0 so that inih counts the line as an error. */
static int fail(parse_state *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(parse_state *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (p->err && p->err->line == 0 && p->err->msg[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		set_error(p->err, p->fname, p->lineno, "%s", msg);
	}
	return 0;
}

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
	{ "kubernetes", "enable" },
	{ "kubernetes", "kubeconfig" },
	{ "kubernetes", "node-name" },
	{ "kubernetes", "eviction-api" },
	{ "kubernetes", "descriptor-dir" },
	{ "kubernetes", "spool-dir" },
	{ "kubernetes", "spool-max" },
	{ "kubernetes", "request-timeout" },
	{ "kubernetes", "watch-timeout" },
	{ "kubernetes", "retry-max-interval" },
	{ CONFIG_SECTION_CLASS, "value" },
	{ CONFIG_SECTION_CLASS, "global-default" },
	{ CONFIG_SECTION_CLASS, "preemption-policy" },
	{ CONFIG_SECTION_CLASS, "description" },
};

const config_key *config_keys(size_t *n)
{
	*n = ELEMENTSOF(keys);
	return keys;
}

/* The table's name for a section: "priority-class NAME" for every class section. */
static const char *section_kind(const char *name, size_t n)
{
	/* [priority-class NAME]; the name itself is validated when its keys arrive */
	if (n > 15 && memcmp(name, "priority-class ", 15) == 0)
		return CONFIG_SECTION_CLASS;
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (strlen(keys[i].section) == n && memcmp(keys[i].section, name, n) == 0)
			return keys[i].section;
	return NULL;
}

static bool known_section(const char *name, size_t n)
{
	return section_kind(name, n) != NULL;
}

static bool known_key(const char *section, const char *name)
{
	const char *kind = section_kind(section, strlen(section));
	for (size_t i = 0; kind && i < ELEMENTSOF(keys); i++)
		if (strcmp(keys[i].section, kind) == 0 &&
		    (strcmp(keys[i].key, name) == 0 || strcmp(keys[i].key, CONFIG_KEY_SIGNAL) == 0))
			return true;
	return false;
}

static void check_raw_line(parse_state *p, const char *buf)
{
	const char *s = buf;
	size_t n;

	p->indented = *s == ' ' || *s == '\t';
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '[') {
		const char *e = strchr(s, ']');
		n = e ? (size_t)(e - s - 1) : strlen(s + 1);
		if (n > INI_NAME_MAX && !p->bad_line) {
			p->bad_line = p->lineno;
			snprintf(p->bad_msg, sizeof(p->bad_msg), "section name longer than %d characters",
			         INI_NAME_MAX);
		} else if (e && !p->bad_line && !known_section(s + 1, n)) {
			/* Checked here, at the header: an unknown section without keys must not pass either. */
			p->bad_line = p->lineno;
			snprintf(p->bad_msg, sizeof(p->bad_msg), "unknown section [%.*s]", (int)(n > 60 ? 60 : n), s + 1);
		}
	} else if (*s && *s != ';' && *s != '#' && !p->indented) {
		n = strcspn(s, "=:");
		if (s[n] && n > INI_NAME_MAX && !p->bad_line) {
			p->bad_line = p->lineno;
			snprintf(p->bad_msg, sizeof(p->bad_msg), "key name longer than %d characters",
			         INI_NAME_MAX);
		}
	}
}

/*
 * fgets-style reader for ini_parse_stream(): counts lines (portable line numbers for the
 * handler) and turns inih's silent truncation of long lines into an error.
 */
static char *reader(char *buf, int size, void *stream)
{
	parse_state *p = stream;
	size_t n;
	bool overlong = false;

	if (p->text) {
		const char *s = p->text + p->text_off;
		if (!*s)
			return NULL;
		size_t len = strcspn(s, "\n");
		size_t take = len;
		if (take > (size_t)size - 2) {
			take = (size_t)size - 2;
			overlong = true;
		}
		memcpy(buf, s, take);
		buf[take] = '\n';
		buf[take + 1] = '\0';
		p->text_off += len + (s[len] == '\n');
		p->lineno++;
	} else {
		if (!fgets(buf, size, p->f))
			return NULL;
		p->lineno++;
		n = strlen(buf);
		if (n > 0 && buf[n - 1] != '\n' && !feof(p->f)) {
			int ch;
			overlong = true;
			while ((ch = fgetc(p->f)) != EOF && ch != '\n')
				;
		}
	}
	if (overlong && !p->bad_line) {
		p->bad_line = p->lineno;
		snprintf(p->bad_msg, sizeof(p->bad_msg), "line longer than %d characters", size - 3);
	}
	check_raw_line(p, buf);
	return buf;
}

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

static int parse_duration_usec(parse_state *p, const char *key, const char *v, uint64_t *ret)
{
	pp_err e;
	int64_t ns;

	if (pp_duration_parse(v, &ns, &e) < 0)
		return fail(p, "%s: %s", key, e.msg); /* e.msg quotes the value */
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
static int parse_threshold(parse_state *p, const char *section, evictd_signal sig, const char *v,
                           bool min_reclaim, threshold_value *ret)
{
	threshold_value t = { 0 };
	size_t n = strlen(v);

	if (n > 0 && v[n - 1] == '%') {
		char num[64], *end;
		if (n - 1 >= sizeof(num) || n == 1)
			return fail(p, "[%s] %s: invalid percentage \"%s\"", section, signal_name(sig), v);
		memcpy(num, v, n - 1);
		num[n - 1] = '\0';
		errno = 0;
		double d = strtod(num, &end);
		if (errno || end == num || *end || !isfinite(d) || isspace((unsigned char)num[0]))
			return fail(p, "[%s] %s: invalid percentage \"%s\"", section, signal_name(sig), v);
		if (d < 0 || d > 100)
			return fail(p, "[%s] %s: percentage %s out of range (0%%-100%%)", section,
			            signal_name(sig), v);
		if (min_reclaim && d == 0)
			return fail(p, "[%s] %s: minimum reclaim percentage must be greater than 0%%", section,
			            signal_name(sig));
		t.percent = true;
		t.fraction = (float)(d / 100.0);
		/* The kubelet drops exactly 0% and 100% thresholds: it is how one is disabled. */
		t.set = min_reclaim || (d != 0 && d != 100);
	} else {
		pp_err e;
		int64_t q;
		if (signal_is_psi(sig))
			return fail(p, "[%s] %s: PSI thresholds are percentages (e.g. \"40%%\"), not \"%s\"",
			            section, signal_name(sig), v);
		if (pp_quantity_parse(v, &q, &e) < 0)
			return fail(p, "[%s] %s: %s", section, signal_name(sig), e.msg);
		if (min_reclaim ? q < 0 : q <= 0)
			return fail(p, "[%s] %s: %s \"%s\" out of range (must be %s)", section, signal_name(sig),
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
static int psi_name_used(parse_state *p, evictd_signal s, bool alias)
{
	char (*o)[96] = p->c->psi_origin[s == SIGNAL_MEMORY_FULL];
	const char *canon = s == SIGNAL_MEMORY_FULL ? "memory.full" : "memory.some";
	if (o[!alias][0])
		return fail(p, "[eviction-hard] %s and [eviction] psi-memory-%s name the same threshold and both are "
		            "set (here and at %s): keep [eviction-hard] %s only",
		            canon, canon + 7, o[!alias], canon);
	set_origin(p, o[alias], sizeof(o[alias]));
	return 1;
}

static int replace_str(parse_state *p, char **dst, const char *v)
{
	char *s = strdup(v);
	if (!s)
		return fail(p, "out of memory");
	free(*dst);
	*dst = s;
	return 1;
}

static char **strv_free(char **v)
{
	if (v)
		for (char **i = v; *i; i++)
			free(*i);
	free(v);
	return NULL;
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
			return fail(p, "out of memory");
		*list = nl;
		nl[n] = strndup(s, len);
		nl[n + 1] = NULL;
		if (!nl[n])
			return fail(p, "out of memory");
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
		return fail(p, "%s: invalid rate \"%s\" (a quantity per second, e.g. \"2Gi\" or \"2Gi/s\")", name, v);
	memcpy(q, v, n);
	q[n] = '\0';
	if (pp_quantity_parse(q, &r, &e) < 0)
		return fail(p, "%s: invalid rate \"%s\": %s", name, v, e.msg);
	if (r <= 0)
		return fail(p, "%s \"%s\" out of range (must be positive)", name, v);
	*ret = r;
	return 1;
}

static int handle_agent(parse_state *p, const char *name, const char *v, bool continuation)
{
	evictd_config *c = p->c;

	if (strcmp(name, "interval") == 0) {
		uint64_t u = 0;
		if (!parse_duration_usec(p, name, v, &u))
			return 0;
		if (u < 10000 || u > 3600 * USEC_PER_SEC)
			return fail(p, "interval \"%s\" out of range (10ms-1h)", v);
		c->interval_usec = u;
	} else if (strcmp(name, "cgroup-root") == 0) {
		if (strcmp(v, "auto") == 0) {
			free(c->cgroup_root);
			c->cgroup_root = NULL;
		} else if (v[0] != '/')
			return fail(p, "cgroup-root \"%s\" must be \"auto\" or an absolute path", v);
		else
			return replace_str(p, &c->cgroup_root, v);
	} else if (strcmp(name, "pods") == 0) {
		if (!continuation)
			c->pods = strv_free(c->pods);
		if (!strv_append_words(p, &c->pods, v))
			return 0;
		for (char **i = c->pods; i && *i; i++)
			if ((*i)[0] == '/' || strstr(*i, ".."))
				return fail(p, "pods pattern \"%s\" must be relative to the cgroup root, without \"..\"", *i);
		if (!c->pods)
			return fail(p, "pods: at least one pattern is needed");
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
			return fail(p, "%s \"%s\" must be an absolute path", name, v);
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
			return fail(p, "metrics-file \"%s\" must be \"none\" or an absolute path ending in .prom", v);
		return replace_str(p, &c->metrics_file, v);
	} else if (strcmp(name, "dry-run") == 0) {
		if (!parse_bool(v, &c->dry_run))
			return fail(p, "dry-run: expected yes or no, not \"%s\"", v);
	} else if (strcmp(name, "action") == 0) {
		if (strcmp(v, "kill") == 0)
			c->action = ACTION_KILL;
		else if (strcmp(v, "exec") == 0)
			c->action = ACTION_EXEC;
		else
			return fail(p, "action: expected kill or exec, not \"%s\"", v);
	} else if (strcmp(name, "exec") == 0) {
		if (!continuation)
			c->exec_argv = strv_free(c->exec_argv);
		if (!strv_append_words(p, &c->exec_argv, v))
			return 0;
		const char *bad = NULL;
		if (!c->exec_argv || exec_argv_validate(c->exec_argv, &bad) < 0)
			return fail(p, "exec: invalid command line (argv[0] must be an absolute path; "
			               "placeholders are {namespace} {name} {uid} {grace}): \"%s\"",
			            bad ? bad : v);
	} else if (strcmp(name, "exec-timeout") == 0) {
		uint64_t u = 0;
		if (!parse_duration_usec(p, name, v, &u))
			return 0;
		if (u == 0 || u > 3600 * USEC_PER_SEC)
			return fail(p, "exec-timeout \"%s\" out of range (more than 0, at most 1h)", v);
		c->exec_timeout_usec = u;
	} else if (strcmp(name, "memory-max-rate") == 0 || strcmp(name, "disk-max-rate") == 0 ||
	           strcmp(name, "inodes-max-rate") == 0 || strcmp(name, "pid-max-rate") == 0) {
		int64_t *dst = name[0] == 'm' ? &c->memory_max_rate : name[0] == 'd' ? &c->disk_max_rate
		             : name[0] == 'i' ? &c->inodes_max_rate : &c->pid_max_rate;
		return parse_rate(p, name, v, dst);
	} else if (strcmp(name, "pod-disk-walk-limit") == 0) {
		int64_t q;
		pp_err e;
		if (pp_quantity_parse(v, &q, &e) < 0)
			return fail(p, "pod-disk-walk-limit: invalid number \"%s\": %s", v, e.msg);
		if (q < 1 || q > 100000000)
			return fail(p, "pod-disk-walk-limit \"%s\" out of range (1-100M directory entries)", v);
		c->pod_disk_walk_limit = (uint64_t)q;
	} else if (strcmp(name, "exec-fallback") == 0) {
		if (strcmp(v, "kill") == 0)
			c->exec_fallback_kill = true;
		else if (strcmp(v, "none") == 0)
			c->exec_fallback_kill = false;
		else
			return fail(p, "exec-fallback: expected kill or none, not \"%s\"", v);
	} else
		return fail(p, "unknown key \"%s\" in section [agent]", name);
	return 1;
}

static int handle_eviction(parse_state *p, const char *name, const char *v)
{
	evictd_config *c = p->c;

	if (strcmp(name, "max-pod-grace-period") == 0)
		return parse_duration_usec(p, name, v, &c->max_pod_grace_usec);
	if (strcmp(name, "pressure-transition-period") == 0)
		return parse_duration_usec(p, name, v, &c->pressure_transition_usec);
	if (strcmp(name, "retry-backoff") == 0 || strcmp(name, "retry-backoff-max") == 0) {
		uint64_t u = 0;
		if (!parse_duration_usec(p, name, v, &u))
			return 0;
		if (u < USEC_PER_SEC / 10 || u > 24 * 3600 * USEC_PER_SEC)
			return fail(p, "%s \"%s\" out of range (100ms-24h)", name, v);
		*(name[13] ? &c->retry_backoff_max_usec : &c->retry_backoff_usec) = u;
		return 1;
	}
	if (strcmp(name, "psi-memory-some") == 0 || strcmp(name, "psi-memory-full") == 0) {
		evictd_signal s = name[11] == 's' ? SIGNAL_MEMORY_SOME : SIGNAL_MEMORY_FULL;
		if (!psi_name_used(p, s, true))
			return 0;
		return parse_threshold(p, "eviction", s, v, false, &c->hard[s]);
	}
	return fail(p, "unknown key \"%s\" in section [eviction]", name);
}

static int handle_kubernetes(parse_state *p, const char *name, const char *v)
{
	evictd_config *c = p->c;

	if (strcmp(name, "enable") == 0) {
		if (!parse_bool(v, &c->kube.enable))
			return fail(p, "[kubernetes] enable: expected yes or no, not \"%s\"", v);
	} else if (strcmp(name, "kubeconfig") == 0 || strcmp(name, "descriptor-dir") == 0 ||
	           strcmp(name, "spool-dir") == 0) {
		char **dst = name[0] == 'k' ? &c->kube.kubeconfig : name[0] == 'd' ? &c->kube.descriptor_dir
		                                                                  : &c->kube.spool_dir;
		if (v[0] != '/')
			return fail(p, "[kubernetes] %s \"%s\" must be an absolute path", name, v);
		return replace_str(p, dst, v);
	} else if (strcmp(name, "node-name") == 0) {
		if (!pp_is_dns_subdomain(v))
			return fail(p, "[kubernetes] node-name \"%s\" is not a valid node name (lower-case DNS subdomain)", v);
		return replace_str(p, &c->kube.node_name, v);
	} else if (strcmp(name, "eviction-api") == 0) {
		if (strcmp(v, "delete") == 0)
			c->kube.eviction_api = false;
		else if (strcmp(v, "eviction") == 0)
			c->kube.eviction_api = true;
		else
			return fail(p, "[kubernetes] eviction-api: expected delete or eviction, not \"%s\"", v);
	} else if (strcmp(name, "spool-max") == 0) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (errno || end == v || *end || n < 1 || n > 100000)
			return fail(p, "[kubernetes] spool-max \"%s\" out of range (1-100000)", v);
		c->kube.spool_max = (unsigned)n;
	} else if (strcmp(name, "request-timeout") == 0 || strcmp(name, "watch-timeout") == 0 ||
	           strcmp(name, "retry-max-interval") == 0) {
		uint64_t *dst = name[0] == 'r' && name[2] == 'q' ? &c->kube.request_timeout_usec
		              : name[0] == 'w'                   ? &c->kube.watch_timeout_usec
		                                                 : &c->kube.retry_max_usec;
		uint64_t u = 0;
		if (!parse_duration_usec(p, name, v, &u))
			return 0;
		if (u < USEC_PER_SEC || u > 3600 * USEC_PER_SEC)
			return fail(p, "[kubernetes] %s \"%s\" out of range (1s-1h)", name, v);
		*dst = u;
	} else
		return fail(p, "unknown key \"%s\" in section [kubernetes]", name);
	return 1;
}

static priority_class_def *find_class(evictd_config *c, const char *name)
{
	for (size_t i = 0; i < c->n_classes; i++)
		if (strcmp(c->classes[i].name, name) == 0)
			return &c->classes[i];
	return NULL;
}

static int handle_class(parse_state *p, const char *cname, const char *name, const char *v)
{
	evictd_config *c = p->c;
	priority_class_def *pc = find_class(c, cname);

	if (!pc) {
		priority_class_def *n = realloc(c->classes, (c->n_classes + 1) * sizeof(*n));
		if (!n)
			return fail(p, "out of memory");
		c->classes = n;
		pc = &n[c->n_classes];
		*pc = (priority_class_def){ .value = INT32_MIN };
		pc->name = strdup(cname);
		if (!pc->name)
			return fail(p, "out of memory");
		c->n_classes++;
		set_origin(p, pc->origin, sizeof(pc->origin));
	}
	if (strcmp(name, "value") == 0) {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (errno || end == v || *end)
			return fail(p, "[priority-class %s] value: not an integer: \"%s\"", cname, v);
		if (x < INT32_MIN || x > INT32_MAX)
			return fail(p, "[priority-class %s] value %s out of range (32-bit integer)", cname, v);
		pc->value = (int32_t)x;
		set_origin(p, pc->origin, sizeof(pc->origin));
	} else if (strcmp(name, "global-default") == 0) {
		if (!parse_bool(v, &pc->global_default))
			return fail(p, "[priority-class %s] global-default: expected yes or no, not \"%s\"", cname, v);
	} else if (strcmp(name, "preemption-policy") == 0) {
		pp_err e;
		if (pp_preemption_policy_parse(v, &pc->policy, &e) < 0)
			return fail(p, "[priority-class %s] %s", cname, e.msg);
	} else if (strcmp(name, "description") == 0) {
		char *d = strdup(v);
		if (!d)
			return fail(p, "out of memory");
		free(pc->description);
		pc->description = d;
	} else
		return fail(p, "unknown key \"%s\" in section [priority-class %s]", name, cname);
	return 1;
}

static bool is_list_key(const char *section, const char *name)
{
	return strcmp(section, "agent") == 0 && (strcmp(name, "pods") == 0 || strcmp(name, "exec") == 0);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	parse_state *p = user;
	bool continuation = p->indented && strcmp(section, p->prev_section) == 0 &&
	                    strcmp(name, p->prev_name) == 0;

	snprintf(p->prev_section, sizeof(p->prev_section), "%s", section);
	snprintf(p->prev_name, sizeof(p->prev_name), "%s", name);

	if (p->bad_line == p->lineno)
		return 0; /* the reader already failed this line; its text is not what the user wrote */
	if (continuation && !is_list_key(section, name))
		return fail(p, "indented line continues \"%s\": only pods and exec take several lines", name);
	if (!continuation) {
		char key[100];
		snprintf(key, sizeof(key), "%s\n%s", section, name);
		for (size_t i = 0; i < p->n_seen; i++)
			if (strcmp(p->seen[i], key) == 0)
				return fail(p, "duplicate key \"%s\" in section [%s]", name, section);
		if (p->n_seen < ELEMENTSOF(p->seen))
			memcpy(p->seen[p->n_seen++], key, sizeof(key));
	}
	if (!*name)
		return fail(p, "missing key name");
	if (!*value)
		return fail(p, "[%s] %s: missing value", section, name);
	if (known_section(section, strlen(section)) && !known_key(section, name))
		return fail(p, "unknown key \"%s\" in section [%s]", name, section);

	if (strcmp(section, "agent") == 0)
		return handle_agent(p, name, value, continuation);
	if (strcmp(section, "kubernetes") == 0)
		return handle_kubernetes(p, name, value);
	if (strcmp(section, "eviction") == 0)
		return handle_eviction(p, name, value);
	if (strncmp(section, "priority-class ", 15) == 0) {
		const char *cname = section + 15;
		if (!pp_is_dns_subdomain(cname))
			return fail(p, "[%s]: \"%s\" is not a valid PriorityClass name (DNS subdomain)", section, cname);
		return handle_class(p, cname, name, value);
	}
	if (strcmp(section, "eviction-hard") == 0 || strcmp(section, "eviction-soft") == 0 ||
	    strcmp(section, "eviction-minimum-reclaim") == 0 ||
	    strcmp(section, "eviction-soft-grace-period") == 0) {
		evictd_signal s = signal_from_name(name);
		if (s == _SIGNAL_INVALID)
			return fail(p, "unknown signal \"%s\" in section [%s]", name, section);
		switch (section[9]) {
		case 'h':
			p->hard_explicit[s] = true;
			if (signal_is_psi(s) && !psi_name_used(p, s, false))
				return 0;
			return parse_threshold(p, section, s, value, false, &p->c->hard[s]);
		case 'm':
			return parse_threshold(p, section, s, value, true, &p->c->min_reclaim[s]);
		default:
			break;
		}
		if (section[13] == '\0')
			return parse_threshold(p, section, s, value, false, &p->c->soft[s]);
		if (!parse_duration_usec(p, name, value, &p->c->soft_grace_usec[s]))
			return 0;
		p->c->soft_grace_set[s] = true;
		return 1;
	}
	if (strncmp(section, "priority-class", 14) == 0)
		return fail(p, "[%s]: expected [priority-class NAME]", section);
	return fail(p, "unknown section [%s]", section);
}

static int parse_one(parse_state *p)
{
	int r;

	p->lineno = 0;
	p->bad_line = 0;
	p->n_seen = 0;
	p->prev_section[0] = p->prev_name[0] = '\0';
	r = ini_parse_stream(reader, p, handler, p);
	if (p->bad_line && (p->err->msg[0] == '\0' || p->bad_line <= p->err->line))
		set_error(p->err, p->fname, p->bad_line, "%s", p->bad_msg);
	else if (r > 0 && p->err->msg[0] == '\0')
		set_error(p->err, p->fname, (unsigned)r, "syntax error (expected [section], key = value or a comment)");
	else if (r < 0 && p->err->msg[0] == '\0')
		set_error(p->err, p->fname, 0, "%s", r == -2 ? "out of memory" : "cannot read");
	if (p->err->msg[0])
		return r == -2 ? -ENOMEM : -EINVAL;
	return 0;
}

static int parse_path(parse_state *p, const char *path, bool missing_ok)
{
	int fd, r;
	struct stat st;

	/*
	 * O_NONBLOCK: opening a FIFO for reading blocks until a writer appears, which would hang
	 * startup or a reload. Symlinks are followed on purpose (configuration management links files
	 * into /etc); what they point to must be a regular file.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT && missing_ok)
			return 0;
		set_error(p->err, path, 0, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		set_error(p->err, path, 0, "not a regular file");
		return -EINVAL;
	}
	if (st.st_size > CONFIG_FILE_MAX) {
		close(fd);
		set_error(p->err, path, 0, "larger than %d bytes (%lld)", CONFIG_FILE_MAX, (long long)st.st_size);
		return -EFBIG;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		r = -errno;
		close(fd);
		set_error(p->err, path, 0, "cannot read: %s", strerror(-r));
		return r;
	}
	p->f = fdopen(fd, "r");
	if (!p->f) {
		close(fd);
		set_error(p->err, path, 0, "out of memory");
		return -ENOMEM;
	}
	p->fname = path;
	r = parse_one(p);
	fclose(p->f);
	p->f = NULL;
	if (r == 0) {
		size_t old = p->c->sources ? strlen(p->c->sources) : 0;
		char *s = realloc(p->c->sources, old + strlen(path) + 2);
		if (!s)
			return -ENOMEM;
		if (old)
			s[old++] = ' ';
		strcpy(s + old, path);
		p->c->sources = s;
	}
	return r;
}

static int conf_filter(const struct dirent *de)
{
	size_t n = strlen(de->d_name);
	return de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".conf") == 0;
}

/* strcmp(), not strcoll(): the order of drop-ins must not depend on the locale. */
static int cmp_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int load_dropins(parse_state *p, const char *dir)
{
	struct dirent **names = NULL;
	int n, r = 0;

	n = scandir(dir, &names, conf_filter, cmp_name);
	if (n < 0) {
		r = -errno;
		if (r == -ENOENT || r == -ENOTDIR)
			return 0;
		set_error(p->err, dir, 0, "cannot read drop-in directory: %s", strerror(-r));
		return r;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		/*
		 * Directories are skipped (as systemd does for its drop-ins); anything else that is not
		 * a regular file (a FIFO, a dangling link) is an error from parse_path, never a hang.
		 */
		if (r == 0 && snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) < (int)sizeof(path) &&
		    !(stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
			r = parse_path(p, path, false);
		free(names[i]);
	}
	free(names);
	return r;
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
	if (!c->pods || !c->exec_argv || !c->pod_metadata_dir || !c->proc_root || !c->nodefs_path ||
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
	/* earlyoom's 6000 MiB/s (the fastest fill it measured with stress); NVMe-class writes; a
	 * file-creating loop; a fork bomb. Why each: conf/evictd.conf. */
	c->memory_max_rate = 6LL << 30;
	c->disk_max_rate = 2LL << 30;
	c->inodes_max_rate = 100000;
	c->pid_max_rate = 10000;
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
	*ret = c;
	return 0;
}

/* Cross-key rules, checked once every file has been read. */
static int finalize(parse_state *p)
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
			set_error(p->err, file, line,
			          "[eviction-soft] %s needs a grace period in [eviction-soft-grace-period]",
			          signal_name(s));
			return -EINVAL;
		}
	}
	if (c->action == ACTION_EXEC && (!c->exec_argv || !c->exec_argv[0])) {
		set_error(p->err, c->sources ? c->sources : "", 0,
		          "[agent] action = exec needs exec = COMMAND (no command is shipped; on a Kubernetes "
		          "node evictd-kube reports evictions to the API server)");
		return -EINVAL;
	}
	if (c->retry_backoff_max_usec < c->retry_backoff_usec) {
		set_error(p->err, c->sources ? c->sources : "", 0,
		          "[eviction] retry-backoff-max must not be shorter than retry-backoff");
		return -EINVAL;
	}
	/*
	 * allocatableMemory.available follows the hard memory.available threshold, as the kubelet's
	 * addAllocatableThresholds does with the default enforceNodeAllocatable=[pods].
	 */
	if (!p->hard_explicit[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] && c->hard[SIGNAL_MEMORY_AVAILABLE].set) {
		c->hard[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = c->hard[SIGNAL_MEMORY_AVAILABLE];
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
			set_error(p->err, file, line, "[priority-class %s] has no value", pc->name);
			return -EINVAL;
		}
		r = pp_pcset_add(c->pcset, pc->name, pc->value, pc->global_default, pc->policy, &e);
		if (r < 0) {
			set_error(p->err, file, line, "[priority-class %s]: %s", pc->name, e.msg);
			return -EINVAL;
		}
	}
	return 0;
}

static int load(const char *main_path, bool must_exist, const char *text, evictd_config **ret,
                config_error *err)
{
	config_error dummy;
	evictd_config *c = NULL;
	parse_state p = { 0 };
	int r;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	r = config_new_default(&c);
	if (r < 0) {
		set_error(err, main_path, 0, "out of memory");
		return r;
	}
	p.c = c;
	p.err = err;
	if (text) {
		p.text = text;
		p.fname = main_path;
		r = parse_one(&p);
	} else {
		r = parse_path(&p, main_path, !must_exist);
		if (r == 0) {
			char dir[PATH_MAX];
			if (snprintf(dir, sizeof(dir), "%s.d", main_path) >= (int)sizeof(dir)) {
				set_error(err, main_path, 0, "path too long");
				r = -ENAMETOOLONG;
			} else
				r = load_dropins(&p, dir);
		}
	}
	if (r == 0)
		r = finalize(&p);
	if (r < 0) {
		config_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

int config_load(const char *main_path, bool must_exist, evictd_config **ret, config_error *err)
{
	return load(main_path ? main_path : EVICTD_CONFIG_PATH, must_exist, NULL, ret, err);
}

int config_load_string(const char *text, const char *name, evictd_config **ret, config_error *err)
{
	return load(name ? name : "<string>", true, text ? text : "", ret, err);
}

int config_apply_overrides(evictd_config *c, const config_overrides *ov)
{
	struct {
		const char *v;
		char **dst;
	} s[] = {
		{ ov ? ov->cgroup_root : NULL, &c->cgroup_root },
		{ ov ? ov->pod_metadata_dir : NULL, &c->pod_metadata_dir },
		{ ov ? ov->proc_root : NULL, &c->proc_root },
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
	}
	if (ov->dry_run)
		c->dry_run = true;
	return 0;
}

int config_reload(evictd_config **current, const char *main_path, bool must_exist,
                  const config_overrides *ov, config_error *err)
{
	evictd_config *n = NULL;
	int r = config_load(main_path, must_exist, &n, err);

	if (r < 0)
		return r;
	r = config_apply_overrides(n, ov);
	if (r < 0) {
		config_free(n);
		return r;
	}
	config_free(*current);
	*current = n;
	return 0;
}

evictd_config *config_free(evictd_config *c)
{
	if (!c)
		return NULL;
	free(c->cgroup_root);
	strv_free(c->pods);
	free(c->pod_metadata_dir);
	free(c->proc_root);
	free(c->nodefs_path);
	free(c->imagefs_path);
	free(c->kubelet_root_dir);
	free(c->pod_logs_dir);
	strv_free(c->exec_argv);
	free(c->status_file);
	free(c->metrics_file);
	free(c->run_dir);
	for (size_t i = 0; i < c->n_classes; i++) {
		free(c->classes[i].name);
		free(c->classes[i].description);
	}
	free(c->classes);
	pp_pcset_free(c->pcset);
	free(c->sources);
	free(c->kube.kubeconfig);
	free(c->kube.node_name);
	free(c->kube.descriptor_dir);
	free(c->kube.spool_dir);
	free(c);
	return NULL;
}

int64_t threshold_resolve_signal(evictd_signal s, const threshold_value *t, int64_t capacity)
{
	/* PSI is evictd's own: round to the nearest centipercent instead of the kubelet's float32 cut. */
	if (signal_is_psi(s) && t && t->set && t->percent)
		return llround((double)capacity * (double)t->fraction);
	return threshold_resolve(t, capacity);
}

int64_t threshold_resolve(const threshold_value *t, int64_t capacity)
{
	if (!t || !t->set)
		return -1;
	if (!t->percent)
		return t->quantity;
	return (int64_t)((double)capacity * (double)t->fraction);
}

const char *threshold_format(const threshold_value *t, char *buf, size_t size)
{
	if (!t || !t->set)
		snprintf(buf, size, "none");
	else if (t->percent)
		snprintf(buf, size, "%g%%", (double)t->fraction * 100.0);
	else
		snprintf(buf, size, "%lld", (long long)t->quantity);
	return buf;
}

bool config_soft_is_hard(const evictd_config *c, evictd_signal s)
{
	return c->soft[s].set && c->soft_grace_set[s] && c->soft_grace_usec[s] == 0;
}

const threshold_value *config_hard(const evictd_config *c, evictd_signal s)
{
	return &c->hard[s];
}
