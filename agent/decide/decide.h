/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The decision: snapshot + configuration + threshold state + time -> conditions, thresholds met,
 * ranked pods, pods to evict (with the signal and grace period). Pure: no I/O, no clock, so
 * that it is unit-testable with an injected clock and reusable by the daemon and --once.
 *
 * Selection (beyond the kubelet's one pod per 10 s): for each actionable threshold, hard before
 * soft, memory before pid before disk before PSI, walk the ranking and take pods until their
 * expected reclaim brings the signal back to threshold + minimum reclaim. Expected reclaim of a
 * pod = its memory working set (memory signals), its task count (pid.available), or its measured
 * nodefs usage, emptyDir volumes + logs, in bytes or inodes (nodefs.*; scanner_measure_disk).
 * Pods being evicted already (inflight) are never chosen again and their expected reclaim
 * counts. Pods the daemon asks to skip (evicted already, or in retry back-off after a failed
 * eviction: podmemo.h) are not chosen either, and their reclaim does not count, so the next pods
 * in the ranking are taken. Where a pod's reclaim cannot be estimated (imagefs.*: writable layers are the runtime's;
 * PSI; nodefs with no measurement) or is zero or only a lower bound, that pod ends the batch,
 * and no pod is chosen while an eviction of unpredictable effect is in flight. Pods evicted and
 * still reclaiming (decide_input.pending) count the same way with what they were expected to give
 * back when chosen (pending.h). The batch rule: the walk takes pods exceeding their requests
 * first and stops where pods within their requests begin; when what it may take cannot cover the
 * need but the whole ranking (pods within their requests included) can, the walk's pods all go in
 * one batch and the next step is chosen after measuring again; only when even every candidate
 * together cannot cover the need (the pressure comes from outside the pods) is one pod chosen,
 * the kubelet's step.
 * nodefs.inodesFree ranks by inodes with no request (deviation from the kubelet, which
 * subtracts the byte request from the inode count): a pod "exceeds" when it uses any inode.
 * Pods within their requests are not taken in the same decision as pods exceeding them.
 * Critical pods (priority >= 2,000,000,000), evictd's own cgroup and pods without usage
 * statistics are ranked but never chosen.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "pending.h"
#include "snapshot.h"
#include "thresholds.h"

typedef struct ranked_pod {
	size_t pod;           /* index into snapshot->pods */
	bool exceeds;         /* usage > request (never for pid) */
	bool lower_bound;     /* disk/inodes: usage is a lower bound (the walk hit its limits) */
	bool has_usage;
	int64_t usage;        /* memory: working set bytes; pid: tasks; disk: bytes; inodes: inodes */
	int64_t request;      /* memory or ephemeral-storage request, bytes */
	bool candidate;
	const char *excluded; /* why not a candidate (static string), NULL for candidates */
} ranked_pod;

typedef struct eviction_choice {
	size_t pod;              /* index into snapshot->pods */
	evictd_signal signal;
	threshold_kind kind;
	unsigned rank;           /* 1-based position in the signal's ranking */
	uint64_t grace_usec;     /* 0 = immediate (hard threshold) */
	int64_t observed, threshold, min_reclaim;
	int64_t expected_reclaim; /* in the signal's unit; -1 when it cannot be estimated */
} eviction_choice;

typedef struct decision {
	evaluation eval;
	ranked_pod *ranking[_RANK_MAX]; /* NULL when that ranking was not needed */
	size_t n_ranked;                /* = snapshot->n_pods */
	eviction_choice *evict;
	size_t n_evict;
	bool node_held[_SIGNAL_MAX];    /* actionable, but node-level reclaim runs: no pod chosen */
	bool node_covered[_SIGNAL_MAX]; /* actionable, but node-level reclaim's pending covers the need */
} decision;

/* What the node is about to get back without another eviction, per signal: pending.h. */

/*
 * The kubelet's node-level reclaim before a disk eviction (decide/noderec.h computes it, the daemon
 * runs it): what it will give back counts like a reclaiming pod's reclaim — only pressure beyond it
 * chooses a pod — and while it runs (images being removed, the runtime's listing awaited) no pod is
 * chosen for the signal: the kubelet measures again after its reclaim before it evicts.
 */
typedef struct node_reclaim_input {
	int64_t pending[_SIGNAL_MAX]; /* in the signal's unit */
	bool hold[_SIGNAL_MAX];
} node_reclaim_input;

typedef struct decide_input {
	const snapshot *snap;
	const evictd_config *cfg;
	uint64_t now_usec;
	const char *const *inflight_uids; /* pods being evicted: excluded, their reclaim counts */
	size_t n_inflight;
	const char *const *skip_uids;     /* pods not to choose (evicted already, in retry back-off)... */
	const char *const *skip_why;      /* ...and why (static strings); their reclaim does not count */
	size_t n_skip;
	const pending_reclaim *pending;   /* NULL: nothing is pending (pods reclaiming) */
	const node_reclaim_input *node;   /* NULL: no container runtime (no node-level reclaim) */
	bool rank_all; /* compute every ranking, even with nothing actionable (--once, status) */
} decide_input;

/* What evicting p is expected to give back for signal s (its unit), or -1 when it cannot be estimated. */
int64_t decide_pod_expected_reclaim(evictd_signal s, const pod_info *p);

/* Fills ret (free with decide_decision_free) and updates st. Returns 0 or -ENOMEM (st unchanged then). */
int decide_evictions(const decide_input *in, threshold_state *st, decision *ret);
void decide_decision_free(decision *d);

/* Human-readable reason for a ranked position ("working set 1.2Gi exceeds request 512Mi; priority 0"). */
const char *decide_ranked_reason(evictd_rank_kind k, const pod_info *p, const ranked_pod *r, char *buf, size_t size);

/* Formats a value in the signal's unit ("80Mi", "12000", "41.50%"). */
const char *decide_format_signal_value(evictd_signal s, int64_t v, char *buf, size_t size);
