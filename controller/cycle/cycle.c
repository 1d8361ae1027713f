/* SPDX-License-Identifier: MIT */
#include "cycle.h"

#include <stdio.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explain.h"

struct cycle {
	queue *q;
	cluster *c;
	bool explain;
	decision *d; /* the cycle in progress */
	int err;     /* first failure while recording it */
};

void decision_init(decision *d)
{
	memset(d, 0, sizeof(*d));
}

void decision_done(decision *d)
{
	karena_free(&d->arena);
}

const char *decision_kind_name(decision_kind k)
{
	static const char *const names[] = { "none", "bind", "preempt", "unschedulable" };
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
	if (explain_summary(summary, sizeof(summary), p, &pi))
		d->summary = keep(cy, summary);
	d->note = keep(cy, explain_note(note, EXPLAIN_NOTE_MAX, d->message ? d->message : "", p, &pi));
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

static void nominated(cycle *cy, const pp_sched_event *ev)
{
	decision *d = cy->d;

	d->kind = DECISION_PREEMPT;
	set_pod(cy, &d->pod, ev->namespace_, ev->name);
	d->node = keep(cy, ev->node);
	d->message = keep(cy, ev->message ? ev->message : "");
	d->victims = karena_calloc(&d->arena, ev->n_victims, sizeof(*d->victims));
	if (!d->victims) {
		cy->err = -ENOMEM;
		return;
	}
	d->n_victims = ev->n_victims;
	cluster_assume_nominated(cy->c, ev->namespace_, ev->name, ev->node);
	for (size_t i = 0; i < ev->n_victims; i++) {
		const pp_victim *v = &ev->victims[i];
		set_pod(cy, &d->victims[i].pod, v->namespace_, v->name);
		d->victims[i].terminating = v->terminating;
		if (!v->terminating)
			cluster_assume_deleting(cy->c, v->namespace_, v->name);
	}
	explained(cy, ev);
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

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int cycle_run_one(cycle *cy, decision *d, pp_err *err)
{
	int64_t t0 = mono_ns();
	int r;

	karena_reset(&d->arena);
	*d = (decision){ .arena = d->arena, .time_ns = queue_now(cy->q) };
	cy->d = d;
	cy->err = 0;
	queue_set_sink(cy->q, on_event, cy);
	r = pp_sched_schedule_one(queue_sched(cy->q), err);
	queue_set_sink(cy->q, NULL, NULL);
	cy->d = NULL;
	d->duration_ns = mono_ns() - t0;
	if (r >= 0 && cy->err < 0) {
		r = cy->err;
		if (err)
			snprintf(err->msg, sizeof(err->msg), "recording the decision: out of memory");
	}
	return r;
}
