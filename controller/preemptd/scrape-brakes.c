/* SPDX-License-Identifier: MIT */
/*
 * The metrics of what preemptd does beyond kube-scheduler to hold reservations and brake
 * preemption (issue 28): what waits for the budget, what the budget has taken in the last minute,
 * the nominations withdrawn at their deadline.
 */

#include "preemptd-state.h"

struct pool_ctx {
	FILE *f;
	const char *label;
};

static void pool_sample(const char *pool, size_t used, void *userdata)
{
	struct pool_ctx *p = userdata;
	char l[512];

	metrics_sample(p->f, "preemptd_budget_victims_last_minute",
	               metrics_labels(l, sizeof(l), "scope", "pool", "label", p->label, "pool", pool, (const char *)NULL), (double)used);
}

void scrape_brakes(preemptd *d, FILE *f)
{
	queue_counts qc;
	act_stats as;
	budget_stats bs = { 0 };
	char l[128];

	queue_get_counts(d->queue, &qc);
	act_get_stats(d->act, &as);
	if (d->budget)
		budget_get_stats(d->budget, &bs);
	metrics_family(f, "preemptd_preemptions_postponed_total", "counter",
	               "Preemptions postponed because their victims would exceed the preemption budget, by the budget "
	               "that held them (max-victims-per-minute: cluster, max-victims-per-minute-per-pool: pool).");
	for (int s = 0; s < BUDGET_SCOPES; s++)
		metrics_sample(f, "preemptd_preemptions_postponed_total",
		               metrics_labels(l, sizeof(l), "budget", budget_scope_name((budget_scope)s), (const char *)NULL),
		               (double)bs.postponed[s]);
	metrics_family(f, "preemptd_preemptors_waiting", "gauge",
	               "Pending pods whose preemption the budget postponed, waiting for their retry.");
	metrics_sample(f, "preemptd_preemptors_waiting", NULL, (double)qc.postponed);
	metrics_family(f, "preemptd_budget_victims_last_minute", "gauge",
	               "Victims counted against the preemption budget in the last minute, cluster-wide and per pool "
	               "(pools with none are not listed).");
	int64_t now = queue_now(d->queue);
	metrics_sample(f, "preemptd_budget_victims_last_minute", metrics_labels(l, sizeof(l), "scope", "cluster", (const char *)NULL),
	               d->budget ? (double)budget_used(d->budget, NULL, now) : 0);
	if (d->budget && budget_pool_label(d->budget)) {
		struct pool_ctx p = { f, budget_pool_label(d->budget) };
		budget_foreach_pool(d->budget, now, pool_sample, &p);
	}
	metrics_family(f, "preemptd_nominations_expired_total", "counter",
	               "Nominations withdrawn because their pod was not bound by the deadline (nomination-timeout).");
	metrics_sample(f, "preemptd_nominations_expired_total", NULL, (double)as.nominations_expired);
}
