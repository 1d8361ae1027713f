/* SPDX-License-Identifier: MIT */
#include "explain.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

void explain_format_time(int64_t ns, char *buf, size_t size)
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

static void account_victim(FILE *f, const pp_victim *v, int64_t now_ns)
{
	char t[64];
	explain_format_time(v->start_time_ns, t, sizeof(t));
	fprintf(f, "    victim %s/%s: priority %" PRId32 ", started %s%s%s%s\n", v->namespace_, v->name, v->priority,
	        t, v->start_time_ns == now_ns ? " (no startTime: now)" : "",
	        v->violates_pdb ? ", violates a PodDisruptionBudget" : "",
	        v->terminating ? ", already terminating" : "");
}

/*
 * Why preemption was not attempted, or NULL when it was: in kube-scheduler's words ("not eligible
 * due to preemptionPolicy=Never."), which are what a user would search for.
 */
static const char *not_attempted(const pp_preemption *p)
{
	pp_eligibility e = pp_preemption_eligibility(p);
	return e != PP_ELIGIBLE ? pp_eligibility_reason(e) : NULL;
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
			account_victim(f, &e->victims[j], now_ns);
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
	char why[4096];
	if (explain_summary(why, sizeof(why), p, pod))
		fprintf(f, "why: %s\n", why);
}

/* --- one line, within a size ------------------------------------------------------------------- */

struct line {
	char *buf;
	size_t size, len; /* len < size: the NUL always fits */
};

__attribute__((format(printf, 2, 3))) static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len + 1 >= l->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len = l->len + (size_t)n < l->size ? l->len + (size_t)n : l->size - 1;
}

/* The criterion that picked the node, with the values of the winner and of the runner-up. */
static void picked_by(struct line *l, const pp_preemption *p)
{
	const pp_candidate *w = pp_preemption_candidate(p, 0), *r = pp_preemption_candidate(p, 1);
	pp_criterion c = pp_preemption_criterion(p);
	char tw[64], tr[64];

	if (!w || !r) {
		put(l, "the only node where preemption helps");
		return;
	}
	put(l, "%s: ", pp_criterion_name(c));
	switch (c) {
	case PP_CRIT_PDB_VIOLATIONS:
		put(l, "%zu against %zu on %s", w->num_pdb_violations, r->num_pdb_violations, r->node);
		break;
	case PP_CRIT_HIGHEST_PRIORITY:
		put(l, "%" PRId32 " against %" PRId32 " on %s", w->highest_priority, r->highest_priority, r->node);
		break;
	case PP_CRIT_PRIORITY_SUM: /* each victim counts priority + 2^31: more victims never sum lower */
		put(l, "%" PRId64 " against %" PRId64 " on %s", w->priority_sum, r->priority_sum, r->node);
		break;
	case PP_CRIT_VICTIM_COUNT:
		put(l, "%zu against %zu on %s", w->n_victims, r->n_victims, r->node);
		break;
	case PP_CRIT_START_TIME:
		explain_format_time(w->earliest_start_ns, tw, sizeof(tw));
		explain_format_time(r->earliest_start_ns, tr, sizeof(tr));
		put(l, "%s against %s on %s", tw, tr, r->node);
		break;
	case PP_CRIT_NODE_NAME:
	default:
		put(l, "equal to %s on every other criterion", r->node);
		break;
	}
}

static void victim_reason(struct line *l, const pp_preemption *p, size_t i, int32_t preemptor_priority)
{
	const pp_victim *v = pp_preemption_victim(p, i);
	size_t n = pp_preemption_victim_pdb_count(p, i);

	put(l, "priority %" PRId32 " < %" PRId32, v->priority, preemptor_priority);
	if (!n)
		put(l, "; no PodDisruptionBudget");
	for (size_t k = 0; k < n; k++) {
		const pp_victim_pdb *b = pp_preemption_victim_pdb(p, i, k);
		if (b->disrupted)
			put(l, "; already counted in PodDisruptionBudget %s/%s's disruptedPods", b->namespace_, b->name);
		else
			put(l, "; %s PodDisruptionBudget %s/%s (%" PRId32 " disruption%s allowed)",
			    b->violated ? "violates" : "within", b->namespace_, b->name, b->disruptions_allowed,
			    b->disruptions_allowed == 1 ? "" : "s");
	}
	if (v->terminating)
		put(l, "; already terminating");
}

size_t explain_victim(char *buf, size_t size, const pp_preemption *p, size_t i, int32_t preemptor_priority)
{
	struct line l = { buf, size, 0 };

	if (!size)
		return 0;
	buf[0] = '\0';
	if (i < pp_preemption_victim_count(p))
		victim_reason(&l, p, i, preemptor_priority);
	return l.len;
}

size_t explain_summary_for(char *buf, size_t size, const pp_preemption *p, const pp_pod_info *pod, bool postponed)
{
	/* what the victims that do not fit are told as, at most */
	static const size_t more_room = sizeof(" and 4294967295 more victims.");
	struct line l = { buf, size, 0 };
	char item[1024];

	if (!size)
		return 0;
	buf[0] = '\0';
	switch (pp_preemption_outcome(p)) {
	case PP_OUTCOME_PREEMPT:
		put(&l, postponed ? "Would preempt on node %s, picked by " : "Preempting on node %s, picked by ",
		    pp_preemption_node(p));
		picked_by(&l, p);
		put(&l, ". Victims:");
		for (size_t i = 0, n = pp_preemption_victim_count(p); i < n; i++) {
			const pp_victim *v = pp_preemption_victim(p, i);
			struct line it = { item, sizeof(item), 0 };
			put(&it, "%s %s/%s (", i ? "," : "", v->namespace_, v->name);
			victim_reason(&it, p, i, pod->priority);
			put(&it, ")");
			/* the last one needs no room for "and N more" */
			if (l.len + it.len + (i + 1 < n ? more_room : 1) >= l.size) {
				put(&l, " and %zu more victim%s", n - i, n - i == 1 ? "" : "s");
				break;
			}
			put(&l, "%s", item);
		}
		put(&l, ".");
		break;
	case PP_OUTCOME_NONE:
		if (*pp_preemption_unresolvable(p))
			put(&l, "Preemption cannot resolve: %s.", pp_preemption_unresolvable(p));
		break;
	case PP_OUTCOME_FITS:
		break;
	}
	return l.len;
}

size_t explain_summary(char *buf, size_t size, const pp_preemption *p, const pp_pod_info *pod)
{
	return explain_summary_for(buf, size, p, pod, false);
}

const char *explain_note_for(char *buf, size_t limit, const char *head, const pp_preemption *p, const pp_pod_info *pod,
                             bool postponed)
{
	size_t hl = strlen(head);

	if (hl + 2 >= limit)
		return head;
	memcpy(buf, head, hl);
	/* buf[hl] takes the space; the summary gets the rest, its NUL included */
	if (explain_summary_for(buf + hl + 1, limit - hl, p, pod, postponed))
		buf[hl] = ' ';
	else
		buf[hl] = '\0';
	return buf;
}

const char *explain_note(char *buf, size_t limit, const char *head, const pp_preemption *p, const pp_pod_info *pod)
{
	return explain_note_for(buf, limit, head, p, pod, false);
}
