/* SPDX-License-Identifier: MIT */
/* /metrics: the evictions of --pdb strict (act/evict.h), its refusals and the preemptions
 * withdrawn and retried. Present (at zero) under --pdb prefer too: a dashboard needs no guess. */
#include "preemptd-state.h"
#include "evict.h"

void scrape_evictions(preemptd *d, FILE *f)
{
	evict_stats st;
	char l[128];

	evict_get_stats(act_evictor(d->act), &st);
	metrics_family(f, "preemptd_pdb_strict", "gauge", "1 when victims are evicted through the Eviction API (--pdb strict).");
	metrics_sample(f, "preemptd_pdb_strict", NULL, d->cfg->pdb_policy == PP_PDB_STRICT ? 1 : 0);
	metrics_family(f, "preemptd_evictions_total", "counter", "Victims evicted through the Eviction API (201).");
	metrics_sample(f, "preemptd_evictions_total", NULL, (double)st.evicted);
	metrics_family(f, "preemptd_eviction_refusals_total", "counter",
	               "Evictions the API server refused, by what refused them: disruption_budget (429, the budget "
	               "allows no disruption), budget_not_processed (429, its status is not up to date), "
	               "multiple_budgets (500), budget_forbidden (403 from a budget), other (RBAC's 403, a 400...).");
	for (int r = EVICTION_BUDGET; r < EVICTION_REFUSALS; r++)
		metrics_sample(f, "preemptd_eviction_refusals_total",
		               metrics_labels(l, sizeof(l), "reason", eviction_refusal_name((eviction_refusal)r), (const char *)NULL),
		               (double)st.refused[r]);
	metrics_family(f, "preemptd_preemption_retries_total", "counter",
	               "Preemptions withdrawn after a refused eviction, their preemptor tried again; evicted=some: victims "
	               "had been evicted before the refusal (gone, their room free), none: nothing was.");
	metrics_sample(f, "preemptd_preemption_retries_total", metrics_labels(l, sizeof(l), "evicted", "none", (const char *)NULL),
	               (double)st.withdrawn);
	metrics_sample(f, "preemptd_preemption_retries_total", metrics_labels(l, sizeof(l), "evicted", "some", (const char *)NULL),
	               (double)st.withdrawn_partial);
	metrics_family(f, "preemptd_preemptions_completed_total", "counter",
	               "Preemptions under --pdb strict whose every victim was evicted (the preemptor then nominated).");
	metrics_sample(f, "preemptd_preemptions_completed_total", NULL, (double)st.completed);
	metrics_family(f, "preemptd_preemptions_in_progress", "gauge",
	               "Preemptions under --pdb strict evicting their victims now, one at a time.");
	metrics_sample(f, "preemptd_preemptions_in_progress", NULL, (double)st.in_progress);
}
