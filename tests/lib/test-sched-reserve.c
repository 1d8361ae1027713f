/* Reservations that hold and brakes on preemption, in simulated time through the public API:
 * a nominated pod's room is not taken by a pod of lower or equal priority; a deleted preemptor's
 * room is free at once; a nomination expires after its victims' grace periods (or a fixed
 * timeout), its stuck victims are no victims any more and the pod preempts elsewhere; a
 * nomination seen on input (a restart) gets its deadline from the victims on its node; young pods
 * are spared while an older victim will do; a gate postpones a preemption and the pod is retried
 * when it said. */
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

/* The events so far, one per line: "<sec> <event> <name> [node] [victims=a,b] [: message]". */
struct sim {
	pp_sched *s;
	char log[8192];
	size_t len;
};

static void on_event(const pp_sched_event *ev, void *ud)
{
	struct sim *m = ud;
	char *b = m->log + m->len;
	size_t room = sizeof(m->log) - m->len;
	int n = snprintf(b, room, "%lld %s %s", (long long)(ev->time_ns / S), pp_sched_event_name(ev->kind), ev->name);
	if (ev->node)
		n += snprintf(b + n, room - (size_t)n, " %s", ev->node);
	if (ev->kind == PP_SCHED_NOMINATE || ev->kind == PP_SCHED_NOMINATION_EXPIRED || ev->kind == PP_SCHED_POSTPONED)
		for (size_t i = 0; i < ev->n_victims; i++)
			n += snprintf(b + n, room - (size_t)n, "%s%s", i ? "," : " victims=", ev->victims[i].name);
	if (ev->kind == PP_SCHED_POSTPONED)
		n += snprintf(b + n, room - (size_t)n, ": %s", ev->message);
	n += snprintf(b + n, room - (size_t)n, "\n");
	if ((size_t)n >= room)
		fail_msg("event log full");
	m->len += (size_t)n;
}

/* Checks the events since the last call, and forgets them. */
static void events(struct sim *m, const char *want)
{
	if (strcmp(m->log, want) != 0)
		fail_msg("events:\n%s\nwanted:\n%s", m->log, want);
	m->log[0] = '\0';
	m->len = 0;
}

/* external: victims go when the test removes them (a kubelet that may be stuck) */
static void start(struct sim *m, bool external)
{
	pp_cluster *c = NULL;
	pp_sched_options o = { .external_termination = external };
	pp_err err = { "" };
	memset(m, 0, sizeof(*m));
	assert_int_equal(pp_cluster_new(&c), 0);
	if (pp_sched_new(c, &o, 0, on_event, m, &m->s, &err) < 0)
		fail_msg("pp_sched_new: %s", err.msg);
}

static void add_node(struct sim *m, const char *name, int64_t cpu_m, const char *pool)
{
	pp_label labels[] = { { "pool", pool } };
	pp_resource alloc[] = { { "cpu", cpu_m }, { "memory", 64 * GI }, { "pods", 110 } };
	pp_node_spec n = { .name = name, .labels = labels, .n_labels = pool ? 1 : 0, .allocatable = alloc,
	                   .n_allocatable = 3 };
	assert_int_equal(pp_sched_add_node(m->s, &n, NULL), 0);
}

struct pod {
	const char *name;
	int32_t prio;
	int64_t cpu_m;
	const char *node, *nominated;
	bool young;           /* started at the current time, else an hour before 0 */
	int64_t grace;        /* seconds; 0: unset (30) */
	bool preempted;       /* terminating with the preemption condition, due at `due` seconds */
	int64_t due;
};

static pp_pod_spec spec_of(struct sim *m, const struct pod *p, pp_resource *req)
{
	req[0] = (pp_resource){ "cpu", p->cpu_m };
	req[1] = (pp_resource){ "memory", GI };
	return (pp_pod_spec){
		.namespace_ = "default", .name = p->name, .priority = p->prio, .requests = req, .n_requests = 2,
		.node_name = p->node, .nominated_node_name = p->nominated, .has_start_time = p->node != NULL,
		.start_time_ns = p->young ? pp_sched_now(m->s) : -3600 * S,
		.termination_grace_period_s = p->grace ? p->grace : -1,
		.terminating = p->preempted, .preempted_by_scheduler = p->preempted, .deletion_time_ns = p->due * S,
	};
}

static void add(struct sim *m, struct pod p)
{
	pp_resource req[2];
	pp_pod_spec spec = spec_of(m, &p, req);
	pp_err err = { "" };
	if (pp_sched_add_pod(m->s, &spec, &err) < 0)
		fail_msg("add %s: %s", p.name, err.msg);
}

static void del(struct sim *m, const char *name)
{
	assert_int_equal(pp_sched_remove_pod(m->s, "default", name, NULL), 0);
}

static void cycles(struct sim *m)
{
	pp_err err = { "" };
	int r;
	while ((r = pp_sched_schedule_one(m->s, &err)) > 0)
		;
	if (r < 0)
		fail_msg("pp_sched_schedule_one: %s", err.msg);
}

/* The clock to t seconds, then every cycle there is. */
static void at(struct sim *m, int64_t t)
{
	pp_err err = { "" };
	if (pp_sched_advance(m->s, t * S, &err) < 0)
		fail_msg("pp_sched_advance: %s", err.msg);
	cycles(m);
}

static void timeout(struct sim *m, int64_t fixed_s, int64_t after_grace_s)
{
	assert_int_equal(pp_sched_set_nomination_timeout(m->s, fixed_s * S, after_grace_s * S, NULL), 0);
}

static const char *where(struct sim *m, const char *name)
{
	pp_pod_info pi;
	assert_int_equal(pp_cluster_pod_info(pp_sched_cluster(m->s), "default", name, &pi), 0);
	return pi.node_name ? pi.node_name : pi.nominated_node_name ? pi.nominated_node_name : "";
}

/* ---- the room a nomination holds ------------------------------------------------------------- */

/* p holds n1 while its victim terminates; the victim goes while p backs off, and a pod of the
 * given priority that would fit in the freed room is tried first: it must not take it. */
static void intruder_waits(int32_t intruder_prio)
{
	struct sim m;
	start(&m, true);
	add_node(&m, "n1", 4000, NULL);
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1" });
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000 });
	cycles(&m);
	events(&m, "0 nominate p n1 victims=v\n");
	del(&m, "v"); /* its kubelet is done; p is still backing off (1 s) */
	add(&m, (struct pod){ .name = "x", .prio = intruder_prio, .cpu_m = 3000 });
	cycles(&m);
	assert_string_equal(where(&m, "x"), "");
	assert_string_equal(where(&m, "p"), "n1");
	at(&m, 1);
	assert_string_equal(where(&m, "p"), "n1");
	assert_string_equal(where(&m, "x"), "");
	pp_pod_info pi;
	assert_int_equal(pp_cluster_pod_info(pp_sched_cluster(m.s), "default", "p", &pi), 0);
	assert_non_null(pi.node_name);
	pp_sched_free(m.s);
}

static void test_lower_priority_pod_waits(void **state)
{
	(void)state;
	intruder_waits(5);
}

static void test_equal_priority_pod_waits(void **state)
{
	(void)state;
	intruder_waits(10);
}

/* kubernetes#102339: the preemptor deleted, its room is free at once (no timeout to wait for). */
static void test_deleted_preemptor_frees_room(void **state)
{
	(void)state;
	struct sim m;
	start(&m, true);
	timeout(&m, 0, 30);
	add_node(&m, "n1", 4000, NULL);
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1" });
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000 });
	cycles(&m);
	del(&m, "v");
	add(&m, (struct pod){ .name = "low", .prio = 5, .cpu_m = 3000, .young = true });
	cycles(&m);
	assert_string_equal(where(&m, "low"), "");
	del(&m, "p");
	at(&m, 1); /* its backoff after the failed attempt, no more */
	events(&m, "0 nominate p n1 victims=v\n0 unschedulable low\n1 bind low n1\n");
	assert_int_equal(pp_sched_next_wakeup(m.s) > 3600 * S, true); /* no deadline left behind */
	pp_sched_free(m.s);
}

/* ---- deadlines ---------------------------------------------------------------------------------- */

/* kubernetes#95752: v never terminates (its kubelet is stuck). 30 s after its 20 s grace period
 * the nomination expires, v is stuck, and p preempts on n2, where it is bound once w is gone. */
static void test_expiry_then_another_node(void **state)
{
	(void)state;
	struct sim m;
	start(&m, true);
	timeout(&m, 0, 30);
	add_node(&m, "n1", 4000, NULL);
	add_node(&m, "n2", 4000, NULL);
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1", .grace = 20 });
	add(&m, (struct pod){ .name = "w", .prio = 1, .cpu_m = 3000, .node = "n2" });
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000 });
	cycles(&m);
	events(&m, "0 nominate p n1 victims=v\n");
	assert_int_equal(pp_sched_next_wakeup(m.s), 50 * S); /* the deadline: a timer, no polling */
	at(&m, 49);
	assert_string_equal(where(&m, "p"), "n1");
	m.log[0] = '\0';
	m.len = 0;
	at(&m, 50);
	events(&m, "50 nomination-expired p n1 victims=v\n50 nominate p n2 victims=w\n");
	/* v stays stuck through a status update; a second preemptor does not count on it either */
	pp_pod_state st = { .node_name = "n1", .has_start_time = true, .start_time_ns = -3600 * S, .terminating = true,
		            .deletion_time_ns = 20 * S, .preempted_by_scheduler = true, .not_ready = true };
	assert_int_equal(pp_sched_set_pod_state(m.s, "default", "v", &st, NULL), 0);
	add(&m, (struct pod){ .name = "q", .prio = 20, .cpu_m = 3000 });
	at(&m, 51);
	assert_string_equal(where(&m, "q"), "n2");
	del(&m, "w");
	at(&m, 52);
	assert_string_equal(where(&m, "q"), "n2"); /* the higher one takes n2; p tries again */
	assert_string_equal(where(&m, "v"), "n1");
	pp_sched_free(m.s);
}

/* A fixed timeout: the nomination ends 5 s after it was made, whatever the grace periods. */
static void test_fixed_timeout(void **state)
{
	(void)state;
	struct sim m;
	start(&m, true);
	timeout(&m, 5, 0);
	add_node(&m, "n1", 4000, NULL);
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1", .grace = 600 });
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000 });
	cycles(&m);
	at(&m, 4);
	events(&m, "0 nominate p n1 victims=v\n");
	at(&m, 5);
	/* v is stuck: there is no other victim anywhere */
	assert_memory_equal(m.log, "5 nomination-expired p n1 victims=v\n5 unschedulable p\n", 52);
	assert_string_equal(where(&m, "p"), "");
	pp_sched_free(m.s);
}

/* The victims are gone and the pod only backs off (100 s here) when the deadline comes: nothing to
 * withdraw, it is tried at once and binds where it was nominated. */
static void test_deadline_with_victims_gone(void **state)
{
	(void)state;
	struct sim m;
	pp_cluster *c = NULL;
	pp_sched_options o = { .external_termination = true, .initial_backoff_ns = 100 * S, .max_backoff_ns = 100 * S };
	memset(&m, 0, sizeof(m));
	assert_int_equal(pp_cluster_new(&c), 0);
	assert_int_equal(pp_sched_new(c, &o, 0, on_event, &m, &m.s, NULL), 0);
	timeout(&m, 0, 30);
	add_node(&m, "n1", 4000, NULL);
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1", .grace = 20 });
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000 });
	cycles(&m);
	at(&m, 10);
	del(&m, "v");
	at(&m, 49);
	assert_string_equal(where(&m, "p"), "n1");
	at(&m, 50);
	events(&m, "0 nominate p n1 victims=v\n50 bind p n1\n");
	pp_sched_free(m.s);
}

/* Off (the default): the nomination stays as long as the victims do, as in kube-scheduler. */
static void test_no_timeout_by_default(void **state)
{
	(void)state;
	struct sim m;
	start(&m, true);
	add_node(&m, "n1", 4000, NULL);
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1", .grace = 1 });
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000 });
	cycles(&m);
	at(&m, 3600);
	assert_string_equal(where(&m, "p"), "n1");
	assert_null(strstr(m.log, "expired"));
	pp_sched_free(m.s);
}

/* A nomination on input, as after a restart: its pod comes before the victim it waits for (the
 * order of a list). The deadline is the victim's deletion time + 30 s, not 30 s from now. */
static void test_adopted_nomination_deadline(void **state)
{
	(void)state;
	struct sim m;
	start(&m, true);
	timeout(&m, 0, 30);
	add_node(&m, "n1", 4000, NULL);
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000, .nominated = "n1" });
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1", .preempted = true, .due = 40 });
	cycles(&m);
	at(&m, 69);
	assert_string_equal(where(&m, "p"), "n1");
	assert_null(strstr(m.log, "expired"));
	at(&m, 70);
	assert_non_null(strstr(m.log, "70 nomination-expired p n1 victims=v\n"));
	pp_sched_free(m.s);
}

/* Adopted when its victim is overdue already (it was due at 5 s, before the restart at 10 s):
 * 30 s from when it was seen, not at once. */
static void test_adopted_nomination_overdue_victim(void **state)
{
	(void)state;
	struct sim m;
	start(&m, true);
	timeout(&m, 0, 30);
	add_node(&m, "n1", 4000, NULL);
	at(&m, 10);
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1", .preempted = true, .due = 5 });
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000, .nominated = "n1" });
	at(&m, 39);
	assert_string_equal(where(&m, "p"), "n1");
	at(&m, 40);
	assert_non_null(strstr(m.log, "40 nomination-expired p n1 victims=v\n"));
	assert_string_equal(where(&m, "p"), "");
	pp_sched_free(m.s);
}

/* ---- young pods ---------------------------------------------------------------------------------- */

/* kube takes the young pod (criterion 5: the latest start wins); with a minimum runtime of 10
 * minutes the old one goes instead — and the young one when it is the only victim there is. */
static void test_young_pod_spared(void **state)
{
	(void)state;
	for (int minrt = 0; minrt <= 1; minrt++) {
		struct sim m;
		start(&m, false);
		if (minrt)
			assert_int_equal(pp_sched_set_min_runtime(m.s, 600 * S, NULL), 0);
		at(&m, 7200);
		add_node(&m, "n1", 4000, NULL);
		add_node(&m, "n2", 4000, NULL);
		add(&m, (struct pod){ .name = "old", .cpu_m = 3000, .node = "n1" });
		add(&m, (struct pod){ .name = "young", .cpu_m = 3000, .node = "n2", .young = true });
		add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000 });
		cycles(&m);
		events(&m, minrt ? "7200 nominate p n1 victims=old\n" : "7200 nominate p n2 victims=young\n");
		/* the next preemptor has only the young pod left */
		add(&m, (struct pod){ .name = "q", .prio = 10, .cpu_m = 3000 });
		cycles(&m);
		events(&m, minrt ? "7200 nominate q n2 victims=young\n" : "7200 nominate q n1 victims=old\n");
		pp_sched_free(m.s);
	}
}

/* ---- QueueingHints of the node events ------------------------------------------------------------ */

static void update_node(struct sim *m, const char *name, int64_t cpu_m, const char *pool)
{
	pp_label labels[] = { { "pool", pool } };
	pp_resource alloc[] = { { "cpu", cpu_m }, { "memory", 64 * GI }, { "pods", 110 } };
	pp_node_spec n = { .name = name, .labels = labels, .n_labels = pool ? 1 : 0, .allocatable = alloc,
	                   .n_allocatable = 3 };
	assert_int_equal(pp_sched_update_node(m->s, &n, NULL), 0);
}

static size_t unschedulable(struct sim *m)
{
	pp_sched_stats st;
	pp_sched_get_stats(m->s, &st);
	return st.unschedulable;
}

/* kube's isPodWorthRequeuing with NodeResourcesFit's hint: a node added too small for the pod, or
 * updated without a requested resource growing, leaves it unschedulable; a node that fits moves it. */
static void test_node_hints(void **state)
{
	(void)state;
	struct sim m;
	start(&m, false);
	add_node(&m, "n1", 1000, NULL);
	add(&m, (struct pod){ .name = "big", .cpu_m = 3000 });
	cycles(&m);
	assert_int_equal(unschedulable(&m), 1);
	add_node(&m, "small", 2000, NULL);
	assert_int_equal(unschedulable(&m), 1);
	update_node(&m, "n1", 1000, "blue"); /* a label, no resource grew */
	assert_int_equal(unschedulable(&m), 1);
	update_node(&m, "small", 4000, NULL); /* cpu grew, and it fits now */
	assert_int_equal(unschedulable(&m), 0);
	at(&m, 2);
	assert_string_equal(where(&m, "big"), "small");
	pp_sched_free(m.s);
}

/* ---- the gate -------------------------------------------------------------------------------------- */

struct gate_ctx {
	unsigned asked;
	int64_t hold_until;
};

static int hold_gate(const pp_sched_event *plan, void *ud, int64_t *until, char *reason, size_t size)
{
	struct gate_ctx *g = ud;
	assert_int_equal(plan->kind, PP_SCHED_NOMINATE);
	g->asked++;
	if (plan->time_ns >= g->hold_until)
		return 0;
	*until = g->hold_until;
	snprintf(reason, size, "%zu victim(s) on node %s must wait", plan->n_victims, plan->node);
	return 1;
}

/* Postponed: nothing changes, the pod waits for the time the gate named (a timer: one retry in
 * between, for a cluster event that might have helped), then preempts. */
static void test_gate_postpones_until_it_allows(void **state)
{
	(void)state;
	struct sim m;
	struct gate_ctx g = { .hold_until = 60 * S };
	start(&m, false);
	pp_sched_set_preemption_gate(m.s, hold_gate, &g);
	add_node(&m, "n1", 4000, NULL);
	add(&m, (struct pod){ .name = "v", .cpu_m = 3000, .node = "n1" });
	add(&m, (struct pod){ .name = "p", .prio = 10, .cpu_m = 3000 });
	cycles(&m);
	events(&m, "0 postponed p n1 victims=v: 0/1 nodes are available: 1 Insufficient cpu. "
	           "preemption postponed: 1 victim(s) on node n1 must wait\n");
	assert_int_equal(pp_sched_postponed_count(m.s), 1);
	assert_string_equal(where(&m, "p"), "");
	pp_pod_info vi;
	assert_int_equal(pp_cluster_pod_info(pp_sched_cluster(m.s), "default", "v", &vi), 0);
	assert_false(vi.terminating);
	assert_int_equal(pp_sched_next_wakeup(m.s), 60 * S);
	/* a node whose allocatable fits it may help (NodeResourcesFit's QueueingHint: isFit() over an
	 * empty NodeInfo); a more important pod takes it before the retry, which is postponed again */
	add_node(&m, "n2", 4000, NULL);
	add(&m, (struct pod){ .name = "w", .prio = 20, .cpu_m = 3000, .node = "n2" });
	at(&m, 1);
	assert_int_equal(g.asked, 2);
	at(&m, 59);
	assert_int_equal(g.asked, 2);
	events(&m, "1 postponed p n1 victims=v: 0/2 nodes are available: 2 Insufficient cpu. "
	           "preemption postponed: 1 victim(s) on node n1 must wait\n");
	at(&m, 60);
	events(&m, "60 nominate p n1 victims=v\n");
	assert_int_equal(pp_sched_postponed_count(m.s), 0);
	pp_sched_free(m.s);
}

static void test_bad_arguments(void **state)
{
	(void)state;
	struct sim m;
	pp_err err = { "" };
	start(&m, false);
	assert_int_equal(pp_sched_set_nomination_timeout(m.s, -1, 0, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "negative"));
	assert_int_equal(pp_sched_set_min_runtime(m.s, -1, NULL), -EINVAL);
	add_node(&m, "n1", 4000, "batch");
	assert_string_equal(pp_cluster_node_label(pp_sched_cluster(m.s), "n1", "pool"), "batch");
	assert_null(pp_cluster_node_label(pp_sched_cluster(m.s), "n1", "zone"));
	assert_null(pp_cluster_node_label(pp_sched_cluster(m.s), "n9", "pool"));
	assert_null(pp_cluster_node_label(NULL, "n1", "pool"));
	pp_sched_free(m.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lower_priority_pod_waits),
		cmocka_unit_test(test_equal_priority_pod_waits),
		cmocka_unit_test(test_deleted_preemptor_frees_room),
		cmocka_unit_test(test_expiry_then_another_node),
		cmocka_unit_test(test_fixed_timeout),
		cmocka_unit_test(test_deadline_with_victims_gone),
		cmocka_unit_test(test_no_timeout_by_default),
		cmocka_unit_test(test_adopted_nomination_deadline),
		cmocka_unit_test(test_adopted_nomination_overdue_victim),
		cmocka_unit_test(test_young_pod_spared),
		cmocka_unit_test(test_node_hints),
		cmocka_unit_test(test_gate_postpones_until_it_allows),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
