/* SPDX-License-Identifier: MIT */
/*
 * Reading the kubelet's KubeletConfiguration with libfyaml's event parser: no document tree, so
 * no alias resolution (tests/fuzz/FINDINGS.md: a heap overflow in 0.7.12's) and no memory beyond
 * the current event. The file is a flat mapping whose interesting values are scalars, maps of
 * scalars and lists of scalars, so a two-level walk is all it takes; deeper values are skipped.
 * Values go through the same parsers as evictd.conf's (config-values.c), with the YAML line.
 * Over ~600 lines on purpose: one reader of one file, whose walker state (keys seen, the level,
 * the line) every field's handler shares; the merge under evictd.conf is config-kubelet.c.
 */
#include "kubelet-config.h"

#include <errno.h>
#include <fcntl.h>
#include <libfyaml.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-parse.h"

/* A KubeletConfiguration is a few KiB; kubeadm's flags file one line. */
#define KUBELET_FILE_MAX (1024 * 1024)

typedef enum { IN_NONE, IN_MAP, IN_SEQ, IN_SKIP } container;

typedef struct walker {
	kubelet_config *k;
	parse_state p;            /* for config-values.c's parsers: fname, lineno, err */
	unsigned depth;           /* 0 outside the top mapping, 1 in it, 2 in a value, more: skipped */
	bool want_key1, want_key2;
	char key1[64], key2[64];
	unsigned key1_line;
	container c2;
	bool seen_api, seen_kind;
	char seen[32][64];        /* top-level keys: duplicates are errors, as in the kubelet's strict decoding */
	size_t n_seen;
	evictd_config scratch;    /* what the threshold parser writes through p.c (never handed out) */
} walker;

static int wfail(walker *w, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int wfail(walker *w, unsigned line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (w->p.err->msg[0])
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	config_set_error(w->p.err, w->k->path, line, "%s", msg);
	return -EINVAL;
}

static void kubelet_origin(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* vsnprintf: the origin is cut at its size (a path that long is shown shortened) */
static void kubelet_origin(char *dst, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, CONFIG_ORIGIN_MAX, fmt, ap);
	va_end(ap);
}

static void item(kubelet_item *it, unsigned line)
{
	it->set = true;
	it->line = line;
}

/* A signal of the kubelet's (containerfs.* is accepted and, as the kubelet does, not used). */
static int kubelet_signal(walker *w, const char *name, unsigned line, evictd_signal *ret)
{
	evictd_signal s = signal_from_name(name);
	if (strncmp(name, "containerfs.", 12) == 0 &&
	    (strcmp(name + 12, "available") == 0 || strcmp(name + 12, "inodesFree") == 0))
		return 0;
	if (s == _SIGNAL_INVALID || signal_is_psi(s))
		return wfail(w, line, "%s: unknown eviction signal \"%s\"", w->key1, name);
	*ret = s;
	return 1;
}

static int parse_bool_text(walker *w, const char *v, unsigned line, bool *ret)
{
	if (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "TRUE") == 0)
		*ret = true;
	else if (strcmp(v, "false") == 0 || strcmp(v, "False") == 0 || strcmp(v, "FALSE") == 0)
		*ret = false;
	else
		return wfail(w, line, "%s: expected true or false, not \"%s\"", w->key1, v);
	return 0;
}

static int top_scalar(walker *w, const char *v, unsigned line)
{
	kubelet_config *k = w->k;
	const char *key = w->key1;

	w->p.lineno = line;
	if (strcmp(key, "apiVersion") == 0) {
		w->seen_api = true;
		if (strcmp(v, "kubelet.config.k8s.io/v1beta1") != 0)
			return wfail(w, line, "apiVersion \"%s\" is not kubelet.config.k8s.io/v1beta1", v);
	} else if (strcmp(key, "kind") == 0) {
		w->seen_kind = true;
		if (strcmp(v, "KubeletConfiguration") != 0)
			return wfail(w, line, "kind \"%s\" is not KubeletConfiguration", v);
	} else if (strcmp(key, "evictionPressureTransitionPeriod") == 0) {
		uint64_t u;
		if (!config_parse_duration_usec(&w->p, key, v, &u))
			return -EINVAL;
		/* The kubelet's defaulting cannot tell "0s" from unset: both mean 5m. */
		if (u == 0)
			return 0;
		k->pressure_transition_usec = u;
		item(&k->pressure_transition, line);
	} else if (strcmp(key, "evictionMaxPodGracePeriod") == 0) {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (errno || end == v || *end || x < INT32_MIN || x > INT32_MAX)
			return wfail(w, line, "evictionMaxPodGracePeriod: not a number of seconds: \"%s\"", v);
		k->max_pod_grace_sec = x;
		item(&k->max_pod_grace, line);
	} else if (strcmp(key, "cgroupDriver") == 0) {
		if (strcmp(v, "systemd") != 0 && strcmp(v, "cgroupfs") != 0)
			return wfail(w, line, "cgroupDriver: expected systemd or cgroupfs, not \"%s\"", v);
		snprintf(k->cgroup_driver, sizeof(k->cgroup_driver), "%s", v);
		item(&k->cgroup_driver_item, line);
	} else if (strcmp(key, "cgroupRoot") == 0) {
		if (v[0] && (v[0] != '/' || strstr(v, "..") || strlen(v) >= sizeof(k->cgroup_root)))
			return wfail(w, line, "cgroupRoot \"%s\" is not an absolute cgroup path", v);
		snprintf(k->cgroup_root, sizeof(k->cgroup_root), "%s", v[0] ? v : "/");
		item(&k->cgroup_root_item, line);
	} else if (strcmp(key, "cgroupsPerQOS") == 0) {
		if (parse_bool_text(w, v, line, &k->cgroups_per_qos) < 0)
			return -EINVAL;
		item(&k->cgroups_per_qos_item, line);
	} else if (strcmp(key, "mergeDefaultEvictionSettings") == 0) {
		bool b;
		if (parse_bool_text(w, v, line, &b) < 0)
			return -EINVAL;
		if (b)
			item(&k->merge_defaults, line);
	} else if (strcmp(key, "containerRuntimeEndpoint") == 0) {
		/* only a unix socket is a runtime evictd can reach (the kubelet also accepts npipe://) */
		const char *path = strncmp(v, "unix://", 7) == 0 ? v + 7 : v;
		if (!v[0])
			return 0; /* kubeadm writes "" for the default: the kubelet's own, as unset */
		if (path[0] != '/' || strlen(path) > 107)
			return wfail(w, line, "containerRuntimeEndpoint \"%s\" is not unix:///PATH (at most 107 bytes)", v);
		snprintf(k->runtime_endpoint, sizeof(k->runtime_endpoint), "%s", path);
		item(&k->runtime_endpoint_item, line);
	} else if (strcmp(key, "imageMinimumGCAge") == 0) {
		if (!config_parse_duration_usec(&w->p, key, v, &k->image_min_gc_age_usec))
			return -EINVAL;
		/* the kubelet's defaulting cannot tell "0s" from unset: both mean 2m (kubeadm writes 0s) */
		if (k->image_min_gc_age_usec == 0)
			return 0;
		item(&k->image_min_gc_age, line);
	} else if (strcmp(key, "podLogsDir") == 0) {
		if (v[0] != '/' || strlen(v) >= sizeof(k->pod_logs_dir))
			return wfail(w, line, "podLogsDir \"%s\" is not an absolute path", v);
		snprintf(k->pod_logs_dir, sizeof(k->pod_logs_dir), "%s", v);
		item(&k->pod_logs_dir_item, line);
	}
	return 0;
}

static int map_entry(walker *w, const char *v, unsigned line)
{
	kubelet_config *k = w->k;
	const char *key = w->key1, *sub = w->key2;
	evictd_signal s = _SIGNAL_INVALID;
	int r;

	w->p.lineno = line;
	if (strcmp(key, "evictionHard") == 0 || strcmp(key, "evictionSoft") == 0 ||
	    strcmp(key, "evictionMinimumReclaim") == 0) {
		if ((r = kubelet_signal(w, sub, line, &s)) <= 0)
			return r;
		bool minr = key[8] == 'M';
		threshold_value *t = key[8] == 'H' ? &k->hard[s] : key[8] == 'S' ? &k->soft[s] : &k->min_reclaim[s];
		if (!config_parse_threshold(&w->p, key, s, v, minr, t))
			return -EINVAL;
		/* A written entry has an origin even when "0%" disabled it (set = false). */
		kubelet_origin(t->origin, "kubelet %s:%u", k->path, line);
	} else if (strcmp(key, "evictionSoftGracePeriod") == 0) {
		if ((r = kubelet_signal(w, sub, line, &s)) <= 0)
			return r;
		if (!config_parse_duration_usec(&w->p, key, v, &k->soft_grace_usec[s]))
			return -EINVAL;
		item(&k->soft_grace[s], line);
	} else if (strcmp(key, "kubeReserved") == 0 || strcmp(key, "systemReserved") == 0) {
		if (strcmp(sub, "memory") != 0)
			return 0;
		int64_t q;
		pp_err e;
		if (pp_quantity_parse(v, &q, &e) < 0)
			return wfail(w, line, "%s: memory: %s", key, e.msg);
		if (q < 0)
			return wfail(w, line, "%s: memory \"%s\" is negative", key, v);
		*(key[0] == 'k' ? &k->kube_reserved_memory : &k->system_reserved_memory) = q;
		item(key[0] == 'k' ? &k->kube_reserved : &k->system_reserved, line);
	}
	return 0;
}

static int seq_item(walker *w, const char *v, unsigned line)
{
	static const char *const known[] = { "pods", "system-reserved", "kube-reserved", "none",
	                                     "system-reserved-compressible", "kube-reserved-compressible" };
	if (strcmp(w->key1, "enforceNodeAllocatable") != 0)
		return 0;
	bool ok = false;
	for (size_t i = 0; i < ELEMENTSOF(known); i++)
		ok = ok || strcmp(v, known[i]) == 0;
	if (!ok)
		return wfail(w, line, "enforceNodeAllocatable: unknown entry \"%s\"", v);
	if (strcmp(v, "pods") == 0)
		w->k->enforce_pods = true;
	return 0;
}

/* Keys whose value must be a map, a list or a scalar; anything else is not what the kubelet reads. */
static char shape_of(const char *key)
{
	static const char *const maps[] = { "evictionHard", "evictionSoft", "evictionSoftGracePeriod",
	                                    "evictionMinimumReclaim", "kubeReserved", "systemReserved" };
	static const char *const scalars[] = { "apiVersion", "kind", "evictionPressureTransitionPeriod",
	                                       "evictionMaxPodGracePeriod", "cgroupDriver", "cgroupRoot",
	                                       "cgroupsPerQOS", "podLogsDir", "mergeDefaultEvictionSettings",
	                                       "containerRuntimeEndpoint", "imageMinimumGCAge" };
	for (size_t i = 0; i < ELEMENTSOF(maps); i++)
		if (strcmp(key, maps[i]) == 0)
			return 'm';
	for (size_t i = 0; i < ELEMENTSOF(scalars); i++)
		if (strcmp(key, scalars[i]) == 0)
			return 's';
	return strcmp(key, "enforceNodeAllocatable") == 0 ? 'l' : '?';
}

static int shape_error(walker *w, unsigned line, char got)
{
	static const char *const names[] = { ['m'] = "a mapping", ['l'] = "a list", ['s'] = "a single value" };
	char want = shape_of(w->key1);
	if (want == '?' || want == got)
		return 0;
	return wfail(w, line, "%s: expected %s", w->key1, names[(unsigned char)want]);
}

static void set_key(char *dst, size_t size, const char *text, size_t len)
{
	if (len >= size)
		len = size - 1; /* no key evictd reads is this long; a cut one matches nothing */
	memcpy(dst, text, len);
	dst[len] = '\0';
}

static int on_event(walker *w, struct fy_event *ev)
{
	const struct fy_mark *m = fy_event_start_mark(ev);
	unsigned line = m && m->line >= 0 ? (unsigned)m->line + 1 : 0;
	const char *text;
	size_t len = 0;
	char val[PATH_MAX];

	switch (ev->type) {
	case FYET_MAPPING_START:
	case FYET_SEQUENCE_START: {
		bool map = ev->type == FYET_MAPPING_START;
		if (w->depth == 0) {
			if (!map)
				return wfail(w, line, "not a KubeletConfiguration (the document is not a mapping)");
			w->depth = 1;
			w->want_key1 = true;
			return 0;
		}
		if ((w->depth == 1 && w->want_key1) || (w->depth == 2 && w->c2 == IN_MAP && w->want_key2))
			return wfail(w, line, "a mapping or list as a key is not a KubeletConfiguration");
		if (w->depth == 1) {
			w->depth = 2;
			w->want_key2 = true;
			w->c2 = map ? IN_MAP : IN_SEQ;
			return shape_error(w, line, map ? 'm' : 'l');
		}
		if (w->depth == 2 && shape_of(w->key1) != '?')
			return wfail(w, line, "%s: nested values are not expected here", w->key1);
		w->depth++;
		return 0;
	}
	case FYET_MAPPING_END:
	case FYET_SEQUENCE_END:
		if (w->depth == 0)
			return 0;
		w->depth--;
		if (w->depth == 1)
			w->want_key1 = true;
		else if (w->depth == 2 && w->c2 == IN_MAP)
			w->want_key2 = true;
		return 0;
	case FYET_ALIAS:
		return wfail(w, line, "YAML aliases are not supported in a KubeletConfiguration");
	case FYET_SCALAR:
		text = ev->scalar.value ? fy_token_get_text(ev->scalar.value, &len) : NULL;
		if (!text)
			text = "", len = 0;
		if (w->depth == 0)
			return wfail(w, line, "not a KubeletConfiguration (the document is not a mapping)");
		if (w->depth > 2)
			return 0;
		if (w->depth == 1 && w->want_key1) {
			set_key(w->key1, sizeof(w->key1), text, len);
			w->key1_line = line;
			w->want_key1 = false;
			if (shape_of(w->key1) != '?') {
				for (size_t i = 0; i < w->n_seen; i++)
					if (strcmp(w->seen[i], w->key1) == 0)
						return wfail(w, line, "duplicate key \"%s\"", w->key1);
				if (w->n_seen < ELEMENTSOF(w->seen))
					snprintf(w->seen[w->n_seen++], sizeof(w->seen[0]), "%s", w->key1);
			}
			if (strcmp(w->key1, "evictionHard") == 0)
				item(&w->k->hard_map, line);
			else if (strcmp(w->key1, "evictionSoft") == 0)
				item(&w->k->soft_map, line);
			else if (strcmp(w->key1, "enforceNodeAllocatable") == 0)
				item(&w->k->enforce, line);
			return 0;
		}
		if (len >= sizeof(val))
			return shape_of(w->key1) == '?' ? 0 : wfail(w, line, "%s: value too long", w->key1);
		memcpy(val, text, len);
		val[len] = '\0';
		if (memchr(text, '\0', len))
			return wfail(w, line, "%s: a NUL byte in a value", w->key1);
		if (w->depth == 1) {
			w->want_key1 = true;
			/* An empty value ("evictionHard:" or "~") is the field left at its default. */
			bool null = len == 0 || strcmp(val, "~") == 0 || strcmp(val, "null") == 0;
			if (null && fy_token_scalar_style(ev->scalar.value) == FYSS_PLAIN) {
				/* null is "not set" to the kubelet's defaulting ({} is not: an empty map) */
				if (strcmp(w->key1, "evictionHard") == 0)
					w->k->hard_map.set = false;
				else if (strcmp(w->key1, "evictionSoft") == 0)
					w->k->soft_map.set = false;
				else if (strcmp(w->key1, "enforceNodeAllocatable") == 0)
					w->k->enforce.set = false;
				return 0;
			}
			int r = shape_error(w, line, 's');
			return r < 0 ? r : top_scalar(w, val, line);
		}
		if (w->c2 == IN_SEQ)
			return seq_item(w, val, line);
		if (w->want_key2) {
			set_key(w->key2, sizeof(w->key2), text, len);
			w->want_key2 = false;
			return 0;
		}
		w->want_key2 = true;
		return map_entry(w, val, line);
	default:
		return 0;
	}
}

static void defaults(kubelet_config *k, const char *name)
{
	*k = (kubelet_config){ .cgroups_per_qos = true, .enforce_pods = false };
	snprintf(k->path, sizeof(k->path), "%s", name);
}

/*
 * What libfyaml is given must be text: libfyaml 0.7.12 loops forever on a '%' directive line
 * holding an invalid byte (tests/fuzz/FINDINGS.md k8s-libfyaml-hang; found again by
 * fuzz-kubelet-config; kube/ gates its input the same way), and a kubelet configuration that is not text is broken anyway. NUL, C0
 * controls other than tab/newline/carriage return (YAML's printable set) and invalid UTF-8
 * (RFC 3629: no overlongs, surrogates or code points above U+10FFFF) are refused with line and
 * column. Returns 0 or -EINVAL (a broken file, as any other).
 */
static int check_text(walker *w, const char *text, size_t len)
{
	unsigned line = 1, col = 1;
	for (size_t i = 0; i < len; col++) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x80) {
			if (c == '\n') {
				line++;
				col = 0;
			} else if (c < 0x20 && c != '\t' && c != '\r') {
				wfail(w, line, "column %u: control character 0x%02x: a KubeletConfiguration is YAML text", col, c);
				return -EINVAL;
			}
			i++;
			continue;
		}
		unsigned n = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
		bool ok = n && i + n <= len;
		for (unsigned k = 1; ok && k < n; k++) {
			unsigned char b = (unsigned char)text[i + k], lo = 0x80, hi = 0xbf;
			if (k == 1 && c == 0xe0)
				lo = 0xa0;
			else if (k == 1 && c == 0xed)
				hi = 0x9f;
			else if (k == 1 && c == 0xf0)
				lo = 0x90;
			else if (k == 1 && c == 0xf4)
				hi = 0x8f;
			ok = b >= lo && b <= hi;
		}
		if (!ok) {
			wfail(w, line, "column %u: invalid UTF-8 (byte 0x%02x): a KubeletConfiguration is YAML text", col, c);
			return -EINVAL;
		}
		i += n;
	}
	return 0;
}

int kubelet_config_parse(const char *text, size_t len, const char *name, kubelet_config **ret,
                         config_error *err)
{
	config_error dummy;
	walker *w = NULL;
	struct fy_diag_cfg dcfg;
	struct fy_diag *fdiag = NULL;
	struct fy_parser *parser = NULL;
	struct fy_event *ev;
	int r = 0;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	w = calloc(1, sizeof(*w));
	kubelet_config *k = calloc(1, sizeof(*k));
	if (!w || !k) {
		r = -ENOMEM;
		config_set_error(err, name, 0, "out of memory");
		goto out;
	}
	defaults(k, name);
	w->k = k;
	w->p.fname = k->path;
	w->p.err = err;
	w->p.c = &w->scratch;
	if ((r = check_text(w, text, len)) < 0)
		goto out;
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	dcfg.colorize = false;
	fdiag = fy_diag_create(&dcfg);
	if (!fdiag) {
		r = -ENOMEM;
		config_set_error(err, name, 0, "out of memory");
		goto out;
	}
	fy_diag_set_collect_errors(fdiag, true);
	struct fy_parse_cfg cfg = {
		.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_DISABLE_ACCELERATORS,
		.diag = fdiag,
	};
	parser = fy_parser_create(&cfg);
	if (!parser || fy_parser_set_string(parser, text, len) != 0) {
		r = -ENOMEM;
		config_set_error(err, name, 0, "out of memory");
		goto out;
	}
	unsigned docs = 0;
	while ((ev = fy_parser_parse(parser))) {
		if (ev->type == FYET_DOCUMENT_START && ++docs > 1)
			r = wfail(w, 0, "more than one YAML document");
		else if (r == 0)
			r = on_event(w, ev);
		fy_parser_event_free(parser, ev);
		if (r < 0)
			break;
	}
	if (r == 0 && fy_parser_get_stream_error(parser)) {
		void *it = NULL;
		struct fy_diag_error *e;
		while ((e = fy_diag_errors_iterate(fdiag, &it)))
			if (e->type >= FYET_ERROR)
				break;
		r = wfail(w, e && e->line > 0 ? (unsigned)e->line : 0, "not valid YAML: %s",
		          e && e->msg ? e->msg : "syntax error");
	}
	if (r == 0 && !w->seen_api)
		r = wfail(w, 0, "no apiVersion (expected kubelet.config.k8s.io/v1beta1)");
	if (r == 0 && !w->seen_kind)
		r = wfail(w, 0, "no kind (expected KubeletConfiguration)");
	/* The kubelet's default is enforceNodeAllocatable: [pods]. */
	if (!k->enforce.set)
		k->enforce_pods = true;
	/* The kubelet refuses a soft threshold without a grace period; so does evictd. */
	for (int s = 0; r == 0 && s < _SIGNAL_MAX; s++)
		if (k->soft[s].origin[0] && !k->soft_grace[s].set) {
			const char *c = strrchr(k->soft[s].origin, ':');
			r = wfail(w, c ? (unsigned)strtoul(c + 1, NULL, 10) : 0,
			          "evictionSoft %s has no grace period in evictionSoftGracePeriod", signal_name((evictd_signal)s));
		}
out:
	fy_parser_destroy(parser);
	if (fdiag)
		fy_diag_destroy(fdiag);
	if (w)
		config_strv_free(w->scratch.pods);
	free(w);
	if (r < 0) {
		free(k);
		return r;
	}
	*ret = k;
	return 0;
}

/* KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=... --root-dir=/data/kubelet ..." */
int kubelet_flags_parse(const char *text, const char *name, kubelet_config *k, config_error *err)
{
	unsigned line = 0;
	const char *s = text;

	snprintf(k->flags_path, sizeof(k->flags_path), "%s", name);
	while (*s) {
		size_t n = strcspn(s, "\n");
		line++;
		const char *e = s + n;
		const char *a = s;
		/* --root-dir=DIR or --root-dir DIR, anywhere on an assignment's line */
		while ((a = strstr(a, "--root-dir")) && a < e) {
			const char *v = a + 10;
			if (*v == '=' || *v == ' ') {
				v++;
				size_t l = 0;
				while (v + l < e && v[l] != ' ' && v[l] != '"' && v[l] != '\'' && v[l] != '\t')
					l++;
				if (l == 0 || v[0] != '/' || l >= sizeof(k->root_dir)) {
					config_set_error(err, name, line, "--root-dir needs an absolute path");
					return -EINVAL;
				}
				memcpy(k->root_dir, v, l);
				k->root_dir[l] = '\0';
				item(&k->root_dir_item, line);
			}
			a = v;
		}
		s = *e ? e + 1 : e;
	}
	return 0;
}

/* The whole file into memory, bounded; -ENOENT passes through for the caller to keep quiet. */
static int read_file(const char *path, char **ret, size_t *ret_len, config_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *buf;
	size_t len = 0;

	if (fd < 0) {
		int r = -errno;
		if (r != -ENOENT)
			config_set_error(err, path, 0, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > KUBELET_FILE_MAX) {
		close(fd);
		config_set_error(err, path, 0, "not a regular file of at most %d bytes", KUBELET_FILE_MAX);
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		config_set_error(err, path, 0, "out of memory");
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;
			free(buf);
			close(fd);
			config_set_error(err, path, 0, "cannot read: %s", strerror(-r));
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > (size_t)st.st_size) { /* it grew while read: a writer is not done */
			free(buf);
			close(fd);
			config_set_error(err, path, 0, "changed while being read");
			return -EAGAIN;
		}
	}
	close(fd);
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
}

int kubelet_flags_path(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	int dl = slash ? (int)(slash - path) : 1;
	int n = snprintf(buf, size, "%.*s/kubeadm-flags.env", dl, slash ? path : ".");
	return n >= 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

static void stamp_of(const char *path, config_file_stamp *s)
{
	struct stat st;
	*s = (config_file_stamp){ .exists = false };
	if (stat(path, &st) < 0)
		return;
	*s = (config_file_stamp){
		.exists = true, .dev = (uint64_t)st.st_dev, .ino = (uint64_t)st.st_ino, .size = (uint64_t)st.st_size,
		.mtime_nsec = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec,
		.ctime_nsec = (uint64_t)st.st_ctim.tv_sec * 1000000000ULL + (uint64_t)st.st_ctim.tv_nsec,
	};
}

void kubelet_files_stamp(const char *path, config_file_stamp stamp[2])
{
	char fpath[PATH_MAX];
	stamp_of(path, &stamp[0]);
	if (kubelet_flags_path(path, fpath, sizeof(fpath)) == 0)
		stamp_of(fpath, &stamp[1]);
	else
		stamp[1] = (config_file_stamp){ .exists = false };
}

bool config_file_stamp_equal(const config_file_stamp *a, const config_file_stamp *b)
{
	if (a->exists != b->exists)
		return false;
	return !a->exists || (a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	                      a->mtime_nsec == b->mtime_nsec && a->ctime_nsec == b->ctime_nsec);
}

int kubelet_config_read(const char *path, kubelet_config **ret, config_error *err)
{
	config_error dummy;
	char *text = NULL, *flags = NULL;
	size_t len = 0;
	kubelet_config *k = NULL;
	int r;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	r = read_file(path, &text, &len, err);
	if (r < 0)
		return r;
	r = kubelet_config_parse(text, len, path, &k, err);
	free(text);
	if (r < 0)
		return r;

	/* kubeadm's flags file sits next to the configuration it wrote. */
	char fpath[PATH_MAX];
	if (kubelet_flags_path(path, fpath, sizeof(fpath)) == 0) {
		r = read_file(fpath, &flags, &len, err);
		if (r == 0)
			r = kubelet_flags_parse(flags, fpath, k, err);
		free(flags);
		if (r == -ENOENT)
			r = 0;
		if (r < 0) {
			free(k);
			return r;
		}
	}
	*ret = k;
	return 0;
}
