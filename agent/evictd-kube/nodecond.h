/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * evictd's Node conditions — EvictdMemoryPressure, EvictdDiskPressure, EvictdPIDPressure — and
 * their one writer (the reporter hands it evictd's condition records as they come). What each
 * condition says, by evictd's liveness (liveness.h):
 *   - evictd runs: its last word on the condition, the record from the spool (True while it
 *     relieves that pressure, False once over). One it said nothing about that evictd-kube knows
 *     of (its record lost, or only evictd-kube's own Unknown on the Node) is taken from the
 *     conditions its status file lists.
 *   - evictd stopped in order: its stop records (reason EvictdStopped: False where the pressure is
 *     known to be gone, else Unknown), or Unknown (EvictdStopped) for one whose record never came.
 *   - evictd ended without a word (SIGKILL, a crash: at once, through its pidfd), or has not run
 *     since /run was emptied: Unknown, reason EvictdNotRunning; stuck (its status file overdue):
 *     Unknown, reason EvictdNotResponding. Until evictd's next word.
 * While condition records wait in the spool, an Unknown of evictd-kube's own inference waits for
 * them: evictd's stop records are its last word, not a liveness guess.
 *
 * Every condition evictd-kube keeps is posted again each heartbeat period with a fresh
 * lastHeartbeatTime, as node-problem-detector does, so that a reader can tell a stale one (older
 * than twice the period: evictd-kube is not reporting). lastTransitionTime changes only when the
 * status does: the Node's conditions are read first, and a status equal to the Node's keeps the
 * Node's time, across restarts of either process. Only conditions evictd-kube has a word or an
 * earlier post of are written; none is created for a Node evictd never reported on.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "condparse.h"
#include "kmulti.h"

typedef struct nodecond nodecond;

typedef struct nodecond_opts {
	const char *node_name;
	const char *status_path;   /* evictd's status file ([agent] status-file) */
	uint64_t heartbeat_usec;   /* [kubernetes] condition-heartbeat */
	uint64_t retry_max_usec;
} nodecond_opts;

/* evictd's word on one condition: a condition record of the spool. */
typedef struct nodecond_word {
	const char *type, *status, *reason, *message;
	const char *at; /* the record's startedAt (RFC 3339), "" when none */
} nodecond_word;

/* The word's fate: 0 the Node has it; else the HTTP status that refused it for good (logged). */
typedef void (*nodecond_done_fn)(long refused, void *userdata);

int nodecond_new(sd_event *e, kube_multi *m, const nodecond_opts *o, nodecond **ret);
/* Calls in flight are dropped; a word's done is not called. */
nodecond *nodecond_free(nodecond *n);

/* Reads the Node's conditions, then keeps them. */
void nodecond_start(nodecond *n);

/* While fn says condition records wait in the spool, an inferred Unknown waits for them. */
void nodecond_set_words_pending(nodecond *n, bool (*fn)(void *userdata), void *userdata);

/*
 * Posts evictd's word; done once the Node has it or it is refused. -EINVAL: not one of evictd's
 * condition types, or a status other than True, False, Unknown; -EBUSY: a word is in progress.
 */
int nodecond_take_word(nodecond *n, const nodecond_word *w, nodecond_done_fn done, void *userdata);
