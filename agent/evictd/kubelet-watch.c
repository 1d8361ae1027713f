/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's configuration beside evictd.conf: a change of the file (or of kubeadm's flags file
 * next to it) is a reload, with a reload's validation. The directory is watched, not the file:
 * kubeadm and configuration management replace files by rename, which a watch on the old inode
 * would never see. What the kubelet's configuration means for evictd's thresholds is said once
 * per load: a broken file, and each signal on which the kubelet would act at or before evictd.
 */
#include "kubelet-watch.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "log.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int on_kubelet_dir(sd_event_source *s, const struct inotify_event *ie, void *userdata)
{
	(void)s;
	evictd_daemon *d = userdata;
	const char *path = d->cfg->kubelet.config_path;
	char why[PATH_MAX + 64];

	if (!path || ie->len == 0)
		return 0;
	if (strcmp(ie->name, base_name(path)) != 0 && strcmp(ie->name, "kubeadm-flags.env") != 0)
		return 0;
	snprintf(why, sizeof(why), "the kubelet's %s changed", ie->name);
	d->kubelet_changed(d, why);
	return 0;
}

void kubelet_watch_done(evictd_daemon *d)
{
	d->kubelet_watch = sd_event_source_disable_unref(d->kubelet_watch);
	free(d->kubelet_watch_dir);
	d->kubelet_watch_dir = NULL;
}

void kubelet_watch_setup(evictd_daemon *d, kubelet_changed_fn changed)
{
	d->kubelet_changed = changed;
	const char *path = d->cfg->kubelet.config_path;
	char dir[PATH_MAX];

	if (!path) {
		kubelet_watch_done(d);
		return;
	}
	const char *slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
	d->kubelet_changed = changed;
	if (d->kubelet_watch_dir && strcmp(d->kubelet_watch_dir, dir) == 0)
		return;
	kubelet_watch_done(d);
	/*
	 * Replaced (IN_MOVED_TO), written in place or created (IN_CLOSE_WRITE: once complete, not at
	 * IN_CREATE, when it is still empty), removed (IN_DELETE, IN_MOVED_FROM).
	 */
	int r = sd_event_add_inotify(d->event, &d->kubelet_watch, dir,
	                             IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ONLYDIR,
	                             on_kubelet_dir, d);
	if (r < 0) {
		/* No kubelet directory (a node without Kubernetes): nothing to watch, nothing to say. */
		if (r != -ENOENT && r != -ENOTDIR)
			log_error_errno(r, "cannot watch %s for changes of the kubelet's configuration", dir);
		d->kubelet_watch = NULL;
		return;
	}
	d->kubelet_watch_dir = strdup(dir);
	if (!d->kubelet_watch_dir)
		d->kubelet_watch = sd_event_source_disable_unref(d->kubelet_watch);
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
	for (int i = 0; i < _SIGNAL_MAX; i++)
		caps[i] = d->node_valid && d->node.s[i].known ? d->node.s[i].capacity : -1;
	config_kubelet_conflicts(d->cfg, caps, log_conflict, NULL);
}
