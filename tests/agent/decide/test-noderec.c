/* SPDX-License-Identifier: MIT */
/*
 * Node-level reclaim planning (decide/noderec.c) on hand-made listings: the kubelet's table per
 * layout, which dead containers its GC removes, which images are unused and in what order they go,
 * how many cover a need, the kubelet's default thresholds; and decide_evictions() holding or covering a disk
 * signal with it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decide.h"
#include "noderec.h"

#define MIB (INT64_C(1) << 20)
#define SEC UINT64_C(1000000)

static void test_table(void **state)
{
	(void)state;
	/* reference cri.md §4: buildSignalToNodeReclaimFuncs */
	assert_int_equal(noderec_steps(LAYOUT_SINGLE, SIGNAL_NODEFS_AVAILABLE), NODEREC_CONTAINERS | NODEREC_IMAGES);
	assert_int_equal(noderec_steps(LAYOUT_SINGLE, SIGNAL_IMAGEFS_INODES_FREE), NODEREC_CONTAINERS | NODEREC_IMAGES);
	assert_int_equal(noderec_steps(LAYOUT_DEDICATED, SIGNAL_NODEFS_AVAILABLE), 0);
	assert_int_equal(noderec_steps(LAYOUT_DEDICATED, SIGNAL_IMAGEFS_AVAILABLE), NODEREC_CONTAINERS | NODEREC_IMAGES);
	assert_int_equal(noderec_steps(LAYOUT_SPLIT, SIGNAL_NODEFS_INODES_FREE), NODEREC_CONTAINERS);
	assert_int_equal(noderec_steps(LAYOUT_SPLIT, SIGNAL_IMAGEFS_AVAILABLE), NODEREC_IMAGES);
	assert_int_equal(noderec_steps(LAYOUT_SINGLE, SIGNAL_MEMORY_AVAILABLE), 0);
	assert_int_equal(noderec_steps(LAYOUT_UNKNOWN, SIGNAL_NODEFS_AVAILABLE), 0);
}

static cri_image img(const char *id, int64_t size, bool pinned)
{
	return (cri_image){ .id = (char *)id, .size = (uint64_t)size, .pinned = pinned };
}

static cri_container ctr(const char *id, const char *uid, const char *name, cri_state st, int64_t created,
                         const char *image, int64_t rootfs, int64_t logs)
{
	return (cri_container){ .id = (char *)id, .pod_uid = (char *)uid, .name = (char *)name, .state = st,
		                .created_at = created, .image_id = (char *)image, .has_rootfs = rootfs >= 0,
		                .rootfs_bytes = rootfs >= 0 ? (uint64_t)rootfs : 0, .rootfs_inodes = 1,
		                .has_log = logs >= 0, .log_bytes = logs >= 0 ? logs : 0, .log_inodes = 1 };
}

static void test_dead_containers(void **state)
{
	/* sorted by id, as a decoded listing is */
	cri_container c[] = {
		ctr("a-run", "live", "app", CRI_RUNNING, 30, "sha256:x", 5 * MIB, 1 * MIB),
		ctr("b-dead-old", "live", "app", CRI_EXITED, 10, "sha256:x", 2 * MIB, 3 * MIB),
		ctr("c-dead-new", "live", "app", CRI_EXITED, 20, "sha256:x", 7 * MIB, 7 * MIB),
		ctr("d-gone", "gone", "side", CRI_EXITED, 5, "sha256:x", 1 * MIB, 1 * MIB),
		ctr("e-created", "gone", "side2", CRI_CREATED, 6, "sha256:x", -1, -1),
	};
	cri_sandbox sb[] = { { .id = (char *)"s1", .uid = (char *)"live", .ready = true },
		             { .id = (char *)"s0", .uid = (char *)"gone", .ready = false } };
	cri_listing l = { .containers = c, .n_containers = 5, .sandboxes = sb, .n_sandboxes = 2 };
	noderec_plan p;

	(void)state;
	assert_int_equal(noderec_plan_build(&l, NULL, 0, 0, &p), 0);
	/* the live pod keeps its newest dead "app"; the gone pod loses all: b, d, e */
	assert_int_equal(p.n_dead, 3);
	assert_int_equal(p.dead_bytes, (2 + 3) * MIB + 2 * MIB);
	assert_int_equal(p.dead_inodes, 2 + 2);
	assert_int_equal(noderec_dead_for(&p, LAYOUT_SINGLE, SIGNAL_NODEFS_AVAILABLE), 7 * MIB);
	assert_int_equal(noderec_dead_for(&p, LAYOUT_SINGLE, SIGNAL_NODEFS_INODES_FREE), 4);
	assert_int_equal(noderec_dead_for(&p, LAYOUT_DEDICATED, SIGNAL_NODEFS_AVAILABLE), 0);
	assert_int_equal(noderec_dead_for(&p, LAYOUT_SPLIT, SIGNAL_IMAGEFS_AVAILABLE), 0);
	noderec_plan_done(&p);
}

static void test_unused_images(void **state)
{
	cri_image im[] = {
		img("sha256:used-by-dead", 100 * MIB, false), /* an exited container uses it */
		img("sha256:pinned", 100 * MIB, true),
		img("sha256:young", 100 * MIB, false),      /* first seen 1 min ago: under 2m */
		img("sha256:lru-used-long-ago", 30 * MIB, false),
		img("sha256:never-used-old", 20 * MIB, false),
		img("sha256:never-used-older", 10 * MIB, false),
		img("sha256:used-recently", 40 * MIB, false),
	};
	image_history h[] = {
		{ 0, 0 }, { 0, 0 }, { 540 * SEC, 0 }, { 0, 100 * SEC }, { 50 * SEC, 0 }, { 10 * SEC, 0 }, { 0, 500 * SEC },
	};
	cri_container c[] = { ctr("x", "live", "app", CRI_EXITED, 1, "sha256:used-by-dead", 0, 0) };
	cri_listing l = { .images = im, .n_images = 7, .containers = c, .n_containers = 1 };
	noderec_plan p;
	int64_t bytes;

	(void)state;
	assert_int_equal(noderec_plan_build(&l, h, 600 * SEC, 120 * SEC, &p), 0);
	assert_int_equal(p.n_in_use, 1);
	assert_int_equal(p.n_pinned, 1);
	assert_int_equal(p.n_young, 1);
	assert_int_equal(p.n_images, 4);
	/* never used first (oldest sighting first), then by last use */
	assert_string_equal(im[p.images[0]].id, "sha256:never-used-older");
	assert_string_equal(im[p.images[1]].id, "sha256:never-used-old");
	assert_string_equal(im[p.images[2]].id, "sha256:lru-used-long-ago");
	assert_string_equal(im[p.images[3]].id, "sha256:used-recently");
	assert_int_equal(p.images_bytes, 100 * MIB);
	/* the fewest that cover the need */
	assert_int_equal(noderec_images_for(&p, &l, LAYOUT_SINGLE, SIGNAL_NODEFS_AVAILABLE, 25 * MIB, &bytes), 2);
	assert_int_equal(bytes, 30 * MIB);
	assert_int_equal(noderec_images_for(&p, &l, LAYOUT_SINGLE, SIGNAL_NODEFS_AVAILABLE, 1000 * MIB, &bytes), 4);
	assert_int_equal(noderec_images_for(&p, &l, LAYOUT_SINGLE, SIGNAL_NODEFS_AVAILABLE, 0, &bytes), 0);
	/* inode pressure: every one (their inode counts are not known) */
	assert_int_equal(noderec_images_for(&p, &l, LAYOUT_SINGLE, SIGNAL_NODEFS_INODES_FREE, 1, &bytes), 4);
	/* no image step for nodefs on a split layout, nor on a dedicated imagefs */
	assert_int_equal(noderec_images_for(&p, &l, LAYOUT_SPLIT, SIGNAL_NODEFS_AVAILABLE, 25 * MIB, &bytes), 0);
	assert_int_equal(noderec_images_for(&p, &l, LAYOUT_DEDICATED, SIGNAL_NODEFS_AVAILABLE, 25 * MIB, &bytes), 0);
	noderec_plan_done(&p);
}

static void test_kubelet_threshold(void **state)
{
	threshold_value hard[_SIGNAL_MAX] = { 0 };

	(void)state;
	/* the kubelet's Linux defaults when its configuration was not read (float32 percentages, as it keeps them) */
	assert_int_equal(noderec_kubelet_threshold(hard, false, SIGNAL_NODEFS_AVAILABLE, 1000 * MIB),
	                 (int64_t)((double)(1000 * MIB) * (double)0.10f));
	assert_int_equal(noderec_kubelet_threshold(hard, false, SIGNAL_IMAGEFS_AVAILABLE, 1000 * MIB),
	                 (int64_t)((double)(1000 * MIB) * (double)0.15f));
	assert_int_equal(noderec_kubelet_threshold(hard, false, SIGNAL_NODEFS_INODES_FREE, 1000), 50);
	/* read: its own, none when it has none */
	hard[SIGNAL_NODEFS_AVAILABLE] = (threshold_value){ .set = true, .quantity = 5 * MIB };
	assert_int_equal(noderec_kubelet_threshold(hard, true, SIGNAL_NODEFS_AVAILABLE, 1000 * MIB), 5 * MIB);
	assert_int_equal(noderec_kubelet_threshold(hard, true, SIGNAL_IMAGEFS_AVAILABLE, 1000 * MIB), -1);
}

/* decide_evictions(): a held signal chooses nobody; a pending amount that covers the need chooses nobody. */
static void test_decide_hold_and_cover(void **state)
{
	evictd_config *cfg;
	pod_info pods[1] = { { 0 } };
	snapshot snap = { .pods = pods, .n_pods = 1 };
	threshold_state st = { 0 };
	decision d;
	node_reclaim_input node = { 0 };

	(void)state;
	assert_int_equal(config_new_default(&cfg), 0);
	cfg->hard[SIGNAL_NODEFS_AVAILABLE] = (threshold_value){ .set = true, .quantity = 6 * MIB };
	pods[0] = (pod_info){ .cgroup = (char *)"kubepods/besteffort/podw", .name = (char *)"w", .namespace_ = (char *)"d",
		              .has_disk = true, .disk_bytes = 2 * MIB, .disk_inodes = 3 };
	snprintf(pods[0].uid, sizeof(pods[0].uid), "w");
	for (int s = 0; s < _SIGNAL_MAX; s++)
		snap.node.s[s] = (signal_obs){ .known = true, .available = 1000 * MIB, .capacity = 1000 * MIB };
	snap.node.s[SIGNAL_NODEFS_AVAILABLE].available = 4 * MIB;
	decide_input in = { .snap = &snap, .cfg = cfg, .now_usec = 1, .node = &node };

	/* no node-level reclaim: the pod goes */
	assert_int_equal(decide_evictions(&in, &st, &d), 0);
	assert_int_equal(d.n_evict, 1);
	decide_decision_free(&d);
	/* held: nobody */
	node.hold[SIGNAL_NODEFS_AVAILABLE] = true;
	st = (threshold_state){ 0 };
	assert_int_equal(decide_evictions(&in, &st, &d), 0);
	assert_int_equal(d.n_evict, 0);
	assert_true(d.node_held[SIGNAL_NODEFS_AVAILABLE]);
	decide_decision_free(&d);
	/* pending 3Mi covers the 2Mi need: nobody, and said so */
	node.hold[SIGNAL_NODEFS_AVAILABLE] = false;
	node.pending[SIGNAL_NODEFS_AVAILABLE] = 3 * MIB;
	st = (threshold_state){ 0 };
	assert_int_equal(decide_evictions(&in, &st, &d), 0);
	assert_int_equal(d.n_evict, 0);
	assert_true(d.node_covered[SIGNAL_NODEFS_AVAILABLE]);
	decide_decision_free(&d);
	/* pending 1Mi does not: the pod goes */
	node.pending[SIGNAL_NODEFS_AVAILABLE] = 1 * MIB;
	st = (threshold_state){ 0 };
	assert_int_equal(decide_evictions(&in, &st, &d), 0);
	assert_int_equal(d.n_evict, 1);
	decide_decision_free(&d);
	config_free(cfg);
}

static cri_image tagged(const char *id, char **tags, size_t n)
{
	return (cri_image){ .id = (char *)id, .tags = tags, .n_tags = n, .size = (uint64_t)MIB };
}

/* The runtime's sandbox image by the name it gives, as runtimes resolve references. */
static void test_sandbox_image_names(void **state)
{
	char *pause[] = { (char *)"registry.k8s.io/pause:3.6" };
	char *hub[] = { (char *)"docker.io/library/busybox:latest" };
	char *local[] = { (char *)"localhost/sandbox:1" };
	cri_image p = tagged("sha256:p", pause, 1), h = tagged("sha256:h", hub, 1), l = tagged("sha256:l", local, 1);

	(void)state;
	assert_true(noderec_is_sandbox_image(&p, "registry.k8s.io/pause:3.6"));
	assert_false(noderec_is_sandbox_image(&p, "registry.k8s.io/pause:3.9"));
	assert_true(noderec_is_sandbox_image(&h, "busybox"));            /* docker.io/library/, :latest */
	assert_true(noderec_is_sandbox_image(&h, "library/busybox:latest"));
	assert_true(noderec_is_sandbox_image(&l, "localhost/sandbox:1"));
	assert_false(noderec_is_sandbox_image(&l, "sandbox:1"));        /* that is docker.io's */
	assert_true(noderec_is_sandbox_image(&l, "sha256:l"));          /* by id */
	/* not said by the runtime: any repository named pause */
	assert_true(noderec_is_sandbox_image(&p, NULL));
	assert_false(noderec_is_sandbox_image(&l, NULL));
}

/* Neither the sandbox image (unpinned, as containerd 1.6.20 lists it) nor a refused one is planned. */
static void test_rules_keep(void **state)
{
	char *pause[] = { (char *)"registry.k8s.io/pause:3.6" };
	char *a[] = { (char *)"localhost/a:1" }, *b[] = { (char *)"localhost/b:1" }, *y[] = { (char *)"localhost/y:1" };
	cri_image im[] = { tagged("sha256:0-pause", pause, 1), tagged("sha256:1-a", a, 1), tagged("sha256:2-b", b, 1),
		           tagged("sha256:3-young", y, 1) };
	image_history h[] = { { 0, 0 }, { 0, 0 }, { 0, 0 }, { 590 * SEC, 0 } };
	bool refused[] = { false, true, false, false };
	cri_listing l = { .images = im, .n_images = 4 };
	noderec_rules rules = { .min_age_usec = 120 * SEC, .sandbox_image = "registry.k8s.io/pause:3.6",
		                .backed_off = refused };
	noderec_plan p;

	(void)state;
	assert_int_equal(noderec_plan_build_rules(&l, h, 600 * SEC, &rules, &p), 0);
	assert_int_equal(p.n_images, 1);
	assert_int_equal(p.images[0], 2);
	assert_int_equal(p.n_sandbox, 1);
	assert_int_equal(p.n_backed_off, 1);
	assert_int_equal(p.n_young, 1);
	assert_int_equal(p.n_kept, 3);
	assert_int_equal(p.kept[0], 0);
	assert_int_equal(p.kept_why[0], NODEREC_KEEP_SANDBOX);
	assert_int_equal(p.kept_why[1], NODEREC_KEEP_BACKED_OFF);
	assert_int_equal(p.kept_why[2], NODEREC_KEEP_YOUNG);
	noderec_plan_done(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_dead_containers),
		cmocka_unit_test(test_unused_images),
		cmocka_unit_test(test_kubelet_threshold),
		cmocka_unit_test(test_decide_hold_and_cover),
		cmocka_unit_test(test_sandbox_image_names),
		cmocka_unit_test(test_rules_keep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
