/* SPDX-License-Identifier: MIT */
#include "explain.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

void format_time(int64_t ns, char *buf, size_t size)
{
	time_t s = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	struct tm tm;

	if (frac < 0) {
		frac += 1000000000;
		s--;
	}
	if (!gmtime_r(&s, &tm)) {
		snprintf(buf, size, "%" PRId64 "ns", ns);
		return;
	}
	size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac && n < size)
		n += (size_t)snprintf(buf + n, size - n, ".%09ld", frac);
	if (n < size)
		snprintf(buf + n, size - n, "Z");
}

static const char *verdict_name(pp_node_verdict v)
{
	switch (v) {
	case PP_NODE_FITS: return "fits";
	case PP_NODE_UNRESOLVABLE: return "rejected, preemption cannot help";
	case PP_NODE_NOT_HELPFUL: return "rejected, preemption does not help";
	case PP_NODE_CANDIDATE: return "candidate";
	}
	return "?";
}

static void explain_victim(FILE *f, const pp_victim *v, int64_t now_ns)
{
	char t[64];
	format_time(v->start_time_ns, t, sizeof(t));
	fprintf(f, "    victim %s/%s: priority %" PRId32 ", started %s%s%s%s\n", v->namespace_, v->name, v->priority,
	        t, v->start_time_ns == now_ns ? " (no startTime: now)" : "",
	        v->violates_pdb ? ", violates a PodDisruptionBudget" : "",
	        v->terminating ? ", already terminating" : "");
}

/*
 * Why preemption was not attempted, or NULL when it was. libpreempt words it as kube-scheduler
 * does, inside the reason ("...preemption: not eligible due to preemptionPolicy=Never."); the
 * same words are the scheduler's, so they are what a user would search for.
 */
static const char *not_attempted(const pp_preemption *p)
{
	static const char tag[] = "preemption: not eligible";
	const char *r = pp_preemption_outcome(p) == PP_OUTCOME_NONE ? strstr(pp_preemption_reason(p), tag) : NULL;
	return r ? r + strlen("preemption: ") : NULL;
}

void explain_preemption(FILE *f, const pp_preemption *p, const pp_pod_info *pod, int64_t now_ns)
{
	size_t n = pp_preemption_node_count(p);
	const char *why_not = not_attempted(p);

	fprintf(f, "pod %s/%s: priority %" PRId32 ", preemptionPolicy %s\n", pod->namespace_, pod->name,
	        pod->priority, pp_preemption_policy_name(pod->preemption_policy));
	if (pod->nominated_node_name)
		fprintf(f, "  nominated node: %s\n", pod->nominated_node_name);
	/* Without an attempt, no node was judged on what preemption could do: saying "preemption does
	 * not help" there would blame the nodes for the pod's own policy. */
	if (why_not)
		fprintf(f, "preemption not attempted: %.*s\n", (int)strcspn(why_not, "."), why_not);
	for (size_t i = 0; i < n; i++) {
		const pp_node_explain *e = pp_preemption_node_explain(p, i);
		fprintf(f, "node %s: %s", e->node, why_not ? "does not fit" : verdict_name(e->verdict));
		if (e->reason && *e->reason)
			fprintf(f, ": %s", e->reason);
		if (e->verdict == PP_NODE_CANDIDATE) {
			fprintf(f, ": %zu %s, %zu PDB %s, priority sum %" PRId64, e->n_victims,
			        e->n_victims == 1 ? "victim" : "victims", e->num_pdb_violations,
			        e->num_pdb_violations == 1 ? "violation" : "violations", e->priority_sum);
			if (e->lost_at != PP_CRIT_NONE)
				fprintf(f, "; lost at: %s", pp_criterion_name(e->lost_at));
		}
		fputc('\n', f);
		for (size_t j = 0; e->verdict == PP_NODE_CANDIDATE && j < e->n_victims; j++)
			explain_victim(f, &e->victims[j], now_ns);
	}
	switch (pp_preemption_outcome(p)) {
	case PP_OUTCOME_FITS:
		fprintf(f, "decision: fits on %s without preemption (the feasible node with the smallest name)\n",
		        pp_preemption_node(p));
		break;
	case PP_OUTCOME_PREEMPT:
		fprintf(f, "decision: preempt %zu %s on %s, picked by: %s\n", pp_preemption_victim_count(p),
		        pp_preemption_victim_count(p) == 1 ? "pod" : "pods", pp_preemption_node(p),
		        pp_criterion_name(pp_preemption_criterion(p)));
		for (size_t i = 0; i < pp_preemption_cleared_nomination_count(p); i++) {
			const pp_pod_info *c = pp_preemption_cleared_nomination(p, i);
			fprintf(f, "  nomination of %s/%s (priority %" PRId32 ") would be cleared\n", c->namespace_,
			        c->name, c->priority);
		}
		break;
	case PP_OUTCOME_NONE:
		fprintf(f, "decision: no node: %s\n", pp_preemption_reason(p));
		break;
	}
}

