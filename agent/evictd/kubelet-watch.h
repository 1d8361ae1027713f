/* SPDX-License-Identifier: MIT */
#pragma once

/* The kubelet's configuration beside evictd.conf (kubelet-watch.c): followed, and explained. */

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "evictd-state.h"

/* A change of the kubelet's files: the loop reloads (passed in, so this file never calls up into
 * evictd-daemon.c). why says what changed, for the log. */
typedef void (*kubelet_changed_fn)(void *userdata, const char *why);

/*
 * Follows [kubernetes] kubelet-config wherever it goes: its directory is watched when it exists,
 * else the nearest existing ancestor until it does (a kubelet installed after evictd); a removed
 * or renamed directory falls back to the ancestor (kubeadm reset) and is followed again when it is
 * made anew (kubeadm join). A change of the configuration or of kubeadm-flags.env beside it calls
 * changed(). Without inotify (an error, logged) evictd still runs: the files are then read at
 * start and on reload only. Returns 0 or -errno.
 */
int kubelet_watch_new(sd_event *e, kubelet_changed_fn changed, void *userdata, kubelet_watch **ret);
/*
 * The same follower for another file (the container runtime's socket: runtime.c), named so in the
 * log (a static string; default "the kubelet's configuration"). A file made as a whole (a socket,
 * a symlink) is a change at its creation, a regular file once written. changed() is also called
 * for kubeadm-flags.env beside the file: a caller that follows something else looks for itself.
 */
void kubelet_watch_set_subject(kubelet_watch *w, const char *subject);
kubelet_watch *kubelet_watch_free(kubelet_watch *w);

/*
 * (Re)arms the watch for path (NULL: none), always anew — a reload re-arms even an unchanged path,
 * so that a watch gone stale (a directory above it renamed, a bind mount over it) is replaced.
 * read: the files as the configuration just loaded found them (config_file_stamp), compared once
 * the watch is in place so that a change in between reloads too; NULL when that configuration was
 * not read (a rejected reload), to compare nothing.
 */
void kubelet_watch_arm(kubelet_watch *w, const char *path, const config_file_stamp read[2]);

/* The directory watched now (the kubelet's, or the ancestor waiting for it); NULL when none. */
const char *kubelet_watch_dir(const kubelet_watch *w);

/*
 * A reload that would turn a kubelet configuration read before into a broken one is refused (and
 * logged), as a broken evictd.conf is: the running configuration stays. At start, a broken one is
 * only a warning and evictd runs on evictd.conf alone.
 */
bool kubelet_reload_refused(const evictd_config *running, const evictd_config *next);
/* One warning for a broken or (explicitly set and) missing kubelet configuration, one per
 * threshold the kubelet would act on first. */
void kubelet_log_notes(evictd_daemon *d);
