/* SPDX-License-Identifier: MIT */
/*
 * The cost of planning node-level reclaim (decide/noderec.c) on the event loop, on listings of
 * 8,192 and 65,536 containers (CRI_ITEMS_MAX: still accepted). Four containers per pod, every
 * second one dead (earlier instances of the same name: the kubelet's GC keeps the newest), one
 * image per eight containers, half of the images used by no container. What it measures is the
 * plan itself — which dead containers the kubelet would remove, which images are in use, their
 * order — from a listing already decoded; no runtime is asked.
 *   build/bench/bench-noderec        prints medians and 90th percentiles
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "noderec.h"

static uint64_t now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static char *str(const char *fmt, size_t i)
{
	char buf[96];
	snprintf(buf, sizeof(buf), fmt, i);
	return strdup(buf);
}

static int bench(size_t n_containers, unsigned runs)
{
	size_t n_pods = n_containers / 4, n_images = n_containers / 8;
	cri_listing l = { 0 };
	image_history *h = calloc(n_images, sizeof(*h));
	uint64_t *t = calloc(runs, sizeof(*t));
	int r = 1;

	l.containers = calloc(n_containers, sizeof(*l.containers));
	l.sandboxes = calloc(n_pods, sizeof(*l.sandboxes));
	l.images = calloc(n_images, sizeof(*l.images));
	if (!h || !t || !l.containers || !l.sandboxes || !l.images)
		goto out;
	for (size_t i = 0; i < n_images; i++)
		l.images[i] = (cri_image){ .id = str("sha256:%064zu", i), .size = 1 << 20 };
	for (size_t i = 0; i < n_pods; i++)
		l.sandboxes[i] = (cri_sandbox){ .id = str("sandbox-%zu", i), .uid = str("00000000-0000-4000-8000-%012zu", i),
			                        .ready = i % 16 != 0 };
	for (size_t i = 0; i < n_containers; i++) {
		size_t pod = i / 4;
		bool dead = i % 2 == 1;
		l.containers[i] = (cri_container){
			.id = str("%064zu", i), .pod_uid = strdup(l.sandboxes[pod].uid),
			.name = str("c%zu", (i % 4) / 2), /* two instances of each name: the older one dead */
			.image_id = strdup(l.images[(i / 2) % (n_images / 2)].id), .state = dead ? CRI_EXITED : CRI_RUNNING,
			.created_at = (int64_t)(dead ? i : i + n_containers), .has_rootfs = true, .rootfs_bytes = 4096,
			.rootfs_inodes = 1,
		};
	}
	l.n_containers = n_containers;
	l.n_sandboxes = n_pods;
	l.n_images = n_images;
	for (unsigned k = 0; k < runs; k++) {
		noderec_plan p;
		uint64_t t0 = now_usec();
		if (noderec_plan_build(&l, h, 600 * UINT64_C(1000000), 0, &p) < 0)
			goto out;
		t[k] = now_usec() - t0;
		if (k == 0)
			printf("  %6zu containers, %5zu pods, %5zu images: %u dead removable, %zu unused images\n", n_containers,
			       n_pods, n_images, p.n_dead, p.n_images);
		noderec_plan_done(&p);
	}
	qsort(t, runs, sizeof(*t), cmp_u64);
	printf("  %-44s median %10.3f ms   p90 %10.3f ms   (%u runs)\n", "plan", t[runs / 2] / 1000.0,
	       t[runs * 9 / 10] / 1000.0, runs);
	r = 0;
out:
	for (size_t i = 0; l.containers && i < n_containers; i++) {
		free(l.containers[i].id);
		free(l.containers[i].pod_uid);
		free(l.containers[i].name);
		free(l.containers[i].image_id);
	}
	for (size_t i = 0; l.sandboxes && i < n_pods; i++) {
		free(l.sandboxes[i].id);
		free(l.sandboxes[i].uid);
	}
	for (size_t i = 0; l.images && i < n_images; i++)
		free(l.images[i].id);
	free(l.containers);
	free(l.sandboxes);
	free(l.images);
	free(h);
	free(t);
	return r;
}

int main(int argc, char **argv)
{
	unsigned runs = argc > 1 ? (unsigned)atoi(argv[1]) : 11;

	if (runs < 1)
		runs = 1;
	printf("bench-noderec: node-level reclaim's plan from a decoded listing\n");
	return bench(8192, runs) || bench(65536, runs > 3 ? 3 : runs);
}
