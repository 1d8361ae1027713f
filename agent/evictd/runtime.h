/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * evictd and the container runtime: the CRI client (cri/) on the daemon's loop, the latest listing
 * and each image's history, the disk layout, and node-level reclaim before disk evictions
 * (decide/noderec.h plans it and decide/noderec-policy.h weighs it decision after decision;
 * act/image-remove.h removes images). The runtime is asked at start
 * (its version, its image filesystem, the images to date) and then only while a disk threshold is
 * met: an idle node pays nothing for it. Every call has a deadline and nothing waits for one: a
 * listing or a removal in progress only holds the disk signals it concerns (decide.h's
 * node_reclaim_input), never a memory or pid eviction, never the loop.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "decide.h"
#include "noderec-policy.h"
#include "snapshot.h"
#include "thresholds.h"

typedef struct runtime_state runtime_state;

/* Something the runtime said changed what a decision would be: evaluate again. */
typedef void (*runtime_changed_fn)(void *userdata);

/* A listing is used for this long; an older one is asked again (while a disk threshold is met). */
#define RUNTIME_LISTING_TTL_USEC (10 * UINT64_C(1000000))

/*
 * The endpoint: the key's, else the kubelet's containerRuntimeEndpoint, else containerd's socket,
 * else CRI-O's (whichever exists). Never fails for want of a runtime: runtime_enabled() says.
 * state_dir (the run directory; NULL: none, as for --once): where the pending reclaim's age and the
 * images' history are kept across restarts (noderec-state.h), resumed here. Returns 0 or -ENOMEM.
 */
int runtime_state_new(sd_event *e, const evictd_config *cfg, const char *state_dir, runtime_changed_fn changed,
                      void *userdata, runtime_state **ret);
runtime_state *runtime_state_free(runtime_state *rt);
bool runtime_enabled(const runtime_state *rt);
/* The socket, or why there is none. */
const char *runtime_describe(const runtime_state *rt);

/* The daemon's start: Version and a first listing (layout, images first seen), each logged once. */
void runtime_start(runtime_state *rt, uint64_t now_usec);
/* --once: a full listing, running the loop until it ends (its deadlines bound it). 0 or -errno. */
int runtime_list_now(runtime_state *rt, uint64_t now_usec);



/*
 * Before a decision: attributes the latest listing to snap (runtime-disk.h), plans node-level
 * reclaim for the actionable disk signals of ev, starts image removals when node-reclaim = images
 * (not in a dry run), asks for a new listing when the one known is stale, and fills out for decide
 * and plan (may be NULL) for the report. pods_pending: what reclaiming pods give back already.
 */
void runtime_prepare(runtime_state *rt, snapshot *snap, const evaluation *ev, const pending_reclaim *pods_pending,
                     uint64_t now_usec, node_reclaim_input *out, runtime_plan *plan);
/*
 * Every evaluation, also one with nothing to act on: a disk signal no longer acted on has nothing
 * pending any more, so that pressure coming back later starts the kubelet's container GC period
 * anew instead of finding an old count expired. No I/O unless a count ends (then saved).
 */
void runtime_settle(runtime_state *rt, const evaluation *ev);
/* After a decision: the journal entries of signals that node-level reclaim covered, once per episode. */
void runtime_after_decision(runtime_state *rt, const decision *dec, const snapshot *snap);
/* Every evaluation (cheap): a finished image removal is logged with the signal measured again. */
void runtime_observe(runtime_state *rt, const node_signals *node);
/*
 * An evicted pod's processes are gone, or its pod cgroup: its containers changed state since the
 * latest listing, where they still ran. The next disk decision waits for a new listing, in which
 * they are dead containers whose writable layers and logs the kubelet's container GC will free
 * (pending), instead of taking them for gone and choosing the next pod.
 */
void runtime_forget_listing(runtime_state *rt);
/* After a reload: the configuration's pointer, and a new client when the endpoint changed. */
void runtime_reconfigure(runtime_state *rt, const evictd_config *cfg);
/* For metrics: images removed and their bytes so far, the pending of the last decision, and
 * whether the runtime answered its last call (1), did not (0), or there is none (-1). */
void runtime_counters(const runtime_state *rt, uint64_t *images_removed, uint64_t *bytes_removed,
                      int64_t pending[_SIGNAL_MAX], int *up);
