/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The service's state, shared by its three parts, top to bottom (each calls only those below):
 *   evictd-daemon.c the event loop and its sources (timer, PSI, inotify, signals), configuration
 *                   and reload, the lock, start and stop
 *   victims.c       the victims' records: written after each change of a victim's state, resumed
 *                   at start (evictions, reclaims, back-offs)
 *   engine.c        one evaluation: observe (node signals, pods when needed) -> decide -> act,
 *                   and what follows an eviction's events (memo, metrics, history)
 *   status-out.c    what the service tells readers: status.json and sd_notify STATUS=
 * Private to agent/evictd/.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "cadence.h"
#include "cgdiscover.h"
#include "config.h"
#include "evictd-daemon.h"
#include "decide.h"
#include "events.h"
#include "evictor.h"
#include "heartbeat.h"
#include "jsonw.h"
#include "evictd-metrics.h"
#include "node.h"
#include "podmemo.h"
#include "reclaim.h"
#include "runtime.h"
#include "scan.h"
#include "status-file.h"
#include "thresholds.h"

/* Timer accuracy of the shutdown timer; the polling tick's grows with its sleep (cadence_timer). */
#define TICK_ACCURACY_USEC 1000ULL
/* While idle, signal-only changes refresh status.json at most this often. */
#define STATUS_IDLE_REFRESH_USEC (30ULL * 1000000ULL)
/* While a pod reclaims, how often its cgroup is looked at (the kubelet polls every 1 s). Only then:
 * an idle node pays nothing for it. */
#define RECLAIM_POLL_USEC (100ULL * 1000ULL)
/* On SIGTERM, how long in-flight evictions get to finish before the daemon exits anyway. */
#define SHUTDOWN_EXTRA_USEC (2ULL * 1000000ULL)
#define MAX_WATCHES 8

typedef struct evictd_daemon evictd_daemon;
typedef struct kubelet_watch kubelet_watch; /* kubelet-watch.h */

struct evictd_daemon {
	sd_event *event;
	const daemon_options *opts;
	evictd_config *cfg;
	evictor *ev;
	char *status_path;
	pod_memo *memo;             /* evicted pods and failing ones: not chosen (again) for now */
	reclaim_set *reclaim;       /* victims until the node has their resources back (act/reclaim.h) */
	uint64_t reclaimed, reclaim_timeouts; /* for the heartbeat */
	int lock_fd;                /* one evictd per node (pidlock.h) */
	char *run_dir;              /* fixed at start: the lock, victim records, node-level reclaim's state */
	char *inflight_dir;         /* fixed at start: evictions in flight hold a pointer to it */

	sd_event_source *tick;
	sd_event_source *watches[MAX_WATCHES]; /* PSI triggers and inotify watches */
	size_t n_watches;
	sd_event_source *shutdown_timer;
	kubelet_watch *kubelet_watch; /* follows the kubelet's configuration (kubelet-watch.c); NULL: none */
	metrics *metrics;           /* counters, and the metrics-file when configured */
	heartbeat *heartbeat;       /* the "monitoring" line, SIGUSR1 and the foreground's minute beat */
	runtime_state *rt;          /* the container runtime (runtime.h): node-level reclaim, writable layers */

	bool stopping;
	int stop_signal;            /* SIGTERM or SIGINT, for the last line */
	bool dirty;                 /* status.json must be rewritten now */
	uint64_t status_written_usec;
	status_history history;
	char last_eviction[400];    /* for STATUS= */
	char last_status_line[1024];
	uint32_t status_known_mask; /* the signals' known bits STATUS= was last built from */
	unsigned evaluations;

	/* what is observed (re-opened on reload: cgroup-root and proc-root may change) */
	cg_info cg;
	scanner *sc;
	int proc_fd;                /* for PSI triggers */
	const char *kubepods;
	node_signals node;
	bool node_valid;
	node_cache node_cache;      /* descriptors of the idle tick's reads */
	threshold_state ts;
	evaluation eval;
	bool status_error_logged;
	signal_report_state signal_report;

	/* the idle tick's shortcut (see evaluate) */
	const evictd_config *want_for; /* the configuration want[] was computed from; NULL: stale */
	bool want[_SIGNAL_MAX];        /* signals with a hard or soft threshold */
	bool quiet;                    /* last evaluation: nothing met, no condition, nothing changed */
	node_signals quiet_node;       /* the wanted signals it was computed from */
	cadence_state cadence;         /* when each signal is due (cadence.h) */
	uint64_t tick_slack_usec;      /* the pending tick's accuracy: signals due within it are read */
};
