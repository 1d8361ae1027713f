/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the daemon tells the person watching it, in one entry each:
 *   at start and after a reload: "monitoring memory.available (hard 100Mi), ...; unavailable here:
 *     nodefs.available (<why>); 12 pods; dry run", or "monitoring nothing: <why>" when no signal
 *     that has a threshold can be read (in a terminal it stands for the configuration entry and
 *     the first per-signal warnings, which only the journal gets, and each reason has a line);
 *   the heartbeat, on SIGUSR1 (and at start and every minute in the foreground, i.e. logging to
 *     stderr; under systemd the journal gets it on SIGUSR1 only): each monitored signal against
 *     its thresholds, pods, evictions;
 *   at the end: "stopped on SIGINT after 3m12s; 2 evictions, ...", so that a stop is never silent.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "snapshot.h"
#include "thresholds.h"

#define HEARTBEAT_PERIOD_USEC (60 * USEC_PER_SEC)

/* The daemon's state, as the lines need it. */
typedef struct heartbeat_view {
	const evictd_config *cfg;
	const node_signals *node; /* NULL: not read yet */
	const evaluation *eval;   /* may be NULL */
	long pods;                /* pod cgroups found; -1 unknown */
	unsigned in_flight;
	uint64_t evictions;       /* started since the daemon started (dry runs included) */
	unsigned reclaiming;      /* evicted pods whose cgroup is not removed yet */
	uint64_t reclaimed, reclaim_timeouts; /* reclaims ended since the daemon started */
} heartbeat_view;

/* "monitoring ..." (without "evictd: "); lines: for a terminal, each unavailable signal's reason
 * on a line of its own ("\n  " before each) instead of all in one. */
void heartbeat_monitoring_text(const heartbeat_view *v, bool lines, char *buf, size_t size);
/* "stopped on SIGINT after 3m12s; 2 evictions, 0 in flight; dry run" (why may be NULL). */
void heartbeat_stop_text(const heartbeat_view *v, const char *why, uint64_t ran_usec, char *buf, size_t size);
/* "heartbeat: memory.available 3.2Gi (hard 100Mi), ...; 12 pods; 3 evictions, 1 in flight". */
void heartbeat_text(const heartbeat_view *v, char *buf, size_t size);

/*
 * "fall rates for 2 CPUs: memory 12Gi/s, pids 20000/s; disk 4Gi/s, inodes 100000/s": the rate
 * model's figures, those derived from the CPUs first ("(memory-max-rate)" when a key set one).
 */
void heartbeat_fall_rates_text(const evictd_config *c, char *buf, size_t size);

/* Pod cgroups matching the pods patterns under root_fd, or -1 when they cannot be listed. */
long heartbeat_count_pods(int root_fd, char *const *patterns);

typedef struct heartbeat heartbeat;
/* Fills *v with the daemon's current state. */
typedef void (*heartbeat_view_fn)(heartbeat_view *v, void *userdata);

/*
 * Blocks SIGUSR1 and answers it with a heartbeat; every_minute adds one per
 * HEARTBEAT_PERIOD_USEC. Returns 0 or -errno.
 */
int heartbeat_new(sd_event *e, bool every_minute, heartbeat_view_fn fn, void *userdata, heartbeat **ret);
heartbeat *heartbeat_free(heartbeat *h);
/* Logs the "monitoring" line (after a reload). */
void heartbeat_announce(heartbeat *h);
/* At start: the "monitoring" line and, in the foreground, a first heartbeat at once. */
void heartbeat_started(heartbeat *h);
/* At the end: "stopped on WHY after ...", with the evictions; why names the signal (may be NULL). */
void heartbeat_stopped(heartbeat *h, const char *why);
