/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Node-level reclaim from one decision to the next: what a plan (noderec.h) counts as pending for
 * each disk signal, for how long, how much of it calls for removing images, and whether the disk
 * signals wait. Pure: no I/O, no clock, no runtime. The caller keeps noderec_memory and
 * noderec_refusals between decisions, passes the time in, makes the one call an outcome names
 * (a listing or a removal) and logs what the outcome says.
 *
 * Return contract: functions that allocate return 0 or -ENOMEM and leave their output as it was on
 * failure; the others cannot fail.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "noderec.h"
#include "pending.h"
#include "thresholds.h"

/* The kubelet's container GC period (pkg/kubelet/kubelet.go ContainerGCPeriod): dead containers
 * still there after it are not coming back by the kubelet's hand soon. Counted from the first time
 * their reclaim was pending, across evictd's restarts (noderec_memory.pending_since is saved). */
#define KUBELET_CONTAINER_GC_PERIOD_USEC (60 * UINT64_C(1000000))
/* A refused image is skipped this long (the kubelet's image GC period): it costs one step, not
 * every eviction after it. */
#define NODEREC_REFUSAL_BACKOFF_USEC (5 * 60 * UINT64_C(1000000))
/* Refusals remembered at most (the oldest make room): each costs a plan's hash slot. */
#define NODEREC_REFUSALS_MAX 1024
/* A dead container the kubelet just removed counts this long at most until its space is back. */
#define NODEREC_VANISHED_USEC (10 * UINT64_C(1000000))

/* The threshold acted on for s (hard before soft), NULL when none is. */
const threshold_eval *noderec_acted_on(const evaluation *ev, evictd_signal s);
/* Some disk signal is acted on: a memory or pid decision needs no listing and no plan. */
bool noderec_any_disk(const evaluation *ev);

/* --- images the runtime refused to remove ---------------------------------------------------- */

typedef struct noderec_refusal {
	char *image_id;
	uint64_t until_usec; /* not planned again before */
} noderec_refusal;

typedef struct noderec_refusals {
	noderec_refusal *v;
	size_t n;
} noderec_refusals;

/* Drops the refusals whose back-off is over at now_usec. */
void noderec_refusals_prune(noderec_refusals *r, uint64_t now_usec);
/* image_id was refused at now_usec: backed off for NODEREC_REFUSAL_BACKOFF_USEC (the oldest is
 * forgotten beyond NODEREC_REFUSALS_MAX). 0 or -ENOMEM (then not remembered: tried again). */
int noderec_refusals_add(noderec_refusals *r, const char *image_id, uint64_t now_usec);
/* backed_off[i] for l->images[i] (as noderec_rules.backed_off wants it). 0 or -ENOMEM. */
int noderec_refusals_mark(const noderec_refusals *r, const cri_listing *l, bool *backed_off);
void noderec_refusals_done(noderec_refusals *r);

/* --- images' history, listing after listing ------------------------------------------------- */

/* The record of id among records (sorted by id), or NULL. */
const image_record *noderec_record_find(const image_record *records, size_t n, const char *id);
/* h[i] for l->images[i]: its record's history, or first seen now when it has none. */
void noderec_history_of(const image_record *records, size_t n, const cri_listing *l, uint64_t now_usec,
                        image_history *h);
/*
 * The records follow the listing: images new to it first seen now, those a container (running or
 * dead) names used now, those gone forgotten. *records and *n are replaced (the old ones freed).
 * Returns 1 when they changed (to be saved), 0 when not, -ENOMEM (left as they were: ages only
 * grow, so nothing becomes removable early).
 */
int noderec_records_follow(image_record **records, size_t *n, const cri_listing *l, uint64_t now_usec);
void noderec_records_free(image_record *records, size_t n);

/* --- what is counted, decision after decision ------------------------------------------------ */

typedef struct noderec_memory {
	uint64_t pending_since[_SIGNAL_MAX]; /* counted as pending since (0: not); saved across restarts */
	/* dead containers counted at the last decision, and what vanished from the listing since (the
	 * kubelet removed them) but is not back in the signal yet */
	int64_t last_dead[_SIGNAL_MAX], vanished[_SIGNAL_MAX], vanished_base[_SIGNAL_MAX];
	uint64_t vanished_until[_SIGNAL_MAX];
} noderec_memory;

/*
 * A disk signal no longer acted on has nothing pending any more: pressure coming back later starts
 * the kubelet's container GC period anew. ended[s] (may be NULL) says which signals' episodes are
 * over (acted on or not, their logs are said anew next time). True when a pending count ended.
 */
bool noderec_settle(noderec_memory *m, const evaluation *ev, bool ended[_SIGNAL_MAX]);

/*
 * Dead containers counted at the last decision and gone from this listing: the kubelet removed
 * them, and their writable layers come back as the runtime frees the snapshots, a moment later
 * (containerd's garbage collector). Until the signal shows them back, for NODEREC_VANISHED_USEC at
 * most, they still count: else the moment between the two would evict a pod for space on its way
 * back. o NULL: the signal is not acted on or not known (forgets). Returns what still counts.
 */
int64_t noderec_vanished_still(noderec_memory *m, evictd_signal s, const signal_obs *o, int64_t dead_now,
                               uint64_t now_usec);

/* What happens to a signal's count at this decision. */
typedef enum noderec_count {
	NODEREC_COUNT_NONE,    /* nothing counts: not acted on, nothing reclaimable, or below the kubelet's threshold */
	NODEREC_COUNT_PENDING, /* counted as pending */
	NODEREC_COUNT_EXPIRED, /* pending for the kubelet's container GC period already: no longer counted */
} noderec_count;

/*
 * The pending window of s at now_usec: counts says whether something is reclaimable and the
 * kubelet has not reached its own threshold. Opens the window (pending_since) when it starts,
 * closes it when nothing counts; *changed is set when pending_since changed (to be saved).
 */
noderec_count noderec_pending_window(noderec_memory *m, evictd_signal s, bool counts, uint64_t now_usec,
                                     bool *changed);

/*
 * What s still needs once everything pending is counted, in its unit: the threshold plus its
 * minimum reclaim, less what is available, what node-level reclaim counts and what reclaiming pods
 * give back. <= 0: nothing to remove. te NULL: not acted on (0).
 */
int64_t noderec_need(const threshold_eval *te, const signal_obs *o, int64_t counted, const pending_reclaim *pods_pending,
                     evictd_signal s);

/* --- one decision's outcome ------------------------------------------------------------------ */

/* The runtime's state that the outcome depends on. */
typedef struct noderec_situation {
	node_reclaim_mode mode;
	bool dry_run;
	disk_layout layout;
	const threshold_value *kubelet_hard; /* the kubelet's hard thresholds ([_SIGNAL_MAX]) */
	bool kubelet_read;                   /* ...read from its configuration (else its defaults) */
	bool listing_usable;                 /* a listing young enough to plan from (else p is NULL) */
	bool removal_running;                /* a removal is in flight */
	bool listing_for_removal;            /* the listing was asked after a removal was wanted */
	bool sandbox_asking;                 /* the runtime's sandbox image not said yet */
	bool failed_recently;                /* the last listing failed within its TTL: no new one */
} noderec_situation;

/* How long a disk signal waits before a pod may be evicted for it (the kubelet measures after its reclaim). */
typedef enum noderec_hold {
	NODEREC_HOLD_NONE,
	NODEREC_HOLD_ANSWER,  /* no usable listing: while one, or a removal, is in flight */
	NODEREC_HOLD_LISTING, /* while the listing asked for a removal, or the sandbox image, is awaited */
	NODEREC_HOLD_REMOVAL, /* while the removal (in flight, or asked by this outcome) lasts */
} noderec_hold;

/* The one call to the runtime this decision asks for. */
typedef enum noderec_call {
	NODEREC_CALL_NONE,
	NODEREC_CALL_LIST,             /* the listing is stale: list again */
	NODEREC_CALL_LIST_FOR_REMOVAL, /* images are to go: list again first (a container started since keeps its image) */
	NODEREC_CALL_REMOVE,           /* remove the plan's first call_n images for call_signal */
} noderec_call;

typedef struct noderec_outcome {
	runtime_signal_plan s[_SIGNAL_MAX]; /* .hold is the caller's, from hold[] once the call is made */
	noderec_count count[_SIGNAL_MAX];
	int64_t counted[_SIGNAL_MAX];    /* what reclaim would give back, counted or not (expired), without
	                                  * what a dry run would remove */
	noderec_hold hold[_SIGNAL_MAX];
	bool images_matter[_SIGNAL_MAX]; /* acted on with an image step: the images kept deserve a word */
	bool pending_changed;            /* noderec_memory.pending_since changed: save it */
	noderec_call call;
	evictd_signal call_signal;
	size_t call_n;
	int64_t call_before;             /* the signal's value when the removal was asked */
} noderec_outcome;

/*
 * One decision for the disk signals of ev: what each counts as pending (dead containers, what
 * vanished and is not back, unused images when node-reclaim = account, what a dry run would
 * remove), the images its need calls for (node-reclaim = images), whether it waits, and the one
 * call to make. p and l NULL when no listing is usable (sit->listing_usable false): every disk
 * signal then waits for the runtime's answer, and a listing is asked while one is acted on.
 */
void noderec_decide(const noderec_plan *p, const cri_listing *l, const noderec_situation *sit, const evaluation *ev,
                    const node_signals *node, const pending_reclaim *pods_pending, uint64_t now_usec,
                    noderec_memory *m, noderec_outcome *out);
