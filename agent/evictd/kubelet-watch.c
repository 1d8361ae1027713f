/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's configuration beside evictd.conf: a change of the file (or of kubeadm's flags file
 * next to it) is a reload, with a reload's validation. The directory is watched, not the file:
 * kubeadm and configuration management replace files by rename, which a watch on the old inode
 * would never see. A directory that is not there yet (evictd installed before the kubelet) or no
 * longer (kubeadm reset) is waited for on its nearest existing ancestor, so the daemon and
 * `evictd --dump-config` never disagree for longer than an inotify wake-up. What the kubelet's
 * configuration means for evictd's thresholds is said once per load: a broken file, a missing one
 * someone named, and each threshold the kubelet would act on at or before evictd.
 * The same follower waits for the container runtime's socket (runtime.c): a runtime started after
 * evictd is a socket made in a directory that may not exist yet either.
 */
#include "kubelet-watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kubelet-config.h"
#include "log.h"

/*
 * In the kubelet's directory: replaced (IN_MOVED_TO), written in place or created (IN_CLOSE_WRITE:
 * once complete, not at IN_CREATE, when it is still empty; IN_CREATE only for a symlink), removed
 * (IN_DELETE, IN_MOVED_FROM). On an ancestor: the next directory down made or moved in.
 * On either: the watched directory itself removed or renamed.
 */
#define TARGET_EVENTS   (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)
#define ANCESTOR_EVENTS (IN_CREATE | IN_MOVED_TO)
#define SELF_EVENTS     (IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
/* Directories made and removed again while being followed: give up after this many descents in
 * one go (the next event tries again). */
#define DESCENT_MAX 16

struct kubelet_watch {
	sd_event_source *io;
	sd_event_source *recheck;     /* once armed: the files against what the configuration read */
	int fd;
	int wd;                       /* -1: nothing watched */
	char path[PATH_MAX];          /* the kubelet's configuration; "" none */
	char dir[PATH_MAX];           /* its directory */
	char watched[PATH_MAX];       /* dir, or its nearest existing ancestor */
	config_file_stamp stamp[2];   /* the files as the running configuration read them */
	kubelet_changed_fn changed;
	void *userdata;
	const char *subject;          /* what is followed, for the log */
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static bool at_target(const kubelet_watch *w)
{
	return w->wd >= 0 && strcmp(w->watched, w->dir) == 0;
}

/* The name below w->watched on the way to w->dir ("kubelet" for /var/lib on /var/lib/kubelet). */
static size_t next_component(const kubelet_watch *w, const char **ret)
{
	size_t l = strlen(w->watched);
	const char *s = w->dir + (l == 1 ? 1 : l + 1); /* "/" has no separator of its own */
	const char *e = strchr(s, '/');
	*ret = s;
	return e ? (size_t)(e - s) : strlen(s);
}

static bool next_exists(const kubelet_watch *w)
{
	const char *s;
	size_t n = next_component(w, &s);
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), "%.*s", (int)(s - w->dir) + (int)n, w->dir);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void unwatch(kubelet_watch *w)
{
	if (w->wd >= 0)
		(void)inotify_rm_watch(w->fd, w->wd); /* EINVAL when the kernel dropped it with its inode */
	w->wd = -1;
	w->watched[0] = '\0';
}

/*
 * Watches the kubelet's directory, or the nearest ancestor that exists. The new watch is added
 * before the old one goes, so no event falls between them (the same directory keeps its wd).
 */
static void watch_nearest(kubelet_watch *w)
{
	char p[PATH_MAX];

	for (unsigned descent = 0; descent < DESCENT_MAX; descent++) {
		snprintf(p, sizeof(p), "%s", w->dir);
		for (;;) {
			bool target = strcmp(p, w->dir) == 0;
			int wd = inotify_add_watch(w->fd, p, SELF_EVENTS | (target ? TARGET_EVENTS : ANCESTOR_EVENTS));
			if (wd >= 0) {
				if (w->wd >= 0 && w->wd != wd)
					(void)inotify_rm_watch(w->fd, w->wd);
				w->wd = wd;
				snprintf(w->watched, sizeof(w->watched), "%s", p);
				break;
			}
			if (errno != ENOENT && errno != ENOTDIR) {
				log_error_errno(errno, "cannot watch %s for %s %s (changes are read at start and on reload only)",
				                p, w->subject, w->path);
				unwatch(w);
				return;
			}
			char *slash = strrchr(p, '/');
			if (!slash || (slash == p && !p[1])) { /* not even "/": nothing to watch */
				unwatch(w);
				return;
			}
			slash[slash == p ? 1 : 0] = '\0';
		}
		/* The next directory down may have been made between its failed watch and this one. */
		if (at_target(w) || !next_exists(w))
			return;
	}
}

static bool files_changed(const kubelet_watch *w)
{
	config_file_stamp now[2];
	kubelet_files_stamp(w->path, now);
	return !config_file_stamp_equal(&now[0], &w->stamp[0]) || !config_file_stamp_equal(&now[1], &w->stamp[1]);
}

/* A symlink or a socket is complete once made; a regular file only once written (IN_CLOSE_WRITE). */
static bool complete_at_create(const kubelet_watch *w, const char *name)
{
	char p[PATH_MAX + NAME_MAX + 2];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", strcmp(w->dir, "/") == 0 ? "" : w->dir, name);
	return lstat(p, &st) == 0 && (S_ISLNK(st.st_mode) || S_ISSOCK(st.st_mode));
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	(void)s, (void)revents;
	kubelet_watch *w = userdata;
	union {
		struct inotify_event ev;
		char buf[4096];
	} u;
	char why[PATH_MAX + 96] = "";
	bool rearm = false;

	for (;;) {
		ssize_t n = read(fd, u.buf, sizeof(u.buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EAGAIN: all read */
		for (char *p = u.buf; p < u.buf + n;) {
			const struct inotify_event *ie = (const struct inotify_event *)(void *)p;
			p += sizeof(*ie) + ie->len;
			if (ie->mask & IN_Q_OVERFLOW) { /* events lost: look again */
				rearm = true;
				continue;
			}
			if (ie->wd != w->wd || w->wd < 0)
				continue; /* a watch replaced meanwhile */
			if (ie->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)) {
				rearm = true;
				continue;
			}
			if (ie->len == 0)
				continue;
			if (!at_target(w)) {
				const char *c;
				size_t l = next_component(w, &c);
				if (strlen(ie->name) == l && strncmp(ie->name, c, l) == 0)
					rearm = true;
				continue;
			}
			if (strcmp(ie->name, base_name(w->path)) != 0 && strcmp(ie->name, "kubeadm-flags.env") != 0)
				continue;
			if ((ie->mask & IN_CREATE) && !complete_at_create(w, ie->name))
				continue; /* a file being written: its IN_CLOSE_WRITE follows */
			snprintf(why, sizeof(why), "the kubelet's %s %s", ie->name,
			         ie->mask & (IN_DELETE | IN_MOVED_FROM) ? "was removed" : "changed");
		}
	}
	if (rearm) {
		bool was_target = at_target(w);
		watch_nearest(w);
		/* Made, removed, renamed: what matters is whether the files differ from what was read. */
		if (!why[0] && files_changed(w))
			snprintf(why, sizeof(why), "the kubelet's directory %s %s", w->dir,
			         at_target(w) && !was_target ? "appeared" : !at_target(w) && was_target ? "is gone" : "changed");
	}
	/* Last: the reload re-arms this watch (kubelet_watch_arm), which must not happen mid-buffer. */
	if (why[0])
		w->changed(w->userdata, why);
	return 0;
}

static int on_recheck(sd_event_source *s, void *userdata)
{
	kubelet_watch *w = userdata;
	(void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
	if (w->path[0] && files_changed(w))
		w->changed(w->userdata, "the kubelet's configuration changed while evictd read it");
	return 0;
}

int kubelet_watch_new(sd_event *e, kubelet_changed_fn changed, void *userdata, kubelet_watch **ret)
{
	kubelet_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	*w = (kubelet_watch){ .fd = -1, .wd = -1, .changed = changed, .userdata = userdata,
		              .subject = "the kubelet's configuration" };
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		r = -errno;
		free(w);
		return r;
	}
	if ((r = sd_event_add_io(e, &w->io, w->fd, EPOLLIN, on_inotify, w)) < 0 ||
	    (r = sd_event_add_defer(e, &w->recheck, on_recheck, w)) < 0 ||
	    (r = sd_event_source_set_enabled(w->recheck, SD_EVENT_OFF)) < 0) {
		kubelet_watch_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

void kubelet_watch_set_subject(kubelet_watch *w, const char *subject)
{
	if (w && subject)
		w->subject = subject;
}

kubelet_watch *kubelet_watch_free(kubelet_watch *w)
{
	if (!w)
		return NULL;
	sd_event_source_disable_unref(w->io);
	sd_event_source_disable_unref(w->recheck);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
	return NULL;
}

void kubelet_watch_arm(kubelet_watch *w, const char *path, const config_file_stamp read[2])
{
	if (!w)
		return;
	(void)sd_event_source_set_enabled(w->recheck, SD_EVENT_OFF);
	/* Absolute (the configuration insists); a path too long for a directory name is not followed. */
	if (!path || path[0] != '/' || strlen(path) >= sizeof(w->path)) {
		unwatch(w);
		w->path[0] = '\0';
		return;
	}
	snprintf(w->path, sizeof(w->path), "%s", path);
	/* The directory, spelt once: no "//", no trailing "/" (next_component walks it by names). */
	size_t l = 0;
	for (const char *c = path; c < base_name(path) - 1; c++)
		if (*c != '/' || l == 0 || w->dir[l - 1] != '/')
			w->dir[l++] = *c;
	if (l > 1 && w->dir[l - 1] == '/')
		l--;
	if (l == 0)
		w->dir[l++] = '/';
	w->dir[l] = '\0';
	if (read)
		memcpy(w->stamp, read, sizeof(w->stamp));
	/* From scratch, whatever was watched: a stale watch (a directory above renamed) is replaced. */
	w->watched[0] = '\0';
	watch_nearest(w);
	if (read)
		(void)sd_event_source_set_enabled(w->recheck, SD_EVENT_ONESHOT);
}

const char *kubelet_watch_dir(const kubelet_watch *w)
{
	return w && w->wd >= 0 ? w->watched : NULL;
}

bool kubelet_reload_refused(const evictd_config *running, const evictd_config *next)
{
	if (!next->kubelet.warning[0] || !running->kubelet.path[0])
		return false;
	log_msg(LOG_WARNING, "Kubelet configuration rejected, keeping the running configuration: %s",
	        next->kubelet.warning);
	return true;
}

static void log_conflict(const kubelet_conflict *k, void *userdata)
{
	(void)userdata;
	log_msg(LOG_WARNING, "%s", k->text);
}

void kubelet_log_notes(evictd_daemon *d)
{
	int64_t caps[_SIGNAL_MAX];

	if (d->cfg->kubelet.warning[0])
		log_msg(LOG_WARNING, "Kubelet configuration ignored, evictd runs on its own configuration: %s",
		        d->cfg->kubelet.warning);
	if (d->cfg->kubelet.missing[0]) {
		const char *dir = kubelet_watch_dir(d->kubelet_watch);
		log_msg(LOG_WARNING, "Kubelet configuration %s%s%s%s", d->cfg->kubelet.missing, dir ? " (watching " : "",
		        dir ? dir : "", dir ? ")" : "");
	}
	for (int i = 0; i < _SIGNAL_MAX; i++)
		caps[i] = d->node_valid && d->node.s[i].known ? d->node.s[i].capacity : -1;
	config_kubelet_conflicts(d->cfg, caps, log_conflict, NULL);
}
