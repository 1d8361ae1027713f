/* The scheduling cycle in simulated time, through the public API: the seeds' scenarios
 * (reference §5–7.5) — nominated node first, least-allocated binding, preemption with victims
 * terminating for their grace period, a higher-priority pod taking a nominated node, a preemptor
 * binding elsewhere, Never pods, the two-pass rule with inter-pod (anti-)affinity. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "preempt.h"

#define S 1000000000LL
#define GI (1024LL * 1024 * 1024)
#define HOSTNAME "kubernetes.io/hostname"

/* Every event as one line: "<sec> <event> <ns/name> [node] [extras]". */
struct log {
	char lines[64][512];
	size_t n;
	char nominate_message[512]; /* the last nominate event's FitError */
};

static void record(const pp_sched_event *ev, void *ud)
{
	struct log *l = ud;
	char *b;
	size_t size;
	int off;

	if (l->n == 64)
		fail_msg("too many events");
	b = l->lines[l->n++];
	size = sizeof(l->lines[0]);
	off = snprintf(b, size, "%lld %s %s/%s", (long long)(ev->time_ns / S), pp_sched_event_name(ev->kind),
	               ev->namespace_, ev->name);
	if (ev->node)
		off += snprintf(b + off, size - (size_t)off, " %s", ev->node);
	if (ev->kind == PP_SCHED_NOMINATE) {
		off += snprintf(b + off, size - (size_t)off, " victims=");
		for (size_t i = 0; i < ev->n_victims; i++)
			off += snprintf(b + off, size - (size_t)off, "%s%s/%s", i ? "," : "", ev->victims[i].namespace_,
			                ev->victims[i].name);
	}
	if (ev->by_name)
		off += snprintf(b + off, size - (size_t)off, " by=%s/%s", ev->by_namespace, ev->by_name);
	if (ev->kind == PP_SCHED_UNSCHEDULABLE)
		snprintf(b + off, size - (size_t)off, ": %s", ev->message);
	if (ev->kind == PP_SCHED_NOMINATE && ev->message)
		snprintf(l->nominate_message, sizeof(l->nominate_message), "%s", ev->message);
}

static void expect(const struct log *l, const char *const *want, size_t n)
{
	for (size_t i = 0; i < l->n; i++)
		print_message("  event %zu: %s\n", i, l->lines[i]);
	assert_int_equal(l->n, n);
	for (size_t i = 0; i < n; i++) {
		/* a wanted line ending in "*" only fixes the prefix (unschedulable messages) */
		size_t len = strlen(want[i]);
		if (len && want[i][len - 1] == '*')
			assert_memory_equal(l->lines[i], want[i], len - 1);
		else
			assert_string_equal(l->lines[i], want[i]);
	}
}
#define EXPECT(l, ...)                                                    \
	do {                                                              \
		const char *const w_[] = { __VA_ARGS__ };                 \
		expect((l), w_, sizeof(w_) / sizeof(w_[0]));              \
	} while (0)

struct world {
	pp_sched *s;
	struct log log;
};

static void setup(struct world *w)
{
	pp_cluster *c = NULL;
	pp_err err = { "" };
	memset(w, 0, sizeof(*w));
	assert_int_equal(pp_cluster_new(&c), 0);
	if (pp_sched_new(c, NULL, 0, record, &w->log, &w->s, &err) < 0)
		fail_msg("pp_sched_new: %s", err.msg);
}

static void node(struct world *w, const char *name, int64_t cpu_m, const pp_taint *taint)
{
	pp_label labels[] = { { HOSTNAME, name } };
	pp_resource alloc[] = { { "cpu", cpu_m }, { "memory", 32 * GI }, { "pods", 110 } };
	pp_node_spec n = { .name = name, .labels = labels, .n_labels = 1, .allocatable = alloc,
	                   .n_allocatable = 3, .taints = taint, .n_taints = taint ? 1 : 0 };
	pp_err err = { "" };
	if (pp_sched_add_node(w->s, &n, &err) < 0)
		fail_msg("add node %s: %s", name, err.msg);
}

struct podopt {
	const char *node;
	const char *nominated;
	int32_t prio;
	int64_t cpu_m;
	bool never;
	int64_t grace; /* 0 = default (30 s) */
	const char *app; /* label app=<app> */
	const char *anti_app; /* required anti-affinity to app=<anti_app>, hostname topology */
	const char *aff_app;  /* required affinity to app=<aff_app>, hostname topology */
};

static void pod(struct world *w, const char *name, struct podopt o)
{
	pp_label labels[] = { { "app", o.app } };
	pp_resource req[] = { { "cpu", o.cpu_m }, { "memory", 1 * GI } };
	pp_label sel_anti[] = { { "app", o.anti_app } }, sel_aff[] = { { "app", o.aff_app } };
	pp_pod_affinity_term anti = { .selector = { .present = true, .match_labels = sel_anti, .n_match_labels = 1 },
	                              .topology_key = HOSTNAME };
	pp_pod_affinity_term aff = { .selector = { .present = true, .match_labels = sel_aff, .n_match_labels = 1 },
	                             .topology_key = HOSTNAME };
	pp_pod_spec p = {
		.namespace_ = "default", .name = name, .labels = labels, .n_labels = o.app ? 1 : 0,
		.priority = o.prio, .preemption_policy = o.never ? PP_PREEMPT_NEVER : PP_PREEMPT_LOWER_PRIORITY,
		.requests = req, .n_requests = 2, .node_name = o.node, .nominated_node_name = o.nominated,
		.has_start_time = o.node != NULL, .start_time_ns = 0,
		.termination_grace_period_s = o.grace ? o.grace : -1,
		.anti_affinity = &anti, .n_anti_affinity = o.anti_app ? 1 : 0,
		.affinity = &aff, .n_affinity = o.aff_app ? 1 : 0,
	};
	pp_err err = { "" };
	if (pp_sched_add_pod(w->s, &p, &err) < 0)
		fail_msg("add pod %s: %s", name, err.msg);
}

static void run(struct world *w, int64_t until)
{
	pp_err err = { "" };
	if (pp_sched_run(w->s, until, &err) < 0)
		fail_msg("pp_sched_run: %s", err.msg);
}

static void advance(struct world *w, int64_t t)
{
	pp_err err = { "" };
	if (pp_sched_advance(w->s, t, &err) < 0)
		fail_msg("pp_sched_advance: %s", err.msg);
}

static void cycle_all(struct world *w)
{
	pp_err err = { "" };
	int r;
	while ((r = pp_sched_schedule_one(w->s, &err)) > 0)
		;
	if (r < 0)
		fail_msg("pp_sched_schedule_one: %s", err.msg);
}

static const char *node_of(struct world *w, const char *name)
{
	pp_pod_info pi;
	assert_int_equal(pp_cluster_pod_info(pp_sched_cluster(w->s), "default", name, &pi), 0);
	return pi.node_name ? pi.node_name : "";
}

static const char *nominated_of(struct world *w, const char *name)
{
	pp_pod_info pi;
	assert_int_equal(pp_cluster_pod_info(pp_sched_cluster(w->s), "default", name, &pi), 0);
	return pi.nominated_node_name ? pi.nominated_node_name : "";
}

/* ---- binding ------------------------------------------------------------------------------- */

static void test_least_allocated_then_name(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	node(&w, "n2", 4000, NULL);
	node(&w, "n3", 4000, NULL);
	pod(&w, "busy", (struct podopt){ .node = "n1", .cpu_m = 3000 });
	/* n2 and n3 are equally empty: the smaller name wins; then n3 is the emptiest. */
	pod(&w, "a", (struct podopt){ .prio = 5, .cpu_m = 1000 });
	pod(&w, "b", (struct podopt){ .prio = 1, .cpu_m = 1000 });
	run(&w, INT64_MAX);
	EXPECT(&w.log, "0 bind default/a n2", "0 bind default/b n3");
	pp_sched_free(w.s);
}

/* LeastAllocated counts a pod without a cpu request as 100m (schedutil.GetNonzeroRequests):
 * "idle" (0 cpu) makes n1 look busier than n2 with its 50m pod. With the raw requests n1
 * would score 84 against n2's 83 and win. */
static void test_least_allocated_nonzero_defaults(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	node(&w, "n2", 4000, NULL);
	pod(&w, "idle", (struct podopt){ .node = "n1", .cpu_m = 0 });
	pod(&w, "small", (struct podopt){ .node = "n2", .cpu_m = 50 });
	pod(&w, "a", (struct podopt){ .cpu_m = 1000 });
	run(&w, INT64_MAX);
	EXPECT(&w.log, "0 bind default/a n2");
	pp_sched_free(w.s);
}

/* Pods of one shape one after the other: each binding changes its node's score, so they spread
 * (n1, n2, n1, n2) — a score remembered across the binding would pile them onto n1. */
static void test_same_shape_pods_spread(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	node(&w, "n2", 4000, NULL);
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "p%d", i);
		pod(&w, name, (struct podopt){ .prio = 4 - i, .cpu_m = 500 });
	}
	run(&w, INT64_MAX);
	EXPECT(&w.log, "0 bind default/p0 n1", "0 bind default/p1 n2", "0 bind default/p2 n1", "0 bind default/p3 n2");
	pp_sched_free(w.s);
}

static void test_nominated_node_tried_first(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	node(&w, "n2", 4000, NULL);
	pod(&w, "busy", (struct podopt){ .node = "n2", .cpu_m = 2000 });
	/* n1 is emptier and would win on score, but the pod's nominated node passes its filters. */
	pod(&w, "p", (struct podopt){ .prio = 5, .cpu_m = 1000, .nominated = "n2" });
	run(&w, INT64_MAX);
	EXPECT(&w.log, "0 bind default/p n2");
	pp_sched_free(w.s);
}

/* ---- preemption and graceful termination --------------------------------------------------- */

static void test_preempt_wait_grace_then_bind(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof(name), "low%d", i);
		pod(&w, name, (struct podopt){ .node = "n1", .cpu_m = 900, .grace = 20 });
	}
	pod(&w, "high", (struct podopt){ .prio = 10, .cpu_m = 3000 });
	run(&w, INT64_MAX);
	/* 3 of the 4 are needed; they keep their cpu for 20 s of simulated time. Equal priority and
	 * start: the smaller name is more important (DESIGN §3), so low0 is reprieved. */
	EXPECT(&w.log, "0 nominate default/high n1 victims=default/low1,default/low2,default/low3",
	       "20 victim-gone default/low1 n1 by=default/high", "20 victim-gone default/low2 n1 by=default/high",
	       "20 victim-gone default/low3 n1 by=default/high", "20 bind default/high n1");
	assert_string_equal(node_of(&w, "low0"), "n1");
	pp_sched_free(w.s);
}

/* Seed scenario: a higher-priority pod arriving while a preemptor waits for its victims takes the
 * node, and the first preemptor loses its nomination. */
static void test_higher_priority_takes_nominated_node(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	pod(&w, "low", (struct podopt){ .node = "n1", .cpu_m = 4000 });
	pod(&w, "p1", (struct podopt){ .prio = 10, .cpu_m = 3000 });
	cycle_all(&w);
	assert_string_equal(nominated_of(&w, "p1"), "n1");
	advance(&w, 5 * S);
	pod(&w, "p2", (struct podopt){ .prio = 20, .cpu_m = 3000 });
	run(&w, INT64_MAX);
	EXPECT(&w.log, "0 nominate default/p1 n1 victims=default/low",
	       "5 nominate default/p2 n1 victims=default/low",
	       "5 clear-nomination default/p1 n1 by=default/p2",
	       "5 unschedulable default/p1: 0/1 nodes are available: 1 Insufficient cpu.*",
	       "30 victim-gone default/low n1 by=default/p1",
	       "30 bind default/p2 n1",
	       "30 unschedulable default/p1: 0/1 nodes are available: 1 Insufficient cpu.*");
	assert_string_equal(node_of(&w, "p2"), "n1");
	assert_string_equal(node_of(&w, "p1"), "");
	assert_string_equal(nominated_of(&w, "p1"), "");
	pp_sched_free(w.s);
}

/* Deviation from kube: a lower-priority nominated pod that still fits keeps its nomination. */
static void test_lower_nomination_kept_when_it_still_fits(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	pod(&w, "low", (struct podopt){ .node = "n1", .cpu_m = 4000 });
	pod(&w, "p1", (struct podopt){ .prio = 10, .cpu_m = 1000 });
	cycle_all(&w);
	advance(&w, 1 * S);
	pod(&w, "p2", (struct podopt){ .prio = 20, .cpu_m = 2000 });
	run(&w, INT64_MAX);
	EXPECT(&w.log, "0 nominate default/p1 n1 victims=default/low",
	       "1 nominate default/p2 n1 victims=default/low",
	       "30 victim-gone default/low n1 by=default/p1",
	       "30 bind default/p2 n1", "30 bind default/p1 n1");
	pp_sched_free(w.s);
}

/* Seed scenario: the preemptor binds elsewhere when another node frees up before its victims
 * are gone; the nomination was only a hint. */
static void test_preemptor_binds_elsewhere(void **state)
{
	(void)state;
	struct world w;
	pp_err err = { "" };
	setup(&w);
	node(&w, "n1", 4000, NULL);
	node(&w, "n2", 4000, NULL);
	pod(&w, "low", (struct podopt){ .node = "n1", .cpu_m = 4000 });
	pod(&w, "vip", (struct podopt){ .node = "n2", .cpu_m = 4000, .prio = 100 });
	pod(&w, "p", (struct podopt){ .prio = 10, .cpu_m = 3000 });
	cycle_all(&w);
	advance(&w, 5 * S);
	assert_int_equal(pp_sched_remove_pod(w.s, "default", "vip", &err), 0);
	run(&w, INT64_MAX);
	/* Moved at 5 s (its 1 s backoff is over); n1 still holds the victim, n2 is free. */
	EXPECT(&w.log, "0 nominate default/p n1 victims=default/low", "5 bind default/p n2",
	       "30 victim-gone default/low n1 by=default/p");
	pp_sched_free(w.s);
}

/* Seed scenario: Never pods wait in the queue by priority and do not preempt. */
static void test_never_pod_waits_without_preempting(void **state)
{
	(void)state;
	struct world w;
	pp_err err = { "" };
	setup(&w);
	node(&w, "n1", 4000, NULL);
	pod(&w, "low", (struct podopt){ .node = "n1", .cpu_m = 3000 });
	pod(&w, "never", (struct podopt){ .prio = 1000, .cpu_m = 2000, .never = true });
	pod(&w, "small", (struct podopt){ .prio = 1, .cpu_m = 500 });
	run(&w, INT64_MAX);
	/* Tried first (priority), no victims; the smaller pod behind it still binds. */
	EXPECT(&w.log, "0 unschedulable default/never: 0/1 nodes are available: 1 Insufficient cpu. *",
	       "0 bind default/small n1");
	assert_non_null(strstr(w.log.lines[0], "preemptionPolicy=Never"));
	assert_string_equal(node_of(&w, "low"), "n1");
	assert_string_equal(nominated_of(&w, "never"), "");
	/* When room appears it schedules normally. */
	advance(&w, 60 * S);
	assert_int_equal(pp_sched_remove_pod(w.s, "default", "low", &err), 0);
	run(&w, INT64_MAX);
	assert_string_equal(w.log.lines[2], "60 bind default/never n1");
	pp_sched_free(w.s);
}

static void test_unschedulable_reasons_counted(void **state)
{
	(void)state;
	struct world w;
	static const pp_taint gpu = { "dedicated", "gpu", PP_EFFECT_NO_SCHEDULE };
	setup(&w);
	node(&w, "a1", 1000, NULL);
	node(&w, "a2", 1000, NULL);
	node(&w, "a3", 1000, NULL);
	node(&w, "t1", 8000, &gpu);
	node(&w, "t2", 8000, &gpu);
	pod(&w, "big", (struct podopt){ .prio = 0, .cpu_m = 2000 });
	run(&w, INT64_MAX);
	/* kube sorts the "<count> <reason>" strings; preemption finds no lower-priority pod. */
	EXPECT(&w.log, "0 unschedulable default/big: 0/5 nodes are available: "
	               "2 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu. preemption:*");
	pp_sched_stats st;
	pp_sched_get_stats(w.s, &st);
	assert_int_equal(st.unschedulable, 1);
	assert_int_equal(st.binds, 0);
	pp_sched_free(w.s);
}

/* A preemptor's PodScheduled condition says why it did not fit, as kube-scheduler's does after a
 * successful PostFilter: the filter part of the FitError, no "preemption:" part. */
static void test_nominate_carries_fit_error(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	node(&w, "n2", 1000, NULL);
	pod(&w, "low", (struct podopt){ .node = "n1", .cpu_m = 4000 });
	pod(&w, "high", (struct podopt){ .prio = 10, .cpu_m = 3000 });
	cycle_all(&w);
	EXPECT(&w.log, "0 nominate default/high n1 victims=default/low");
	assert_string_equal(w.log.nominate_message, "0/2 nodes are available: 2 Insufficient cpu.");
	pp_sched_free(w.s);
}

/* Unschedulable pods come back after max_unschedulable even without an event: the time of that
 * flush is what a live scheduler arms its timer for. */
static void test_next_flush_after_five_minutes(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_true(pp_sched_next_flush(w.s) == INT64_MAX);
	node(&w, "n1", 1000, NULL);
	pod(&w, "p", (struct podopt){ .cpu_m = 2000 });
	cycle_all(&w);
	assert_int_equal(w.log.n, 1);
	assert_true(pp_sched_next_flush(w.s) == 300 * S);
	advance(&w, 300 * S);
	cycle_all(&w);
	assert_int_equal(w.log.n, 2); /* tried again, unschedulable again */
	assert_true(pp_sched_next_flush(w.s) == 600 * S);
	pp_sched_free(w.s);
}

/* A node's heartbeat (the same labels, taints, allocatable) and a pod's status report (nothing the
 * model keeps) are not events: the unschedulable pod stays parked. A real change moves it. */
static void test_unchanged_updates_move_nothing(void **state)
{
	(void)state;
	struct world w;
	pp_label labels[] = { { HOSTNAME, "n1" } };
	pp_resource alloc[] = { { "cpu", 1000 }, { "memory", 32 * GI }, { "pods", 110 } };
	pp_node_spec n1 = { .name = "n1", .labels = labels, .n_labels = 1, .allocatable = alloc, .n_allocatable = 3 };
	pp_resource req[] = { { "cpu", 100 }, { "memory", 1 * GI } };
	pp_pod_spec bound = { .namespace_ = "default", .name = "b", .priority = 0, .requests = req, .n_requests = 2,
	                      .node_name = "n1", .has_start_time = true };
	pp_err err = { "" };
	pp_sched_stats st;

	setup(&w);
	node(&w, "n1", 1000, NULL);
	assert_int_equal(pp_sched_add_pod(w.s, &bound, &err), 0);
	pod(&w, "p", (struct podopt){ .cpu_m = 2000 });
	cycle_all(&w);
	assert_int_equal(w.log.n, 1);
	advance(&w, 20 * S); /* past any backoff */
	assert_int_equal(pp_sched_update_node(w.s, &n1, &err), 0);
	assert_int_equal(pp_sched_update_pod(w.s, &bound, &err), 0);
	bound.not_ready = true; /* a lifecycle change frees nothing */
	assert_int_equal(pp_sched_update_pod(w.s, &bound, &err), 0);
	pp_sched_get_stats(w.s, &st);
	assert_int_equal(st.active, 0);
	assert_int_equal(st.unschedulable, 1);
	alloc[0].value = 4000; /* the node grew */
	assert_int_equal(pp_sched_update_node(w.s, &n1, &err), 0);
	pp_sched_get_stats(w.s, &st);
	assert_int_equal(st.active, 1);
	cycle_all(&w);
	assert_string_equal(w.log.lines[1], "20 bind default/p n1");
	pp_sched_free(w.s);
}

/* A scheduler whose bind was refused puts the pod back as it was: pending, queued again after
 * its backoff. */
static void test_set_pod_state_unbinds(void **state)
{
	(void)state;
	struct world w;
	pp_err err = { "" };
	pp_pod_state pending = { .node_name = NULL };
	pp_sched_stats st;

	setup(&w);
	node(&w, "n1", 4000, NULL);
	pod(&w, "p", (struct podopt){ .cpu_m = 1000 });
	cycle_all(&w);
	EXPECT(&w.log, "0 bind default/p n1");
	assert_string_equal(node_of(&w, "p"), "n1");
	assert_int_equal(pp_sched_set_pod_state(w.s, "default", "p", &pending, &err), 0);
	assert_string_equal(node_of(&w, "p"), "");
	/* a refused binding is a failed attempt: it backs off (1 s), it is not retried at once */
	pp_sched_get_stats(w.s, &st);
	assert_int_equal(st.active, 0);
	assert_int_equal(st.backoff, 1);
	/* the same state again is no change at all */
	assert_int_equal(pp_sched_set_pod_state(w.s, "default", "p", &pending, &err), 0);
	cycle_all(&w);
	assert_int_equal(w.log.n, 1);
	advance(&w, 1 * S);
	cycle_all(&w);
	assert_string_equal(w.log.lines[1], "1 bind default/p n1");
	assert_int_equal(pp_sched_set_pod_state(w.s, "default", "nope", &pending, &err), -ENOENT);
	pp_sched_free(w.s);
}

/* An unschedulable pod is not retried until an event may help it, then waits out its backoff. */
static void test_requeue_on_node_added_with_backoff(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 1000, NULL);
	pod(&w, "p", (struct podopt){ .cpu_m = 2000 });
	run(&w, INT64_MAX);
	assert_int_equal(w.log.n, 1);
	advance(&w, 500000000LL); /* 0.5 s: still backing off (1 s) when the node arrives */
	node(&w, "n2", 4000, NULL);
	cycle_all(&w);
	assert_int_equal(w.log.n, 1);
	assert_int_equal(pp_sched_next_wakeup(w.s), 1 * S);
	run(&w, INT64_MAX);
	assert_string_equal(w.log.lines[1], "1 bind default/p n2");
	pp_err err = { "" };
	assert_int_equal(pp_sched_advance(w.s, 0, &err), -EINVAL);
	pp_sched_free(w.s);
}

/* ---- the two-pass rule ----------------------------------------------------------------------- */

/* A pod nominated to n1 with higher priority counts there: an anti-affine pod avoids n1. */
static void test_two_pass_anti_affinity_counts_nominated(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	node(&w, "n2", 4000, NULL);
	pod(&w, "filler", (struct podopt){ .node = "n2", .cpu_m = 1000 });
	/* web holds a nomination to n1 it cannot use (too big; Never keeps it from preempting, so
	 * the nomination stays for the whole test). */
	pod(&w, "web", (struct podopt){ .prio = 100, .cpu_m = 8000, .app = "web", .nominated = "n1", .never = true });
	pod(&w, "loner", (struct podopt){ .prio = 50, .cpu_m = 100, .anti_app = "web" });
	pod(&w, "bold", (struct podopt){ .prio = 200, .cpu_m = 100, .anti_app = "web" });
	cycle_all(&w);
	/* n1 is emptier, but for loner web counts on n1 (pass 1); bold outranks web and ignores it. */
	assert_string_equal(node_of(&w, "loner"), "n2");
	assert_string_equal(node_of(&w, "bold"), "n1");
	pp_sched_free(w.s);
}

/* Pass 2: affinity satisfied only by a nominated pod is not enough — it must also hold without. */
static void test_two_pass_affinity_needs_real_pod(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	node(&w, "n1", 4000, NULL);
	node(&w, "n2", 4000, NULL);
	pod(&w, "db0", (struct podopt){ .node = "n2", .cpu_m = 100, .app = "db" });
	pod(&w, "db1", (struct podopt){ .prio = 100, .cpu_m = 8000, .app = "db", .nominated = "n1", .never = true });
	pod(&w, "client", (struct podopt){ .prio = 50, .cpu_m = 100, .aff_app = "db" });
	cycle_all(&w);
	assert_string_equal(node_of(&w, "client"), "n2");
	pp_sched_free(w.s);
}

/* ---- creation from a populated cluster --------------------------------------------------------- */

static void test_new_queues_pending_pods_in_order(void **state)
{
	(void)state;
	pp_cluster *c = NULL;
	pp_sched *s = NULL;
	struct log log = { .n = 0 };
	pp_resource alloc[] = { { "cpu", 1000 }, { "memory", GI }, { "pods", 110 } };
	pp_node_spec n = { .name = "n1", .allocatable = alloc, .n_allocatable = 3 };
	pp_resource req[] = { { "cpu", 1000 } };
	const char *names[] = { "zeta", "alpha", "mid" };
	int32_t prio[] = { 5, 5, 7 };
	assert_int_equal(pp_cluster_new(&c), 0);
	assert_int_equal(pp_cluster_add_node(c, &n, NULL), 0);
	for (int i = 0; i < 3; i++) {
		pp_pod_spec p = { .namespace_ = "default", .name = names[i], .priority = prio[i], .requests = req,
		                  .n_requests = 1, .termination_grace_period_s = -1 };
		assert_int_equal(pp_cluster_add_pod(c, &p, NULL), 0);
	}
	assert_int_equal(pp_sched_new(c, NULL, 100 * S, record, &log, &s, NULL), 0);
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_int_equal(pp_sched_schedule_one(s, NULL), 0);
	/* priority first, then namespace/name among equals */
	assert_string_equal(log.lines[0], "100 bind default/mid n1");
	assert_memory_equal(log.lines[1], "100 unschedulable default/alpha:", 32);
	assert_memory_equal(log.lines[2], "100 unschedulable default/zeta:", 31);
	assert_null(pp_sched_free(s));
	assert_null(pp_sched_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_least_allocated_then_name),
		cmocka_unit_test(test_least_allocated_nonzero_defaults),
		cmocka_unit_test(test_same_shape_pods_spread),
		cmocka_unit_test(test_nominated_node_tried_first),
		cmocka_unit_test(test_preempt_wait_grace_then_bind),
		cmocka_unit_test(test_higher_priority_takes_nominated_node),
		cmocka_unit_test(test_lower_nomination_kept_when_it_still_fits),
		cmocka_unit_test(test_preemptor_binds_elsewhere),
		cmocka_unit_test(test_never_pod_waits_without_preempting),
		cmocka_unit_test(test_unschedulable_reasons_counted),
		cmocka_unit_test(test_nominate_carries_fit_error),
		cmocka_unit_test(test_next_flush_after_five_minutes),
		cmocka_unit_test(test_unchanged_updates_move_nothing),
		cmocka_unit_test(test_set_pod_state_unbinds),
		cmocka_unit_test(test_requeue_on_node_added_with_backoff),
		cmocka_unit_test(test_two_pass_anti_affinity_counts_nominated),
		cmocka_unit_test(test_two_pass_affinity_needs_real_pod),
		cmocka_unit_test(test_new_queues_pending_pods_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
