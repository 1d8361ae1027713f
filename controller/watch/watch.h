/* SPDX-License-Identifier: MIT */
/*
 * What kube-scheduler watches, kept in step with kube/'s reflector: PriorityClasses, Nodes,
 * PodDisruptionBudgets, and every pod that has not finished
 * (fieldSelector=status.phase!=Succeeded,status.phase!=Failed) — list, then watch with bookmarks,
 * 410 → relist, resumed after drops. Each object is decoded as it arrives and applied to the model
 * at once (model/model-cluster.c), one event at a time. A relist removes what it no longer lists.
 *
 * The pods are listed only once the classes, nodes and budgets are: a pod without spec.priority
 * needs its class, and a bound pod is best placed on its real node.
 *
 * An object the decoder or the model refuses is logged once (KIND/NS/NAME: field: what) and
 * skipped; the watch goes on.
 */
#ifndef CTL_WATCH_H
#define CTL_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "model-cluster.h"
#include "kmulti.h"

typedef struct watch watch;

typedef struct watch_opts {
	unsigned page_limit;         /* list page size; 0: 500 */
	uint64_t watch_timeout_usec; /* shortest timeoutSeconds, each in [t, 2t); 0: 300 s */
	uint64_t retry_max_usec;     /* back-off cap; 0: 30 s */
} watch_opts;

/* e and m may be NULL: then nothing is listed or watched, and only watch_replay() feeds it (tests,
 * benchmarks: a recorded stream in place of the API server). */
int watch_new(sd_event *e, kube_multi *m, cluster *c, const watch_opts *o, watch **ret);
watch *watch_free(watch *w);

void watch_start(watch *w);
/* Every kind listed at least once. */
bool watch_synced(const watch *w);

/* A recorded watch stream of kind k (concatenated watch events, any chunking) applied as if it
 * came from the API server. 0 or -errno (the decoder's). */
int watch_replay(watch *w, cluster_kind k, const void *buf, size_t len);

/* Replayed calls too (no kube_multi): watch_start() and what follows ask for lists and watches
 * that watch_replay_request() shows (path and query; NULL: none); watch_replay() feeds the body
 * of the one in progress and watch_replay_end() ends it with an HTTP status, as the API server's
 * answer would (kube/reflector.h). */
int watch_replay_end(watch *w, cluster_kind k, long status);
const char *watch_replay_request(const watch *w, cluster_kind k);

typedef struct watch_stats {
	uint64_t lists[CLUSTER_KINDS];     /* lists completed (the first and every relist) */
	uint64_t restarts[CLUSTER_KINDS];  /* watches restarted after a failure or a 410 */
	uint64_t events[CLUSTER_KINDS];    /* watch events applied */
	uint64_t refused[CLUSTER_KINDS];   /* objects refused (decoder or model) */
} watch_stats;
void watch_get_stats(const watch *w, watch_stats *ret);

#endif
