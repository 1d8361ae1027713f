/* SPDX-License-Identifier: MIT */
#pragma once

/* The kubelet's configuration beside evictd.conf (kubelet-watch.c): watched, and explained. */

#include <stdbool.h>

#include "daemon-state.h"

/*
 * Watches the directory of [kubernetes] kubelet-config (again after a reload); quiet when it has
 * none. A change calls changed(d, why): the loop's reload, passed in so that this file never
 * calls up into daemon.c.
 */
void kubelet_watch_setup(evictd_daemon *d, kubelet_changed_fn changed);
void kubelet_watch_done(evictd_daemon *d);
/*
 * A reload that would turn a kubelet configuration read before into a broken one is refused (and
 * logged), as a broken evictd.conf is: the running configuration stays. At start, a broken one is
 * only a warning and evictd runs on evictd.conf alone.
 */
bool kubelet_reload_refused(const evictd_config *running, const evictd_config *next);
/* One warning for a broken kubelet configuration, one per signal the kubelet would act on first. */
void kubelet_log_notes(evictd_daemon *d);
