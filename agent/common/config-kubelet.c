/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's configuration under evictd.conf: every key evictd.conf (or a drop-in) leaves unset
 * takes the kubelet's value, thresholds raised by [eviction] kubelet-margin so that evictd acts
 * before the kubelet and the kubelet's eviction stays the backstop. A missing kubelet file is
 * silence; a broken one is one warning (kubelet.warning) and evictd runs on its own files.
 */
#include "config-parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubelet-config.h"
#include "spool.h"

/* An origin string; cut at CONFIG_ORIGIN_MAX (a path that long is shown shortened, never overrun). */
static void origin_printf(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void origin_printf(char *dst, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(dst, CONFIG_ORIGIN_MAX, fmt, ap);
	va_end(ap);
}

static bool is_bytes(evictd_signal s)
{
	return s == SIGNAL_MEMORY_AVAILABLE || s == SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE ||
	       s == SIGNAL_NODEFS_AVAILABLE || s == SIGNAL_IMAGEFS_AVAILABLE;
}

static const char *margin_text(const threshold_value *m, char *buf, size_t size)
{
	if (!m->set)
		return "0";
	if (m->percent)
		snprintf(buf, size, "%g%%", (double)m->fraction * 100.0);
	else
		spool_quantity(m->quantity, buf, size);
	return buf;
}

/*
 * t raised by the margin: a percentage margin scales the threshold (it keeps its kind, so it works
 * for every signal); a quantity is added to the byte signals' thresholds only (an inode or PID
 * count has no bytes), after resolution when the kubelet's threshold is a percentage.
 */
static threshold_value with_margin(const threshold_value *t, const threshold_value *m, evictd_signal s)
{
	threshold_value r = *t;
	char mb[32];

	if (!r.set || !m->set)
		return r;
	if (m->percent) {
		if (r.percent) {
			float f = r.fraction * (1.0f + m->fraction);
			r.fraction = f < 0.99f ? f : 0.99f; /* 100% would always be met */
		} else {
			int64_t add = (int64_t)((double)r.quantity * (double)m->fraction);
			r.quantity += add > 0 ? add : 1;
		}
	} else if (is_bytes(s)) {
		if (r.percent)
			r.margin += m->quantity;
		else
			r.quantity += m->quantity;
	} else
		return r;
	size_t l = strlen(r.origin);
	snprintf(r.origin + l, sizeof(r.origin) - l, " + kubelet-margin %s", margin_text(m, mb, sizeof(mb)));
	return r;
}

/* The kubelet's Linux evictionHard defaults (as config_new_default's). */
static void kubelet_default_hard(threshold_value hard[_SIGNAL_MAX], const char *path)
{
	static const struct { evictd_signal s; bool pct; double v; int64_t q; } d[] = {
		{ SIGNAL_MEMORY_AVAILABLE, false, 0, 100LL << 20 },
		{ SIGNAL_NODEFS_AVAILABLE, true, 10, 0 },
		{ SIGNAL_NODEFS_INODES_FREE, true, 5, 0 },
		{ SIGNAL_IMAGEFS_AVAILABLE, true, 15, 0 },
		{ SIGNAL_IMAGEFS_INODES_FREE, true, 5, 0 },
	};
	for (size_t i = 0; i < ELEMENTSOF(d); i++) {
		threshold_value *t = &hard[d[i].s];
		if (t->origin[0])
			continue;
		*t = (threshold_value){ .set = true, .percent = d[i].pct, .fraction = (float)(d[i].v / 100.0),
		                        .quantity = d[i].q };
		origin_printf(t->origin, "kubelet default (%s)", path);
	}
}

static void origin_at(char *dst, const kubelet_config *k, const char *file, unsigned line)
{
	origin_printf(dst, "kubelet %s:%u", file ? file : k->path, line);
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v);
	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/*
 * The pod cgroups the kubelet makes with its driver and root (pkg/kubelet/cm: CgroupName.ToSystemd
 * joins the names with '-' into nested slices). cgroupRoot "/" is the usual one.
 */
static int pod_globs(const kubelet_config *k, char ***ret)
{
	char prefix[300] = "", dash[300] = "";
	bool systemd = strcmp(k->cgroup_driver[0] ? k->cgroup_driver : "cgroupfs", "systemd") == 0;
	const char *root = k->cgroup_root[0] ? k->cgroup_root : "/";
	char **v = calloc(3, sizeof(char *));
	int r = 0;

	if (!v)
		return -ENOMEM;
	if (!systemd) {
		if (strcmp(root, "/") != 0)
			snprintf(prefix, sizeof(prefix), "%s/", root + 1);
		if (asprintf(&v[0], "%skubepods/*/pod*", prefix) < 0 || asprintf(&v[1], "%skubepods/pod*", prefix) < 0)
			r = -ENOMEM;
	} else {
		/* "/a.slice/a-b.slice" -> names a, b -> a.slice/a-b.slice/a-b-kubepods.slice/... */
		char tmp[256], *save = NULL;
		size_t pl = 0, dl = 0;
		snprintf(tmp, sizeof(tmp), "%s", root);
		for (char *c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
			size_t n = strlen(c);
			if (n > 6 && strcmp(c + n - 6, ".slice") == 0)
				c[n - 6] = '\0';
			const char *last = strrchr(c, '-'); /* a-b.slice names b below a.slice */
			last = last ? last + 1 : c;
			dl += (size_t)snprintf(dash + dl, sizeof(dash) - dl, "%s-", last);
			pl += (size_t)snprintf(prefix + pl, sizeof(prefix) - pl, "%.*s.slice/", (int)(dl - 1), dash);
			if (pl >= sizeof(prefix) || dl >= sizeof(dash))
				break;
		}
		if (asprintf(&v[0], "%s%skubepods.slice/%skubepods-*.slice/%skubepods-*-pod*.slice", prefix, dash,
		             dash, dash) < 0 ||
		    asprintf(&v[1], "%s%skubepods.slice/%skubepods-pod*.slice", prefix, dash, dash) < 0)
			r = -ENOMEM;
	}
	if (r < 0) {
		config_strv_free(v);
		return r;
	}
	*ret = v;
	return 0;
}

static bool unset(const evictd_config *c, const char *section, const char *key)
{
	int i = config_key_index(section, key);
	return i >= 0 && !c->key_origin[i][0];
}

static void mark(evictd_config *c, const char *section, const char *key, const kubelet_config *k,
                 const char *file, unsigned line)
{
	int i = config_key_index(section, key);
	if (i >= 0)
		origin_at(c->key_origin[i], k, file, line);
}

static int apply(parse_state *p, const kubelet_config *k)
{
	evictd_config *c = p->c;
	threshold_value hard[_SIGNAL_MAX];
	int r;

	memcpy(hard, k->hard, sizeof(hard));
	/* No evictionHard: the kubelet's defaults. With one, only its signals, unless it merges. */
	if (!k->hard_map.set || k->merge_defaults.set)
		kubelet_default_hard(hard, k->path);
	/* addAllocatableThresholds: the hard memory threshold also guards allocatable with pods enforced */
	if (k->enforce_pods && !hard[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].origin[0])
		hard[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = hard[SIGNAL_MEMORY_AVAILABLE];
	memcpy(c->kubelet.hard, hard, sizeof(hard));
	memcpy(c->kubelet.soft, k->soft, sizeof(k->soft));
	snprintf(c->kubelet.path, sizeof(c->kubelet.path), "%s", k->path);

	for (int i = 0; i < _SIGNAL_MAX; i++) {
		evictd_signal s = (evictd_signal)i;
		if (signal_is_psi(s))
			continue;
		/* allocatable follows memory in config_finalize unless either side names it */
		if (!p->hard_explicit[s] && (s != SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE || k->hard[s].origin[0])) {
			if (hard[s].set)
				c->hard[s] = with_margin(&hard[s], &c->kubelet_margin, s);
			else if (s != SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE && c->hard[s].set) {
				/* the kubelet's evictionHard leaves this signal out: so does evictd */
				c->hard[s] = (threshold_value){ .set = false };
				origin_at(c->hard[s].origin, k, NULL, k->hard_map.line);
				size_t l = strlen(c->hard[s].origin);
				snprintf(c->hard[s].origin + l, sizeof(c->hard[s].origin) - l, " (evictionHard has no %s)",
				         signal_name(s));
			}
			if (s == SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE)
				p->hard_explicit[s] = true; /* the kubelet named it: no copy from memory */
		}
		if (!p->soft_explicit[s] && k->soft[s].origin[0])
			c->soft[s] = with_margin(&k->soft[s], &c->kubelet_margin, s);
		if (!c->soft_grace_set[s] && k->soft_grace[s].set) {
			c->soft_grace_usec[s] = k->soft_grace_usec[s];
			c->soft_grace_set[s] = true;
			origin_at(c->soft_grace_origin[s], k, NULL, k->soft_grace[s].line);
		}
		if (!p->min_reclaim_explicit[s] && k->min_reclaim[s].origin[0])
			c->min_reclaim[s] = k->min_reclaim[s];
	}

	if (k->pressure_transition.set && unset(c, "eviction", "pressure-transition-period")) {
		c->pressure_transition_usec = k->pressure_transition_usec;
		mark(c, "eviction", "pressure-transition-period", k, NULL, k->pressure_transition.line);
	}
	if (k->max_pod_grace.set && unset(c, "eviction", "max-pod-grace-period")) {
		/* 0 and negative: the pod's own grace period (the kubelet's negative quirk is not copied) */
		c->max_pod_grace_usec = k->max_pod_grace_sec > 0 ? (uint64_t)k->max_pod_grace_sec * USEC_PER_SEC : 0;
		mark(c, "eviction", "max-pod-grace-period", k, NULL, k->max_pod_grace.line);
	}
	if ((k->cgroup_driver_item.set || k->cgroup_root_item.set) && k->cgroups_per_qos && unset(c, "agent", "pods")) {
		char **v = NULL;
		if ((r = pod_globs(k, &v)) < 0)
			return r;
		config_strv_free(c->pods);
		c->pods = v;
		mark(c, "agent", "pods", k, NULL, k->cgroup_driver_item.set ? k->cgroup_driver_item.line : k->cgroup_root_item.line);
	}
	if (k->runtime_endpoint_item.set) {
		/* used only while the key says auto: the operator's endpoint wins (config.h) */
		snprintf(c->kubelet.runtime_endpoint, sizeof(c->kubelet.runtime_endpoint), "%s", k->runtime_endpoint);
		if (unset(c, "agent", "container-runtime-endpoint"))
			mark(c, "agent", "container-runtime-endpoint", k, NULL, k->runtime_endpoint_item.line);
	}
	if (k->image_min_gc_age.set && unset(c, "eviction", "image-minimum-gc-age")) {
		c->image_min_gc_age_usec = k->image_min_gc_age_usec;
		mark(c, "eviction", "image-minimum-gc-age", k, NULL, k->image_min_gc_age.line);
	}
	if (k->pod_logs_dir_item.set && unset(c, "agent", "pod-logs-dir")) {
		if ((r = set_str(&c->pod_logs_dir, k->pod_logs_dir)) < 0)
			return r;
		mark(c, "agent", "pod-logs-dir", k, NULL, k->pod_logs_dir_item.line);
	}
	if (k->root_dir_item.set && unset(c, "agent", "kubelet-root-dir")) {
		if ((r = set_str(&c->kubelet_root_dir, k->root_dir)) < 0)
			return r;
		mark(c, "agent", "kubelet-root-dir", k, k->flags_path, k->root_dir_item.line);
	}
	if (k->kube_reserved.set && unset(c, "agent", "kube-reserved-memory")) {
		c->kube_reserved_memory = k->kube_reserved_memory;
		mark(c, "agent", "kube-reserved-memory", k, NULL, k->kube_reserved.line);
	}
	if (k->system_reserved.set && unset(c, "agent", "system-reserved-memory")) {
		c->system_reserved_memory = k->system_reserved_memory;
		mark(c, "agent", "system-reserved-memory", k, NULL, k->system_reserved.line);
	}
	if (k->enforce.set && unset(c, "agent", "enforce-node-allocatable")) {
		c->enforce_node_allocatable_pods = k->enforce_pods;
		mark(c, "agent", "enforce-node-allocatable", k, NULL, k->enforce.line);
	}
	return 0;
}

int config_merge_kubelet(parse_state *p)
{
	evictd_config *c = p->c;
	kubelet_config *k = NULL;
	config_error err;
	int r;

	c->kubelet.path[0] = c->kubelet.warning[0] = c->kubelet.missing[0] = '\0';
	if (!c->kubelet.config_path)
		return 0;
	const char *explicit = c->key_origin[config_key_index("kubernetes", "kubelet-config")];
	/* From a string (tests, fuzzing) only a kubelet configuration the text names: the host's must
	 * not change what a test sees. */
	if (p->text && !explicit[0])
		return 0;
	/* Before the read: a change after it then differs from this, and the daemon's watch reloads. */
	kubelet_files_stamp(c->kubelet.config_path, c->kubelet.stamp);
	r = kubelet_config_read(c->kubelet.config_path, &k, &err);
	if (r == -ENOENT) {
		/* The default path missing is a node without Kubernetes: nothing to say. A path someone
		 * wrote is expected to be there: a typo must not pass for "no kubelet". */
		if (explicit[0])
			snprintf(c->kubelet.missing, sizeof(c->kubelet.missing),
			         "%s ([kubernetes] kubelet-config, %s) does not exist: evictd runs on its own configuration "
			         "and reads the kubelet's when it appears",
			         c->kubelet.config_path, explicit);
		return 0;
	}
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		snprintf(c->kubelet.warning, sizeof(c->kubelet.warning), "%s", err.text);
		return 0;
	}
	r = apply(p, k);
	free(k);
	return r;
}

/* -1: a below b, 0 equal, 1 above, 2: not comparable without the capacity. */
static int compare(const threshold_value *a, const threshold_value *b, int64_t capacity)
{
	if (capacity > 0) {
		int64_t x = config_threshold_resolve(a, capacity), y = config_threshold_resolve(b, capacity);
		return x < y ? -1 : x > y;
	}
	if (a->percent != b->percent || a->margin || b->margin)
		return 2;
	if (a->percent)
		return a->fraction < b->fraction ? -1 : a->fraction > b->fraction;
	return a->quantity < b->quantity ? -1 : a->quantity > b->quantity;
}

static const char *value_text(evictd_signal s, const threshold_value *t, char *buf, size_t size)
{
	if (!t->percent && is_bytes(s))
		return spool_quantity(t->quantity + t->margin, buf, size);
	if (t->percent && t->margin) {
		char q[32];
		snprintf(buf, size, "%g%%+%s", (double)t->fraction * 100.0, spool_quantity(t->margin, q, sizeof(q)));
		return buf;
	}
	return config_threshold_format(t, buf, size);
}

static bool from_kubelet(const threshold_value *t)
{
	return strncmp(t->origin, "kubelet ", 8) == 0;
}

/* evictd's threshold of one kind at or below the kubelet's of the same kind (false too when they cannot be compared). */
static bool at_or_below(const threshold_value *e, const threshold_value *k, int64_t capacity)
{
	if (!e || !e->set || !k->set)
		return false;
	int r = compare(e, k, capacity);
	return r == -1 || r == 0;
}

/*
 * The warning, in terms of what the operator wrote: the key that set evictd's threshold; for one
 * taken from the kubelet, kubelet-margin, which did not raise it; for allocatableMemory.available
 * following memory.available, the memory key it follows.
 */
static void conflict_text(const evictd_config *c, kubelet_conflict *k, bool follows_memory)
{
	const char *sig = signal_name(k->signal), *kind = k->hard ? "hard" : "soft";
	const char *sec = k->hard ? "eviction-hard" : "eviction-soft";
	const threshold_value *et = k->evictd, *kt = k->kubelet, *m = &c->kubelet_margin;
	const char *eo = et->origin[0] ? et->origin : "default";
	char ev[48], kv[48], mv[48], with[48];

	value_text(k->signal, et, ev, sizeof(ev));
	value_text(k->signal, kt, kv, sizeof(kv));
	threshold_value raised = with_margin(kt, m, k->signal);
	value_text(k->signal, &raised, with, sizeof(with));

	if (follows_memory) {
		snprintf(k->key, sizeof(k->key), "[%s] %s", sec, signal_name(SIGNAL_MEMORY_AVAILABLE));
		snprintf(k->text, sizeof(k->text),
		         "%s: evictd's %s threshold %s (follows [%s] %s, %s) is at or below the kubelet's %s %s (%s): the "
		         "kubelet may evict first; set [%s] %s above %s",
		         sig, kind, ev, sec, signal_name(SIGNAL_MEMORY_AVAILABLE), eo, kind, kv, kt->origin, sec, sig, kv);
	} else if (from_kubelet(et)) {
		/* kubelet-margin 0, or a quantity on an inode or PID count: the kubelet's own threshold */
		snprintf(k->key, sizeof(k->key), "[eviction] kubelet-margin");
		snprintf(k->text, sizeof(k->text),
		         "%s: evictd's %s threshold %s is the kubelet's own (%s), not raised by [eviction] kubelet-margin = "
		         "%s (%s)%s: both act on the same crossing; set kubelet-margin %s, or [%s] %s above %s",
		         sig, kind, ev, kt->origin, margin_text(m, mv, sizeof(mv)), m->origin[0] ? m->origin : "default",
		         m->set ? ", a quantity, which only byte signals take" : "", m->set ? "as a percentage" : "above 0",
		         sec, sig, kv);
	} else {
		snprintf(k->key, sizeof(k->key), "[%s] %s", sec, sig);
		int n = snprintf(k->text, sizeof(k->text),
		                 "%s: evictd's %s threshold %s ([%s] %s, %s) is at or below the kubelet's %s %s (%s): the "
		                 "kubelet may evict first; raise it above %s",
		                 sig, kind, ev, sec, sig, eo, kind, kv, kt->origin, kv);
		if (m->set && n > 0 && (size_t)n < sizeof(k->text))
			snprintf(k->text + n, sizeof(k->text) - (size_t)n,
			         ", or remove it from evictd.conf to take the kubelet's plus kubelet-margin (%s)", with);
	}
}

unsigned config_kubelet_conflicts(const evictd_config *c, const int64_t *capacity,
                                  void (*cb)(const kubelet_conflict *k, void *userdata), void *userdata)
{
	unsigned n = 0;

	if (!c->kubelet.path[0])
		return 0;
	/* Hard with hard, soft with soft: an evictd soft threshold waits its grace period, so above the
	 * kubelet's hard one it does not act first in a fast fill; below it, the kubelet evicts first. */
	for (int hard = 1; hard >= 0; hard--) {
		for (int i = 0; i < _SIGNAL_MAX; i++) {
			evictd_signal s = (evictd_signal)i;
			int64_t cap = capacity ? capacity[i] : -1;
			if (signal_is_psi(s))
				continue;
			const threshold_value *kt = hard ? &c->kubelet.hard[i] : &c->kubelet.soft[i];
			const threshold_value *et = hard ? config_hard(c, s) : &c->soft[i];
			if (!at_or_below(et, kt, cap))
				continue;
			/* allocatable following memory.available: said under memory.available when that is below too */
			bool follows = hard && s == SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE && c->allocatable_follows_memory;
			if (follows && at_or_below(config_hard(c, SIGNAL_MEMORY_AVAILABLE), &c->kubelet.hard[SIGNAL_MEMORY_AVAILABLE],
			                           capacity ? capacity[SIGNAL_MEMORY_AVAILABLE] : -1))
				continue;
			kubelet_conflict k = { .signal = s, .hard = hard, .evictd = et, .kubelet = kt };
			conflict_text(c, &k, follows);
			n++;
			if (cb)
				cb(&k, userdata);
		}
	}
	return n;
}
