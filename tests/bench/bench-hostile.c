/* SPDX-License-Identifier: MIT */
/*
 * Scaling of libpreempt on adversarial input sizes: each case runs at n, 2n, 4n, 8n and prints
 * the time and the growth factor per doubling (≈2 linear, ≈2.1 n log n, ≈4 quadratic).
 * These are the sizes documented in tests/fuzz/FINDINGS.md. `make bench` runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preempt.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void case_quantity_zeros(size_t n)
{
	char *s = malloc(n + 4);
	int64_t v;
	memset(s, '0', n);
	memcpy(s + n, "1Ki", 4);
	if (pp_quantity_parse(s, &v, NULL) < 0 || v != 1024)
		abort();
	free(s);
}

static void case_duration_components(size_t n)
{
	char *s = malloc(2 * n + 1);
	int64_t v;
	for (size_t i = 0; i < n; i++)
		memcpy(s + 2 * i, "0s", 2);
	s[2 * n] = 0;
	if (pp_duration_parse(s, &v, NULL) < 0 || v != 0)
		abort();
	free(s);
}

static void case_pcset_load(size_t n)
{
	pp_pcset *s = NULL;
	char name[32];
	if (pp_pcset_new(&s) < 0)
		abort();
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "class-%zu", i);
		if (pp_pcset_add(s, name, (int32_t)i, false, PP_PREEMPT_LOWER_PRIORITY, NULL) < 0)
			abort();
	}
	pp_pcset_free(s);
}

static void case_evict_rank_equal(size_t n)
{
	pp_evict_pod *pods = calloc(n, sizeof(*pods));
	size_t *order = malloc(n * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		pods[i] = (pp_evict_pod){ .namespace_ = "ns", .name = "same", .uid = "u", .has_stats = true,
			                  .usage = INT64_MAX, .request = INT64_MIN };
	if (pp_evict_rank(PP_EVICT_MEMORY, pods, n, order) < 0)
		abort();
	free(pods);
	free(order);
}

static void run(const char *name, void (*fn)(size_t), size_t n0)
{
	double prev = 0;
	printf("%-28s", name);
	for (size_t n = n0, k = 0; k < 4; n *= 2, k++) {
		double t0 = now_s();
		fn(n);
		double t = now_s() - t0;
		printf("  n=%-8zu %8.2f ms%s", n, t * 1e3, "");
		if (prev > 0)
			printf(" (x%.1f)", t / prev);
		prev = t;
	}
	printf("\n");
}

int main(void)
{
	run("quantity: leading zeros", case_quantity_zeros, 1u << 20);
	run("duration: 0s components", case_duration_components, 1u << 18);
	run("pcset: load n classes", case_pcset_load, 2500);
	run("evict_rank: equal pods", case_evict_rank_equal, 1u << 17);
	return 0;
}
