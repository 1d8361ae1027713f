/* SPDX-License-Identifier: MIT */
#include "cycle.h"

#include <stdio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explain.h"
#include "clock.h"

struct cycle {
	queue *q;
	cluster *c;
	bool explain;
	decision *d; /* the cycle in progress */
	int err;     /* first failure while recording it */
	budget *budget;
	int64_t nom_timeout, nom_after_grace;
	/* cycle_advance: where the decisions of what expires go */
	void (*each)(const decision *d, void *userdata);
	void *each_userdata;
};

void cycle_decision_init(decision *d)
{
	memset(d, 0, sizeof(*d));
}

void cycle_decision_done(decision *d)
{
	karena_free(&d->arena);
}

const char *cycle_decision_kind_name(decision_kind k)
{
	static const char *const names[] = { "none", "bind", "preempt", "unschedulable", "postponed",
		                             "nomination-expired" };
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static const char *keep(cycle *cy, const char *s)
{
	char *r = s ? karena_strdup(&cy->d->arena, s) : NULL;
	if (s && !r)
		cy->err = -ENOMEM;
	return r;
}

static void set_pod(cycle *cy, decision_pod *p, const char *ns, const char *name)
{
	pp_pod_info pi;

	p->namespace_ = keep(cy, ns);
	p->name = keep(cy, name);
	p->uid = keep(cy, cluster_pod_uid(cy->c, ns, name));
	p->priority = pp_cluster_pod_info(queue_cluster(cy->q), ns, name, &pi) >= 0 ? pi.priority : 0;
}

/* The words of the decision the event carries (explain.c): what decided it, always; preemptctl's
 * whole --explain account when the cycle explains. */
static void explained(cycle *cy, const pp_sched_event *ev)
{
	decision *d = cy->d;
	const pp_preemption *p = ev->preemption;
	const pp_candidate *ru = pp_preemption_candidate(p, 1);
	char summary[4096], note[EXPLAIN_NOTE_MAX + 1];
	pp_pod_info pi;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!p || pp_cluster_pod_info(queue_cluster(cy->q), ev->namespace_, ev->name, &pi) < 0)
		return;
	bool postponed = d->kind == DECISION_POSTPONED;
	if (explain_summary_for(summary, sizeof(summary), p, &pi, postponed))
		d->summary = keep(cy, summary);
	d->note = keep(cy, explain_note_for(note, EXPLAIN_NOTE_MAX, d->message ? d->message : "", p, &pi, postponed));
	if (pp_preemption_outcome(p) == PP_OUTCOME_PREEMPT) {
		d->criterion = keep(cy, pp_criterion_name(pp_preemption_criterion(p)));
		d->runner_up = keep(cy, ru ? ru->node : NULL);
		for (size_t i = 0; i < d->n_victims && i < pp_preemption_victim_count(p); i++) {
			explain_victim(summary, sizeof(summary), p, i, pi.priority);
			d->victims[i].reason = keep(cy, summary);
		}
	}
	if (!cy->explain || !(f = open_memstream(&buf, &len)))
		return;
	explain_preemption(f, p, &pi, queue_now(cy->q));
	if (fclose(f) == 0)
		d->explanation = keep(cy, buf);
	free(buf);
}

/* The pod, node, message and victims of a nominate, postponed or nomination-expired event. */
static bool take_event(cycle *cy, decision_kind kind, const pp_sched_event *ev)
{
	decision *d = cy->d;

	d->kind = kind;
	set_pod(cy, &d->pod, ev->namespace_, ev->name);
	d->node = keep(cy, ev->node);
	d->message = keep(cy, ev->message ? ev->message : "");
	d->victims = karena_calloc(&d->arena, ev->n_victims, sizeof(*d->victims));
	if (!d->victims) {
		cy->err = -ENOMEM;
		return false;
	}
	d->n_victims = ev->n_victims;
	for (size_t i = 0; i < ev->n_victims; i++) {
		set_pod(cy, &d->victims[i].pod, ev->victims[i].namespace_, ev->victims[i].name);
		d->victims[i].terminating = ev->victims[i].terminating;
	}
	return true;
}

static void nominated(cycle *cy, const pp_sched_event *ev)
{
	if (!take_event(cy, DECISION_PREEMPT, ev))
		return;
	explained(cy, ev);
	cluster_assume_nominated(cy->c, ev->namespace_, ev->name, ev->node);
	for (size_t i = 0; i < ev->n_victims; i++)
		if (!ev->victims[i].terminating)
			cluster_assume_deleting(cy->c, ev->victims[i].namespace_, ev->victims[i].name);
}

/* A duration as Go prints one (time.Duration.String, to the millisecond): 30s, 1m30s, 1h0m0s. */
static void go_duration(char *buf, size_t size, int64_t ns)
{
	int64_t ms = ns / 1000000, h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
	char sec[32];

	if (ms < 1000) {
		snprintf(buf, size, "%lldms", (long long)ms);
		return;
	}
	if (frac) {
		snprintf(sec, sizeof(sec), "%lld.%03lld", (long long)s, (long long)frac);
		for (char *e = sec + strlen(sec) - 1; *e == '0'; e--)
			*e = '\0';
	} else {
		snprintf(sec, sizeof(sec), "%lld", (long long)s);
	}
	if (h)
		snprintf(buf, size, "%lldh%lldm%ss", (long long)h, (long long)m, sec);
	else if (m)
		snprintf(buf, size, "%lldm%ss", (long long)m, sec);
	else
		snprintf(buf, size, "%ss", sec);
}

/* The nomination is withdrawn; the Event says why, in kube's Event style. */
static void expired(cycle *cy, const pp_sched_event *ev)
{
	char limit[96], d[32], msg[512];
	size_t n = ev->n_victims;

	if (!take_event(cy, DECISION_NOMINATION_EXPIRED, ev))
		return;
	cluster_assume_nominated(cy->c, ev->namespace_, ev->name, NULL);
	go_duration(d, sizeof(d), cy->nom_timeout > 0 ? cy->nom_timeout : cy->nom_after_grace);
	if (cy->nom_timeout > 0)
		snprintf(limit, sizeof(limit), "%s", d);
	else
		snprintf(limit, sizeof(limit), "%s grace period%s + %s", n == 1 ? "its" : "their", n == 1 ? "" : "s", d);
	if (n)
		snprintf(msg, sizeof(msg), "Nomination to node %s expired: %zu pod%s preempted there %s not terminated "
		         "within %s", ev->node, n, n == 1 ? "" : "s", n == 1 ? "has" : "have", limit);
	else
		snprintf(msg, sizeof(msg), "Nomination to node %s expired: the pod was not bound there in time", ev->node);
	cy->d->message = keep(cy, msg);
}

static void cleared(cycle *cy, const pp_sched_event *ev)
{
	decision *d = cy->d;

	cluster_assume_nominated(cy->c, ev->namespace_, ev->name, NULL);
	if (!ev->by_name) {
		/* the cycle's own pod: preemption no longer helps on its nominated node */
		d->clear_nomination = true;
		return;
	}
	decision_pod *v = karena_alloc(&d->arena, (d->n_cleared + 1) * sizeof(*v));
	if (!v) {
		cy->err = -ENOMEM;
		return;
	}
	if (d->n_cleared)
		memcpy(v, d->cleared, d->n_cleared * sizeof(*v));
	d->cleared = v;
	set_pod(cy, &d->cleared[d->n_cleared++], ev->namespace_, ev->name);
}

static void on_event(const pp_sched_event *ev, void *userdata)
{
	cycle *cy = userdata;
	decision *d = cy->d;

	if (ev->attempts)
		d->attempts = ev->attempts;
	switch (ev->kind) {
	case PP_SCHED_BIND:
		d->kind = DECISION_BIND;
		set_pod(cy, &d->pod, ev->namespace_, ev->name);
		d->node = keep(cy, ev->node);
		cluster_assume_bound(cy->c, ev->namespace_, ev->name, ev->node);
		break;
	case PP_SCHED_NOMINATE:
		nominated(cy, ev);
		break;
	case PP_SCHED_CLEAR_NOMINATION:
		cleared(cy, ev);
		break;
	case PP_SCHED_UNSCHEDULABLE:
		d->kind = DECISION_UNSCHEDULABLE;
		set_pod(cy, &d->pod, ev->namespace_, ev->name);
		d->message = keep(cy, ev->message);
		explained(cy, ev);
		break;
	case PP_SCHED_POSTPONED:
		if (take_event(cy, DECISION_POSTPONED, ev))
			explained(cy, ev);
		break;
	case PP_SCHED_NOMINATION_EXPIRED: /* in cycle_advance */
		expired(cy, ev);
		if (cy->each && cy->err >= 0)
			cy->each(d, cy->each_userdata);
		karena_reset(&d->arena);
		*d = (decision){ .arena = d->arena, .time_ns = ev->time_ns };
		break;
	case PP_SCHED_VICTIM_GONE: /* not with external termination: the API server says it */
	default:
		break;
	}
}

void cycle_set_explain(cycle *cy, bool explain)
{
	cy->explain = explain;
	pp_sched_set_explain(queue_sched(cy->q), explain);
}

int cycle_set_nomination_timeout(cycle *cy, int64_t timeout_ns, int64_t after_grace_ns)
{
	int r = pp_sched_set_nomination_timeout(queue_sched(cy->q), timeout_ns, after_grace_ns, NULL);
	if (r >= 0) {
		cy->nom_timeout = timeout_ns;
		cy->nom_after_grace = after_grace_ns;
	}
	return r;
}

int cycle_set_min_runtime(cycle *cy, int64_t min_runtime_ns)
{
	return pp_sched_set_min_runtime(queue_sched(cy->q), min_runtime_ns, NULL);
}

/* The preemption gate: the victims that need a DELETE, against the budget of the node's pool. */
static int budget_gate(const pp_sched_event *plan, void *userdata, int64_t *ret_until, char *reason,
                       size_t reason_size)
{
	cycle *cy = userdata;
	size_t n = 0;
	budget_scope scope;

	for (size_t i = 0; i < plan->n_victims; i++)
		n += !plan->victims[i].terminating;
	const char *pool = pp_cluster_node_label(queue_cluster(cy->q), plan->node, budget_pool_label(cy->budget));
	int r = budget_take(cy->budget, plan->node, pool, n, plan->time_ns, ret_until, &scope, reason, reason_size);
	if (r < 0) {
		cy->err = r; /* out of memory: the preemption goes, and the cycle reports the failure */
		return 0;
	}
	return r;
}

void cycle_set_budget(cycle *cy, budget *b)
{
	cy->budget = b;
	pp_sched_set_preemption_gate(queue_sched(cy->q), budget_limits(b) ? budget_gate : NULL, cy);
}

struct restore {
	cycle *cy;
	int err;
};

static void restore_victim(const char *node, int64_t deleted_ns, void *userdata)
{
	struct restore *rs = userdata;
	budget *b = rs->cy->budget;
	const char *pool = pp_cluster_node_label(queue_cluster(rs->cy->q), node, budget_pool_label(b));
	int r = budget_seed(b, pool, 1, deleted_ns);

	if (r < 0)
		rs->err = r;
}

int cycle_restore_budget(cycle *cy, int64_t now_ns)
{
	struct restore rs = { cy, 0 };

	if (budget_limits(cy->budget))
		cluster_foreach_victim_since(cy->c, now_ns - BUDGET_WINDOW_NS, restore_victim, &rs);
	return rs.err;
}

int cycle_advance(cycle *cy, int64_t now_ns, void (*fn)(const decision *d, void *userdata), void *userdata,
                  pp_err *err)
{
	decision d;
	int r;

	cycle_decision_init(&d);
	cy->d = &d;
	cy->err = 0;
	cy->each = fn;
	cy->each_userdata = userdata;
	queue_set_sink(cy->q, on_event, cy);
	r = queue_advance(cy->q, now_ns, err);
	queue_set_sink(cy->q, NULL, NULL);
	cy->each = NULL;
	cy->d = NULL;
	cycle_decision_done(&d);
	if (r >= 0 && cy->err < 0) {
		r = cy->err;
		if (err)
			snprintf(err->msg, sizeof(err->msg), "recording what expired: out of memory");
	}
	return r;
}

int cycle_new(queue *q, cluster *c, cycle **ret)
{
	cycle *cy = calloc(1, sizeof(*cy));

	if (!cy)
		return -ENOMEM;
	cy->q = q;
	cy->c = c;
	*ret = cy;
	return 0;
}

cycle *cycle_free(cycle *cy)
{
	free(cy);
	return NULL;
}

int cycle_run_one(cycle *cy, decision *d, pp_err *err)
{
	int64_t t0 = clock_mono_ns();
	int r;

	karena_reset(&d->arena);
	*d = (decision){ .arena = d->arena, .time_ns = queue_now(cy->q) };
	cy->d = d;
	cy->err = 0;
	queue_set_sink(cy->q, on_event, cy);
	r = pp_sched_schedule_one(queue_sched(cy->q), err);
	queue_set_sink(cy->q, NULL, NULL);
	cy->d = NULL;
	d->duration_ns = clock_mono_ns() - t0;
	d->started_mono_ns = t0;
	if (r >= 0 && cy->err < 0) {
		r = cy->err;
		if (err)
			snprintf(err->msg, sizeof(err->msg), "recording the decision: out of memory");
	}
	return r;
}
