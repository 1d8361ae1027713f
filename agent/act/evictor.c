/* SPDX-License-Identifier: MIT */
/*
 * Over ~600 lines on purpose: one eviction is one state machine (signal walk -> grace -> kill ->
 * wait for an empty cgroup, or the exec command with its timeout and fallback), and its phases
 * share the timers, the fds and the in-flight record; split by phase, each file would reach into
 * the others' state. The kernel primitives are cgkill.c and cgwalk.c; the record, inflight.c.
 */
#include "evictor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgfs.h"
#include "cgkill.h"
#include "cgwalk.h"
#include "exec-argv.h"
#include "log.h"
#include "clock.h"

/* Timers fire within 1 ms: sd-event's default accuracy (250 ms) would eat the latency budget. */
#define TIMER_ACCURACY_USEC 1000ULL
#define DRY_RUN_MIN_USEC 1000000ULL

typedef struct eviction eviction;
struct eviction {
	eviction *next;
	evictor *owner;
	char *uid, *namespace_, *name, *cgroup_path, *signal;
	evict_config cfg; /* exec_argv is not used after the start: argv is expanded then */
	evict_info info;
	int dirfd;
	sd_event_source *deadline, *recheck, *inotify, *child, *errpipe;
	int err_fd;
	pid_t child_pid;
	size_t stderr_len;
	/* the signal walk in progress (SIGTERM, or SIGKILL without cgroup.kill), a few sub-cgroups
	 * per loop turn from an idle-priority defer source */
	cg_walk *walk;
	sd_event_source *walk_src;
	bool started_emitted;
	bool persisted; /* an in-flight record exists on disk */
	reclaim_entry *reclaim; /* recorded with it (the caller's reclaim tracking), NULL: none */
	unsigned failures;
	bool refused;           /* the API server refused it meanwhile (evictor_note_refusal) */
	uint64_t retry_mono_usec;
	inflight_phase recorded; /* the phase of the record on disk */
};

struct evictor {
	sd_event *event;
	evict_config cfg;
	evict_callback cb;
	void *userdata;
	eviction *head;
	unsigned count;
	bool shutting_down;
};

void evict_config_init(evict_config *c)
{
	*c = (evict_config){
		.exec_timeout_usec = 30ULL * 1000000ULL,
		.kill_timeout_usec = 10ULL * 1000000ULL,
		.recheck_usec = 500000ULL,
		.walk_dirs_per_turn = 64,
	};
}

const char *evict_phase_to_string(evict_phase p)
{
	switch (p) {
	case EVICT_PHASE_TERMINATING: return "terminating";
	case EVICT_PHASE_KILLING:     return "killing";
	case EVICT_PHASE_EXEC:        return "exec";
	case EVICT_PHASE_WAITING:     return "waiting";
	case EVICT_PHASE_DRY_RUN:     return "dry-run";
	}
	return "unknown";
}

const char *evict_outcome_to_string(evict_outcome o)
{
	switch (o) {
	case EVICT_RUNNING:     return "running";
	case EVICT_DONE:        return "done";
	case EVICT_TIMEOUT:     return "timeout";
	case EVICT_FAILED:      return "failed";
	case EVICT_DRY:         return "dry-run";
	case EVICT_HANDED_OVER: return "handed-over";
	case EVICT_GONE:        return "gone";
	case EVICT_EMPTY:       return "empty";
	}
	return "unknown";
}

static void emit(eviction *x, evict_event what)
{
	if (x->owner->cb)
		x->owner->cb(x->owner, what, &x->info, x->owner->userdata);
}

static void unlink_eviction(eviction *x)
{
	evictor *ev = x->owner;
	for (eviction **p = &ev->head; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			ev->count--;
			return;
		}
}

static void eviction_free(eviction *x)
{
	if (!x)
		return;
	sd_event_source_disable_unref(x->deadline);
	sd_event_source_disable_unref(x->recheck);
	sd_event_source_disable_unref(x->inotify);
	sd_event_source_disable_unref(x->errpipe);
	sd_event_source_disable_unref(x->walk_src);
	cg_walk_free(x->walk);
	if (x->child) {
		/* Only reachable when the evictor is freed with a command still running. */
		if (x->child_pid > 0 && x->info.exec_status < 0)
			kill(-x->child_pid, SIGKILL);
		sd_event_source_disable_unref(x->child);
	}
	if (x->err_fd >= 0)
		close(x->err_fd);
	if (x->dirfd >= 0)
		close(x->dirfd);
	free(x->uid);
	free(x->namespace_);
	free(x->name);
	free(x->cgroup_path);
	free(x->signal);
	free(x->reclaim);
	free(x);
}

/* The deadline on another clock (CLOCK_REALTIME, CLOCK_BOOTTIME): what a restarted evictd reads. */
static uint64_t deadline_on(const eviction *x, clockid_t clock)
{
	uint64_t now = clock_mono_usec();
	uint64_t left = x->info.deadline_mono_usec > now ? x->info.deadline_mono_usec - now : 0;
	return clock_usec_on(clock) + left;
}

static uint64_t started_on_boot_clock(const eviction *x)
{
	uint64_t age = clock_mono_usec() - x->info.started_mono_usec, now = clock_usec_on(CLOCK_BOOTTIME);
	return now > age ? now - age : 0;
}

/*
 * Recorded before the signal it announces goes out: a crash between the two then costs the pod
 * its SIGTERM (cgroup.kill still comes at the deadline), never a second one.
 */
static void persist(eviction *x, inflight_phase phase)
{
	if (!x->cfg.inflight_dir || x->info.dry_run)
		return;
	inflight_record *r = calloc(1, sizeof(*r));
	if (!r)
		return;
	snprintf(r->uid, sizeof(r->uid), "%s", x->uid);
	snprintf(r->namespace_, sizeof(r->namespace_), "%s", x->namespace_);
	snprintf(r->name, sizeof(r->name), "%s", x->name);
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", x->cgroup_path);
	snprintf(r->signal, sizeof(r->signal), "%s", x->signal);
	r->hard = x->info.hard;
	r->exec = x->info.exec;
	r->priority = x->info.priority;
	r->grace_usec = x->info.grace_usec;
	r->usage = x->info.usage;
	r->expected_reclaim = x->info.expected_reclaim;
	r->phase = phase;
	r->started_real_usec = x->info.started_real_usec;
	r->deadline_real_usec = deadline_on(x, CLOCK_REALTIME);
	r->has_boot_clock = true;
	r->started_boot_usec = started_on_boot_clock(x);
	r->deadline_boot_usec = deadline_on(x, CLOCK_BOOTTIME);
	r->version = INFLIGHT_VERSION;
	r->has_reclaim = x->reclaim != NULL;
	if (x->reclaim)
		r->reclaim = *x->reclaim;
	r->failures = x->failures;
	r->refused = x->refused;
	r->retry_mono_usec = x->retry_mono_usec;
	x->recorded = phase;
	int k = inflight_save(x->cfg.inflight_dir, r);
	if (k < 0)
		log_msg(LOG_WARNING, "Eviction of %s not recorded in %s (%s): a crash now would leave it unfinished",
		        x->uid, x->cfg.inflight_dir, strerror(-k));
	else
		x->persisted = true;
	free(r);
}

static void stop_walk(eviction *x)
{
	if (x->walk) {
		if (x->info.phase == EVICT_PHASE_TERMINATING)
			x->info.procs_signalled = (int)cg_walk_signalled(x->walk);
		if (!x->info.walk_error)
			x->info.walk_error = cg_walk_error(x->walk);
		x->info.walk_skipped += cg_walk_skipped(x->walk);
	}
	x->walk_src = sd_event_source_disable_unref(x->walk_src);
	x->walk = cg_walk_free(x->walk);
}

static void finish(eviction *x, evict_outcome outcome, int error)
{
	stop_walk(x);
	if (x->persisted && !x->cfg.keep_records)
		(void)inflight_remove(x->cfg.inflight_dir, x->uid);
	x->info.outcome = outcome;
	x->info.error = error;
	x->info.duration_usec = clock_mono_usec() - x->info.started_mono_usec;
	unlink_eviction(x);
	emit(x, EVICT_EVENT_FINISHED);
	eviction_free(x);
}

static int arm_deadline(eviction *x, uint64_t usec_from_now);
static int arm_recheck(eviction *x);

/* Returns true (and finishes x) when the pod cgroup has no process left. */
static bool check_empty(eviction *x)
{
	int r = cg_populated(x->dirfd);
	if (r == 0 || r == -ENOENT || r == -ENODEV) {
		finish(x, EVICT_DONE, 0);
		return true;
	}
	return false;
}

static void start_walk(eviction *x, int sig);

/*
 * The end of every grace period, whatever the SIGTERM walk met: cgroup.kill, which the kernel
 * applies to the whole subtree (frozen, threaded and "."-named sub-cgroups included), or without
 * it SIGKILL passes repeated until the cgroup is empty.
 */
static void escalate(eviction *x, evict_kill_cause why)
{
	if (x->info.phase == EVICT_PHASE_KILLING)
		return;
	stop_walk(x); /* a SIGTERM walk still running is moot now */
	x->info.phase = EVICT_PHASE_KILLING;
	x->info.sigkilled = true;
	x->info.kill_cause = why;
	x->info.deadline_mono_usec = clock_mono_usec() + x->cfg.kill_timeout_usec;
	persist(x, INFLIGHT_KILLING);
	int r = x->cfg.no_cgroup_kill ? -ENOENT : cg_kill(x->dirfd);
	x->info.cgroup_kill = r == 0;
	if (r < 0) /* no cgroup.kill (Linux < 5.14, or a fixture): SIGKILL every process we can see */
		start_walk(x, SIGKILL);
	if (!x->started_emitted) {
		/* the eviction's first line says the kill: ESCALATED must not say it a second time */
		x->started_emitted = true;
		x->info.kill_announced = true;
		emit(x, EVICT_EVENT_STARTED);
	}
	emit(x, EVICT_EVENT_ESCALATED);
	if (check_empty(x))
		return;
	if (arm_deadline(x, x->cfg.kill_timeout_usec) < 0 || arm_recheck(x) < 0)
		finish(x, EVICT_FAILED, -ENOMEM);
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s, (void)usec;
	eviction *x = userdata;
	switch (x->info.phase) {
	case EVICT_PHASE_TERMINATING:
		if (!check_empty(x))
			escalate(x, EVICT_KILL_GRACE_OVER);
		break;
	case EVICT_PHASE_KILLING:
	case EVICT_PHASE_WAITING:
		if (!check_empty(x))
			finish(x, EVICT_TIMEOUT, -ETIMEDOUT);
		break;
	case EVICT_PHASE_EXEC:
		/* The command overran its timeout: kill its process group; its exit completes this. */
		if (x->child_pid > 0)
			kill(-x->child_pid, SIGKILL);
		break;
	case EVICT_PHASE_DRY_RUN:
		finish(x, EVICT_DRY, 0);
		break;
	}
	return 0;
}

static int arm_deadline(eviction *x, uint64_t usec_from_now)
{
	x->info.deadline_mono_usec = clock_mono_usec() + usec_from_now;
	if (x->deadline) {
		int r = sd_event_source_set_time(x->deadline, x->info.deadline_mono_usec);
		return r < 0 ? r : sd_event_source_set_enabled(x->deadline, SD_EVENT_ONESHOT);
	}
	return sd_event_add_time(x->owner->event, &x->deadline, CLOCK_MONOTONIC,
	                         x->info.deadline_mono_usec, TIMER_ACCURACY_USEC, on_deadline, x);
}

static int on_recheck(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)usec;
	eviction *x = userdata;
	if (x->info.phase == EVICT_PHASE_EXEC || x->info.phase == EVICT_PHASE_DRY_RUN)
		return 0;
	if (check_empty(x))
		return 0;
	/* Without cgroup.kill a process forked after our SIGKILL pass would survive: repeat it. */
	if (x->info.phase == EVICT_PHASE_KILLING && !x->info.cgroup_kill && !x->walk)
		start_walk(x, SIGKILL);
	(void)sd_event_source_set_time_relative(s, x->cfg.recheck_usec);
	(void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

/* cgroup.events is re-read periodically too: inotify is unavailable on some trees (and fixtures). */
static int arm_recheck(eviction *x)
{
	if (x->recheck) {
		int r = sd_event_source_set_time_relative(x->recheck, x->cfg.recheck_usec);
		return r < 0 ? r : sd_event_source_set_enabled(x->recheck, SD_EVENT_ONESHOT);
	}
	return sd_event_add_time_relative(x->owner->event, &x->recheck, CLOCK_MONOTONIC,
	                                  x->cfg.recheck_usec, TIMER_ACCURACY_USEC, on_recheck, x);
}

static int on_events_modified(sd_event_source *s, const struct inotify_event *ie, void *userdata)
{
	(void)s, (void)ie;
	eviction *x = userdata;
	if (x->info.phase != EVICT_PHASE_EXEC && x->info.phase != EVICT_PHASE_DRY_RUN)
		(void)check_empty(x);
	return 0;
}

static void watch_events(eviction *x)
{
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/cgroup.events", x->cgroup_path) >= (int)sizeof(path))
		return;
	/* Best effort: the recheck timer covers a failed watch. */
	(void)sd_event_add_inotify(x->owner->event, &x->inotify, path, IN_MODIFY, on_events_modified, x);
}

/*
 * SIGTERM to every process, then escalation when the grace ends. STARTED is emitted (when asked)
 * after the signals went out: logging must not delay them. x may be gone on return.
 */
static int on_walk(sd_event_source *s, void *userdata);

/* Runs the first turn of the walk at once (the common pod is done in it), the rest from the loop. */
static void start_walk(eviction *x, int sig)
{
	stop_walk(x);
	int r = cg_walk_new(x->dirfd, sig, getpid(), CG_WALK_THAW, &x->walk);
	if (r < 0) {
		if (!x->info.walk_error)
			x->info.walk_error = r;
		return;
	}
	r = cg_walk_step(x->walk, x->cfg.walk_dirs_per_turn);
	if (r > 0 && sd_event_add_defer(x->owner->event, &x->walk_src, on_walk, x) >= 0) {
		(void)sd_event_source_set_priority(x->walk_src, SD_EVENT_PRIORITY_IDLE);
		(void)sd_event_source_set_enabled(x->walk_src, SD_EVENT_ON);
		if (x->info.phase == EVICT_PHASE_TERMINATING)
			x->info.procs_signalled = (int)cg_walk_signalled(x->walk);
		return;
	}
	if (r < 0 && !x->info.walk_error)
		x->info.walk_error = r;
	stop_walk(x);
}

static void maybe_emit_started(eviction *x)
{
	if (!x->started_emitted && (!x->walk || cg_walk_first_pass_done(x->walk))) {
		x->started_emitted = true;
		emit(x, EVICT_EVENT_STARTED);
	}
}

static int on_walk(sd_event_source *s, void *userdata)
{
	(void)s;
	eviction *x = userdata;
	int r = cg_walk_step(x->walk, x->cfg.walk_dirs_per_turn);
	if (r < 0 && !x->info.walk_error)
		x->info.walk_error = r;
	if (x->info.phase == EVICT_PHASE_TERMINATING)
		x->info.procs_signalled = (int)cg_walk_signalled(x->walk);
	if (r <= 0)
		stop_walk(x);
	if (x->info.phase == EVICT_PHASE_TERMINATING)
		maybe_emit_started(x);
	else if (r <= 0)
		(void)check_empty(x); /* a SIGKILL pass ended: the pod may be gone */
	return 0;
}

/*
 * SIGTERM to every process (incrementally, see start_walk), then escalation when the grace ends.
 * STARTED is emitted (when asked) once the first pass is over: it reports how many processes got
 * SIGTERM, and logging must not delay the signals. A hard eviction has no grace: cgroup.kill at
 * once, no SIGTERM walk to wait for. x may be gone on return.
 */
static void start_kill(eviction *x, bool emit_started)
{
	x->info.phase = EVICT_PHASE_TERMINATING;
	x->started_emitted = !emit_started;
	if (!x->inotify)
		watch_events(x);
	if (x->info.grace_usec == 0) {
		escalate(x, EVICT_KILL_NO_GRACE);
		return;
	}
	x->info.deadline_mono_usec = clock_mono_usec() + x->info.grace_usec;
	persist(x, INFLIGHT_TERMINATING);
	start_walk(x, SIGTERM);
	maybe_emit_started(x);
	if (check_empty(x))
		return;
	if (arm_deadline(x, x->info.grace_usec) < 0 || arm_recheck(x) < 0)
		finish(x, EVICT_FAILED, -ENOMEM);
}

static void drain_stderr(eviction *x)
{
	if (x->err_fd < 0)
		return;
	char buf[1024];
	for (;;) {
		ssize_t n = read(x->err_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN) {
				x->errpipe = sd_event_source_disable_unref(x->errpipe);
				close(x->err_fd);
				x->err_fd = -1;
			}
			return;
		}
		/* Keep only the tail: the end of a failing command's output says why it failed. */
		size_t cap = sizeof(x->info.exec_stderr) - 1, add = (size_t)n;
		if (add >= cap) {
			memcpy(x->info.exec_stderr, buf + add - cap, cap);
			x->stderr_len = cap;
		} else {
			if (x->stderr_len + add > cap) {
				size_t drop = x->stderr_len + add - cap;
				memmove(x->info.exec_stderr, x->info.exec_stderr + drop, x->stderr_len - drop);
				x->stderr_len -= drop;
			}
			memcpy(x->info.exec_stderr + x->stderr_len, buf, add);
			x->stderr_len += add;
		}
		x->info.exec_stderr[x->stderr_len] = '\0';
	}
}

static int on_stderr(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	(void)s, (void)fd, (void)revents;
	drain_stderr(userdata);
	return 0;
}

static int on_child(sd_event_source *s, const siginfo_t *si, void *userdata)
{
	(void)s;
	eviction *x = userdata;
	x->info.exec_status = si->si_code == CLD_EXITED ? si->si_status : 128 + si->si_status;
	x->child_pid = 0;
	drain_stderr(x);
	emit(x, EVICT_EVENT_EXEC_DONE);
	if (x->info.exec_status == 0) {
		/* The command accepted the eviction (e.g. the API server will delete the pod): keep the
		 * pod tracked until its cgroup empties, so it is not chosen again meanwhile. */
		x->info.phase = EVICT_PHASE_WAITING;
		if (x->dirfd < 0 || check_empty(x))
			return x->dirfd < 0 ? (finish(x, EVICT_DONE, 0), 0) : 0;
		if (!x->inotify)
			watch_events(x);
		if (arm_deadline(x, x->info.grace_usec + x->cfg.kill_timeout_usec) < 0 || arm_recheck(x) < 0)
			finish(x, EVICT_FAILED, -ENOMEM);
		return 0;
	}
	if (x->cfg.exec_fallback_kill && x->dirfd >= 0) {
		x->info.exec = false;
		x->info.started_mono_usec = clock_mono_usec();
		start_kill(x, false);
		return 0;
	}
	finish(x, EVICT_FAILED, 0);
	return 0;
}

static void grace_string(uint64_t usec, char *buf, size_t size)
{
	snprintf(buf, size, "%llu", (unsigned long long)((usec + 999999ULL) / 1000000ULL));
}

static int start_exec(eviction *x, char *const *conf_argv)
{
	char grace[32];
	grace_string(x->info.grace_usec, grace, sizeof(grace));
	exec_vars vars = { x->namespace_, x->name, x->uid, grace };
	char **argv = NULL;
	int r = exec_argv_expand(conf_argv, &vars, &argv);
	if (r < 0)
		return r;

	int p[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	bool fa_init = false, at_init = false;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = -errno;
		goto out;
	}
	if ((r = -posix_spawn_file_actions_init(&fa)) < 0)
		goto out;
	fa_init = true;
	if ((r = -posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) < 0 ||
	    (r = -posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0)) < 0 ||
	    (r = -posix_spawn_file_actions_adddup2(&fa, p[1], 2)) < 0)
		goto out;
	if ((r = -posix_spawnattr_init(&at)) < 0)
		goto out;
	at_init = true;
	/* The daemon blocks the signals sd-event handles; the command must start with a clean slate,
	 * and in its own process group so that a timeout kills helpers it spawned too. */
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	if ((r = -posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
	                                             POSIX_SPAWN_SETPGROUP)) < 0 ||
	    (r = -posix_spawnattr_setsigmask(&at, &none)) < 0 ||
	    (r = -posix_spawnattr_setsigdefault(&at, &all)) < 0 ||
	    (r = -posix_spawnattr_setpgroup(&at, 0)) < 0)
		goto out;
	extern char **environ;
	pid_t pid;
	/* A restarted daemon must not run the command again: recorded before it starts. */
	x->info.exec = true;
	x->info.deadline_mono_usec = clock_mono_usec() + x->cfg.exec_timeout_usec +
	                             x->info.grace_usec + x->cfg.kill_timeout_usec;
	persist(x, INFLIGHT_EXEC);
	r = -posix_spawn(&pid, argv[0], &fa, &at, argv, environ);
	if (r < 0)
		goto out;
	close(p[1]);
	p[1] = -1;
	x->err_fd = p[0];
	p[0] = -1;
	x->child_pid = pid;
	x->info.exec_status = -1;
	x->info.phase = EVICT_PHASE_EXEC;
	r = sd_event_add_child(x->owner->event, &x->child, pid, WEXITED, on_child, x);
	if (r < 0) {
		kill(-pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		x->child_pid = 0;
		goto out;
	}
	(void)sd_event_add_io(x->owner->event, &x->errpipe, x->err_fd, EPOLLIN, on_stderr, x);
	r = arm_deadline(x, x->cfg.exec_timeout_usec);
out:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (fa_init)
		posix_spawn_file_actions_destroy(&fa);
	if (at_init)
		posix_spawnattr_destroy(&at);
	exec_argv_free(argv);
	return r;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/* A new tracked eviction (not started), or NULL with *ret_error set. */
static eviction *eviction_new(evictor *ev, const evict_request *req, int *ret_error)
{
	*ret_error = -EINVAL;
	if (!ev || !req || !req->uid || !*req->uid || !req->cgroup_path || req->cgroup_path[0] != '/')
		return NULL;
	*ret_error = -ESHUTDOWN;
	if (ev->shutting_down)
		return NULL;
	*ret_error = -EALREADY;
	if (evictor_contains(ev, req->uid))
		return NULL;
	*ret_error = -ENOMEM;
	eviction *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->owner = ev;
	x->dirfd = -1;
	x->err_fd = -1;
	x->cfg = ev->cfg;
	x->uid = strdup(req->uid);
	x->namespace_ = dup_or_empty(req->namespace_);
	x->name = strdup(req->name && *req->name ? req->name : req->uid);
	x->cgroup_path = strdup(req->cgroup_path);
	x->signal = dup_or_empty(req->signal);
	x->failures = req->failures;
	x->refused = false;
	if (req->reclaim && (x->reclaim = malloc(sizeof(*x->reclaim))))
		*x->reclaim = *req->reclaim;
	if (!x->uid || !x->namespace_ || !x->name || !x->cgroup_path || !x->signal || (req->reclaim && !x->reclaim)) {
		eviction_free(x);
		return NULL;
	}
	x->info = (evict_info){
		.uid = x->uid, .namespace_ = x->namespace_, .name = x->name,
		.cgroup_path = x->cgroup_path, .signal = x->signal,
		.hard = req->hard, .dry_run = ev->cfg.dry_run, .exec = ev->cfg.use_exec,
		.priority = req->priority,
		.grace_usec = req->hard ? 0 : req->grace_usec,
		.usage = req->usage, .expected_reclaim = req->expected_reclaim,
		.started_mono_usec = clock_mono_usec(),
		.started_real_usec = clock_wall_usec(),
		.exec_status = -1, .reclaimed_bytes = -1,
	};
	/* Tracked from here on: callbacks below may look at the tracker. */
	x->next = NULL;
	eviction **tail = &ev->head;
	while (*tail)
		tail = &(*tail)->next;
	*tail = x;
	ev->count++;
	*ret_error = 0;
	return x;
}

int evictor_start(evictor *ev, const evict_request *req)
{
	int r;
	eviction *x = eviction_new(ev, req, &r);
	if (!x)
		return r;

	if (ev->cfg.dry_run) {
		x->info.phase = EVICT_PHASE_DRY_RUN;
		emit(x, EVICT_EVENT_STARTED);
		uint64_t t = x->info.grace_usec > DRY_RUN_MIN_USEC ? x->info.grace_usec : DRY_RUN_MIN_USEC;
		r = arm_deadline(x, t);
		if (r < 0)
			finish(x, EVICT_FAILED, r);
		return r < 0 ? r : 0;
	}

	/*
	 * No symlink anywhere on the path (the cgroup root is canonical, see cg_discover): a pod
	 * directory swapped for a symlink since the scan cannot redirect SIGTERM or cgroup.kill.
	 */
	x->dirfd = cgfs_open_dir_beneath(AT_FDCWD, x->cgroup_path);
	r = x->dirfd < 0 ? x->dirfd : 0;
	if (r == 0 && cg_populated(x->dirfd) == 0) {
		/* Its processes are gone (a pod evicted before whose directory the runtime has not
		 * removed yet): nothing to signal, and no command to run for it. */
		x->info.phase = EVICT_PHASE_TERMINATING;
		finish(x, EVICT_EMPTY, 0);
		return 0;
	}
	if (r == 0) {
		unsigned long long mem;
		if (cg_memory_current(x->dirfd, &mem) == 0)
			x->info.reclaimed_bytes = (int64_t)mem;
		else if (strncmp(x->signal, "pid.", 4) != 0 && !strstr(x->signal, "inodes") && req->usage >= 0)
			x->info.reclaimed_bytes = req->usage;
	}
	if (r == 0 && ev->cfg.use_exec) {
		r = start_exec(x, ev->cfg.exec_argv);
		if (r == 0) {
			emit(x, EVICT_EVENT_STARTED);
			return 0;
		}
		if (!ev->cfg.exec_fallback_kill) {
			x->info.phase = EVICT_PHASE_EXEC;
			emit(x, EVICT_EVENT_STARTED);
			finish(x, EVICT_FAILED, r);
			return r;
		}
		x->info.exec = false;
		r = 0;
	}
	if (r < 0) {
		/* Nothing was signalled: a STARTED event would be logged as "SIGTERM sent". A pod cgroup
		 * removed since the decision is a pod that ended by itself, not a failed eviction. */
		x->info.phase = EVICT_PHASE_TERMINATING;
		finish(x, r == -ENOENT ? EVICT_GONE : EVICT_FAILED, r);
		return r;
	}
	start_kill(x, true);
	return 0;
}

int evictor_resume(evictor *ev, const inflight_record *rec)
{
	if (!rec)
		return -EINVAL;
	evict_request req = {
		.uid = rec->uid, .namespace_ = rec->namespace_, .name = rec->name, .cgroup_path = rec->cgroup,
		.signal = rec->signal, .hard = rec->hard, .grace_usec = rec->grace_usec,
		.priority = rec->priority, .usage = rec->usage, .expected_reclaim = rec->expected_reclaim,
		.reclaim = rec->has_reclaim ? &rec->reclaim : NULL, .failures = rec->failures,
	};
	if (rec->phase != INFLIGHT_TERMINATING && rec->phase != INFLIGHT_KILLING && rec->phase != INFLIGHT_EXEC)
		return -EINVAL; /* what follows an eviction is the caller's (reclaim, back-off) */
	int r;
	eviction *x = eviction_new(ev, &req, &r);
	if (!x)
		return r;
	/* The boot clock when the record has it (records are of this boot: inflight_load); else the
	 * wall clock, which may have been stepped since the write. */
	clockid_t clock = rec->has_boot_clock ? CLOCK_BOOTTIME : CLOCK_REALTIME;
	uint64_t started = rec->has_boot_clock ? rec->started_boot_usec : rec->started_real_usec;
	uint64_t deadline = rec->has_boot_clock ? rec->deadline_boot_usec : rec->deadline_real_usec;
	uint64_t now = clock_usec_on(clock), now_mono = clock_mono_usec();
	uint64_t age = now > started ? now - started : 0;
	uint64_t left = deadline > now ? deadline - now : 0;
	/* Never more than the step could have had left when it was written: a record "from the
	 * future" (the wall clock stepped back since) must not stretch the pod's grace period. */
	uint64_t most = rec->phase == INFLIGHT_EXEC ? ev->cfg.exec_timeout_usec + rec->grace_usec + ev->cfg.kill_timeout_usec
	              : rec->phase == INFLIGHT_KILLING ? ev->cfg.kill_timeout_usec : rec->grace_usec;
	if (left > most)
		left = most;
	x->info.resumed = true;
	x->refused = rec->refused;
	x->retry_mono_usec = rec->retry_mono_usec;
	x->recorded = rec->phase;
	x->info.dry_run = false;
	x->info.exec = rec->exec;
	x->info.grace_usec = rec->grace_usec;
	x->info.started_real_usec = rec->started_real_usec;
	x->info.started_mono_usec = now_mono > age ? now_mono - age : 0;
	x->info.deadline_mono_usec = now_mono + left;
	x->info.phase = rec->phase == INFLIGHT_EXEC ? EVICT_PHASE_WAITING
	              : rec->phase == INFLIGHT_KILLING ? EVICT_PHASE_KILLING : EVICT_PHASE_TERMINATING;
	x->info.sigkilled = rec->phase == INFLIGHT_KILLING;
	x->started_emitted = true;
	x->persisted = true;
	x->dirfd = cgfs_open_dir_beneath(AT_FDCWD, x->cgroup_path);
	emit(x, EVICT_EVENT_RESUMED);
	if (x->dirfd < 0 || cg_populated(x->dirfd) != 1) {
		/* The pod ended while no evictd watched it. */
		finish(x, EVICT_DONE, 0);
		return 0;
	}
	watch_events(x);
	switch (rec->phase) {
	case INFLIGHT_KILLING:
		/* cgroup.kill again (idempotent): the previous process may have died before writing it. */
		x->info.phase = EVICT_PHASE_TERMINATING;
		escalate(x, EVICT_KILL_AGAIN);
		return 0;
	case INFLIGHT_TERMINATING:
		if (left == 0) {
			escalate(x, EVICT_KILL_LATE);
			return 0;
		}
		break;
	case INFLIGHT_EXEC:
		/* The command ran (or was about to): it is not run again; the pod gets the rest of its wait. */
		if (left == 0)
			left = 1;
		break;
	default:
		break;
	}
	if (arm_deadline(x, left) < 0 || arm_recheck(x) < 0) {
		finish(x, EVICT_FAILED, -ENOMEM);
		return -ENOMEM;
	}
	return 0;
}

int evictor_new(sd_event *e, const evict_config *cfg, evict_callback cb, void *userdata,
                evictor **ret)
{
	if (!e || !cfg || !ret)
		return -EINVAL;
	if (cfg->use_exec && !cfg->dry_run && (!cfg->exec_argv || !cfg->exec_argv[0]))
		return -EINVAL;
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &ss, NULL) < 0)
		return -errno;
	evictor *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->event = sd_event_ref(e);
	ev->cfg = *cfg;
	ev->cb = cb;
	ev->userdata = userdata;
	*ret = ev;
	return 0;
}

int evictor_set_config(evictor *ev, const evict_config *cfg)
{
	if (!ev || !cfg)
		return -EINVAL;
	if (cfg->use_exec && !cfg->dry_run && (!cfg->exec_argv || !cfg->exec_argv[0]))
		return -EINVAL;
	ev->cfg = *cfg;
	return 0;
}

evictor *evictor_free(evictor *ev)
{
	if (!ev)
		return NULL;
	while (ev->head) {
		eviction *x = ev->head;
		ev->head = x->next;
		eviction_free(x);
	}
	sd_event_unref(ev->event);
	free(ev);
	return NULL;
}

static eviction *find_eviction(const evictor *ev, const char *uid)
{
	for (eviction *x = ev ? ev->head : NULL; x && uid; x = x->next)
		if (strcmp(x->uid, uid) == 0)
			return x;
	return NULL;
}

int evictor_note_refusal(evictor *ev, const char *uid, unsigned failures, uint64_t retry_mono_usec)
{
	if (!ev || !uid)
		return -EINVAL;
	eviction *x = find_eviction(ev, uid);
	if (!x)
		return -ENOENT;
	x->failures = failures;
	x->refused = true;
	x->retry_mono_usec = retry_mono_usec;
	/* the record as it was, with the refusal: the deadline of the step under way is kept */
	if (x->persisted)
		persist(x, x->recorded);
	return 0;
}

bool evictor_contains(const evictor *ev, const char *uid)
{
	if (!ev || !uid)
		return false;
	for (const eviction *x = ev->head; x; x = x->next)
		if (strcmp(x->uid, uid) == 0)
			return true;
	return false;
}

unsigned evictor_count(const evictor *ev)
{
	return ev ? ev->count : 0;
}

int64_t evictor_pending_reclaim(const evictor *ev, const char *signal)
{
	int64_t sum = 0;
	if (!ev)
		return 0;
	for (const eviction *x = ev->head; x; x = x->next)
		if ((!signal || strcmp(signal, x->signal) == 0) && x->info.expected_reclaim > 0)
			sum += x->info.expected_reclaim;
	return sum;
}

void evictor_foreach(const evictor *ev, void (*fn)(const evict_info *info, void *userdata),
                     void *userdata)
{
	if (!ev || !fn)
		return;
	for (const eviction *x = ev->head; x; x = x->next)
		fn(&x->info, userdata);
}

unsigned evictor_shutdown(evictor *ev)
{
	if (!ev)
		return 0;
	ev->shutting_down = true;
	/* finish()/escalate() unlink entries, so walk a snapshot of the list. */
	eviction *x = ev->head;
	while (x) {
		eviction *next = x->next;
		switch (x->info.phase) {
		case EVICT_PHASE_TERMINATING:
			escalate(x, EVICT_KILL_STOPPING);
			break;
		case EVICT_PHASE_DRY_RUN:
			finish(x, EVICT_DRY, 0);
			break;
		case EVICT_PHASE_WAITING:
			finish(x, EVICT_HANDED_OVER, 0);
			break;
		case EVICT_PHASE_EXEC:
		case EVICT_PHASE_KILLING:
			break; /* bounded by their own timeouts */
		}
		x = next;
	}
	return ev->count;
}
