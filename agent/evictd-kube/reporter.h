/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The eviction spool's consumer: reports each record evictd wrote (agent/spool.h), oldest first,
 * the way the kubelet reports its own evictions:
 *   1. a Warning Event "Evicted" on the pod with the kubelet's message (core/v1 Events; the name
 *      is derived from the record, so a repeat after a restart is 409 AlreadyExists, not a
 *      duplicate);
 *   2. the DisruptionTarget condition (reason TerminationByKubelet) by a pods/status patch that
 *      carries metadata.uid as a precondition;
 *   3. DELETE with preconditions.uid (a replacement pod with the same name is never hit), or,
 *      with eviction-api = eviction, POST pods/eviction (a 429 from a PodDisruptionBudget is
 *      logged; evictd's local kill goes on regardless).
 * Threshold records become the node Event EvictionThresholdMet; condition records are evictd's word
 * on its own Node conditions (EvictdMemoryPressure, ...), handed to nodecond (nodecond.h), their
 * one writer; a record superseded by a newer one of the same condition is dropped unposted.
 * A record is removed once every step is done or permanently refused (404, 409 precondition,
 * 403, 422: logged). Transient failures (no connection, timeouts, 5xx, 429 rate limiting, 401)
 * keep it and retry with a jittered backoff, in order; the file survives restarts of either side.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "kmulti.h"
#include "nodecond.h"

typedef struct reporter reporter;

typedef struct reporter_opts {
	const char *spool_dir;
	const char *node_name;
	bool eviction_api;
	uint64_t retry_max_usec;
} reporter_opts;

/* conditions: the writer of evictd's Node conditions, which asks the reporter whether condition
 * records wait: free it before the reporter. */
int reporter_new(sd_event *e, kube_multi *m, nodecond *conditions, const reporter_opts *o, reporter **ret);
reporter *reporter_free(reporter *r);

/* Looks at the spool now (also done on inotify events and after each record). */
void reporter_kick(reporter *r);

/* Records waiting (for status and tests). */
unsigned reporter_pending(reporter *r);
