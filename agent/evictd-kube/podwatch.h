/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The pods bound to this node, kept in the descriptor directory: list (limit/continue) then watch
 * from the list's resourceVersion with bookmarks, the node authorizer's only allowed selector
 * (fieldSelector=spec.nodeName=<node>). A watch that ends is resumed from the last
 * resourceVersion; 410 Gone (too old) relists; any failure retries after a jittered exponential
 * backoff. Nothing here blocks: every call runs on the kube_multi of the event loop.
 */

#include <stdint.h>
#include <systemd/sd-event.h>

#include "descdir.h"
#include "kmulti.h"

typedef struct podwatch podwatch;

typedef struct podwatch_opts {
	const char *node_name;
	unsigned page_limit;           /* list page size; 0: 500 */
	uint64_t watch_timeout_usec;   /* shortest timeoutSeconds: each in [t, 2t) */
	uint64_t retry_max_usec;       /* backoff cap */
} podwatch_opts;

int podwatch_new(sd_event *e, kube_multi *m, descdir *dir, const podwatch_opts *o, podwatch **ret);
podwatch *podwatch_free(podwatch *w);

/* Starts the first list. */
int podwatch_start(podwatch *w);

/* Pods currently known (for status and tests). */
unsigned podwatch_count(const podwatch *w);
