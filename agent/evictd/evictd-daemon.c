/* SPDX-License-Identifier: MIT */
/*
 * evictd as a service: the sd-event loop and its wake-up sources (the polling tick, PSI triggers,
 * inotify on memory.events), the configuration at start and on SIGHUP, SIGTERM's orderly stop,
 * the one-per-node lock and, at start, what a previous process left (victims.c). What one wake-up
 * does is engine.c's; what readers are told is status-out.c's.
 */
#include "evictd-state.h"
#include "engine.h"
#include "status-out.h"
#include "kubelet-watch.h"
#include "victims.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "spool.h"
#include "kube-spool.h"
#include "log.h"
#include "pidlock.h"
#include "psi-trigger.h"
#include "clock.h"

static void daemon_reload(evictd_daemon *d, const char *why);
static void on_kubelet_config_changed(void *userdata, const char *why);
static void setup_watches(evictd_daemon *d);

/* --- configuration: what the journal is told ---------------------------------------------- */

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
		return config_threshold_format(t, buf, size);
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
	ec.keep_records = true; /* victims.c replaces them with what follows the eviction */
	return evictor_set_config(d->ev, &ec);
}

/* --- wake-up sources -------------------------------------------------------------------------- */

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s, (void)usec;
	evictd_evaluate(userdata, "timer");
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
		log_error_errno(-EIO, "PSI trigger on %s reported an error; dropped, polling instead",
		                 what ? what : "?");
		(void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
		return 0;
	}
	evictd_evaluate(d, "psi");
	return 0;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ie, void *userdata)
{
	(void)s, (void)ie;
	evictd_evaluate(userdata, "cgroup-event");
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
			log_msg(LOG_NOTICE, "PSI trigger \"%s %" PRIu64 " %llu\" on %s not registered: %s; polling instead",
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
	daemon_reload(userdata, NULL);
	return 0;
}

static void on_kubelet_config_changed(void *userdata, const char *why)
{
	daemon_reload(userdata, why);
}

/* SIGHUP's work: the configuration re-read (transactionally), applied, logged; why is logged. */
static void daemon_reload(evictd_daemon *d, const char *why)
{
	if (d->stopping)
		return;
	if (why)
		log_msg(LOG_NOTICE, "Reloading the configuration: %s", why);
	(void)sd_notify(0, "RELOADING=1");
	config_error err = { 0 };
	evictd_config *n = NULL;
	int r = config_load(d->opts->config_path ? d->opts->config_path : EVICTD_CONFIG_PATH,
	                    d->opts->config_must_exist, &n, &err);
	if (r >= 0)
		r = config_apply_overrides(n, &d->opts->overrides);
	if (r < 0) {
		/* Transactional: the running configuration stays in force. */
		config_free(n);
		log_config_rejected(d, r, &err);
		/* Nothing read to compare with: the watch only follows. */
		kubelet_watch_arm(d->kubelet_watch, d->cfg->kubelet.config_path, NULL);
	} else if (kubelet_reload_refused(d->cfg, n)) {
		r = -EINVAL;
		/* The broken file was read: compare with it, or a refusal would reload again and again. */
		bool same = d->cfg->kubelet.config_path && n->kubelet.config_path &&
		            strcmp(d->cfg->kubelet.config_path, n->kubelet.config_path) == 0;
		kubelet_watch_arm(d->kubelet_watch, d->cfg->kubelet.config_path, same ? n->kubelet.stamp : NULL);
		config_free(n);
	} else {
		config_free(d->cfg);
		d->cfg = n;
		r = apply_config(d);
		if (r < 0)
			log_error_errno(r, "cannot apply the reloaded configuration");
		else
			log_config_loaded(d, "reloaded");
		engine_reconfigure(d);
		runtime_reconfigure(d->rt, d->cfg);
		setup_watches(d);
		/* Re-armed on every reload, the path changed or not: a stale watch is replaced. */
		kubelet_watch_arm(d->kubelet_watch, d->cfg->kubelet.config_path, d->cfg->kubelet.stamp);
	}
	d->dirty = true;
	d->want_for = NULL;
	d->quiet = false;
	d->last_status_line[0] = '\0';
	(void)sd_notify(0, "READY=1");
	evictd_evaluate(d, "reload");
	if (r >= 0)
		kubelet_log_notes(d);
	heartbeat_announce(d->heartbeat);
}


/* The runtime answered (a listing, a removal ended): the disk signals it held are decided again. */
static void on_runtime_changed(void *userdata)
{
	evictd_daemon *d = userdata;
	d->quiet = false;
	evictd_evaluate(d, "runtime");
}

static int on_shutdown_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s, (void)usec;
	evictd_daemon *d = userdata;
	log_msg(LOG_NOTICE, "stopping with %u eviction(s) still unfinished", evictor_count(d->ev));
	return sd_event_exit(d->event, 0);
}

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)s;
	evictd_daemon *d = userdata;
	if (d->stopping) /* a second SIGTERM/SIGINT: do not wait any longer */
		return sd_event_exit(d->event, 0);
	d->stopping = true;
	d->stop_signal = (int)si->ssi_signo;
	(void)sd_notify(0, "STOPPING=1");
	kube_spool_conditions_stopped(d->cfg, &d->eval, d->node_valid ? &d->node : NULL);
	(void)sd_event_source_set_enabled(d->tick, SD_EVENT_OFF);
	drop_watches(d);
	/* No pod may be left SIGTERMed but never killed: escalate what is in its grace period now
	 * and wait for the cgroups to empty (bounded by the kill/exec timeouts). */
	unsigned inflight = evictor_count(d->ev);
	if (inflight)
		log_msg(LOG_NOTICE, "Stopping: finishing %u eviction(s) in flight (pods still in their grace period "
		                  "are killed now, commands keep their timeout)", inflight);
	unsigned left = evictor_shutdown(d->ev);
	d->dirty = true;
	status_write(d, true);
	if (left == 0)
		return sd_event_exit(d->event, 0);
	uint64_t wait = d->cfg->exec_timeout_usec + 10ULL * 1000000ULL + SHUTDOWN_EXTRA_USEC;
	return sd_event_add_time_relative(d->event, &d->shutdown_timer, CLOCK_MONOTONIC, wait,
	                                  TICK_ACCURACY_USEC, on_shutdown_timeout, d);
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

/* --- entry points ----------------------------------------------------------------------------- */

static void heartbeat_view_of(heartbeat_view *v, void *userdata)
{
	evictd_daemon *d = userdata;
	*v = (heartbeat_view){
		.cfg = d->cfg, .node = d->node_valid ? &d->node : NULL, .eval = &d->eval,
		.pods = d->sc ? heartbeat_count_pods(scanner_root_fd(d->sc), d->cfg->pods) : -1,
		.in_flight = evictor_count(d->ev), .evictions = metrics_evictions_started(d->metrics),
		.reclaiming = reclaim_count(d->reclaim), .reclaimed = d->reclaimed, .reclaim_timeouts = d->reclaim_timeouts,
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
	if (!(d->run_dir = strdup(dir)))
		return -ENOMEM;
	if (asprintf(&d->inflight_dir, "%s/inflight", dir) < 0) {
		d->inflight_dir = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void daemon_done(evictd_daemon *d)
{
	drop_watches(d);
	d->kubelet_watch = kubelet_watch_free(d->kubelet_watch);
	sd_event_source_disable_unref(d->tick);
	sd_event_source_disable_unref(d->shutdown_timer);
	d->ev = evictor_free(d->ev);
	d->heartbeat = heartbeat_free(d->heartbeat);
	d->metrics = metrics_free(d->metrics);
	d->memo = pod_memo_free(d->memo);
	d->reclaim = reclaim_set_free(d->reclaim);
	d->rt = runtime_state_free(d->rt);
	engine_done(d);
	config_free(d->cfg);
	free(d->status_path);
	free(d->inflight_dir);
	free(d->run_dir);
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
		/* Said on stderr too when the entry goes to the journal (whoever started evictd reads
		 * stderr); in a terminal the entry is that line already. */
		if (logging_get_target() != LOGGING_STDERR)
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
	ec.keep_records = true;
	if (!(d.memo = pod_memo_new()) || !(d.reclaim = reclaim_set_new())) {
		r = -ENOMEM;
		goto fail;
	}
	/* The metrics before anything can end an eviction: a resumed one whose cgroup emptied while no
	 * evictd ran ends within victims_resume, and its end is counted (it was a NULL dereference). */
	if ((r = metrics_new(&d.metrics)) < 0)
		goto fail;
	if ((r = evictor_new(d.event, &ec, engine_on_eviction, &d, &d.ev)) < 0 || (r = apply_config(&d)) < 0)
		goto fail;
	victims_resume(&d);
	if ((r = engine_init(&d)) < 0 || (r = runtime_state_new(d.event, d.cfg, d.run_dir, on_runtime_changed, &d, &d.rt)) < 0)
		goto fail;
	runtime_start(d.rt, clock_mono_usec());
	/* In the foreground (a terminal, `make run`) a heartbeat every minute; the journal gets one on
	 * SIGUSR1 only, so that a service's log holds decisions, not a clock. */
	if ((r = heartbeat_new(d.event, logging_get_target() == LOGGING_STDERR, heartbeat_view_of, &d, &d.heartbeat)) < 0)
		goto fail;
	if ((r = sd_event_add_time_relative(d.event, &d.tick, CLOCK_MONOTONIC, 0, TICK_ACCURACY_USEC,
	                                    on_tick, &d)) < 0)
		goto fail;
	setup_watches(&d);
	/* Without inotify evictd still runs: the kubelet's files are then read at start and on reload. */
	if ((r = kubelet_watch_new(d.event, on_kubelet_config_changed, &d, &d.kubelet_watch)) < 0)
		log_error_errno(r, "cannot follow the kubelet's configuration (read at start and on reload only)");
	kubelet_watch_arm(d.kubelet_watch, d.cfg->kubelet.config_path, d.cfg->kubelet.stamp);
	/* In a terminal the "monitoring" line below says what this line would (thresholds, dry run)
	 * in the terms of this machine; the journal gets the entry, with its MESSAGE_ID and fields. */
	if (logging_get_target() != LOGGING_STDERR)
		log_config_loaded(&d, "loaded");
	evictd_evaluate(&d, "start");
	kubelet_log_notes(&d);
	kube_spool_conditions(d.cfg, &d.eval, &d.node, true);
	heartbeat_started(d.heartbeat);
	(void)sd_notify(0, "READY=1");

	r = sd_event_loop(d.event);
	status_write(&d, true);
	char sig[32] = "";
	if (d.stop_signal && sigabbrev_np(d.stop_signal))
		snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(d.stop_signal));
	heartbeat_stopped(d.heartbeat, sig[0] ? sig : NULL);
	daemon_done(&d);
	return r < 0 ? 1 : 0;
fail:
	fprintf(stderr, "evictd: cannot start: %s\n", strerror(-r));
	daemon_done(&d);
	return 1;
}
