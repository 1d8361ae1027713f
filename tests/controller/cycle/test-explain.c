/* The words of a decision (controller/cycle/explain.c): what decided it — the criterion with the
 * runner-up's value, each victim's priority and PodDisruptionBudgets, the filters behind "not
 * helpful" — the same whether the decision was made with per-node records (preemptctl --explain)
 * or without (preemptd), never a claim of preemption for a pod that does not preempt, and an
 * Event's note within the API's 1024 bytes with kube's words first and unchanged. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "explain.h"

#define S 1000000000LL

static pp_cluster *C;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(pp_cluster_new(&C), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	C = pp_cluster_free(C);
	return 0;
}

static void node(const char *name, int64_t cpu, const pp_taint *taint)
{
	pp_resource alloc[] = { { "cpu", cpu }, { "memory", 1LL << 35 }, { "pods", 500 } };
	pp_node_spec n = { .name = name, .allocatable = alloc, .n_allocatable = 3, .taints = taint, .n_taints = taint ? 1 : 0 };
	pp_err err = { "" };
	if (pp_cluster_add_node(C, &n, &err) < 0)
		fail_msg("%s", err.msg);
}

static void pod(const char *name, const char *on, int32_t prio, int64_t cpu, int64_t start_s, const char *app)
{
	pp_resource req[] = { { "cpu", cpu } };
	pp_label l = { "app", app };
	pp_pod_spec p = { .namespace_ = "default", .name = name, .priority = prio, .requests = req, .n_requests = 1,
		          .node_name = on, .has_start_time = on != NULL, .start_time_ns = start_s * S,
		          .labels = app ? &l : NULL, .n_labels = app ? 1 : 0, .termination_grace_period_s = -1 };
	pp_err err = { "" };
	if (pp_cluster_add_pod(C, &p, &err) < 0)
		fail_msg("%s", err.msg);
}

static void pdb(const char *name, const char *app, int32_t allowed)
{
	pp_label_selector sel = { .present = true, .match_labels = &(pp_label){ "app", app }, .n_match_labels = 1 };
	pp_pdb_spec b = { .namespace_ = "default", .name = name, .selector = sel, .has_disruptions_allowed = true,
		          .disruptions_allowed = allowed };
	assert_int_equal(pp_cluster_add_pdb(C, &b, NULL), 0);
}

/* The summary of the decision for pod name, checked to be the same with and without the per-node
 * records (what preemptctl --explain decides with, and what preemptd decides without). */
static char got[8192];
static const char *summary_of(const char *name, pp_outcome want)
{
	char other[sizeof(got)];
	pp_pod_info pi;
	assert_int_equal(pp_cluster_pod_info(C, "default", name, &pi), 0);
	for (int explain = 0; explain < 2; explain++) {
		pp_preemption *p = NULL;
		pp_preempt_options o = { .now_ns = 1000 * S, .explain = explain };
		assert_int_equal(pp_cluster_preempt(C, "default", name, &o, &p, NULL), 0);
		assert_int_equal(pp_preemption_outcome(p), want);
		explain_summary(explain ? got : other, sizeof(got), p, &pi);
		pp_preemption_free(p);
	}
	assert_string_equal(got, other);
	if (want != PP_OUTCOME_PREEMPT)
		assert_null(strstr(got, "reempting")); /* no claim of a preemption that is not one */
	return got;
}

static void test_taints_and_resources(void **state)
{
	(void)state;
	pp_taint gpu = { "dedicated", "gpu", PP_EFFECT_NO_SCHEDULE };
	node("t1", 4000, &gpu);
	node("s1", 1000, NULL); /* less than the request in all: preemption cannot make room */
	node("f1", 4000, NULL);
	pod("high", "f1", 5000, 4000, 1, NULL); /* room held by a more important pod */
	pod("p", NULL, 100, 2000, 0, NULL);
	assert_string_equal(summary_of("p", PP_OUTCOME_NONE),
	                    "Preemption cannot resolve: 1 Insufficient cpu, 1 node(s) had untolerated taint "
	                    "{dedicated: gpu}.");
	/* a pod that may not preempt: kube's own words say it all */
	pp_resource req[] = { { "cpu", 2000 } };
	pp_pod_spec never = { .namespace_ = "default", .name = "never", .priority = 100, .requests = req, .n_requests = 1,
		              .preemption_policy = PP_PREEMPT_NEVER };
	assert_int_equal(pp_cluster_add_pod(C, &never, NULL), 0);
	assert_string_equal(summary_of("never", PP_OUTCOME_NONE), "");
	/* a pod that fits: nothing to add either */
	pod("small", NULL, 0, 500, 0, NULL);
	assert_string_equal(summary_of("small", PP_OUTCOME_FITS), "");
}

static void test_pdbs_and_runner_up(void **state)
{
	(void)state;
	node("n1", 4000, NULL);
	node("n2", 4000, NULL);
	node("n3", 4000, NULL);
	pod("v1a", "n1", 10, 2000, 1, "v1a");
	pod("v1b", "n1", 10, 2000, 1, NULL);
	pod("v2a", "n2", 50, 4000, 1, "v2a");
	pod("v3a", "n3", 5, 2000, 1, "db");
	pod("v3b", "n3", 5, 2000, 2, "db");
	pdb("web", "v1a", 0);
	pdb("batch", "v2a", 1);
	pdb("db", "db", 1);
	pod("p", NULL, 1000, 4000, 0, NULL);
	/* n2 violates no budget; n1 and n3 one each, and of them n3 has the lower victim priority */
	assert_string_equal(summary_of("p", PP_OUTCOME_PREEMPT),
	                    "Preempting on node n2, picked by fewest PDB violations: 0 against 1 on n3. Victims: "
	                    "default/v2a (priority 50 < 1000; within PodDisruptionBudget default/batch (1 disruption "
	                    "allowed)).");
	/* without n2, n3's victims: the older takes the budget, the younger is beyond it */
	assert_int_equal(pp_cluster_remove_pod(C, "default", "v2a", NULL), 0);
	pod("v2a", "n2", 5000, 4000, 1, "v2a");
	assert_string_equal(summary_of("p", PP_OUTCOME_PREEMPT),
	                    "Preempting on node n3, picked by lowest highest-victim priority: 5 against 10 on n1. "
	                    "Victims: default/v3a (priority 5 < 1000; within PodDisruptionBudget default/db (1 "
	                    "disruption allowed)), default/v3b (priority 5 < 1000; violates PodDisruptionBudget "
	                    "default/db (1 disruption allowed)).");
}

static void test_ties_and_start_time(void **state)
{
	(void)state;
	node("a1", 1000, NULL);
	node("a2", 1000, NULL);
	pod("x1", "a1", 3, 1000, 20, NULL);
	pod("x2", "a2", 3, 1000, 20, NULL);
	pod("p", NULL, 10, 1000, 0, NULL);
	assert_string_equal(summary_of("p", PP_OUTCOME_PREEMPT),
	                    "Preempting on node a1, picked by smallest node name: equal to a2 on every other criterion. "
	                    "Victims: default/x1 (priority 3 < 10; no PodDisruptionBudget).");
	/* the younger victim is the cheaper one */
	assert_int_equal(pp_cluster_remove_pod(C, "default", "x2", NULL), 0);
	pod("x2", "a2", 3, 1000, 50, NULL);
	assert_string_equal(summary_of("p", PP_OUTCOME_PREEMPT),
	                    "Preempting on node a2, picked by latest start of the highest-priority victims: "
	                    "1970-01-01T00:00:50Z against 1970-01-01T00:00:20Z on a1. Victims: default/x2 (priority 3 < "
	                    "10; no PodDisruptionBudget).");
	/* one candidate */
	assert_int_equal(pp_cluster_remove_pod(C, "default", "x1", NULL), 0);
	pod("x1", "a1", 30, 1000, 20, NULL);
	assert_string_equal(summary_of("p", PP_OUTCOME_PREEMPT),
	                    "Preempting on node a2, picked by the only node where preemption helps. Victims: default/x2 "
	                    "(priority 3 < 10; no PodDisruptionBudget).");
}

/* 300 victims with long names: the note keeps kube's words whole and first, fits 1024 bytes, and
 * counts the victims that do not fit. */
static void test_note_limit(void **state)
{
	(void)state;
	char name[128], note[EXPLAIN_NOTE_MAX + 1];
	node("big", 300000, NULL);
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "a-rather-long-pod-name-of-a-batch-job-%03d", i);
		pod(name, "big", 1, 1000, 1 + i, NULL);
	}
	pod("p", NULL, 10, 300000, 0, NULL);
	const char *head = "0/1 nodes are available: 1 Insufficient cpu.";
	pp_pod_info pi;
	pp_preemption *p = NULL;
	assert_int_equal(pp_cluster_pod_info(C, "default", "p", &pi), 0);
	assert_int_equal(pp_cluster_preempt(C, "default", "p", &(pp_preempt_options){ .now_ns = 0 }, &p, NULL), 0);
	assert_int_equal(pp_preemption_victim_count(p), 300);
	const char *n = explain_note(note, EXPLAIN_NOTE_MAX, head, p, &pi);
	assert_ptr_equal(n, note);
	assert_true(strlen(note) <= EXPLAIN_NOTE_MAX);
	assert_true(strlen(note) > EXPLAIN_NOTE_MAX - 200); /* the room is used */
	assert_memory_equal(note, head, strlen(head));
	assert_int_equal(note[strlen(head)], ' ');
	const char *more = strstr(note, " and ");
	assert_non_null(more);
	int left = 0;
	assert_int_equal(sscanf(more, " and %d more victims.", &left), 1);
	/* every victim named is whole: the count is of the rest */
	int named = 0;
	for (const char *s = note; (s = strstr(s, "default/a-rather")); s++)
		named++;
	assert_int_equal(named + left, 300);
	assert_string_equal(note + strlen(note) - strlen(" more victims."), " more victims.");

	/* kube's words alone fill it: they stay whole, for the act stage to cut as kube does */
	char longhead[1100];
	memset(longhead, 'x', sizeof(longhead) - 1);
	longhead[sizeof(longhead) - 1] = '\0';
	assert_ptr_equal(explain_note(note, EXPLAIN_NOTE_MAX, longhead, p, &pi), longhead);
	longhead[EXPLAIN_NOTE_MAX - 1] = '\0'; /* one byte short: no room for anything */
	assert_ptr_equal(explain_note(note, EXPLAIN_NOTE_MAX, longhead, p, &pi), longhead);

	/* a victim's reason, cut to its size */
	char small[16];
	assert_int_equal(explain_victim(small, sizeof(small), p, 0, 10), sizeof(small) - 1);
	assert_string_equal(small, "priority 1 < 10");
	pp_preemption_free(p);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_taints_and_resources),
		T(test_pdbs_and_runner_up),
		T(test_ties_and_start_time),
		T(test_note_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
