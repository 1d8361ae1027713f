/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's eviction ranking (pkg/kubelet/eviction/helpers.go: rankMemoryPressure,
 * rankDiskPressureFunc, rankPIDPressure), made deterministic.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

bool pp_priority_is_critical(int32_t priority)
{
	return priority >= PP_SYSTEM_CRITICAL_PRIORITY;
}

bool pp_evict_exceeds_request(pp_evict_signal signal, const pp_evict_pod *pod)
{
	if (!pod || signal == PP_EVICT_PID || !pod->has_stats)
		return false;
	return pod->usage > pod->request;
}

struct rank_ctx {
	pp_evict_signal signal;
	const pp_evict_pod *pods;
};

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_i64_desc(int64_t a, int64_t b)
{
	return (a < b) - (a > b);
}

/* < 0: a is evicted before b. */
static int compare(const void *pa, const void *pb, void *userdata)
{
	const struct rank_ctx *ctx = userdata;
	const pp_evict_pod *a = &ctx->pods[*(const size_t *)pa], *b = &ctx->pods[*(const size_t *)pb];
	int r;

	/* Unmeasured pods last: see the header for why this deviates from the kubelet. */
	if (a->has_stats != b->has_stats)
		return a->has_stats ? -1 : 1;

	if (ctx->signal != PP_EVICT_PID) {
		bool ea = pp_evict_exceeds_request(ctx->signal, a), eb = pp_evict_exceeds_request(ctx->signal, b);
		if (ea != eb)
			return ea ? -1 : 1;
	}
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	if (a->has_stats) {
		if (ctx->signal == PP_EVICT_PID)
			r = cmp_i64_desc(a->usage, b->usage);
		else
		{
			/* Larger usage - request first; __int128 so adversarial figures cannot overflow. */
			__int128 da = (__int128)a->usage - a->request, db = (__int128)b->usage - b->request;
			r = (da < db) - (da > db);
		}
		if (r)
			return r;
	}
	r = cmp_str(a->namespace_, b->namespace_);
	if (r)
		return r;
	r = cmp_str(a->name, b->name);
	if (r)
		return r;
	r = cmp_str(a->uid, b->uid);
	if (r)
		return r;
	/* Only identical records are left; index order keeps the result total. */
	return (*(const size_t *)pa > *(const size_t *)pb) - (*(const size_t *)pa < *(const size_t *)pb);
}

int pp_evict_rank(pp_evict_signal signal, const pp_evict_pod *pods, size_t n, size_t *ret_order)
{
	if ((n > 0 && (!pods || !ret_order)) || signal > PP_EVICT_PID)
		return -EINVAL;

	size_t *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	struct rank_ctx ctx = { .signal = signal, .pods = pods };
	qsort_r(order, n, sizeof(*order), compare, &ctx);
	if (n) /* ret_order may be NULL when there is nothing to rank */
		memcpy(ret_order, order, n * sizeof(*order));
	free(order);
	return 0;
}
