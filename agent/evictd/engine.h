/* SPDX-License-Identifier: MIT */
#pragma once

/* One evaluation cycle of the service (engine.c). */

#include "evictd-state.h"

/* What is observed: the scanner, the proc fd, the kubepods cgroup. */
int engine_init(evictd_daemon *d);
void engine_done(evictd_daemon *d);
/* The scanner holds the configuration by pointer: after a reload it must follow the new one. */
void engine_reconfigure(evictd_daemon *d);
/* One evaluation, then the next tick is scheduled and the status refreshed. */
void evictd_evaluate(evictd_daemon *d, const char *reason);
/* The evictor's callback. */
void engine_on_eviction(evictor *ev, evict_event what, const evict_info *info, void *userdata);
