/* SPDX-License-Identifier: MIT */
/*
 * Node-level reclaim from one decision to the next (decide/noderec-policy.c) on hand-made
 * listings and signals: how long dead containers count as pending (the kubelet's container GC
 * period), what a signal still needs, what a dry run counts, what a container the kubelet just
 * removed still counts, how long a refused image is left alone, that the sandbox image and kept
 * images are never removed, in what order images go, what waits for what, and how images' ages
 * follow the listings.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "noderec-policy.h"

#define MIB (INT64_C(1) << 20)
#define SEC UINT64_C(1000000)
#define NODEFS SIGNAL_NODEFS_AVAILABLE
#define IMAGEFS SIGNAL_IMAGEFS_AVAILABLE

static char *pause_tag[] = { (char *)"registry.k8s.io/pause:3.9" };
static char *app_tag[] = { (char *)"localhost/app:1" };

static cri_image img(const char *id, int64_t size, char **tags)
{
	return (cri_image){ .id = (char *)id, .size = (uint64_t)size, .tags = tags, .n_tags = tags ? 1 : 0 };
}

/* A dead container of a pod that is gone (no sandbox): the kubelet's container GC removes it. */
static cri_container dead(const char *id, int64_t rootfs)
{
	return (cri_container){ .id = (char *)id, .pod_uid = (char *)"gone", .name = (char *)"app", .state = CRI_EXITED,
		                .created_at = 1, .image_id = (char *)"sha256:none", .has_rootfs = true,
		                .rootfs_bytes = (uint64_t)rootfs, .rootfs_inodes = 1 };
}

/* One node: nodefs and imagefs on one filesystem (single layout), nodefs acted on. */
typedef struct node {
	cri_listing l;
	image_history h[8];
	bool refused[8];
	const char *sandbox_image;
	noderec_plan p;
	evaluation ev;
	node_signals sig;
	threshold_value kubelet_hard[_SIGNAL_MAX];
	noderec_situation sit;
	pending_reclaim pods;
	noderec_memory m;
	noderec_outcome oc;
} node;

static void node_init(node *n, cri_image *images, size_t n_images, cri_container *containers, size_t n_containers)
{
	*n = (node){ .l = { .images = images, .n_images = n_images, .containers = containers, .n_containers = n_containers } };
	for (int s = 0; s < _SIGNAL_MAX; s++)
		n->sig.s[s] = (signal_obs){ .known = true, .available = 1000 * MIB, .capacity = 1000 * MIB };
	/* nodefs.available < 100Mi, and 80Mi left: 20Mi short */
	n->ev.t[THRESHOLD_HARD][NODEFS] = (threshold_eval){ .configured = true, .met = true, .actionable = true,
		                                            .threshold = 100 * MIB };
	n->sig.s[NODEFS].available = 80 * MIB;
	n->sit = (noderec_situation){ .mode = NODE_RECLAIM_IMAGES, .layout = LAYOUT_SINGLE,
		                      .kubelet_hard = n->kubelet_hard, .kubelet_read = true, /* and it has none */
		                      .listing_usable = true, .listing_for_removal = true };
}

/* Plans from the listing as it stands and decides at now. */
static void node_decide(node *n, uint64_t now)
{
	noderec_rules rules = { .min_age_usec = 120 * SEC, .sandbox_image = n->sandbox_image, .backed_off = n->refused };

	noderec_plan_done(&n->p);
	assert_int_equal(noderec_plan_build_rules(&n->l, n->h, now, &rules, &n->p), 0);
	noderec_decide(&n->p, &n->l, &n->sit, &n->ev, &n->sig, &n->pods, now, &n->m, &n->oc);
}

/* Dead containers count until the kubelet's container GC period is over, then a pod may go. */
static void test_pending_window_and_expiry(void **state)
{
	cri_container c[] = { dead("d1", 30 * MIB) };
	node n;
	uint64_t t0 = 1000 * SEC;

	(void)state;
	node_init(&n, NULL, 0, c, 1);
	node_decide(&n, t0);
	assert_int_equal(n.oc.count[NODEFS], NODEREC_COUNT_PENDING);
	assert_int_equal(n.oc.s[NODEFS].pending, 30 * MIB);
	assert_true(n.oc.pending_changed); /* the window opened: saved */
	assert_int_equal(n.m.pending_since[NODEFS], t0);
	/* imagefs is not acted on: nothing pending there */
	assert_int_equal(n.oc.count[IMAGEFS], NODEREC_COUNT_NONE);
	assert_int_equal(n.oc.s[IMAGEFS].pending, 0);

	node_decide(&n, t0 + 59 * SEC);
	assert_int_equal(n.oc.count[NODEFS], NODEREC_COUNT_PENDING);
	assert_int_equal(n.oc.s[NODEFS].pending, 30 * MIB);
	assert_false(n.oc.pending_changed);

	node_decide(&n, t0 + 60 * SEC);
	assert_int_equal(n.oc.count[NODEFS], NODEREC_COUNT_EXPIRED);
	assert_true(n.oc.s[NODEFS].expired);
	assert_int_equal(n.oc.s[NODEFS].pending, 0);
	assert_int_equal(n.oc.counted[NODEFS], 30 * MIB); /* what the journal says expired */

	/* pressure gone: the episode ends, and pressure coming back starts a whole period again */
	evaluation calm = { 0 };
	bool ended[_SIGNAL_MAX];
	assert_true(noderec_settle(&n.m, &calm, ended));
	assert_true(ended[NODEFS]);
	assert_int_equal(n.m.pending_since[NODEFS], 0);
	node_decide(&n, t0 + 200 * SEC);
	assert_int_equal(n.oc.count[NODEFS], NODEREC_COUNT_PENDING);
	assert_int_equal(n.oc.s[NODEFS].pending, 30 * MIB);

	/* still acted on: settling ends nothing */
	assert_false(noderec_settle(&n.m, &n.ev, ended));
	assert_false(ended[NODEFS]);
	assert_true(ended[SIGNAL_MEMORY_AVAILABLE]);

	/* below the kubelet's own hard threshold it evicts itself: nothing pending counts */
	n.kubelet_hard[NODEFS] = (threshold_value){ .set = true, .quantity = 90 * MIB };
	node_decide(&n, t0 + 201 * SEC);
	assert_int_equal(n.oc.count[NODEFS], NODEREC_COUNT_NONE);
	assert_true(n.oc.s[NODEFS].kubelet_reached);
	assert_int_equal(n.oc.s[NODEFS].pending, 0);
	assert_int_equal(n.m.pending_since[NODEFS], 0);
	noderec_plan_done(&n.p);
}

/* How much is still to free: the threshold and its minimum reclaim, less all that is on its way. */
static void test_need(void **state)
{
	threshold_eval te = { .threshold = 100 * MIB, .min_reclaim = 10 * MIB };
	signal_obs o = { .known = true, .available = 80 * MIB, .capacity = 1000 * MIB };
	pending_reclaim pods = { 0 };
	cri_image im[] = { img("sha256:a", 10 * MIB, NULL), img("sha256:b", 10 * MIB, NULL), img("sha256:c", 10 * MIB, NULL) };
	cri_container c[] = { dead("d1", 5 * MIB) };
	node n;

	(void)state;
	pods.amount[NODEFS] = 7 * MIB;
	assert_int_equal(noderec_need(&te, &o, 5 * MIB, &pods, NODEFS), 30 * MIB - 5 * MIB); /* no source: not counted */
	pods.sources[NODEFS] = 1;
	assert_int_equal(noderec_need(&te, &o, 5 * MIB, &pods, NODEFS), 30 * MIB - 5 * MIB - 7 * MIB);
	assert_int_equal(noderec_need(&te, &o, 5 * MIB, NULL, NODEFS), 25 * MIB);
	assert_int_equal(noderec_need(NULL, &o, 5 * MIB, &pods, NODEFS), 0);

	/* 20Mi short, 5Mi of dead containers pending: two 10Mi images go, not three */
	node_init(&n, im, 3, c, 1);
	node_decide(&n, 1000 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_REMOVE);
	assert_int_equal(n.oc.call_signal, NODEFS);
	assert_int_equal(n.oc.call_n, 2);
	assert_int_equal(n.oc.s[NODEFS].remove_bytes, 20 * MIB);
	assert_int_equal(n.oc.call_before, 80 * MIB);
	/* a pod reclaiming 10Mi more: one image is enough */
	n.pods.sources[NODEFS] = 1;
	n.pods.amount[NODEFS] = 10 * MIB;
	node_decide(&n, 1001 * SEC);
	assert_int_equal(n.oc.call_n, 1);
	/* reclaim covers it all: nothing removed */
	n.pods.amount[NODEFS] = 20 * MIB;
	node_decide(&n, 1002 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_NONE);
	assert_int_equal(n.oc.s[NODEFS].n_remove, 0);
	noderec_plan_done(&n.p);
}

/* A dry run removes nothing, asks nothing, holds nothing: what it would remove counts as gone. */
static void test_dry_run(void **state)
{
	cri_image im[] = { img("sha256:a", 10 * MIB, NULL), img("sha256:b", 10 * MIB, NULL), img("sha256:c", 10 * MIB, NULL) };
	cri_container c[] = { dead("d1", 5 * MIB) };
	node n;

	(void)state;
	node_init(&n, im, 3, c, 1);
	n.sit.dry_run = true;
	node_decide(&n, 1000 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_NONE);
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_NONE);
	assert_int_equal(n.oc.s[NODEFS].n_remove, 2);
	assert_int_equal(n.oc.s[NODEFS].pending, 5 * MIB + 20 * MIB);
	assert_int_equal(n.oc.counted[NODEFS], 5 * MIB); /* the metrics' pending: dead containers only */
	/* nor from a stale listing: no listing asked for a removal that will not happen */
	n.sit.listing_for_removal = false;
	node_decide(&n, 1001 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_NONE);
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_NONE);
	noderec_plan_done(&n.p);
}

/* A dead container the kubelet just removed counts until its space is back, 10 s at most (the figures
 * are the documented ones, not the constants: a changed rule fails here). */
static void test_vanished_still(void **state)
{
	noderec_memory m = { 0 };
	signal_obs o = { .known = true, .available = 80 * MIB, .capacity = 1000 * MIB };
	uint64_t t = 1000 * SEC;

	(void)state;
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 30 * MIB, t), 0);
	/* gone from the listing, its space not back yet */
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 0, t + 1 * SEC), 30 * MIB);
	o.available += 20 * MIB; /* part of it back */
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 0, t + 2 * SEC), 10 * MIB);
	o.available += 20 * MIB; /* all back, and more (another pod's files went meanwhile) */
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 0, t + 3 * SEC), 0);
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 0, t + 4 * SEC), 0);

	/* never back: counted 10 s, not longer */
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 30 * MIB, t + 20 * SEC), 0);
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 0, t + 21 * SEC), 30 * MIB);
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 0, t + 21 * SEC + 10 * SEC - 1), 30 * MIB);
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 0, t + 21 * SEC + 10 * SEC), 0);

	/* not acted on any more: forgotten */
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 30 * MIB, t + 40 * SEC), 0);
	assert_int_equal(noderec_vanished_still(&m, NODEFS, NULL, 0, t + 41 * SEC), 0);
	assert_int_equal(noderec_vanished_still(&m, NODEFS, &o, 0, t + 42 * SEC), 0);

	/* in a decision: the listing without the container still counts it, no pod goes for it */
	cri_container c[] = { dead("d1", 30 * MIB) };
	node n;
	node_init(&n, NULL, 0, c, 1);
	node_decide(&n, t);
	assert_int_equal(n.oc.s[NODEFS].pending, 30 * MIB);
	n.l.n_containers = 0;
	node_decide(&n, t + 2 * SEC);
	assert_int_equal(n.oc.count[NODEFS], NODEREC_COUNT_PENDING);
	assert_int_equal(n.oc.s[NODEFS].pending, 30 * MIB);
	assert_int_equal(n.oc.s[NODEFS].n_dead, 0);
	node_decide(&n, t + 2 * SEC + 10 * SEC);
	assert_int_equal(n.oc.count[NODEFS], NODEREC_COUNT_NONE);
	assert_int_equal(n.oc.s[NODEFS].pending, 0);
	noderec_plan_done(&n.p);
}

/* An image the runtime refused is left alone for 5 minutes, then tried again. */
static void test_refusal_backoff(void **state)
{
	cri_image im[] = { img("sha256:a", 10 * MIB, NULL), img("sha256:b", 10 * MIB, NULL) };
	noderec_refusals r = { 0 };
	node n;
	uint64_t t = 1000 * SEC;

	(void)state;
	node_init(&n, im, 2, NULL, 0);
	n.h[1].first_seen_usec = 1; /* b seen later: a goes first */
	assert_int_equal(noderec_refusals_add(&r, "sha256:a", t), 0);
	assert_int_equal(noderec_refusals_mark(&r, &n.l, n.refused), 0);
	assert_true(n.refused[0]);
	assert_false(n.refused[1]);
	node_decide(&n, t + 1 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_REMOVE);
	assert_int_equal(n.oc.call_n, 1);
	assert_string_equal(im[n.p.images[0]].id, "sha256:b"); /* the next unused image instead */

	noderec_refusals_prune(&r, t + 5 * 60 * SEC - 1);
	assert_int_equal(noderec_refusals_mark(&r, &n.l, n.refused), 0);
	assert_true(n.refused[0]);
	noderec_refusals_prune(&r, t + 5 * 60 * SEC);
	assert_int_equal(r.n, 0);
	assert_int_equal(noderec_refusals_mark(&r, &n.l, n.refused), 0);
	assert_false(n.refused[0]);
	node_decide(&n, t + 5 * 60 * SEC);
	assert_string_equal(im[n.p.images[0]].id, "sha256:a");
	noderec_plan_done(&n.p);

	/* bounded: the oldest refusal makes room */
	char id[32];
	for (int i = 0; i <= NODEREC_REFUSALS_MAX; i++) {
		snprintf(id, sizeof(id), "sha256:%d", i);
		assert_int_equal(noderec_refusals_add(&r, id, t), 0);
	}
	assert_int_equal(r.n, NODEREC_REFUSALS_MAX);
	assert_string_equal(r.v[0].image_id, "sha256:1");
	noderec_refusals_done(&r);
}

/* The sandbox image and pinned images are never removed, however short the node is. */
static void test_kept_never_planned(void **state)
{
	cri_image im[] = { img("sha256:0-pause", 500 * MIB, pause_tag), img("sha256:1-app", 10 * MIB, app_tag),
		           img("sha256:2-pinned", 500 * MIB, NULL) };
	node n;

	(void)state;
	im[2].pinned = true;
	node_init(&n, im, 3, NULL, 0);
	n.sig.s[NODEFS].available = 1 * MIB; /* 99Mi short: only the pause or the pinned image would cover it */
	n.sandbox_image = "registry.k8s.io/pause:3.9";
	node_decide(&n, 1000 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_REMOVE);
	assert_int_equal(n.oc.call_n, 1);
	assert_string_equal(im[n.p.images[0]].id, "sha256:1-app");
	assert_true(n.oc.images_matter[NODEFS]); /* the kept ones are said */
	assert_int_equal(n.p.n_kept, 2);
	/* the runtime did not name it: a repository named pause is kept all the same */
	n.sandbox_image = NULL;
	node_decide(&n, 1001 * SEC);
	assert_int_equal(n.oc.call_n, 1);
	assert_string_equal(im[n.p.images[0]].id, "sha256:1-app");
	/* nothing removed before the runtime has said which is its sandbox image */
	n.sit.sandbox_asking = true;
	node_decide(&n, 1002 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_NONE);
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_LISTING);
	noderec_plan_done(&n.p);
}

/* Least recently used images go first, and no pod goes while images are on their way out. */
static void test_order_and_holds(void **state)
{
	cri_image im[] = { img("sha256:a-used-recently", 10 * MIB, NULL), img("sha256:b-never-used", 10 * MIB, NULL),
		           img("sha256:c-used-long-ago", 10 * MIB, NULL) };
	node n;

	(void)state;
	node_init(&n, im, 3, NULL, 0);
	n.h[0] = (image_history){ 1, 900 * SEC };
	n.h[1] = (image_history){ 2, 0 };
	n.h[2] = (image_history){ 3, 100 * SEC };
	n.sig.s[NODEFS].available = 85 * MIB; /* 15Mi short: two images */
	node_decide(&n, 1000 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_REMOVE);
	assert_int_equal(n.oc.call_n, 2);
	assert_string_equal(im[n.p.images[0]].id, "sha256:b-never-used");
	assert_string_equal(im[n.p.images[1]].id, "sha256:c-used-long-ago");
	/* the removal holds every signal its image step serves, nodefs and imagefs alike */
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_REMOVAL);
	assert_int_equal(n.oc.hold[IMAGEFS], NODEREC_HOLD_REMOVAL);
	assert_int_equal(n.oc.hold[SIGNAL_MEMORY_AVAILABLE], NODEREC_HOLD_NONE);
	/* imagefs short and nodefs not: a removal for imagefs holds nodefs too (one filesystem) */
	n.ev.t[THRESHOLD_HARD][IMAGEFS] = n.ev.t[THRESHOLD_HARD][NODEFS];
	n.ev.t[THRESHOLD_HARD][NODEFS] = (threshold_eval){ 0 };
	n.sig.s[IMAGEFS].available = 85 * MIB;
	node_decide(&n, 1000 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_REMOVE);
	assert_int_equal(n.oc.call_signal, IMAGEFS);
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_REMOVAL);
	assert_int_equal(n.oc.hold[SIGNAL_NODEFS_INODES_FREE], NODEREC_HOLD_REMOVAL);
	n.ev.t[THRESHOLD_HARD][NODEFS] = n.ev.t[THRESHOLD_HARD][IMAGEFS];
	n.ev.t[THRESHOLD_HARD][IMAGEFS] = (threshold_eval){ 0 };

	/* a removal in flight: held, nothing more asked */
	n.sit.removal_running = true;
	node_decide(&n, 1001 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_NONE);
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_REMOVAL);
	n.sit.removal_running = false;

	/* from a listing older than the wish to remove: listed again first, held meanwhile */
	n.sit.listing_for_removal = false;
	node_decide(&n, 1002 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_LIST_FOR_REMOVAL);
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_LISTING);
	/* ...unless the runtime failed lately: then it is not asked again before its TTL */
	n.sit.failed_recently = true;
	node_decide(&n, 1003 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_NONE);
	noderec_plan_done(&n.p);

	/* no usable listing: every disk signal waits for the runtime's answer, and one is asked */
	n.sit = (noderec_situation){ .mode = NODE_RECLAIM_IMAGES, .layout = LAYOUT_SINGLE };
	noderec_decide(NULL, NULL, &n.sit, &n.ev, &n.sig, NULL, 1004 * SEC, &n.m, &n.oc);
	assert_int_equal(n.oc.call, NODEREC_CALL_LIST);
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_ANSWER);
	assert_int_equal(n.oc.hold[SIGNAL_IMAGEFS_INODES_FREE], NODEREC_HOLD_ANSWER);
	assert_int_equal(n.oc.hold[SIGNAL_MEMORY_AVAILABLE], NODEREC_HOLD_NONE);
	/* node-reclaim = off: neither counted nor removed */
	cri_container c[] = { dead("d1", 30 * MIB) };
	node_init(&n, im, 3, c, 1);
	n.sit.mode = NODE_RECLAIM_OFF;
	node_decide(&n, 1005 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_NONE);
	assert_int_equal(n.oc.s[NODEFS].pending, 0);
	assert_int_equal(n.oc.hold[NODEFS], NODEREC_HOLD_NONE);
	/* node-reclaim = account: images counted as pending, left to the kubelet */
	n.sit.mode = NODE_RECLAIM_ACCOUNT;
	node_decide(&n, 1006 * SEC);
	assert_int_equal(n.oc.call, NODEREC_CALL_NONE);
	assert_int_equal(n.oc.s[NODEFS].pending, 30 * MIB + 30 * MIB);
	noderec_plan_done(&n.p);
}

/* Images' ages count from evictd's first sighting, listing after listing; a container's use is remembered. */
static void test_image_history(void **state)
{
	cri_image im[] = { img("sha256:a", 10 * MIB, NULL), img("sha256:b", 10 * MIB, NULL), img("sha256:c", 10 * MIB, NULL) };
	cri_container run = { .id = (char *)"r", .pod_uid = (char *)"p", .name = (char *)"app", .state = CRI_RUNNING,
		              .image_id = (char *)"sha256:a" };
	cri_listing l = { .images = im, .n_images = 2, .containers = &run, .n_containers = 1 };
	image_record *rec = NULL;
	size_t n = 0;
	image_history h[3];
	noderec_plan p;

	(void)state;
	assert_int_equal(noderec_records_follow(&rec, &n, &l, 100 * SEC), 1);
	assert_int_equal(n, 2);
	assert_string_equal(rec[0].id, "sha256:a");
	assert_int_equal(rec[0].h.first_seen_usec, 100 * SEC);
	assert_int_equal(rec[0].h.last_used_usec, 100 * SEC);
	assert_int_equal(rec[1].h.last_used_usec, 0);
	/* the container gone: its image's last use stays, and nothing changed to save */
	l.n_containers = 0;
	assert_int_equal(noderec_records_follow(&rec, &n, &l, 200 * SEC), 0);
	assert_int_equal(rec[0].h.last_used_usec, 100 * SEC);
	/* b gone, c new: b forgotten, c first seen now, a as old as it was */
	l.images = im + 1;
	im[1] = im[0];
	l.n_images = 2;
	assert_int_equal(noderec_records_follow(&rec, &n, &l, 300 * SEC), 1);
	assert_int_equal(n, 2);
	assert_null(noderec_record_find(rec, n, "sha256:b"));
	assert_int_equal(noderec_record_find(rec, n, "sha256:a")->h.first_seen_usec, 100 * SEC);
	assert_int_equal(noderec_record_find(rec, n, "sha256:c")->h.first_seen_usec, 300 * SEC);

	/* image-minimum-gc-age 2m from the first sighting: c is young until 420 s, then it may go */
	noderec_history_of(rec, n, &l, 419 * SEC, h);
	assert_int_equal(noderec_plan_build(&l, h, 419 * SEC, 120 * SEC, &p), 0);
	assert_int_equal(p.n_images, 1);
	assert_int_equal(p.n_young, 1);
	noderec_plan_done(&p);
	noderec_history_of(rec, n, &l, 420 * SEC, h);
	assert_int_equal(noderec_plan_build(&l, h, 420 * SEC, 120 * SEC, &p), 0);
	assert_int_equal(p.n_images, 2);
	noderec_plan_done(&p);
	/* one no record knows: first seen now */
	noderec_records_free(rec, n);
	noderec_history_of(NULL, 0, &l, 500 * SEC, h);
	assert_int_equal(h[0].first_seen_usec, 500 * SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pending_window_and_expiry),
		cmocka_unit_test(test_need),
		cmocka_unit_test(test_dry_run),
		cmocka_unit_test(test_vanished_still),
		cmocka_unit_test(test_refusal_backoff),
		cmocka_unit_test(test_kept_never_planned),
		cmocka_unit_test(test_order_and_holds),
		cmocka_unit_test(test_image_history),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
