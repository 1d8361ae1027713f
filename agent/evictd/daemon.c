/* SPDX-License-Identifier: MIT */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "cadence.h"
#include "cgdiscover.h"
#include "evict-log.h"
#include "evictor.h"
#include "heartbeat.h"
#include "kube-spool.h"
#include "spool.h"
#include "jsonbuf.h"
#include "log.h"
#include "metrics.h"
#include "node.h"
#include "pidlock.h"
#include "podmemo.h"
#include "scan.h"
#include "thresholds.h"
#include "decide.h"
#include "events.h"
#include "psi-trigger.h"
#include "status-file.h"

/* Timer accuracy for the polling ticks: coalescing saves wake-ups when idle. */
#define TICK_ACCURACY_USEC 1000ULL
/* While idle, signal-only changes refresh status.json at most this often. */
#define STATUS_IDLE_REFRESH_USEC (30ULL * 1000000ULL)
/* On SIGTERM, how long in-flight evictions get to finish before the daemon exits anyway. */
#define SHUTDOWN_EXTRA_USEC (2ULL * 1000000ULL)
#define MAX_WATCHES 8

typedef struct evictd_daemon {
	sd_event *event;
	const daemon_options *opts;
	evictd_config *cfg;
	evictor *ev;
	char *status_path;
	pod_memo *memo;             /* evicted pods and failing ones: not chosen (again) for now */
	int lock_fd;                /* one evictd per node (pidlock.h) */
	char *inflight_dir;         /* fixed at start: evictions in flight hold a pointer to it */

	sd_event_source *tick;
	sd_event_source *watches[MAX_WATCHES]; /* PSI triggers and inotify watches */
	size_t n_watches;
	sd_event_source *shutdown_timer;
	metrics *metrics;           /* counters, and the metrics-file when configured */
	heartbeat *heartbeat;       /* the "monitoring" line, SIGUSR1 and the foreground's minute beat */

	bool stopping;
	bool dirty;                 /* status.json must be rewritten now */
	uint64_t status_written_usec;
	status_history history;
	char last_eviction[400];    /* for STATUS= */
	char last_status_line[1024];
	uint32_t status_known_mask; /* the signals' known bits STATUS= was last built from */
	unsigned evaluations;

	/* what is observed (re-opened on reload: cgroup-root and proc-root may change) */
	cg_info cg;
	scanner *sc;
	int proc_fd;                /* for PSI triggers */
	const char *kubepods;
	node_signals node;
	bool node_valid;
	node_cache node_cache;      /* descriptors of the idle tick's reads */
	threshold_state ts;
	evaluation eval;
	bool status_error_logged;
	signal_report_state signal_report;

	/* the idle tick's shortcut (see evaluate) */
	const evictd_config *want_for; /* the configuration want[] was computed from; NULL: stale */
	bool want[_SIGNAL_MAX];        /* signals with a hard or soft threshold */
	bool quiet;                    /* last evaluation: nothing met, no condition, nothing changed */
	uint64_t quiet_wait_usec;      /* its cadence result */
	node_signals quiet_node;       /* the wanted signals it was computed from */
} evictd_daemon;

static void evaluate(evictd_daemon *d, const char *reason);
static void setup_watches(evictd_daemon *d);
static int engine_init(evictd_daemon *d);
static void engine_done(evictd_daemon *d);
static void engine_reconfigure(evictd_daemon *d);
static void status_json_observations(evictd_daemon *d, jsonbuf *j);
static void status_conditions_text(evictd_daemon *d, char *buf, size_t size);

static uint64_t mono_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

/* --- log -------------------------------------------------------------------------------------- */

static void log_daemon_error(evictd_daemon *d, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void log_daemon_notice(evictd_daemon *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The message, cut at 511 bytes, then ": suffix" when there is one. */
static void log_daemon_v(int priority, const char *suffix, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void log_daemon_v(int priority, const char *suffix, const char *fmt, va_list ap)
{
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (suffix)
		log_msg(priority, "%s: %s", msg, suffix);
	else
		log_msg(priority, "%s", msg);
}

static void log_daemon_error(evictd_daemon *d, int error, const char *fmt, ...)
{
	(void)d;
	va_list ap;
	va_start(ap, fmt);
	log_daemon_v(LOG_ERR, strerror(error < 0 ? -error : error), fmt, ap);
	va_end(ap);
}

static void log_daemon_notice(evictd_daemon *d, const char *fmt, ...)
{
	(void)d;
	va_list ap;
	va_start(ap, fmt);
	log_daemon_v(LOG_NOTICE, NULL, fmt, ap);
	va_end(ap);
}

static void log_config_rejected(evictd_daemon *d, int error, const config_error *err)
{
	log_entry e;
	log_entry_init(&e, LOG_ERR, MSGID_CONFIG_REJECTED);
	if (err->file[0])
		log_entry_add(&e, FIELD_CONFIG_FILE, "%s", err->file);
	if (err->line)
		log_entry_add(&e, FIELD_CONFIG_LINE, "%u", err->line);
	log_entry_add(&e, FIELD_REASON, "%s", err->msg[0] ? err->msg : strerror(-error));
	log_entry_send(&e, "Configuration rejected, %s: %s",
	               d->ev ? "keeping the running one" : "not starting",
	               err->text[0] ? err->text : strerror(-error));
}

static const char *format_threshold(const threshold_value *t, char *buf, size_t size)
{
	if (t->percent)
		return threshold_format(t, buf, size);
	return spool_quantity(t->quantity, buf, size); /* "100Mi", Kubernetes' canonical form */
}

/*
 * "hard memory.available<100Mi nodefs.available<10%; soft memory.available<500Mi/1m30s": an
 * operator who reloads wants to see the thresholds now in force, not just that a file was read.
 */
static void describe_thresholds(const evictd_config *c, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = '\0';
	for (int kind = 0; kind < 2; kind++) {
		bool first = true;
		for (int s = 0; s < _SIGNAL_MAX && l < size; s++) {
			const threshold_value *t = kind == 0 ? config_hard(c, (evictd_signal)s) : &c->soft[s];
			char v[48];
			if (!t || !t->set)
				continue;
			l += (size_t)snprintf(buf + l, size - l, "%s%s%s<%s", first ? (l ? "; " : "") : " ",
			                      first ? (kind == 0 ? "hard " : "soft ") : "",
			                      signal_name((evictd_signal)s), format_threshold(t, v, sizeof(v)));
			if (kind == 1 && l < size)
				l += (size_t)snprintf(buf + l, size - l, "/%llus",
				                      (unsigned long long)(c->soft_grace_usec[s] / USEC_PER_SEC));
			first = false;
		}
	}
	if (!buf[0])
		snprintf(buf, size, "no thresholds");
}

static void log_config_loaded(evictd_daemon *d, const char *how)
{
	char thresholds[1024];
	log_entry e;
	describe_thresholds(d->cfg, thresholds, sizeof(thresholds));
	log_entry_init(&e, LOG_INFO, MSGID_CONFIG_LOADED);
	log_entry_add(&e, FIELD_CONFIG_FILE, "%s", d->cfg->sources ? d->cfg->sources : "");
	log_entry_add(&e, FIELD_DRY_RUN, "%d", d->cfg->dry_run ? 1 : 0);
	log_entry_add(&e, FIELD_THRESHOLDS, "%s", thresholds);
	log_entry_send(&e, "Configuration %s (%s): %s%s", how,
	               d->cfg->sources && *d->cfg->sources ? d->cfg->sources : "defaults", thresholds,
	               d->cfg->dry_run ? "; dry run: nothing will be evicted" : "");
}

/* --- status: status.json and STATUS= -------------------------------------------------------- */

static void json_eviction(const evict_info *i, void *userdata)
{
	jsonbuf *j = userdata;
	char pod[320];
	snprintf(pod, sizeof(pod), "%s%s%s", i->namespace_, *i->namespace_ ? "/" : "", i->name);
	jb_begin_object(j);
	jb_key(j, "pod"), jb_string(j, pod);
	jb_key(j, "uid"), jb_string(j, i->uid);
	jb_key(j, "cgroup"), jb_string(j, i->cgroup_path);
	jb_key(j, "signal"), jb_string(j, i->signal);
	jb_key(j, "action"), jb_string(j, i->dry_run ? "dry-run" : i->exec ? "exec" : "kill");
	jb_key(j, "phase"), jb_string(j, evict_phase_to_string(i->phase));
	jb_key(j, "hard"), jb_bool(j, i->hard);
	jb_key(j, "priority"), jb_int(j, i->priority);
	jb_key(j, "grace_sec"), jb_uint(j, (i->grace_usec + 999999) / 1000000);
	jb_key(j, "started_usec"), jb_uint(j, i->started_real_usec);
	jb_key(j, "expected_reclaim"), jb_int(j, i->expected_reclaim);
	jb_key(j, "processes_signalled"), jb_int(j, i->procs_signalled);
	jb_key(j, "resumed"), jb_bool(j, i->resumed);
	jb_end_object(j);
}

static void json_decision(jsonbuf *j, const status_decision *d)
{
	jb_begin_object(j);
	jb_key(j, "time_usec"), jb_uint(j, d->realtime_usec);
	jb_key(j, "pod"), jb_string(j, d->pod);
	jb_key(j, "uid"), jb_string(j, d->uid);
	jb_key(j, "signal"), jb_string(j, d->signal);
	jb_key(j, "action"), jb_string(j, d->action);
	jb_key(j, "outcome"), jb_string(j, d->outcome);
	jb_key(j, "hard"), jb_bool(j, d->hard);
	jb_key(j, "priority"), jb_int(j, d->priority);
	jb_key(j, "grace_sec"), jb_uint(j, d->grace_sec);
	jb_key(j, "duration_usec"), jb_uint(j, d->duration_usec);
	jb_key(j, "reclaimed_bytes");
	if (d->reclaimed_bytes >= 0)
		jb_int(j, d->reclaimed_bytes);
	else
		jb_null(j);
	if (d->exec_status >= 0)
		jb_key(j, "exec_status"), jb_int(j, d->exec_status);
	jb_end_object(j);
}

/*
 * The status file's directory (/run/evictd) is created when missing: systemd's RuntimeDirectory=
 * does it for the service, but not for `make run`, a container or a test. Only the last
 * component: a missing /run means something else is wrong.
 */
static int make_status_dir(const char *path)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -ENOENT;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Rewrites status.json when something a reader cares about changed (conditions, evictions,
 * decisions, configuration: d->dirty), and otherwise at most every STATUS_IDLE_REFRESH_USEC so
 * that the signal figures stay fresh without costing idle CPU.
 */
static void write_status(evictd_daemon *d, bool force)
{
	uint64_t now = mono_usec();
	if (!force && !d->dirty && d->status_written_usec && now - d->status_written_usec < STATUS_IDLE_REFRESH_USEC)
		return;
	jsonbuf j;
	jb_init(&j, STATUS_MAX_BYTES);
	jb_begin_object(&j);
	jb_key(&j, "pid"), jb_int(&j, getpid());
	jb_key(&j, "state"), jb_string(&j, d->stopping ? "stopping" : "running");
	jb_key(&j, "dry_run"), jb_bool(&j, d->cfg->dry_run);
	jb_key(&j, "action"), jb_string(&j, d->cfg->action == ACTION_EXEC ? "exec" : "kill");
	jb_key(&j, "config"), jb_string(&j, d->cfg->sources);
	jb_key(&j, "updated_usec");
	{
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		jb_uint(&j, (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL);
	}
	status_json_observations(d, &j);
	jb_key(&j, "evictions");
	jb_begin_array(&j);
	evictor_foreach(d->ev, json_eviction, &j);
	jb_end_array(&j);
	jb_key(&j, "decisions");
	jb_begin_array(&j);
	for (size_t i = 0; status_history_get(&d->history, i); i++)
		json_decision(&j, status_history_get(&d->history, i));
	jb_end_array(&j);
	jb_end_object(&j);
	int r = jb_error(&j);
	if (r == 0) {
		r = atomic_write_file(d->status_path, j.buf, j.len);
		if (r == -ENOENT && make_status_dir(d->status_path) == 0)
			r = atomic_write_file(d->status_path, j.buf, j.len);
		if (r == 0) {
			d->status_written_usec = now;
			d->dirty = false;
		}
	}
	if (r < 0 && !d->status_error_logged) {
		log_daemon_error(d, r, "cannot write %s", d->status_path);
		d->status_error_logged = true; /* once, not every tick */
	} else if (r == 0)
		d->status_error_logged = false;
	jb_free(&j);
}

/* "monitoring memory.available pid.available; unavailable nodefs.available": what systemctl
 * status should tell an operator first is which thresholds can actually fire on this node. */
static void status_signals_text(evictd_daemon *d, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		bool first = true;
		for (int s = 0; s < _SIGNAL_MAX && l < size; s++) {
			const threshold_value *h = config_hard(d->cfg, (evictd_signal)s);
			if (!((h && h->set) || d->cfg->soft[s].set))
				continue;
			if (d->node_valid && d->node.s[s].known != (pass == 0))
				continue;
			if (!d->node_valid && pass == 1)
				continue;
			l += (size_t)snprintf(buf + l, size - l, "%s%s%s", first ? (l ? "; " : "") : " ",
			                      first ? (pass == 0 ? "monitoring " : "unavailable ") : "",
			                      signal_name((evictd_signal)s));
			first = false;
		}
	}
	if (!buf[0])
		snprintf(buf, size, "monitoring nothing");
}

static void notify_status(evictd_daemon *d)
{
	char line[1024], cond[128], signals[640];
	status_conditions_text(d, cond, sizeof(cond));
	status_signals_text(d, signals, sizeof(signals));
	snprintf(line, sizeof(line), "STATUS=%s%s; %u eviction(s) in progress; last eviction: %s; %s",
	         d->cfg->dry_run ? "dry-run; " : "", cond, evictor_count(d->ev),
	         d->last_eviction[0] ? d->last_eviction : "none", signals);
	if (strcmp(line, d->last_status_line) == 0)
		return; /* a datagram per tick would be idle CPU for nothing */
	snprintf(d->last_status_line, sizeof(d->last_status_line), "%s", line);
	(void)sd_notify(0, line);
}

/* --- evictions -------------------------------------------------------------------------------- */

static void on_eviction(evictor *ev, evict_event what, const evict_info *info, void *userdata)
{
	(void)ev;
	evictd_daemon *d = userdata;
	memo_verdict v = MEMO_IGNORED;
	uint64_t retry = 0;
	if (what == EVICT_EVENT_FINISHED)
		v = pod_memo_finished(d->memo, info, mono_usec(), d->cfg->retry_backoff_usec,
		                      d->cfg->retry_backoff_max_usec, &retry);
	if (v != MEMO_REPEATED_FAILURE) /* a pod failing again and again is reported once */
		evict_log(what, info);
	if (v == MEMO_FIRST_FAILURE)
		log_daemon_notice(d, "The eviction of %s%s%s is retried in %" PRIu64 "s at the earliest (the wait doubles "
		                  "up to %" PRIu64 "s; further failures are not logged); other pods are chosen meanwhile",
		                  info->namespace_, *info->namespace_ ? "/" : "", info->name, retry / USEC_PER_SEC,
		                  d->cfg->retry_backoff_max_usec / USEC_PER_SEC);
	if (what == EVICT_EVENT_STARTED)
		metrics_eviction_started(d->metrics);
	else if (what == EVICT_EVENT_FINISHED)
		metrics_eviction_finished(d->metrics, info->signal, info->hard, evict_outcome_to_string(info->outcome));
	bool record = (what == EVICT_EVENT_FINISHED && !info->dry_run) ||
	              (what == EVICT_EVENT_STARTED && info->dry_run);
	if (record) {
		status_decision sd = {
			.realtime_usec = info->started_real_usec,
			.hard = info->hard,
			.priority = info->priority,
			.grace_sec = (info->grace_usec + 999999) / 1000000,
			.duration_usec = info->duration_usec,
			.reclaimed_bytes = info->outcome == EVICT_DONE ? info->reclaimed_bytes : -1,
			.exec_status = info->exec_status,
		};
		snprintf(sd.pod, sizeof(sd.pod), "%s%s%s", info->namespace_, *info->namespace_ ? "/" : "",
		         info->name);
		snprintf(sd.uid, sizeof(sd.uid), "%s", info->uid);
		snprintf(sd.signal, sizeof(sd.signal), "%s", info->signal);
		snprintf(sd.action, sizeof(sd.action), "%s", info->dry_run ? "dry-run" : info->exec ? "exec" : "kill");
		snprintf(sd.outcome, sizeof(sd.outcome), "%s",
		         info->dry_run ? "would-evict" : evict_outcome_to_string(info->outcome));
		status_history_add(&d->history, &sd);
		snprintf(d->last_eviction, sizeof(d->last_eviction), "%s (%s, %s)", sd.pod, sd.signal, sd.outcome);
	}
	d->dirty = true;
	if (d->stopping && what == EVICT_EVENT_FINISHED && evictor_count(d->ev) == 0)
		(void)sd_event_exit(d->event, 0);
}

/* --- configuration ---------------------------------------------------------------------------- */

static void evict_config_from(const evictd_config *c, evict_config *ec)
{
	evict_config_init(ec);
	ec->dry_run = c->dry_run;
	ec->use_exec = c->action == ACTION_EXEC;
	ec->exec_argv = c->exec_argv;
	ec->exec_timeout_usec = c->exec_timeout_usec;
	ec->exec_fallback_kill = c->exec_fallback_kill;
}

static int apply_config(evictd_daemon *d)
{
	free(d->status_path);
	d->status_path = strdup(d->opts->status_file ? d->opts->status_file
	                        : d->cfg->status_file ? d->cfg->status_file : STATUS_FILE_DEFAULT);
	if (!d->status_path)
		return -ENOMEM;
	evict_config ec;
	evict_config_from(d->cfg, &ec);
	ec.inflight_dir = d->inflight_dir;
	return evictor_set_config(d->ev, &ec);
}

/* --- wake-up sources -------------------------------------------------------------------------- */

static void schedule_tick(evictd_daemon *d, uint64_t usec)
{
	(void)sd_event_source_set_time_relative(d->tick, usec);
	(void)sd_event_source_set_enabled(d->tick, SD_EVENT_ONESHOT);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s, (void)usec;
	evaluate(userdata, "timer");
	return 0;
}

static int on_psi(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	(void)fd;
	evictd_daemon *d = userdata;
	if (revents & EPOLLERR) {
		/* The monitored cgroup went away: an fd that keeps reporting errors would spin the loop. */
		const char *what = NULL;
		(void)sd_event_source_get_description(s, &what);
		log_daemon_error(d, -EIO, "PSI trigger on %s reported an error; dropped, polling instead",
		                 what ? what : "?");
		(void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
		return 0;
	}
	evaluate(d, "psi");
	return 0;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ie, void *userdata)
{
	(void)s, (void)ie;
	evaluate(userdata, "cgroup-event");
	return 0;
}

static void drop_watches(evictd_daemon *d)
{
	for (size_t i = 0; i < d->n_watches; i++)
		d->watches[i] = sd_event_source_disable_unref(d->watches[i]);
	d->n_watches = 0;
}

static void add_psi_watch(evictd_daemon *d, int dirfd, const char *name, const char *kind,
                          uint64_t stall_usec, const char *what)
{
	if (d->n_watches >= MAX_WATCHES || dirfd < 0)
		return;
	int fd = psi_trigger_open(dirfd, name, kind, stall_usec, PSI_WINDOW_UNIT_USEC);
	if (fd < 0) {
		if (fd != -ENOENT && fd != -EMEDIUMTYPE)
			log_daemon_notice(d, "PSI trigger \"%s %" PRIu64 " %llu\" on %s not registered: %s; polling instead",
			                  kind, stall_usec, PSI_WINDOW_UNIT_USEC, what, strerror(-fd));
		return;
	}
	sd_event_source *s = NULL;
	int r = sd_event_add_io(d->event, &s, fd, EPOLLPRI, on_psi, d);
	if (r < 0) {
		close(fd);
		return;
	}
	(void)sd_event_source_set_io_fd_own(s, 1);
	(void)sd_event_source_set_description(s, what);
	/* A trigger fires at most once per window anyway; this damps a misbehaving fd. */
	(void)sd_event_source_set_ratelimit(s, PSI_WINDOW_UNIT_USEC, 10);
	d->watches[d->n_watches++] = s;
}

static void add_inotify_watch(evictd_daemon *d, const char *path)
{
	if (d->n_watches >= MAX_WATCHES)
		return;
	sd_event_source *s = NULL;
	if (sd_event_add_inotify(d->event, &s, path, IN_MODIFY, on_inotify, d) >= 0)
		d->watches[d->n_watches++] = s;
}

/* --- signals: reload and stop ----------------------------------------------------------------- */

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s, (void)si;
	evictd_daemon *d = userdata;
	if (d->stopping)
		return 0;
	(void)sd_notify(0, "RELOADING=1");
	config_error err = { 0 };
	int r = config_reload(&d->cfg, d->opts->config_path ? d->opts->config_path : EVICTD_CONFIG_PATH,
	                      d->opts->config_must_exist, &d->opts->overrides, &err);
	if (r < 0) {
		/* Transactional: the running configuration stays in force. */
		log_config_rejected(d, r, &err);
	} else {
		r = apply_config(d);
		if (r < 0)
			log_daemon_error(d, r, "cannot apply the reloaded configuration");
		else
			log_config_loaded(d, "reloaded");
		engine_reconfigure(d);
		setup_watches(d);
	}
	d->dirty = true;
	d->want_for = NULL;
	d->quiet = false;
	d->last_status_line[0] = '\0';
	(void)sd_notify(0, "READY=1");
	evaluate(d, "reload");
	heartbeat_announce(d->heartbeat);
	return 0;
}

static int on_shutdown_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s, (void)usec;
	evictd_daemon *d = userdata;
	log_daemon_notice(d, "stopping with %u eviction(s) still unfinished", evictor_count(d->ev));
	return sd_event_exit(d->event, 0);
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s, (void)si;
	evictd_daemon *d = userdata;
	if (d->stopping) /* a second SIGTERM/SIGINT: do not wait any longer */
		return sd_event_exit(d->event, 0);
	d->stopping = true;
	(void)sd_notify(0, "STOPPING=1");
	(void)sd_event_source_set_enabled(d->tick, SD_EVENT_OFF);
	drop_watches(d);
	/* No pod may be left SIGTERMed but never killed: escalate what is in its grace period now
	 * and wait for the cgroups to empty (bounded by the kill/exec timeouts). */
	unsigned inflight = evictor_count(d->ev);
	if (inflight)
		log_daemon_notice(d, "Stopping: finishing %u eviction(s) in flight (pods still in their grace period "
		                  "are killed now, commands keep their timeout)", inflight);
	unsigned left = evictor_shutdown(d->ev);
	d->dirty = true;
	write_status(d, true);
	if (left == 0)
		return sd_event_exit(d->event, 0);
	uint64_t wait = d->cfg->exec_timeout_usec + 10ULL * 1000000ULL + SHUTDOWN_EXTRA_USEC;
	return sd_event_add_time_relative(d->event, &d->shutdown_timer, CLOCK_MONOTONIC, wait,
	                                  TICK_ACCURACY_USEC, on_shutdown_timeout, d);
}

/* --- observing and deciding ------------------------------------------------------------------ */

static void engine_done(evictd_daemon *d)
{
	node_cache_reset(&d->node_cache);
	d->sc = scanner_free(d->sc);
	if (d->proc_fd >= 0)
		close(d->proc_fd);
	d->proc_fd = -1;
	d->kubepods = NULL;
}

static int engine_init(evictd_daemon *d)
{
	d->proc_fd = -1;
	int r = cg_discover(d->cfg->cgroup_root, &d->cg);
	if (r < 0) {
		log_daemon_error(d, r, "cgroup root %s", d->cfg->cgroup_root ? d->cfg->cgroup_root : "auto");
		return r;
	}
	if (!d->cg.root[0])
		log_daemon_notice(d, "no cgroup v2 hierarchy (%s): pod signals are unavailable", cg_mode_name(d->cg.mode));
	r = scanner_new(d->cfg, &d->cg, &d->sc);
	if (r < 0) {
		log_daemon_error(d, r, "cannot set up the scanner");
		return r;
	}
	if (scanner_root_fd(d->sc) >= 0)
		d->kubepods = node_find_kubepods(scanner_root_fd(d->sc));
	d->proc_fd = open(d->cfg->proc_root ? d->cfg->proc_root : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

/* The scanner holds the configuration by pointer: after a reload it must follow the new one. */
static void engine_reconfigure(evictd_daemon *d)
{
	engine_done(d);
	if (engine_init(d) < 0)
		log_daemon_notice(d, "observing nothing until the next reload");
}

static void setup_watches(evictd_daemon *d)
{
	drop_watches(d);
	/* Wake-ups, not decisions: a memory stall (7.5% of 2 s for "some", 2.5% for "full") makes the
	 * daemon read its signals at once instead of at the next tick. */
	add_psi_watch(d, d->proc_fd, "pressure/memory", "some", 150000, "/proc/pressure/memory");
	add_psi_watch(d, d->proc_fd, "pressure/memory", "full", 50000, "/proc/pressure/memory");
	if (d->sc && scanner_root_fd(d->sc) >= 0 && d->kubepods) {
		char name[PATH_MAX];
		snprintf(name, sizeof(name), "%s/memory.pressure", d->kubepods);
		add_psi_watch(d, scanner_root_fd(d->sc), name, "some", 150000, name);
		add_psi_watch(d, scanner_root_fd(d->sc), name, "full", 50000, name);
		/* memory.events counts high/max/oom hits: the kernel's own "limit reached" signal. */
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s/%s/memory.events", d->cg.root, d->kubepods);
		add_inotify_watch(d, path);
	}
}

static void decide_and_act(evictd_daemon *d, const char *reason);

static bool anything_changed(const evaluation *e);

static void refresh_want(evictd_daemon *d)
{
	if (d->want_for == d->cfg)
		return;
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		const threshold_value *h = config_hard(d->cfg, (evictd_signal)s);
		d->want[s] = (h && h->set) || d->cfg->soft[s].set;
	}
	d->want_for = d->cfg;
}

static bool thresholded_signals_unchanged(const evictd_daemon *d)
{
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		const signal_obs *a = &d->node.s[s], *b = &d->quiet_node.s[s];
		if (d->want[s] && (a->known != b->known || a->available != b->available || a->capacity != b->capacity))
			return false;
	}
	return true;
}

/*
 * Nothing met, no condition on (so no grace or transition period is running), nothing changed and
 * nothing in flight: an evaluation of the same signal values would give the same result, whatever
 * the time.
 */
static bool evaluation_is_quiet(const evictd_daemon *d)
{
	if (anything_changed(&d->eval) || evictor_count(d->ev))
		return false;
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (d->eval.t[k][s].met || d->ts.met[k][s])
				return false;
	for (int c = 0; c < _CONDITION_MAX; c++)
		if (d->ts.condition[c] || d->eval.conditions[c])
			return false;
	return true;
}

static void evaluate(evictd_daemon *d, const char *reason)
{
	if (d->stopping)
		return;
	d->evaluations++;
	if (!d->sc)
		return;
	/*
	 * Only the node signals, and between status refreshes only those with a threshold: cheap
	 * enough for every tick (idle CPU budget). Pods are read when a threshold is actionable.
	 */
	refresh_want(d);
	bool full = !d->node_valid || d->dirty ||
	            mono_usec() - d->status_written_usec >= STATUS_IDLE_REFRESH_USEC;
	if (full || scanner_root_fd(d->sc) < 0) {
		/* By path: a filesystem mounted on nodefs-path since is seen here, and kept from now on. */
		node_cache_reset(&d->node_cache);
		scanner_scan_node(d->sc, &d->node);
	} else {
		node_sources src = {
			.cg_root_fd = scanner_root_fd(d->sc), .proc_fd = d->proc_fd, .cg = &d->cg,
			.kubepods = d->kubepods, .nodefs_path = d->cfg->nodefs_path,
			.imagefs_path = d->cfg->imagefs_path, .cache = &d->node_cache,
		};
		node_signals_read_some(&src, d->want, &d->node);
	}
	d->node_valid = true;
	uint64_t wait;
	if (d->quiet && !full && !evictor_count(d->ev) && thresholded_signals_unchanged(d)) {
		/* The idle tick: same inputs, same (empty) result; the evaluation is skipped. */
		wait = d->quiet_wait_usec;
	} else {
		decide_and_act(d, reason);
		/* The next read is due when a signal could reach a threshold at its fastest plausible rate. */
		wait = cadence_next_usec(d->cfg, &d->node, &d->eval, mono_usec());
		d->quiet = evaluation_is_quiet(d);
		if (d->quiet) {
			d->quiet_wait_usec = wait;
			for (int s = 0; s < _SIGNAL_MAX; s++)
				if (d->want[s]) {
					d->quiet_node.s[s].known = d->node.s[s].known;
					d->quiet_node.s[s].available = d->node.s[s].available;
					d->quiet_node.s[s].capacity = d->node.s[s].capacity;
				}
		}
	}
	schedule_tick(d, wait);
	log_flush_dropped();
	/* STATUS= depends on what sets d->dirty and on which signals are known: rebuilt only then. */
	uint32_t known = 0;
	for (int s = 0; s < _SIGNAL_MAX; s++)
		known |= (uint32_t)d->node.s[s].known << s;
	bool status_changed = d->dirty || known != d->status_known_mask || !d->last_status_line[0];
	write_status(d, false);
	if (status_changed) {
		d->status_known_mask = known;
		notify_status(d);
	}
	(void)metrics_update(d->metrics, d->cfg, &d->node, &d->eval, evictor_count(d->ev), mono_usec());
}

static void status_json_observations(evictd_daemon *d, jsonbuf *j)
{
	jb_key(j, "signals");
	jb_begin_array(j);
	for (int s = 0; d->node_valid && s < _SIGNAL_MAX; s++) {
		const signal_obs *o = &d->node.s[s];
		jb_begin_object(j);
		jb_key(j, "signal"), jb_string(j, signal_name((evictd_signal)s));
		jb_key(j, "unit"), jb_string(j, signal_unit((evictd_signal)s));
		if (!o->known) {
			jb_key(j, "available"), jb_null(j);
			jb_key(j, "reason"), jb_string(j, o->reason);
		} else {
			jb_key(j, "available"), jb_int(j, o->available);
			jb_key(j, "capacity"), jb_int(j, o->capacity);
		}
		const threshold_value *h = config_hard(d->cfg, (evictd_signal)s);
		jb_key(j, "hard_threshold");
		if (h && h->set && o->known)
			jb_int(j, threshold_resolve(h, o->capacity));
		else
			jb_null(j);
		jb_key(j, "soft_threshold");
		if (d->cfg->soft[s].set && o->known)
			jb_int(j, threshold_resolve(&d->cfg->soft[s], o->capacity));
		else
			jb_null(j);
		jb_key(j, "met"), jb_bool(j, d->eval.t[THRESHOLD_HARD][s].met || d->eval.t[THRESHOLD_SOFT][s].met);
		jb_end_object(j);
	}
	jb_end_array(j);
	jb_key(j, "conditions");
	jb_begin_array(j);
	for (int c = 0; c < _CONDITION_MAX; c++)
		if (d->eval.conditions[c])
			jb_string(j, condition_name((evictd_condition)c));
	jb_end_array(j);
}

static void status_conditions_text(evictd_daemon *d, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = '\0';
	for (int c = 0; c < _CONDITION_MAX; c++)
		if (d->eval.conditions[c] && l < size)
			l += (size_t)snprintf(buf + l, size - l, "%s%s", l ? ", " : "", condition_name((evictd_condition)c));
	if (!buf[0])
		snprintf(buf, size, "no pressure");
}

typedef struct uid_list {
	const char **uids;
	size_t n, cap;
} uid_list;

static void collect_uid(const evict_info *i, void *userdata)
{
	uid_list *l = userdata;
	if (l->n < l->cap)
		l->uids[l->n++] = i->uid;
}

static void start_evictions(evictd_daemon *d, const decision *dec, const snapshot *snap)
{
	for (size_t i = 0; i < dec->n_evict; i++) {
		const eviction_choice *c = &dec->evict[i];
		const pod_info *p = &snap->pods[c->pod];
		char path[PATH_MAX];
		if (snprintf(path, sizeof(path), "%s/%s", d->cg.root, p->cgroup) >= (int)sizeof(path))
			continue;
		evictd_rank_kind rk = signal_rank_kind(c->signal);
		evict_request rq = {
			.uid = p->uid, .namespace_ = p->namespace_, .name = p->name, .cgroup_path = path,
			.signal = signal_name(c->signal), .hard = c->kind == THRESHOLD_HARD,
			.grace_usec = c->grace_usec, .priority = p->priority,
			.usage = rk == RANK_PID ? (p->has_pids ? p->pids : -1)
			       : rk == RANK_DISK ? (p->has_disk ? p->disk_bytes : -1)
			       : rk == RANK_INODES ? (p->has_disk ? p->disk_inodes : -1)
			                            : (p->has_memory ? p->working_set : -1),
			.expected_reclaim = c->expected_reclaim > 0 ? c->expected_reclaim : 0,
		};
		spool_container ctr[POD_CONTAINERS_MAX];
		kube_spool_measure(d->cfg, path, p, c, ctr);
		int r = evictor_start(d->ev, &rq);
		if (r == 0)
			kube_spool_eviction(d->cfg, p, c, rq.usage, ctr);
		if (r < 0 && r != -EALREADY && r != -ESHUTDOWN)
			d->dirty = true; /* the failure was logged by the evictor callback */
	}
}

static bool anything_changed(const evaluation *e)
{
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (e->t[k][s].newly_met || e->t[k][s].cleared)
				return true;
	for (int c = 0; c < _CONDITION_MAX; c++)
		if (e->condition_changed[c])
			return true;
	return false;
}

static bool anything_actionable(const evaluation *e)
{
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (e->t[k][s].actionable)
				return true;
	return false;
}

static bool nodefs_actionable(const evaluation *e)
{
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		if (e->t[k][SIGNAL_NODEFS_AVAILABLE].actionable || e->t[k][SIGNAL_NODEFS_INODES_FREE].actionable)
			return true;
	return false;
}

/*
 * Thresholds are evaluated on the node signals alone; only when one is actionable does the full
 * scan (every pod cgroup, descriptors) run, followed by the decision and the evictions. An idle
 * node therefore costs one cheap read per tick.
 */
static void decide_and_act(evictd_daemon *d, const char *reason)
{
	(void)reason;
	uint64_t now = mono_usec();
	threshold_state trial = d->ts;
	evaluation ev;
	thresholds_evaluate(d->cfg, &d->node, &trial, now, &ev);
	events_log_signal_availability(&d->node, &d->signal_report);

	if (!anything_actionable(&ev)) {
		d->ts = trial;
		if (anything_changed(&ev)) {
			snapshot node_only = { .timestamp_usec = now, .node = d->node };
			events_log_evaluation(&ev, &node_only, d->cfg);
			kube_spool_thresholds(d->cfg, &ev, &node_only);
			d->dirty = true;
		}
		d->eval = ev;
		return;
	}

	const snapshot *snap = NULL;
	int r = scanner_scan(d->sc, now, &snap);
	metrics_observe_scan(d->metrics, mono_usec() - now);
	if (r < 0) {
		log_daemon_error(d, r, "scan failed");
		d->ts = trial;
		d->eval = ev;
		return;
	}
	/* Disk walks cost time per file: only when a nodefs threshold is to be acted on. */
	if (nodefs_actionable(&ev) && (r = scanner_measure_disk(d->sc, now)) < 0)
		log_daemon_error(d, r, "disk usage of pods not measured");
	uid_list inflight = { NULL, 0, evictor_count(d->ev) };
	if (inflight.cap && !(inflight.uids = calloc(inflight.cap, sizeof(*inflight.uids)))) {
		log_daemon_error(d, -ENOMEM, "decision skipped");
		return;
	}
	evictor_foreach(d->ev, collect_uid, &inflight);
	pod_memo_prune(d->memo, snap);
	const char **skip_uids = NULL, **skip_why = NULL;
	size_t n_skip = 0;
	if (pod_memo_skip_list(d->memo, now, &skip_uids, &skip_why, &n_skip) < 0) {
		free(inflight.uids);
		log_daemon_error(d, -ENOMEM, "decision skipped");
		return;
	}
	decide_input in = { .snap = snap, .cfg = d->cfg, .now_usec = now,
	                    .inflight_uids = inflight.uids, .n_inflight = inflight.n,
	                    .skip_uids = skip_uids, .skip_why = skip_why, .n_skip = n_skip };
	decision dec;
	r = decide(&in, &d->ts, &dec);
	free(inflight.uids);
	free(skip_uids);
	free(skip_why);
	if (r < 0) {
		log_daemon_error(d, r, "decision failed");
		d->ts = trial;
		d->eval = ev;
		return;
	}
	d->node = snap->node; /* fresher */
	d->eval = dec.eval;
	metrics_observe_decision(d->metrics, mono_usec() - now);
	events_log_decision(&dec, snap, d->cfg);
	kube_spool_thresholds(d->cfg, &dec.eval, snap);
	if (anything_changed(&dec.eval) || dec.n_evict)
		d->dirty = true;
	start_evictions(d, &dec, snap);
	decision_done(&dec);
}

/* --- entry points ----------------------------------------------------------------------------- */

static void heartbeat_view_of(heartbeat_view *v, void *userdata)
{
	evictd_daemon *d = userdata;
	*v = (heartbeat_view){
		.cfg = d->cfg, .node = d->node_valid ? &d->node : NULL, .eval = &d->eval,
		.pods = d->sc ? heartbeat_count_pods(scanner_root_fd(d->sc), d->cfg->pods) : -1,
		.in_flight = evictor_count(d->ev), .evictions = metrics_evictions_started(d->metrics),
	};
}

/* Before anything is signalled: a second evictd must not act on the same pods. */
static int take_lock(evictd_daemon *d)
{
	char dir[PATH_MAX];
	const char *status = d->opts->status_file ? d->opts->status_file
	                   : d->cfg->status_file ? d->cfg->status_file : STATUS_FILE_DEFAULT;
	snprintf(dir, sizeof(dir), "%s", d->cfg->run_dir ? d->cfg->run_dir : status);
	if (!d->cfg->run_dir) {
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir) {
			log_msg(LOG_ERR, "No run directory: status-file %s has no parent directory; set run-directory", status);
			return -EINVAL;
		}
		*slash = '\0';
	}
	pid_t holder = 0;
	int fd = pidlock_acquire(dir, &holder);
	if (fd < 0) {
		if (fd == -EWOULDBLOCK && holder > 0)
			log_msg(LOG_ERR, "Another evictd (pid %d) holds %s/evictd.lock: not starting", (int)holder, dir);
		else if (fd == -EWOULDBLOCK)
			log_msg(LOG_ERR, "Another evictd holds %s/evictd.lock: not starting", dir);
		else
			log_msg(LOG_ERR, "Cannot lock %s/evictd.lock: %s: not starting", dir, strerror(-fd));
		return fd;
	}
	d->lock_fd = fd;
	if (asprintf(&d->inflight_dir, "%s/inflight", dir) < 0) {
		d->inflight_dir = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void resume_one(const inflight_record *rec, void *userdata)
{
	evictd_daemon *d = userdata;
	int r = evictor_resume(d->ev, rec);
	if (r < 0) {
		log_daemon_error(d, r, "cannot resume the eviction of %s", rec->uid);
		(void)inflight_remove(d->inflight_dir, rec->uid);
	}
}

/* Evictions a previous process began are finished whatever the pressure is now. */
static void resume_inflight(evictd_daemon *d)
{
	int r = inflight_load(d->inflight_dir, resume_one, d);
	if (r < 0 && r != -ENOENT)
		log_daemon_error(d, r, "cannot read %s; evictions in flight before a restart are not resumed",
		                 d->inflight_dir);
	if (r > 0)
		d->dirty = true;
}

static void daemon_done(evictd_daemon *d)
{
	drop_watches(d);
	sd_event_source_disable_unref(d->tick);
	sd_event_source_disable_unref(d->shutdown_timer);
	d->ev = evictor_free(d->ev);
	d->heartbeat = heartbeat_free(d->heartbeat);
	d->metrics = metrics_free(d->metrics);
	d->memo = pod_memo_free(d->memo);
	engine_done(d);
	config_free(d->cfg);
	free(d->status_path);
	free(d->inflight_dir);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	sd_event_unref(d->event);
}

int daemon_run(const daemon_options *o)
{
	evictd_daemon d = { .opts = o, .proc_fd = -1, .lock_fd = -1, .node_cache = NODE_CACHE_INIT };
	config_error err = { 0 };
	int r = config_load(o->config_path ? o->config_path : EVICTD_CONFIG_PATH, o->config_must_exist,
	                    &d.cfg, &err);
	if (r >= 0)
		r = config_apply_overrides(d.cfg, &o->overrides);
	if (r < 0) {
		fprintf(stderr, "evictd: %s\n", err.text[0] ? err.text : strerror(-r));
		log_config_rejected(&d, r, &err);
		config_free(d.cfg);
		return 1;
	}
	if ((r = take_lock(&d)) < 0) {
		daemon_done(&d);
		return 1;
	}

	/* sd-event's signal sources need the signals blocked first (deps-and-style.md §3). */
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0) {
		r = -errno;
		goto fail;
	}
	if ((r = sd_event_new(&d.event)) < 0 ||
	    (r = sd_event_add_signal(d.event, NULL, SIGTERM, on_sigterm, &d)) < 0 ||
	    (r = sd_event_add_signal(d.event, NULL, SIGINT, on_sigterm, &d)) < 0 ||
	    (r = sd_event_add_signal(d.event, NULL, SIGHUP, on_sighup, &d)) < 0)
		goto fail;
	/* WATCHDOG=1 at half of WatchdogSec, from the loop itself: a stuck loop stops the pings. */
	(void)sd_event_set_watchdog(d.event, 1);

	evict_config ec;
	evict_config_from(d.cfg, &ec);
	ec.inflight_dir = d.inflight_dir;
	if (!(d.memo = pod_memo_new())) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = evictor_new(d.event, &ec, on_eviction, &d, &d.ev)) < 0 || (r = apply_config(&d)) < 0)
		goto fail;
	resume_inflight(&d);
	if ((r = engine_init(&d)) < 0)
		goto fail;
	/* In the foreground (a terminal, `make run`) a heartbeat every minute; the journal gets one on
	 * SIGUSR1 only, so that a service's log holds decisions, not a clock. */
	if ((r = metrics_new(&d.metrics)) < 0 ||
	    (r = heartbeat_new(d.event, log_get_target() == LOG_TARGET_STDERR, heartbeat_view_of, &d, &d.heartbeat)) < 0)
		goto fail;
	if ((r = sd_event_add_time_relative(d.event, &d.tick, CLOCK_MONOTONIC, 0, TICK_ACCURACY_USEC,
	                                    on_tick, &d)) < 0)
		goto fail;
	setup_watches(&d);
	/* In a terminal the "monitoring" line below says what this line would (thresholds, dry run)
	 * in the terms of this machine; the journal gets the entry, with its MESSAGE_ID and fields. */
	if (log_get_target() != LOG_TARGET_STDERR)
		log_config_loaded(&d, "loaded");
	evaluate(&d, "start");
	heartbeat_announce(d.heartbeat);
	(void)sd_notify(0, "READY=1");

	r = sd_event_loop(d.event);
	write_status(&d, true);
	daemon_done(&d);
	return r < 0 ? 1 : 0;
fail:
	fprintf(stderr, "evictd: cannot start: %s\n", strerror(-r));
	daemon_done(&d);
	return 1;
}
