/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Prometheus metrics through node_exporter's textfile collector: no listening socket (the unit
 * keeps PrivateNetwork=yes); the file named by the metrics-file key is rewritten atomically (a
 * temporary file in the same directory, mode 0644, renamed over it) when its content changes —
 * at once for events (evictions, thresholds met or cleared, conditions), and at most every
 * METRICS_REFRESH_USEC for the observed values alone, so that an idle node does not rewrite it
 * every tick. The counters are kept whether or not a file is configured (the heartbeat reads them).
 *
 *   evictd_evictions_total{signal,kind,outcome}   counter, finished evictions: reclaimed, reclaim-timeout
 *                                                 (an eviction is over when the node has the pod's
 *                                                 resources back), else the evictor's outcome
 *   evictd_evictions_started_total                counter, evictions started (dry runs included)
 *   evictd_evictions_in_flight                    gauge
 *   evictd_pods_reclaiming                        gauge, evicted pods whose cgroup is not removed yet
 *   evictd_node_reclaim_images_removed_total      counter, unused images removed by node-level reclaim
 *   evictd_node_reclaim_image_bytes_total         counter, their sizes as the runtime counts them
 *   evictd_node_reclaim_pending{signal}           gauge, node-level reclaim counted as pending (signal's unit)
 *   evictd_runtime_up                             gauge 0/1: the container runtime answered its last call
 *   evictd_signal_observed{signal}                gauge, in the signal's base unit (PSI: 0-1)
 *   evictd_signal_threshold{signal,kind}          gauge, resolved against the signal's capacity
 *   evictd_threshold_met{signal,kind}             gauge 0/1
 *   evictd_node_condition{condition}              gauge 0/1
 *   evictd_decision_duration_seconds              histogram: pod scan + ranking + choice, per decision
 *   evictd_scan_duration_seconds                  histogram: the full pod scan
 *   evictd_reclaim_duration_seconds               histogram: processes gone -> pod cgroup gone (or timeout)
 *
 * No Debian 12 package provides a C client for the text format (only Go, Perl), hence this
 * emitter; its output is checked with prometheus_client's parser in the tests.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "snapshot.h"
#include "thresholds.h"

#define METRICS_REFRESH_USEC (15 * USEC_PER_SEC)
#define METRICS_MAX_BYTES (64 * 1024)

typedef struct metrics metrics;

int metrics_new(metrics **ret);
metrics *metrics_free(metrics *m);

void metrics_eviction_started(metrics *m);
/* A finished eviction: signal name, hard or soft, evict_outcome_to_string(). */
void metrics_eviction_finished(metrics *m, const char *signal, bool hard, const char *outcome);
void metrics_observe_decision(metrics *m, uint64_t usec);
void metrics_observe_scan(metrics *m, uint64_t usec);
/* An evicted pod's reclaim ended (cgroup gone, or timed out): processes gone -> then. */
void metrics_observe_reclaim(metrics *m, uint64_t usec);
void metrics_set_reclaiming(metrics *m, unsigned n);
/* Node-level reclaim: totals so far (images removed, their bytes), pending per signal, the runtime's state. */
void metrics_set_node_reclaim(metrics *m, uint64_t images_removed, uint64_t bytes_removed,
                              const int64_t pending[_SIGNAL_MAX], int runtime_up);
uint64_t metrics_evictions_started(const metrics *m);

/* The text exposition of everything, into buf (NUL-terminated). Returns its length or -ENOBUFS. */
int metrics_render(const metrics *m, const evictd_config *cfg, const node_signals *node, const evaluation *eval,
                   unsigned in_flight, char *buf, size_t size);

/*
 * Writes cfg->metrics_file when due (see above). node may be NULL before the first read.
 * Returns 0 (written or nothing to do) or the -errno of a failed write.
 */
int metrics_update(metrics *m, const evictd_config *cfg, const node_signals *node, const evaluation *eval,
                   unsigned in_flight, uint64_t now_usec);
