/* SPDX-License-Identifier: MIT */
#include "heartbeat.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "decide.h"
#include "log.h"
#include "pods.h"
#include "clock.h"

struct heartbeat {
	sd_event_source *sigusr1;
	sd_event_source *timer;       /* the foreground's minute beat; NULL under systemd */
	heartbeat_view_fn view;
	void *userdata;
	uint64_t started_usec;        /* CLOCK_MONOTONIC */
};

static bool has_threshold(const evictd_config *c, evictd_signal s)
{
	const threshold_value *h = config_hard(c, s);
	return (h && h->set) || c->soft[s].set;
}

/* A threshold as configured: "100Mi", "10%". */
static const char *format_configured(evictd_signal s, const threshold_value *t, char *buf, size_t size)
{
	if (t->percent)
		return config_threshold_format(t, buf, size);
	return decide_format_signal_value(s, t->quantity, buf, size);
}

/* Appends with snprintf semantics; the line is cut, never overrun. */
static size_t append(char *buf, size_t size, size_t l, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static size_t append(char *buf, size_t size, size_t l, const char *fmt, ...)
{
	va_list ap;
	if (l >= size)
		return l;
	va_start(ap, fmt);
	int n = vsnprintf(buf + l, size - l, fmt, ap);
	va_end(ap);
	return n < 0 ? l : l + (size_t)n;
}

/* " (hard 100Mi, soft 500Mi)" or, with capacity >= 0, the thresholds resolved against it. */
static size_t append_thresholds(char *buf, size_t size, size_t l, const evictd_config *c, evictd_signal s,
                                int64_t capacity, const evaluation *ev)
{
	const threshold_value *t[2] = { config_hard(c, s), &c->soft[s] };
	bool first = true;
	for (int k = 0; k < 2; k++) {
		char v[48];
		if (!t[k] || !t[k]->set)
			continue;
		if (capacity >= 0)
			decide_format_signal_value(s, config_threshold_resolve_signal(s, t[k], capacity), v, sizeof(v));
		else
			format_configured(s, t[k], v, sizeof(v));
		bool met = ev && ev->t[k][s].met;
		l = append(buf, size, l, "%s%s %s%s", first ? " (" : ", ", k == 0 ? "hard" : "soft", v, met ? ": met" : "");
		first = false;
	}
	return first ? l : append(buf, size, l, ")");
}

static size_t append_pods(char *buf, size_t size, size_t l, long pods)
{
	if (pods < 0)
		return append(buf, size, l, "; pods unknown");
	return append(buf, size, l, "; %ld pod%s", pods, pods == 1 ? "" : "s");
}

/*
 * The unavailable signals that have a threshold, each with its reason; signals that fail for the
 * same reason are named together: "a, b<open>why<close><sep>c<open>why2<close>".
 */
static size_t append_unavailable(char *buf, size_t size, size_t l, const heartbeat_view *v, const char *open,
                                 const char *sep, const char *close)
{
	const char *prev = NULL;
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		if (!has_threshold(v->cfg, (evictd_signal)s) || v->node->s[s].known)
			continue;
		const char *why = v->node->s[s].reason;
		bool same = prev && strcmp(prev, why) == 0;
		if (prev && !same)
			l = append(buf, size, l, "%s%s%s%s", open, prev, close, sep);
		l = append(buf, size, l, "%s%s", same ? ", " : "", signal_name((evictd_signal)s));
		prev = why;
	}
	return prev ? append(buf, size, l, "%s%s%s", open, prev, close) : l;
}

void heartbeat_fall_rates_text(const evictd_config *c, char *buf, size_t size)
{
	char m[48], p[48], d[48], i[48];
	size_t l = c->online_cpus ? append(buf, size, 0, "fall rates for %u CPU%s: ", c->online_cpus,
	                                   c->online_cpus == 1 ? "" : "s")
	                          : append(buf, size, 0, "fall rates: ");
	append(buf, size, l, "memory %s/s%s, pids %s/s%s; disk %s/s, inodes %s/s",
	       decide_format_signal_value(SIGNAL_MEMORY_AVAILABLE, c->memory_max_rate, m, sizeof(m)),
	       c->memory_max_rate_auto ? "" : " (memory-max-rate)",
	       decide_format_signal_value(SIGNAL_PID_AVAILABLE, c->pid_max_rate, p, sizeof(p)),
	       c->pid_max_rate_auto ? "" : " (pid-max-rate)",
	       decide_format_signal_value(SIGNAL_NODEFS_AVAILABLE, c->disk_max_rate, d, sizeof(d)),
	       decide_format_signal_value(SIGNAL_NODEFS_INODES_FREE, c->inodes_max_rate, i, sizeof(i)));
}

/* "every 1s", "every 100ms": how often a signal that cannot be read now is tried again */
static const char *retry_text(const evictd_config *c, char *buf, size_t size)
{
	uint64_t ms = c->interval_usec / 1000;
	if (ms && ms % 1000 == 0)
		snprintf(buf, size, "every %llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, size, "every %llums", (unsigned long long)ms);
	return buf;
}

void heartbeat_monitoring_text(const heartbeat_view *v, bool lines, char *buf, size_t size)
{
	size_t l = append(buf, size, 0, "monitoring");
	int monitored = 0, unavailable = 0;
	char every[32];

	for (int s = 0; s < _SIGNAL_MAX; s++) {
		if (!has_threshold(v->cfg, (evictd_signal)s))
			continue;
		if (v->node && !v->node->s[s].known) {
			unavailable++;
			continue;
		}
		l = append(buf, size, l, "%s%s", monitored ? ", " : " ", signal_name((evictd_signal)s));
		l = append_thresholds(buf, size, l, v->cfg, (evictd_signal)s, -1, NULL);
		monitored++;
	}
	retry_text(v->cfg, every, sizeof(every));
	if (!monitored) {
		/* Why, signal by signal; signals that fail for the same reason are named together. */
		l = append(buf, size, 0, "monitoring nothing: ");
		if (!unavailable)
			append(buf, size, l, "no signal has a threshold");
		else if (lines)
			append_unavailable(buf, size,
			                   append(buf, size, l, "no signal that has a threshold can be read here (tried again %s):\n  ",
			                          every),
			                   v, ": ", "\n  ", "");
		else
			append_unavailable(buf, size, l, v, ": ", "; ", "");
		return;
	}
	/* Each unavailable signal once, with its reason: in a terminal this replaces the per-signal
	 * warnings (the journal has those), one line each after the rest. */
	if (unavailable && !lines)
		l = append_unavailable(buf, size, append(buf, size, l, "; unavailable here: "), v, " (", ", ", ")");
	l = append_pods(buf, size, l, v->pods);
	char rates[160];
	heartbeat_fall_rates_text(v->cfg, rates, sizeof(rates));
	l = append(buf, size, l, "; %s", rates);
	if (v->cfg->dry_run)
		l = append(buf, size, l, "; dry run");
	if (unavailable && lines)
		append_unavailable(buf, size, append(buf, size, l, "; unavailable here (tried again %s):\n  ", every), v,
		                   ": ", "\n  ", "");
}

/* "12s", "3m12s", "2h3m": how long the daemon ran */
static const char *uptime_text(uint64_t usec, char *buf, size_t size)
{
	unsigned long long s = usec / USEC_PER_SEC;
	if (s < 60)
		snprintf(buf, size, "%llus", s);
	else if (s < 3600)
		snprintf(buf, size, "%llum%llus", s / 60, s % 60);
	else
		snprintf(buf, size, "%lluh%llum", s / 3600, s / 60 % 60);
	return buf;
}

/* "; 3 evictions, 1 in flight, 1 reclaiming, ..." */
static size_t append_evictions(char *buf, size_t size, size_t l, const heartbeat_view *v)
{
	l = append(buf, size, l, "; %llu eviction%s, %u in flight", (unsigned long long)v->evictions,
	           v->evictions == 1 ? "" : "s", v->in_flight);
	if (v->reclaiming || v->reclaimed || v->reclaim_timeouts)
		l = append(buf, size, l, ", %u reclaiming, %llu reclaimed, %llu reclaim timeout%s", v->reclaiming,
		           (unsigned long long)v->reclaimed, (unsigned long long)v->reclaim_timeouts,
		           v->reclaim_timeouts == 1 ? "" : "s");
	if (v->cfg->dry_run)
		l = append(buf, size, l, "; dry run");
	return l;
}

void heartbeat_stop_text(const heartbeat_view *v, const char *why, uint64_t ran_usec, char *buf, size_t size)
{
	char ran[32];
	size_t l = append(buf, size, 0, "stopped%s%s after %s", why ? " on " : "", why ? why : "",
	                  uptime_text(ran_usec, ran, sizeof(ran)));
	append_evictions(buf, size, l, v);
}

void heartbeat_text(const heartbeat_view *v, char *buf, size_t size)
{
	size_t l = append(buf, size, 0, "heartbeat:");
	int n = 0;

	for (int s = 0; v->node && s < _SIGNAL_MAX; s++) {
		const signal_obs *o = &v->node->s[s];
		char a[48];
		if (!has_threshold(v->cfg, (evictd_signal)s) || !o->known)
			continue;
		l = append(buf, size, l, "%s%s %s", n++ ? ", " : " ", signal_name((evictd_signal)s),
		           decide_format_signal_value((evictd_signal)s, o->available, a, sizeof(a)));
		l = append_thresholds(buf, size, l, v->cfg, (evictd_signal)s, o->capacity, v->eval);
	}
	if (!n)
		l = append(buf, size, l, " no signal monitored");
	l = append_pods(buf, size, l, v->pods);
	append_evictions(buf, size, l, v);
}

long heartbeat_count_pods(int root_fd, char *const *patterns)
{
	pod_info *pods = NULL;
	size_t n = 0;
	if (root_fd < 0 || !patterns || pods_discover(root_fd, patterns, NULL, NULL, &pods, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		free(pods[i].cgroup);
	free(pods);
	return (long)n;
}

/* "evictd: <line>" on stderr in the foreground, an entry in the journal under systemd. */
static void emit(const char *line)
{
	if (logging_get_target() == LOGGING_STDERR) {
		char out[2048];
		int n = snprintf(out, sizeof(out), "evictd: %s\n", line);
		if (n > (int)sizeof(out) - 1) {
			n = (int)sizeof(out) - 1;
			out[n - 1] = '\n';
		}
		/* One write: the line never interleaves with the log's own lines. */
		(void)!write(STDERR_FILENO, out, (size_t)n);
	} else
		log_msg(LOG_INFO, "%s", line);
}

void heartbeat_announce(heartbeat *h)
{
	heartbeat_view v = { .pods = -1 };
	char line[1536];
	h->view(&v, h->userdata);
	heartbeat_monitoring_text(&v, logging_get_target() == LOGGING_STDERR, line, sizeof(line));
	emit(line);
}

static void beat(heartbeat *h, const char *hint)
{
	heartbeat_view v = { .pods = -1 };
	char line[1536];
	h->view(&v, h->userdata);
	heartbeat_text(&v, line, sizeof(line));
	if (hint) {
		size_t l = strlen(line);
		snprintf(line + l, sizeof(line) - l, "%s", hint);
	}
	emit(line);
}

void heartbeat_started(heartbeat *h)
{
	heartbeat_announce(h);
	/* In the foreground the first beat at once: a run with nothing to watch is not left silent
	 * for a minute, and it says how to get the next one. */
	if (h->timer) {
		char hint[96];
		snprintf(hint, sizeof(hint), "; the next in a minute, or on kill -USR1 %d; Ctrl-C stops", (int)getpid());
		beat(h, hint);
	}
}

void heartbeat_stopped(heartbeat *h, const char *why)
{
	heartbeat_view v = { .pods = -1 };
	char line[512];
	h->view(&v, h->userdata);
	heartbeat_stop_text(&v, why, clock_mono_usec() - h->started_usec, line, sizeof(line));
	emit(line);
}

static int on_sigusr1(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s, (void)si;
	beat(userdata, NULL);
	return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)usec;
	beat(userdata, NULL);
	(void)sd_event_source_set_time_relative(s, HEARTBEAT_PERIOD_USEC);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int heartbeat_new(sd_event *e, bool every_minute, heartbeat_view_fn fn, void *userdata, heartbeat **ret)
{
	heartbeat *h = calloc(1, sizeof(*h));
	sigset_t ss;
	int r;

	if (!h)
		return -ENOMEM;
	h->view = fn;
	h->userdata = userdata;
	h->started_usec = clock_mono_usec();
	sigemptyset(&ss);
	sigaddset(&ss, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		r = -errno;
	else
		r = sd_event_add_signal(e, &h->sigusr1, SIGUSR1, on_sigusr1, h);
	if (r >= 0 && every_minute)
		/* Coarse accuracy: a heartbeat need not wake the CPU at an exact second. */
		r = sd_event_add_time_relative(e, &h->timer, CLOCK_MONOTONIC, HEARTBEAT_PERIOD_USEC, USEC_PER_SEC,
		                               on_timer, h);
	if (r < 0) {
		heartbeat_free(h);
		return r;
	}
	*ret = h;
	return 0;
}

heartbeat *heartbeat_free(heartbeat *h)
{
	if (!h)
		return NULL;
	sd_event_source_disable_unref(h->sigusr1);
	sd_event_source_disable_unref(h->timer);
	free(h);
	return NULL;
}
