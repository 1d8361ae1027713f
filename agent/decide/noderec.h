/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The kubelet's node-level reclaim before a disk eviction (reclaimNodeLevelResources; reference
 * kubelet-eviction.md §6, cri.md §4), planned from a runtime listing. Pure: no I/O, no clock.
 *
 * Which steps a signal gets follows the layout (buildSignalToNodeReclaimFuncs):
 *   single filesystem   nodefs.*, imagefs.*: dead containers, then unused images
 *   dedicated imagefs   nodefs.*: none; imagefs.*: dead containers, then unused images
 *   split               nodefs.*: dead containers; imagefs.*: unused images
 * Dead containers are the kubelet's to remove (its restart counts and `kubectl logs --previous`
 * need them): what its DeleteAllUnusedContainers would free counts as pending. Unused images — no
 * container, running or dead, uses them; not pinned; not the runtime's sandbox (pause) image,
 * whatever pinned says (containerd before 1.6.22 does not pin it, and a node without it starts no
 * pod without a registry); no removal of it failed lately; first seen at least
 * image-minimum-gc-age ago — are removed through the CRI, least recently used first (never used
 * first, then the oldest seen), until the need is covered; for inode signals all of them (an
 * image's inode count is not known, and the kubelet removes them all too).
 *
 * Linear in the listing: containers, sandboxes and images are related through hash indexes
 * (common/idindex.h), never by comparing every pair.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "cri.h"
#include "signals.h"
#include "snapshot.h"

typedef enum noderec_step {
	NODEREC_CONTAINERS = 1 << 0,
	NODEREC_IMAGES = 1 << 1,
} noderec_step;

/* A disk signal (nodefs.*, imagefs.*): the only ones node-level reclaim serves. */
bool noderec_disk_signal(evictd_signal s);
/* An inode signal (*.inodesFree): an image's inode count is not known, so images count for bytes only. */
bool noderec_inode_signal(evictd_signal s);

/* The steps the kubelet runs for s on this layout (0 for memory and pid signals, or no layout). */
unsigned noderec_steps(disk_layout layout, evictd_signal s);

/* When evictd first and last saw an image (kept by the caller across listings). */
typedef struct image_history {
	uint64_t first_seen_usec;
	uint64_t last_used_usec; /* 0: never seen in use */
} image_history;

/* An image's history under its id: kept sorted by id across listings (and restarts). */
typedef struct image_record {
	char *id;
	image_history h;
} image_record;

/* Why an unused image is not a candidate (noderec_plan.kept). */
typedef enum noderec_keep {
	NODEREC_KEEP_PINNED,
	NODEREC_KEEP_SANDBOX,
	NODEREC_KEEP_BACKED_OFF,
	NODEREC_KEEP_YOUNG,
} noderec_keep;

const char *noderec_keep_name(noderec_keep k);

typedef struct noderec_rules {
	uint64_t min_age_usec;       /* image-minimum-gc-age */
	/* The runtime's sandbox image as it names it (containerd's sandboxImage, CRI-O's pause_image);
	 * NULL when the runtime did not say: then every image of a repository named "pause" is kept. */
	const char *sandbox_image;
	const bool *backed_off;      /* per listing image: a removal of it failed lately (NULL: none) */
} noderec_rules;

/* im is the sandbox image (sandbox_image NULL: its repository's last part is "pause"). */
bool noderec_is_sandbox_image(const cri_image *im, const char *sandbox_image);

typedef struct noderec_plan {
	/* DeleteAllUnusedContainers: what it would free (writable layers and logs) */
	unsigned n_dead;
	int64_t dead_bytes, dead_inodes;
	/* DeleteUnusedImages: indexes into the listing's images, least recently used first */
	size_t *images;
	size_t n_images;
	int64_t images_bytes;
	size_t n_in_use, n_pinned, n_young, n_sandbox, n_backed_off;
	/* unused images that may not go (yet): indexes into the listing's images, and why */
	size_t *kept;
	noderec_keep *kept_why;
	size_t n_kept;
} noderec_plan;

/*
 * Plans from the listing (its containers' log sizes filled: runtime_measure_logs) and each image's
 * history (history[i] for l->images[i]). Returns 0 or -ENOMEM.
 */
int noderec_plan_build(const cri_listing *l, const image_history *history, uint64_t now_usec, uint64_t min_age_usec,
                       noderec_plan *ret);
int noderec_plan_build_rules(const cri_listing *l, const image_history *history, uint64_t now_usec,
                             const noderec_rules *rules, noderec_plan *ret);
void noderec_plan_done(noderec_plan *p);

/* What the dead containers would give back for s (bytes or inodes), 0 when the layout gives s no such step. */
int64_t noderec_dead_for(const noderec_plan *p, disk_layout layout, evictd_signal s);

/*
 * How many of the plan's images (a prefix of p->images) cover need for s: for bytes signals the
 * fewest least recently used ones whose sizes reach need (all when none do), for inode signals all.
 * *bytes gets their sizes' sum. 0 when the layout gives s no image step or need <= 0.
 */
size_t noderec_images_for(const noderec_plan *p, const cri_listing *l, disk_layout layout, evictd_signal s,
                          int64_t need, int64_t *bytes);

/*
 * The kubelet's own hard threshold for s, in the signal's unit: its configuration's when read,
 * else its Linux defaults (nodefs.available 10%, nodefs.inodesFree 5%, imagefs.available 15%,
 * imagefs.inodesFree 5%). -1 when it has none.
 */
int64_t noderec_kubelet_threshold(const threshold_value *kubelet_hard, bool kubelet_read, evictd_signal s,
                                  int64_t capacity);

/* What node-level reclaim means for each disk signal now (filled by the daemon's runtime.c; printed by --once). */
typedef struct runtime_signal_plan {
	unsigned steps;          /* noderec_steps() */
	int64_t dead;            /* what the dead containers would free (signal unit) */
	unsigned n_dead;
	int64_t images_bytes;    /* removable images' sizes */
	size_t n_images;
	int64_t pending;         /* counted as pending for decide */
	bool hold;               /* no pod for it yet: a listing or a removal in progress */
	bool kubelet_reached;    /* the signal is below the kubelet's own threshold: nothing pending counts */
	bool expired;            /* pending longer than the kubelet's container GC period */
	size_t n_remove;         /* images node-level reclaim removes (or would, in a dry run) for the need */
	int64_t remove_bytes;
} runtime_signal_plan;

typedef struct runtime_plan {
	bool valid;              /* a listing is known: the rest means something */
	disk_layout layout;
	char imagefs[256];       /* the image filesystem's mount point */
	runtime_signal_plan s[_SIGNAL_MAX];
	const char *remove_names[8]; /* the first images that would go, for --once (valid until the next call) */
	const char *kept_names[8];   /* the first unused images that may not go (yet), and why */
	const char *kept_why[8];
} runtime_plan;
