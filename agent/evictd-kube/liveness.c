/* SPDX-License-Identifier: MIT */
#include "liveness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ktime.h"
#include "log.h"
#include "clock.h"

/* evictd's status.json is at most this large (report/status-file.h's STATUS_MAX_BYTES). */
#define STATUS_READ_MAX (1024 * 1024)
/* A status file without heartbeat_usec (an evictd older than the field): its idle refresh + tick. */
#define HEARTBEAT_DEFAULT_USEC (40ULL * 1000000ULL)
/* Rewrites come in bursts while evictd acts: read the file at most this often for them. */
#define READ_MIN_INTERVAL_USEC (250ULL * 1000ULL)
/* Without inotify (the directory is missing) the file is looked at this often. */
#define POLL_USEC (5ULL * 1000000ULL)

struct liveness {
	sd_event *event;
	char *path, *dir, *base;
	liveness_changed_fn changed;
	void *userdata;
	sd_event_source *inotify, *timer, *pidfd_source;
	pid_t watched;             /* the pid the pidfd is for */
	bool watched_ended;        /* its pidfd said so (or it had ended when looked for) */
	bool unwatchable_logged, untrusted_logged;
	uint64_t rewritten_mono;   /* the last rewrite seen, CLOCK_MONOTONIC */
	uint64_t read_mono;        /* the last read */
	char state[16];            /* the file's state, "" when none */
	liveness_view v;
};

const char *liveness_name(evictd_liveness s)
{
	switch (s) {
	case EVICTD_NEVER_SEEN:
		return "never seen";
	case EVICTD_RUNNING:
		return "running";
	case EVICTD_STOPPED:
		return "stopped";
	case EVICTD_EXITED:
		return "exited";
	case EVICTD_OVERDUE:
		return "overdue";
	}
	return "?";
}

const char *liveness_path(const liveness *l)
{
	return l->path;
}

bool liveness_lists(const liveness_view *v, const char *condition)
{
	size_t n = strlen(condition);
	for (const char *p = v->conditions; (p = strstr(p, condition)); p += n)
		if ((p == v->conditions || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

static int on_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* Follows pid with a pidfd: its end is then seen the moment it happens. */
static void watch_pid(liveness *l, pid_t pid)
{
	if (pid == l->watched)
		return;
	l->pidfd_source = sd_event_source_disable_unref(l->pidfd_source);
	l->watched = pid;
	l->watched_ended = false;
	if (pid <= 0)
		return;
	int fd = pidfd_open(pid, 0);
	if (fd < 0) {
		if (errno == ESRCH)
			l->watched_ended = true;
		else if (!l->unwatchable_logged) {
			/* another PID namespace, an old kernel: the heartbeat alone tells */
			log_msg(LOG_NOTICE, "Cannot watch evictd's process %d (%s): its end is noticed when %s is overdue",
			        (int)pid, strerror(errno), l->path);
			l->unwatchable_logged = true;
		}
		return;
	}
	if (sd_event_add_io(l->event, &l->pidfd_source, fd, EPOLLIN, on_pidfd, l) < 0) {
		close(fd);
		return;
	}
	(void)sd_event_source_set_io_fd_own(l->pidfd_source, 1);
}

/* The file's fields into l (state "" when there is no file to believe). */
static void read_status(liveness *l)
{
	uint64_t now = clock_mono_usec();
	struct stat st;
	evictd_status es;
	int fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	l->read_mono = now;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		l->state[0] = '\0';
		return;
	}
	/* only evictd (root) writes it: anything else could claim evictd runs */
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		if (!l->untrusted_logged)
			log_msg(LOG_WARNING, "%s is not a root-owned regular file writable only by root: not believed", l->path);
		l->untrusted_logged = true;
		l->state[0] = '\0';
		return;
	}
	l->untrusted_logged = false;
	char *buf = malloc(STATUS_READ_MAX + 1);
	ssize_t n = buf ? read(fd, buf, STATUS_READ_MAX) : -1;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	int r = n >= 0 ? condparse_status(buf, &es) : -EIO;
	free(buf);
	if (r < 0)
		return; /* keep what was read before: written atomically, so not evictd's (or a future format) */
	if (es.pid != l->v.pid || !l->rewritten_mono) {
		/* a file not seen being written: its age by the wall clock, once */
		uint64_t real = clock_wall_usec(), age = real > es.updated_usec ? real - es.updated_usec : 0;
		l->rewritten_mono = now > age ? now - age : 1;
	} else if (es.updated_usec != l->v.updated_real_usec)
		l->rewritten_mono = now;
	l->v.pid = es.pid;
	l->v.updated_real_usec = es.updated_usec;
	l->v.overdue_usec = (es.heartbeat_usec ? es.heartbeat_usec : HEARTBEAT_DEFAULT_USEC) / 2 * 3;
	l->v.dry_run = es.dry_run;
	snprintf(l->state, sizeof(l->state), "%s", es.state);
	snprintf(l->v.conditions, sizeof(l->v.conditions), "%s", es.conditions);
	watch_pid(l, es.pid);
}

static evictd_liveness judge(liveness *l)
{
	if (!l->state[0])
		return EVICTD_NEVER_SEEN;
	if (strcmp(l->state, "running") != 0)
		return EVICTD_STOPPED;
	if (l->watched_ended)
		return EVICTD_EXITED;
	if (clock_mono_usec() - l->rewritten_mono > l->v.overdue_usec)
		return EVICTD_OVERDUE;
	return EVICTD_RUNNING;
}

/* The next look: when the file would become overdue, or the poll without inotify. */
static void arm_timer(liveness *l)
{
	uint64_t at = UINT64_MAX, now = clock_mono_usec();
	if (l->v.state == EVICTD_RUNNING)
		at = l->rewritten_mono + l->v.overdue_usec + 1;
	if (!l->inotify && (at == UINT64_MAX || at > now + POLL_USEC))
		at = now + POLL_USEC;
	if (at == UINT64_MAX) {
		(void)sd_event_source_set_enabled(l->timer, SD_EVENT_OFF);
		return;
	}
	(void)sd_event_source_set_time(l->timer, at);
	(void)sd_event_source_set_enabled(l->timer, SD_EVENT_ONESHOT);
}

/* Re-judges (reading the file when asked), tells the owner about a change, re-arms. */
static void update(liveness *l, bool read, bool tell)
{
	evictd_liveness before = l->v.state;
	pid_t pid = l->v.pid;
	if (read)
		read_status(l);
	l->v.state = judge(l);
	arm_timer(l);
	if (tell && (l->v.state != before || l->v.pid != pid))
		l->changed(l->userdata);
}

static int on_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	liveness *l = userdata;
	(void)fd;
	(void)revents;
	(void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
	l->watched_ended = true;
	update(l, true, true);
	return 0;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata);

static void add_inotify(liveness *l)
{
	if (sd_event_add_inotify(l->event, &l->inotify, l->dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_ONLYDIR,
	                         on_inotify, l) < 0)
		l->inotify = NULL; /* the directory is not there yet: polled until it is */
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	liveness *l = userdata;
	(void)s;
	(void)usec;
	if (!l->inotify)
		add_inotify(l);
	update(l, true, true);
	return 0;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
	liveness *l = userdata;
	(void)s;
	if (!(ev->mask & IN_Q_OVERFLOW) && (!ev->len || strcmp(ev->name, l->base) != 0))
		return 0;
	uint64_t now = clock_mono_usec();
	l->rewritten_mono = now; /* a write is a heartbeat, whatever it says */
	if (now - l->read_mono >= READ_MIN_INTERVAL_USEC) {
		update(l, true, true);
		return 0;
	}
	/* a burst: read once more at the end of the interval (the timer re-judges) */
	(void)sd_event_source_set_time(l->timer, l->read_mono + READ_MIN_INTERVAL_USEC);
	(void)sd_event_source_set_enabled(l->timer, SD_EVENT_ONESHOT);
	return 0;
}

int liveness_new(sd_event *e, const char *status_path, liveness_changed_fn changed, void *userdata,
                 liveness **ret)
{
	liveness *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	l->event = sd_event_ref(e);
	l->changed = changed;
	l->userdata = userdata;
	l->path = strdup(status_path);
	l->dir = strdup(status_path);
	if (!l->path || !l->dir) {
		liveness_free(l);
		return -ENOMEM;
	}
	char *slash = strrchr(l->dir, '/');
	l->base = slash ? slash + 1 : l->dir;
	if (slash == l->dir)
		l->dir[1] = '\0', l->base = l->path + 1;
	else if (slash)
		*slash = '\0';
	else {
		free(l->dir);
		l->dir = strdup(".");
		l->base = l->path;
		if (!l->dir) {
			liveness_free(l);
			return -ENOMEM;
		}
	}
	if (!*l->base) {
		liveness_free(l);
		return -EINVAL;
	}
	r = sd_event_add_time(e, &l->timer, CLOCK_MONOTONIC, UINT64_MAX, 100000, on_timer, l);
	if (r < 0) {
		liveness_free(l);
		return r;
	}
	add_inotify(l);
	update(l, true, false);
	*ret = l;
	return 0;
}

liveness *liveness_free(liveness *l)
{
	if (!l)
		return NULL;
	sd_event_source_disable_unref(l->inotify);
	sd_event_source_disable_unref(l->timer);
	sd_event_source_disable_unref(l->pidfd_source);
	sd_event_unref(l->event);
	free(l->path);
	free(l->dir);
	free(l);
	return NULL;
}

const liveness_view *liveness_check(liveness *l)
{
	update(l, true, false);
	return &l->v;
}
