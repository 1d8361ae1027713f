/* SPDX-License-Identifier: MIT */
#include "evictd-metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "status-file.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_OUTCOMES 16

/* Seconds: a decision is milliseconds (BENCHMARKS.md); the top buckets catch a stalled scan. */
static const double buckets[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	                          0.05, 0.1, 0.25, 0.5, 1, 2.5, 5 };
#define N_BUCKETS ELEMENTSOF(buckets)
/* Seconds: from an evicted pod's last process to its cgroup's removal (the kubelet's cleanup takes
 * seconds; its podCleanupTimeout, evictd's default reclaim-timeout, is 30 s). */
static const double reclaim_buckets[] = { 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60 };
#define N_RECLAIM_BUCKETS ELEMENTSOF(reclaim_buckets)

typedef struct histogram {
	const double *le;          /* upper bounds, n of them (NULL: buckets[]) */
	size_t n;
	uint64_t count[N_BUCKETS]; /* per bucket, not cumulative */
	uint64_t total;
	double sum;
} histogram;

struct metrics {
	char outcomes[MAX_OUTCOMES][16];
	size_t n_outcomes;
	uint64_t evictions[_SIGNAL_MAX][2][MAX_OUTCOMES]; /* [signal][hard][outcome] */
	uint64_t started;
	unsigned reclaiming;
	uint64_t images_removed, image_bytes_removed;
	int64_t node_pending[_SIGNAL_MAX];
	int runtime_up; /* -1: no runtime configured */
	histogram decision, scan, reclaim;

	/* what was last written, to write only on change */
	char *last;
	size_t last_len;
	uint64_t written_usec;
	uint64_t events;         /* a sum that moves whenever a counter or histogram does */
	uint64_t written_events;
	uint32_t written_flags;  /* thresholds met and conditions, as bits */
	char *written_path;      /* NULL: nothing written yet */
	uint64_t failed_usec;    /* last failed write: retried after METRICS_REFRESH_USEC */
	bool failed;
};

int metrics_new(metrics **ret)
{
	metrics *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->reclaim.le = reclaim_buckets;
	m->reclaim.n = N_RECLAIM_BUCKETS;
	m->runtime_up = -1;
	*ret = m;
	return 0;
}

metrics *metrics_free(metrics *m)
{
	if (m) {
		free(m->last);
		free(m->written_path);
	}
	free(m);
	return NULL;
}

void metrics_eviction_started(metrics *m)
{
	m->started++;
	m->events++;
}

uint64_t metrics_evictions_started(const metrics *m)
{
	return m ? m->started : 0;
}

void metrics_eviction_finished(metrics *m, const char *signal, bool hard, const char *outcome)
{
	evictd_signal s = signal_from_name(signal);
	size_t o;
	if (s == _SIGNAL_INVALID || !outcome)
		return;
	for (o = 0; o < m->n_outcomes && strcmp(m->outcomes[o], outcome) != 0; o++)
		;
	if (o == m->n_outcomes) {
		if (o == MAX_OUTCOMES || strlen(outcome) >= sizeof(m->outcomes[o]))
			return; /* the evictor's outcomes are a handful of short words */
		strcpy(m->outcomes[o], outcome);
		m->n_outcomes++;
	}
	m->evictions[s][hard][o]++;
	m->events++;
}

static void observe(metrics *m, histogram *h, uint64_t usec)
{
	double s = (double)usec / 1e6;
	const double *le = h->le ? h->le : buckets;
	size_t n = h->le ? h->n : N_BUCKETS, i = 0;
	while (i < n && s > le[i])
		i++;
	if (i < n)
		h->count[i]++;
	h->total++;
	h->sum += s;
	m->events++;
}

void metrics_observe_decision(metrics *m, uint64_t usec)
{
	observe(m, &m->decision, usec);
}

void metrics_observe_scan(metrics *m, uint64_t usec)
{
	observe(m, &m->scan, usec);
}

void metrics_observe_reclaim(metrics *m, uint64_t usec)
{
	observe(m, &m->reclaim, usec);
}

void metrics_set_node_reclaim(metrics *m, uint64_t images_removed, uint64_t bytes_removed,
                              const int64_t pending[_SIGNAL_MAX], int runtime_up)
{
	if (m->images_removed != images_removed || m->runtime_up != runtime_up ||
	    memcmp(m->node_pending, pending, sizeof(m->node_pending)) != 0)
		m->events++;
	m->images_removed = images_removed;
	m->image_bytes_removed = bytes_removed;
	memcpy(m->node_pending, pending, sizeof(m->node_pending));
	m->runtime_up = runtime_up;
}

void metrics_set_reclaiming(metrics *m, unsigned n)
{
	if (m->reclaiming != n)
		m->events++;
	m->reclaiming = n;
}

typedef struct out {
	char *buf;
	size_t size, len;
	bool overflow;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...)
{
	va_list ap;
	if (o->overflow)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->size - o->len)
		o->overflow = true;
	else
		o->len += (size_t)n;
}

/* A label value: backslash, double quote and newline escaped, as the text format requires. */
static void put_label(out *o, const char *name, const char *v, bool first)
{
	put(o, "%s%s=\"", first ? "{" : ",", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			put(o, "\\%c", *v);
		else if (*v == '\n')
			put(o, "\\n");
		else
			put(o, "%c", *v);
	}
	put(o, "\"");
}

static void put_header(out *o, const char *name, const char *type, const char *help)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The signal's value in its base unit: PSI is kept in centipercent, exposed as a 0-1 ratio. */
static void put_value(out *o, evictd_signal s, int64_t v)
{
	if (signal_is_psi(s))
		put(o, " %.4f\n", (double)v / 10000.0);
	else
		put(o, " %" PRId64 "\n", v);
}

static void put_histogram(out *o, const char *name, const char *help, const histogram *h)
{
	uint64_t cum = 0;
	const double *le = h->le ? h->le : buckets;
	size_t n = h->le ? h->n : N_BUCKETS;
	put_header(o, name, "histogram", help);
	for (size_t i = 0; i < n; i++) {
		cum += h->count[i];
		put(o, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, le[i], cum);
	}
	put(o, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", name, h->total);
	put(o, "%s_sum %.9g\n", name, h->sum);
	put(o, "%s_count %" PRIu64 "\n", name, h->total);
}

static const threshold_value *threshold_of(const evictd_config *cfg, int kind, evictd_signal s)
{
	return kind == THRESHOLD_HARD ? config_hard(cfg, s) : &cfg->soft[s];
}

int metrics_render(const metrics *m, const evictd_config *cfg, const node_signals *node, const evaluation *eval,
                   unsigned in_flight, char *buf, size_t size)
{
	out o = { .buf = buf, .size = size };
	static const char *const kinds[] = { "soft", "hard" }; /* indexed by evict_info.hard */

	if (!size)
		return -ENOBUFS;
	buf[0] = '\0';
	put_header(&o, "evictd_evictions_total", "counter",
	           "Finished evictions by the signal that chose the pod, hard or soft threshold, and outcome "
	           "(reclaimed or reclaim-timeout once the node has the pod's resources back or gave up waiting).");
	for (int s = 0; s < _SIGNAL_MAX; s++)
		for (int h = 0; h < 2; h++)
			for (size_t i = 0; i < m->n_outcomes; i++) {
				if (!m->evictions[s][h][i])
					continue;
				put(&o, "evictd_evictions_total");
				put_label(&o, "signal", signal_name((evictd_signal)s), true);
				put_label(&o, "kind", kinds[h], false);
				put_label(&o, "outcome", m->outcomes[i], false);
				put(&o, "} %" PRIu64 "\n", m->evictions[s][h][i]);
			}
	put_header(&o, "evictd_evictions_started_total", "counter", "Evictions started (dry runs included).");
	put(&o, "evictd_evictions_started_total %" PRIu64 "\n", m->started);
	put_header(&o, "evictd_evictions_in_flight", "gauge", "Evictions started and not finished.");
	put(&o, "evictd_evictions_in_flight %u\n", in_flight);
	put_header(&o, "evictd_pods_reclaiming", "gauge",
	           "Evicted pods whose processes are gone and whose pod cgroup is not removed yet (reclaim pending).");
	put(&o, "evictd_pods_reclaiming %u\n", m->reclaiming);
	put_header(&o, "evictd_node_reclaim_images_removed_total", "counter",
	           "Unused images removed through the container runtime by node-level reclaim before disk evictions.");
	put(&o, "evictd_node_reclaim_images_removed_total %" PRIu64 "\n", m->images_removed);
	put_header(&o, "evictd_node_reclaim_image_bytes_total", "counter",
	           "Sizes of those images, as the runtime counts them (bytes).");
	put(&o, "evictd_node_reclaim_image_bytes_total %" PRIu64 "\n", m->image_bytes_removed);
	put_header(&o, "evictd_node_reclaim_pending", "gauge",
	           "Node-level reclaim counted as pending for a disk signal (the kubelet's dead containers; images with node-reclaim = account), in its unit.");
	for (int s = 0; s < _SIGNAL_MAX; s++)
		if (s == SIGNAL_NODEFS_AVAILABLE || s == SIGNAL_NODEFS_INODES_FREE || s == SIGNAL_IMAGEFS_AVAILABLE ||
		    s == SIGNAL_IMAGEFS_INODES_FREE) {
			put(&o, "evictd_node_reclaim_pending{");
			put_label(&o, "signal", signal_name((evictd_signal)s), false);
			put(&o, "} %" PRId64 "\n", m->node_pending[s]);
		}
	if (m->runtime_up >= 0) {
		put_header(&o, "evictd_runtime_up", "gauge", "1 when the container runtime answered its last call, else 0.");
		put(&o, "evictd_runtime_up %d\n", m->runtime_up);
	}

	put_header(&o, "evictd_signal_observed", "gauge",
	           "Observed signal: bytes, inodes or tasks available; PSI as a 0-1 stall ratio. Absent when unreadable.");
	for (int s = 0; node && s < _SIGNAL_MAX; s++) {
		if (!node->s[s].known)
			continue;
		put(&o, "evictd_signal_observed");
		put_label(&o, "signal", signal_name((evictd_signal)s), true);
		put(&o, "}");
		put_value(&o, (evictd_signal)s, node->s[s].available);
	}
	put_header(&o, "evictd_signal_threshold", "gauge",
	           "Configured threshold resolved against the signal's capacity, in the signal's unit.");
	for (int s = 0; node && s < _SIGNAL_MAX; s++)
		for (int k = THRESHOLD_HARD; k <= THRESHOLD_SOFT; k++) {
			const threshold_value *t = threshold_of(cfg, k, (evictd_signal)s);
			if (!node->s[s].known || !t || !t->set)
				continue;
			put(&o, "evictd_signal_threshold");
			put_label(&o, "signal", signal_name((evictd_signal)s), true);
			put_label(&o, "kind", threshold_kind_name((threshold_kind)k), false);
			put(&o, "}");
			put_value(&o, (evictd_signal)s, config_threshold_resolve_signal((evictd_signal)s, t, node->s[s].capacity));
		}
	put_header(&o, "evictd_threshold_met", "gauge", "1 while the threshold is met (soft: before its grace period too).");
	for (int s = 0; s < _SIGNAL_MAX; s++)
		for (int k = THRESHOLD_HARD; k <= THRESHOLD_SOFT; k++) {
			const threshold_value *t = threshold_of(cfg, k, (evictd_signal)s);
			if (!t || !t->set)
				continue;
			put(&o, "evictd_threshold_met");
			put_label(&o, "signal", signal_name((evictd_signal)s), true);
			put_label(&o, "kind", threshold_kind_name((threshold_kind)k), false);
			put(&o, "} %d\n", eval && eval->t[k][s].met ? 1 : 0);
		}
	put_header(&o, "evictd_node_condition", "gauge", "1 while the node condition is True (kubelet semantics).");
	for (int c = 0; c < _CONDITION_MAX; c++) {
		put(&o, "evictd_node_condition");
		put_label(&o, "condition", signal_condition_name((evictd_condition)c), true);
		put(&o, "} %d\n", eval && eval->conditions[c] ? 1 : 0);
	}
	put_histogram(&o, "evictd_decision_duration_seconds",
	              "Time from the start of a pod scan to the eviction choice, per decision.", &m->decision);
	put_histogram(&o, "evictd_scan_duration_seconds", "Time to read every pod cgroup and descriptor.", &m->scan);
	put_histogram(&o, "evictd_reclaim_duration_seconds",
	              "Time from an evicted pod's processes being gone to its pod cgroup's removal (timeouts included).",
	              &m->reclaim);
	return o.overflow ? -ENOBUFS : (int)o.len;
}

static uint32_t event_flags(const evaluation *eval)
{
	uint32_t f = 0, bit = 0;
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int s = 0; s < _SIGNAL_MAX; s++, bit++)
			f |= (uint32_t)(eval && eval->t[k][s].met) << bit;
	for (int c = 0; c < _CONDITION_MAX; c++, bit++)
		f |= (uint32_t)(eval && eval->conditions[c]) << bit;
	return f;
}

int metrics_update(metrics *m, const evictd_config *cfg, const node_signals *node, const evaluation *eval,
                   unsigned in_flight, uint64_t now_usec)
{
	if (!m || !cfg->metrics_file)
		return 0;
	uint32_t flags = event_flags(eval);
	bool event = !m->written_path || strcmp(m->written_path, cfg->metrics_file) != 0 ||
	             m->events != m->written_events || flags != m->written_flags;
	if (m->failed && now_usec - m->failed_usec < METRICS_REFRESH_USEC)
		return 0; /* a missing directory must not cost a render and a failed open per tick */
	if (!event && now_usec - m->written_usec < METRICS_REFRESH_USEC)
		return 0;

	char *buf = malloc(METRICS_MAX_BYTES);
	if (!buf)
		return -ENOMEM;
	int n = metrics_render(m, cfg, node, eval, in_flight, buf, METRICS_MAX_BYTES);
	int r = n < 0 ? n : 0;
	if (r == 0 && !event && m->last && (size_t)n == m->last_len && memcmp(buf, m->last, (size_t)n) == 0) {
		/* unchanged: no write; the refresh period starts again */
		m->written_usec = now_usec;
		free(buf);
		return 0;
	}
	if (r == 0)
		r = atomic_write_file(cfg->metrics_file, buf, (size_t)n);
	if (r < 0) {
		free(buf);
		if (!m->failed)
			log_msg(LOG_ERR, "cannot write the metrics file %s: %s (retrying every %u s)", cfg->metrics_file,
			        strerror(-r), (unsigned)(METRICS_REFRESH_USEC / USEC_PER_SEC));
		m->failed = true;
		m->failed_usec = now_usec;
		return r;
	}
	if (m->failed)
		log_msg(LOG_NOTICE, "metrics file %s written again", cfg->metrics_file);
	m->failed = false;
	if (!m->written_path || strcmp(m->written_path, cfg->metrics_file) != 0) {
		char *p = strdup(cfg->metrics_file);
		if (!p) {
			free(buf);
			return -ENOMEM;
		}
		free(m->written_path);
		m->written_path = p;
	}
	free(m->last);
	m->last = buf;
	m->last_len = (size_t)n;
	m->written_usec = now_usec;
	m->written_events = m->events;
	m->written_flags = flags;
	return 0;
}
