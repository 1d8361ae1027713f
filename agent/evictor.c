/* SPDX-License-Identifier: MIT */
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
#include "exec-argv.h"

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

static uint64_t now_usec(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

void evict_config_init(evict_config *c)
{
	*c = (evict_config){
		.exec_timeout_usec = 30ULL * 1000000ULL,
		.kill_timeout_usec = 10ULL * 1000000ULL,
		.recheck_usec = 500000ULL,
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
	free(x);
}

static void finish(eviction *x, evict_outcome outcome, int error)
{
	x->info.outcome = outcome;
	x->info.error = error;
	x->info.duration_usec = now_usec(CLOCK_MONOTONIC) - x->info.started_mono_usec;
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

static void escalate(eviction *x)
{
	if (x->info.phase == EVICT_PHASE_KILLING)
		return;
	x->info.phase = EVICT_PHASE_KILLING;
	x->info.sigkilled = true;
	int r = cg_kill(x->dirfd);
	x->info.cgroup_kill = r == 0;
	if (r < 0) /* no cgroup.kill (Linux < 5.14, or a fixture): SIGKILL every process we can see */
		(void)cg_signal_tree(x->dirfd, SIGKILL, getpid());
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
			escalate(x);
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
	x->info.deadline_mono_usec = now_usec(CLOCK_MONOTONIC) + usec_from_now;
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
	if (x->info.phase == EVICT_PHASE_KILLING && !x->info.cgroup_kill)
		(void)cg_signal_tree(x->dirfd, SIGKILL, getpid());
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
static void start_kill(eviction *x, bool emit_started)
{
	x->info.phase = EVICT_PHASE_TERMINATING;
	int r = cg_signal_tree(x->dirfd, SIGTERM, getpid());
	x->info.procs_signalled = r > 0 ? r : 0;
	if (emit_started)
		emit(x, EVICT_EVENT_STARTED);
	if (r < 0 && r != -ENOENT && r != -ENODEV) {
		finish(x, EVICT_FAILED, r);
		return;
	}
	if (!x->inotify)
		watch_events(x);
	if (check_empty(x))
		return;
	if (x->info.grace_usec == 0) {
		escalate(x);
		return;
	}
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
		x->info.started_mono_usec = now_usec(CLOCK_MONOTONIC);
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

int evictor_start(evictor *ev, const evict_request *req)
{
	if (!ev || !req || !req->uid || !*req->uid || !req->cgroup_path || req->cgroup_path[0] != '/')
		return -EINVAL;
	if (ev->shutting_down)
		return -ESHUTDOWN;
	if (evictor_contains(ev, req->uid))
		return -EALREADY;

	eviction *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->owner = ev;
	x->dirfd = -1;
	x->err_fd = -1;
	x->cfg = ev->cfg;
	x->uid = strdup(req->uid);
	x->namespace_ = dup_or_empty(req->namespace_);
	x->name = strdup(req->name && *req->name ? req->name : req->uid);
	x->cgroup_path = strdup(req->cgroup_path);
	x->signal = dup_or_empty(req->signal);
	if (!x->uid || !x->namespace_ || !x->name || !x->cgroup_path || !x->signal) {
		eviction_free(x);
		return -ENOMEM;
	}
	x->info = (evict_info){
		.uid = x->uid, .namespace_ = x->namespace_, .name = x->name,
		.cgroup_path = x->cgroup_path, .signal = x->signal,
		.hard = req->hard, .dry_run = ev->cfg.dry_run, .exec = ev->cfg.use_exec,
		.priority = req->priority,
		.grace_usec = req->hard ? 0 : req->grace_usec,
		.usage = req->usage, .expected_reclaim = req->expected_reclaim,
		.started_mono_usec = now_usec(CLOCK_MONOTONIC),
		.started_real_usec = now_usec(CLOCK_REALTIME),
		.exec_status = -1, .reclaimed_bytes = -1,
	};
	/* Tracked from here on: callbacks below may look at the tracker. */
	x->next = NULL;
	eviction **tail = &ev->head;
	while (*tail)
		tail = &(*tail)->next;
	*tail = x;
	ev->count++;

	if (ev->cfg.dry_run) {
		x->info.phase = EVICT_PHASE_DRY_RUN;
		emit(x, EVICT_EVENT_STARTED);
		uint64_t t = x->info.grace_usec > DRY_RUN_MIN_USEC ? x->info.grace_usec : DRY_RUN_MIN_USEC;
		int r = arm_deadline(x, t);
		if (r < 0)
			finish(x, EVICT_FAILED, r);
		return r < 0 ? r : 0;
	}

	/*
	 * No symlink anywhere on the path (the cgroup root is canonical, see cg_discover): a pod
	 * directory swapped for a symlink since the scan cannot redirect SIGTERM or cgroup.kill.
	 */
	x->dirfd = cgfs_open_dir_beneath(AT_FDCWD, x->cgroup_path);
	int r = x->dirfd < 0 ? x->dirfd : 0;
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
			escalate(x);
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
