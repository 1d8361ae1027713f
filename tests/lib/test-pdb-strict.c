/* The strict PodDisruptionBudget policy of libpreempt (preempt.h, "PodDisruptionBudgets in
 * preemption"): hand-made clusters where it decides otherwise than kube-scheduler's, the budget
 * counted over the victims, victims kept and the reprieve repeated, protected pods, budgets as
 * observed, and the scheduler's queue moves when a budget changes. The random clusters against the
 * simulation are test-preempt-differential's test_differential_strict. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "preempt.h"

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

static void node(const char *name, int64_t cpu)
{
	pp_resource alloc[] = { { "cpu", cpu }, { "memory", 1LL << 35 }, { "pods", 110 } };
	pp_node_spec n = { .name = name, .allocatable = alloc, .n_allocatable = 3 };
	pp_err err = { "" };
	if (pp_cluster_add_node(C, &n, &err) < 0)
		fail_msg("%s", err.msg);
}

static void pod_spec(pp_pod_spec *p, pp_resource *req, pp_label *l, const char *name, const char *on, int32_t prio,
                     int64_t cpu, int64_t start, const char *app)
{
	req[0] = (pp_resource){ "cpu", cpu };
	*l = (pp_label){ "app", app };
	*p = (pp_pod_spec){ .namespace_ = "default", .name = name, .priority = prio, .requests = req, .n_requests = 1,
		            .node_name = on, .has_start_time = true, .start_time_ns = start, .labels = app ? l : NULL,
		            .n_labels = app ? 1 : 0, .termination_grace_period_s = -1 };
}

/* A bound (on != NULL) or pending pod in "default" with label app=<app> (NULL: none). */
static void pod(const char *name, const char *on, int32_t prio, int64_t cpu, int64_t start, const char *app)
{
	pp_resource req[1];
	pp_label l;
	pp_pod_spec p;
	pp_err err = { "" };
	pod_spec(&p, req, &l, name, on, prio, cpu, start, app);
	if (pp_cluster_add_pod(C, &p, &err) < 0)
		fail_msg("%s", err.msg);
}

static void pdb(pp_cluster *c, const char *name, const char *app, int32_t allowed)
{
	pp_label l = { "app", app };
	pp_pdb_spec b = { .namespace_ = "default", .name = name,
		          .selector = { .present = true, .match_labels = &l, .n_match_labels = 1 },
		          .has_disruptions_allowed = true, .disruptions_allowed = allowed };
	pp_err err = { "" };
	if (pp_cluster_add_pdb(c, &b, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The decision for default/pre, under policy; the explained and the fast path must agree. */
static pp_preemption *decide(pp_pdb_policy policy)
{
	pp_preemption *r = NULL, *q = NULL;
	pp_err err = { "" };
	pp_preempt_options o = { .now_ns = 1000, .explain = true };
	assert_int_equal(pp_cluster_set_pdb_policy(C, policy), 0);
	if (pp_cluster_preempt(C, "default", "pre", &o, &r, &err) < 0)
		fail_msg("%s", err.msg);
	o.explain = false;
	assert_int_equal(pp_cluster_preempt(C, "default", "pre", &o, &q, NULL), 0);
	assert_int_equal(pp_preemption_outcome(q), pp_preemption_outcome(r));
	assert_string_equal(pp_preemption_reason(q), pp_preemption_reason(r));
	assert_int_equal(pp_preemption_victim_count(q), pp_preemption_victim_count(r));
	pp_preemption_free(q);
	return r;
}

/* "node: v1 v2" or "none" */
static const char *outcome(pp_preemption *r)
{
	static char buf[256];
	size_t off = 0;
	if (pp_preemption_outcome(r) != PP_OUTCOME_PREEMPT)
		snprintf(buf, sizeof(buf), "none");
	else {
		off = (size_t)snprintf(buf, sizeof(buf), "%s:", pp_preemption_node(r));
		for (size_t i = 0; i < pp_preemption_victim_count(r) && off < sizeof(buf); i++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, " %s", pp_preemption_victim(r, i)->name);
	}
	pp_preemption_free(r);
	return buf;
}

static void test_policy_names(void **state)
{
	(void)state;
	pp_pdb_policy p = PP_PDB_STRICT;
	pp_err err = { "" };
	assert_int_equal(pp_pdb_policy_parse("prefer", &p, NULL), 0);
	assert_int_equal(p, PP_PDB_PREFER);
	assert_int_equal(pp_pdb_policy_parse("strict", &p, NULL), 0);
	assert_int_equal(p, PP_PDB_STRICT);
	assert_int_equal(pp_pdb_policy_parse("Strict", &p, &err), -EINVAL);
	assert_string_equal(err.msg, "expected prefer or strict, not \"Strict\"");
	assert_int_equal(p, PP_PDB_STRICT); /* untouched on failure */
	assert_string_equal(pp_pdb_policy_name(PP_PDB_PREFER), "prefer");
	assert_string_equal(pp_pdb_policy_name(PP_PDB_STRICT), "strict");
	assert_null(pp_pdb_policy_name((pp_pdb_policy)7));
	assert_int_equal(pp_cluster_pdb_policy(C), PP_PDB_PREFER); /* the default is kube-scheduler's */
	assert_int_equal(pp_cluster_set_pdb_policy(C, (pp_pdb_policy)7), -EINVAL);
	assert_int_equal(pp_cluster_pdb_policy(C), PP_PDB_PREFER);
}

/* Every candidate breaks a budget: kube-scheduler takes the fewest violations; strict takes none,
 * and the pod stays pending with the budget named. */
static void test_strict_refuses_what_prefer_breaks(void **state)
{
	(void)state;
	node("n1", 1000);
	node("n2", 1000);
	pod("db-0", "n1", 1, 1000, 1, "db");
	pod("web-0", "n2", 1, 1000, 1, "web");
	pdb(C, "db", "db", 0);
	pdb(C, "web", "web", 0);
	pod("pre", NULL, 10, 1000, 0, NULL);
	pp_preemption *r = decide(PP_PDB_PREFER);
	assert_int_equal(pp_preemption_pdb_violations(r), 1);
	assert_true(pp_preemption_victim(r, 0)->violates_pdb);
	assert_string_equal(outcome(r), "n1: db-0");

	r = decide(PP_PDB_STRICT);
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	assert_string_equal(pp_preemption_reason(r),
	                    "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 1 node(s) "
	                    "would need more evictions than PodDisruptionBudget default/db allows, 1 node(s) would need more "
	                    "evictions than PodDisruptionBudget default/web allows.");
	const pp_node_explain *e = pp_preemption_node_explain(r, 0);
	assert_int_equal(e->verdict, PP_NODE_NOT_HELPFUL);
	assert_string_equal(e->reason, "node(s) would need more evictions than PodDisruptionBudget default/db allows");
	pp_preemption_free(r);

	/* one budget allows it: strict goes there, with no violation; prefer had no reason to */
	assert_int_equal(pp_cluster_remove_pdb(C, "default", "web", NULL), 0);
	pdb(C, "web", "web", 1);
	r = decide(PP_PDB_STRICT);
	assert_int_equal(pp_preemption_pdb_violations(r), 0);
	assert_false(pp_preemption_victim(r, 0)->violates_pdb);
	assert_string_equal(outcome(r), "n2: web-0");
}

/* kube's split charges a budget of 1 to the more important pod even when only the other one is a
 * victim; the API server counts evictions: strict lets the one victim go. */
static void test_budget_counts_victims_not_the_split(void **state)
{
	(void)state;
	node("n", 1000);
	pod("small-important", "n", 5, 200, 1, "db");
	pod("big", "n", 3, 800, 1, "db");
	pdb(C, "db", "db", 1);
	pod("pre", NULL, 10, 800, 0, NULL);
	pp_preemption *r = decide(PP_PDB_PREFER);
	assert_int_equal(pp_preemption_pdb_violations(r), 1); /* kube: "big" is over the split's budget */
	assert_string_equal(outcome(r), "n: big");
	r = decide(PP_PDB_STRICT);
	assert_int_equal(pp_preemption_pdb_violations(r), 0);
	assert_string_equal(outcome(r), "n: big");
}

/* Two victims of a budget of 1: the more important one is kept and the reprieve repeated — a pod
 * the budget does not cover goes instead. */
static void test_kept_victim_and_another_set(void **state)
{
	(void)state;
	node("n", 1000);
	pod("free", "n", 4, 400, 1, NULL);
	pod("db-a", "n", 2, 300, 1, "db");
	pod("db-b", "n", 1, 300, 1, "db");
	pdb(C, "db", "db", 1);
	pod("pre", NULL, 10, 600, 0, NULL);
	/* prefer: db-b violates (split), is reprieved first and fits; db-a and free go */
	assert_string_equal(outcome(decide(PP_PDB_PREFER)), "n: free db-a");
	/* nothing over the budget there: the same */
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n: free db-a");

	/* a bigger preemptor: prefer evicts both db pods and free is reprieved... */
	assert_int_equal(pp_cluster_remove_pod(C, "default", "pre", NULL), 0);
	pod("pre", NULL, 10, 700, 0, NULL);
	assert_string_equal(outcome(decide(PP_PDB_PREFER)), "n: free db-a");
	assert_int_equal(pp_cluster_remove_pod(C, "default", "pre", NULL), 0);
	pod("pre", NULL, 10, 900, 0, NULL);
	pp_preemption *r = decide(PP_PDB_PREFER);
	assert_int_equal(pp_preemption_pdb_violations(r), 1);
	assert_string_equal(outcome(r), "n: free db-a db-b");
	/* ...strict cannot: 900m needs three of them, the budget lets one db pod go */
	r = decide(PP_PDB_STRICT);
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	assert_non_null(strstr(pp_preemption_reason(r), "PodDisruptionBudget default/db"));
	pp_preemption_free(r);
}

static void test_kept_most_important_of_a_budget(void **state)
{
	(void)state;
	/* prefer: db-b (over the split's budget) is tried first and does not fit back; the pod of no
	 * budget does, so both db pods go. Strict keeps db-a, the more important of the two, repeats the
	 * reprieve, and the pod of no budget goes with db-b. */
	node("n", 1000);
	pod("free", "n", 4, 200, 1, NULL);
	pod("db-a", "n", 3, 300, 1, "db");
	pod("db-b", "n", 2, 500, 1, "db");
	pdb(C, "db", "db", 1);
	pod("pre", NULL, 10, 600, 0, NULL);
	pp_preemption *r = decide(PP_PDB_PREFER);
	assert_int_equal(pp_preemption_pdb_violations(r), 1);
	assert_string_equal(outcome(r), "n: db-a db-b");
	r = decide(PP_PDB_STRICT);
	assert_int_equal(pp_preemption_pdb_violations(r), 0);
	assert_string_equal(outcome(r), "n: free db-b");
}

static void test_terminating_victims_count_against_nothing(void **state)
{
	(void)state;
	node("n", 1000);
	pod("db-a", "n", 1, 500, 1, "db");
	pod("db-b", "n", 1, 500, 2, "db");
	pdb(C, "db", "db", 1);
	pod("pre", NULL, 10, 1000, 0, NULL);
	pp_preemption *r = decide(PP_PDB_STRICT);
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	pp_preemption_free(r);
	/* db-a is already being deleted: no eviction is sent for it, the budget allows db-b */
	assert_int_equal(pp_cluster_mark_terminating(C, "default", "db-a", 5, false, NULL), 0);
	r = decide(PP_PDB_STRICT);
	assert_true(pp_preemption_victim(r, 0)->terminating);
	assert_string_equal(outcome(r), "n: db-a db-b");
}

static void test_protected_pod(void **state)
{
	(void)state;
	pp_err err = { "" };
	node("n1", 1000);
	node("n2", 1000);
	pod("cheap", "n1", 1, 1000, 1, NULL);
	pod("dear", "n2", 5, 1000, 1, NULL);
	pod("pre", NULL, 10, 1000, 0, NULL);
	/* the decision is cached per node (no budget anywhere): protecting must drop it */
	assert_string_equal(outcome(decide(PP_PDB_PREFER)), "n1: cheap");
	assert_int_equal(pp_cluster_set_pod_protected(C, "default", "nope", true, &err), -ENOENT);
	assert_string_equal(err.msg, "pods/default/nope: not found");
	assert_false(pp_cluster_pod_protected(C, "default", "cheap"));
	assert_int_equal(pp_cluster_set_pod_protected(C, "default", "cheap", true, NULL), 0);
	assert_true(pp_cluster_pod_protected(C, "default", "cheap"));
	/* whatever the policy: the API server refused it */
	assert_string_equal(outcome(decide(PP_PDB_PREFER)), "n2: dear");
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n2: dear");

	/* an update of the pod keeps the mark (the watch reports a status change) */
	pp_resource req[1];
	pp_label l;
	pp_pod_spec p;
	pod_spec(&p, req, &l, "cheap", "n1", 1, 1000, 1, "relabelled");
	assert_int_equal(pp_cluster_update_pod(C, &p, NULL), 0);
	assert_true(pp_cluster_pod_protected(C, "default", "cheap"));
	assert_string_equal(outcome(decide(PP_PDB_PREFER)), "n2: dear");

	/* nothing left but protected pods: no victims */
	assert_int_equal(pp_cluster_set_pod_protected(C, "default", "dear", true, NULL), 0);
	pp_preemption *r = decide(PP_PDB_PREFER);
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	assert_string_equal(pp_preemption_reason(r), "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes "
	                                             "are available: 2 Insufficient cpu.");
	pp_preemption_free(r);

	/* lifted: a victim like any other again */
	assert_int_equal(pp_cluster_set_pod_protected(C, "default", "cheap", false, NULL), 0);
	assert_int_equal(pp_cluster_set_pod_protected(C, "default", "dear", false, NULL), 0);
	assert_string_equal(outcome(decide(PP_PDB_PREFER)), "n1: cheap");
	/* a protected pod that is pending, then bound, carries its mark onto the node */
	pod("later", NULL, 0, 1000, 1, NULL);
	assert_int_equal(pp_cluster_set_pod_protected(C, "default", "later", true, NULL), 0);
	node("n0", 1000);
	assert_int_equal(pp_cluster_bind_pod(C, "default", "later", "n0", NULL), 0);
	assert_string_equal(outcome(decide(PP_PDB_PREFER)), "n1: cheap");
}

/* db-0 (app=db, under the budget db allowing `allowed`) on n1, other (app=other_app) on n2, both
 * enough to make room for pre, which is pending; other is the more important. */
static void db_beside_other(const char *other_app, int32_t allowed)
{
	node("n1", 1000);
	node("n2", 1000);
	pod("db-0", "n1", 1, 1000, 1, "db");
	pod("other", "n2", 3, 1000, 1, other_app);
	pdb(C, "db", "db", allowed);
	pod("pre", NULL, 10, 1000, 0, NULL);
}

static void test_observed_budget(void **state)
{
	(void)state;
	pp_err err = { "" };
	pp_pdb_info bi;
	db_beside_other(NULL, 1);
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "db-0", 0, &bi), 0);
	assert_string_equal(bi.namespace_, "default");
	assert_string_equal(bi.name, "db");
	assert_int_equal(bi.disruptions_allowed, 1);
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "db-0", 1, &bi), -ERANGE);
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "other", 0, &bi), -ERANGE);
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "nope", 0, &bi), -ENOENT);
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n1: db-0");

	/* the API server says 429: the budget is spent, whatever the watch showed */
	assert_int_equal(pp_cluster_set_pdb_disruptions_allowed(C, "default", "nope", 0, &err), -ENOENT);
	assert_string_equal(err.msg, "poddisruptionbudgets/default/nope: not found");
	assert_int_equal(pp_cluster_set_pdb_disruptions_allowed(C, "default", "db", 0, NULL), 0);
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "db-0", 0, &bi), 0);
	assert_int_equal(bi.disruptions_allowed, 0);
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n2: other");
	/* prefer only prefers */
	assert_string_equal(outcome(decide(PP_PDB_PREFER)), "n2: other");

	/* the watch brings the budget anew (replaced whole): the observation goes with the old one */
	assert_int_equal(pp_cluster_remove_pdb(C, "default", "db", NULL), 0);
	pdb(C, "db", "db", 1);
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n1: db-0");
}

/* A status update is applied in place; a new selector changes which pods the budget covers. */
static void test_update_pdb(void **state)
{
	(void)state;
	pp_err err = { "" };
	pp_pdb_info bi;
	db_beside_other("web", 0);
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n2: other");

	pp_label l = { "app", "db" };
	pp_pdb_spec b = { .namespace_ = "default", .name = "db",
		          .selector = { .present = true, .match_labels = &l, .n_match_labels = 1 },
		          .has_disruptions_allowed = true, .disruptions_allowed = 1 };
	for (int i = 0; i < 100; i++) /* as often as the disruption controller writes it */
		assert_int_equal(pp_cluster_update_pdb(C, &b, &err), 0);
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "db-0", 0, &bi), 0);
	assert_string_equal(bi.name, "db");
	assert_int_equal(bi.disruptions_allowed, 1);
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n1: db-0");
	/* an observation holds until the next update */
	assert_int_equal(pp_cluster_set_pdb_disruptions_allowed(C, "default", "db", 0, NULL), 0);
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n2: other");
	assert_int_equal(pp_cluster_update_pdb(C, &b, NULL), 0);
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n1: db-0");

	/* another selector: it covers web's pod now, db-0 no more */
	pp_label w = { "app", "web" };
	b.selector.match_labels = &w;
	b.disruptions_allowed = 0;
	assert_int_equal(pp_cluster_update_pdb(C, &b, NULL), 0);
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "db-0", 0, &bi), -ERANGE);
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "other", 0, &bi), 0);
	assert_string_equal(outcome(decide(PP_PDB_STRICT)), "n1: db-0");

	/* refused as an add would be, the budget as it was */
	b.min_available = (pp_int_or_percent){ PP_IOP_INT, 1 };
	b.max_unavailable = (pp_int_or_percent){ PP_IOP_INT, 1 };
	assert_int_equal(pp_cluster_update_pdb(C, &b, &err), -EINVAL);
	assert_string_equal(err.msg, "poddisruptionbudgets/default/db: spec: Invalid value: minAvailable and "
	                             "maxUnavailable cannot be both set");
	assert_int_equal(pp_cluster_pod_pdb(C, "default", "other", 0, &bi), 0);
	b.max_unavailable = (pp_int_or_percent){ 0 };
	b.name = "nope";
	assert_int_equal(pp_cluster_update_pdb(C, &b, &err), -ENOENT);
	assert_string_equal(err.msg, "poddisruptionbudgets/default/nope: not found");
}

/* --- the scheduler ------------------------------------------------------------------------------ */

struct log {
	char text[2048];
};

static void record(const pp_sched_event *ev, void *ud)
{
	struct log *l = ud;
	size_t off = strlen(l->text);
	snprintf(l->text + off, sizeof(l->text) - off, "%s %s%s%s;", pp_sched_event_name(ev->kind), ev->name,
	         ev->node ? "@" : "", ev->node ? ev->node : "");
}

/* The budget db over app=db allowing `allowed`, as the watch brings it: added or updated. */
static int put_db_budget(pp_sched *s, int32_t allowed, bool add)
{
	pp_label l = { "app", "db" };
	pp_pdb_spec b = { .namespace_ = "default", .name = "db",
		          .selector = { .present = true, .match_labels = &l, .n_match_labels = 1 },
		          .has_disruptions_allowed = true, .disruptions_allowed = allowed };
	return add ? pp_sched_add_pdb(s, &b, NULL) : pp_sched_update_pdb(s, &b, NULL);
}

static void sched_budget(pp_pdb_policy policy, const char *want_after_budget)
{
	pp_sched *s = NULL;
	struct log log = { "" };
	pp_err err = { "" };
	node("n", 1000);
	pod("db-0", "n", 1, 1000, 1, "db");
	pdb(C, "db", "db", 0);
	pod("pre", NULL, 10, 1000, 0, NULL);
	assert_int_equal(pp_cluster_set_pdb_policy(C, policy), 0);
	pp_sched_options o = { .external_termination = true };
	assert_int_equal(pp_sched_new(C, &o, 1000, record, &log, &s, &err), 0);
	C = NULL; /* the scheduler owns it now */
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	if (policy == PP_PDB_PREFER) {
		assert_string_equal(log.text, "nominate pre@n;");
		pp_sched_free(s);
		return;
	}
	assert_string_equal(log.text, "unschedulable pre;");
	pp_sched_stats st;
	pp_sched_get_stats(s, &st);
	assert_int_equal(st.unschedulable, 1);

	/* the budget allows one disruption now (the disruption controller's status update): the pod moves */
	log.text[0] = '\0';
	assert_int_equal(put_db_budget(s, 1, false), 0);
	pp_sched_get_stats(s, &st);
	assert_int_equal(st.unschedulable, 0);
	assert_int_equal(pp_sched_advance(s, 1000 + 20 * 1000000000LL, NULL), 0); /* past its backoff */
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_string_equal(log.text, want_after_budget);

	/* the eviction is refused after all: the budget as observed, then the pod protected */
	assert_int_equal(pp_sched_set_pdb_disruptions_allowed(s, "default", "db", 0, &err), 0);
	assert_int_equal(pp_sched_set_pdb_disruptions_allowed(s, "default", "nope", 0, &err), -ENOENT);
	assert_int_equal(pp_sched_set_pod_protected(s, "default", "db-0", true, NULL), 0);
	assert_int_equal(pp_sched_set_pod_protected(s, "default", "nope", true, &err), -ENOENT);
	assert_true(pp_cluster_pod_protected(pp_sched_cluster(s), "default", "db-0"));
	pp_sched_free(s);
}

static void test_sched_budget_event_strict(void **state)
{
	(void)state;
	sched_budget(PP_PDB_STRICT, "nominate pre@n;");
}

static void test_sched_budget_event_prefer(void **state)
{
	(void)state;
	sched_budget(PP_PDB_PREFER, NULL);
}

/* Under strict a budget's news moves the pods whose preemption failed, and only those: a pod that
 * may not preempt (preemptionPolicy Never) has nothing to gain and stays where it is. */
static void test_sched_budget_event_moves_failed_preemptions(void **state)
{
	(void)state;
	pp_sched *s = NULL;
	struct log log = { "" };
	pp_sched_stats st;
	pp_resource req[1];
	pp_label l;
	pp_pod_spec never;
	node("n", 1000);
	pod("db-0", "n", 1, 1000, 1, "db");
	pdb(C, "db", "db", 0);
	pod("pre", NULL, 10, 1000, 0, NULL);
	pod_spec(&never, req, &l, "never", NULL, 9, 1000, 0, NULL);
	never.preemption_policy = PP_PREEMPT_NEVER;
	assert_int_equal(pp_cluster_add_pod(C, &never, NULL), 0);
	assert_int_equal(pp_cluster_set_pdb_policy(C, PP_PDB_STRICT), 0);
	pp_sched_options o = { .external_termination = true };
	assert_int_equal(pp_sched_new(C, &o, 1000, record, &log, &s, NULL), 0);
	C = NULL;
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_string_equal(log.text, "unschedulable pre;unschedulable never;");
	pp_sched_get_stats(s, &st);
	assert_int_equal(st.unschedulable, 2);

	assert_int_equal(put_db_budget(s, 0, false), 0);
	pp_sched_get_stats(s, &st);
	assert_int_equal(st.unschedulable, 1);
	assert_int_equal(pp_sched_advance(s, 1000 + 20 * 1000000000LL, NULL), 0);
	log.text[0] = '\0';
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_int_equal(pp_sched_schedule_one(s, NULL), 0); /* never is not tried again */
	assert_string_equal(log.text, "unschedulable pre;");
	/* removed and added, as a changed selector is, it moves pre again, never still not */
	assert_int_equal(pp_sched_remove_pdb(s, "default", "db", NULL), 0);
	assert_int_equal(put_db_budget(s, 0, true), 0);
	pp_sched_get_stats(s, &st);
	assert_int_equal(st.unschedulable, 1);
	assert_int_equal(put_db_budget(s, 0, false), 0); /* nothing left to move */
	pp_sched_free(s);
}

/* A protection lifted moves the pods that failed for resources; the policy switched back to prefer too. */
static void test_sched_protection_lifted(void **state)
{
	(void)state;
	pp_sched *s = NULL;
	struct log log = { "" };
	pp_sched_stats st;
	node("n", 1000);
	pod("low", "n", 1, 1000, 1, NULL);
	pod("pre", NULL, 10, 1000, 0, NULL);
	assert_int_equal(pp_cluster_set_pod_protected(C, "default", "low", true, NULL), 0);
	pp_sched_options o = { .external_termination = true };
	assert_int_equal(pp_sched_new(C, &o, 1000, record, &log, &s, NULL), 0);
	C = NULL;
	assert_int_equal(pp_sched_set_pdb_policy(s, PP_PDB_STRICT), 0);
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_string_equal(log.text, "unschedulable pre;");
	/* protecting it again, or switching to strict, is no news */
	assert_int_equal(pp_sched_set_pod_protected(s, "default", "low", true, NULL), 0);
	assert_int_equal(pp_sched_set_pdb_policy(s, PP_PDB_STRICT), 0);
	pp_sched_get_stats(s, &st);
	assert_int_equal(st.unschedulable, 1);
	assert_int_equal(pp_sched_set_pod_protected(s, "default", "low", false, NULL), 0);
	pp_sched_get_stats(s, &st);
	assert_int_equal(st.unschedulable, 0);
	assert_int_equal(pp_sched_advance(s, 1000 + 20 * 1000000000LL, NULL), 0);
	log.text[0] = '\0';
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_string_equal(log.text, "nominate pre@n;");
	assert_int_equal(pp_sched_set_pdb_policy(s, (pp_pdb_policy)9), -EINVAL);
	pp_sched_free(s);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_policy_names),
		T(test_strict_refuses_what_prefer_breaks),
		T(test_budget_counts_victims_not_the_split),
		T(test_kept_victim_and_another_set),
		T(test_kept_most_important_of_a_budget),
		T(test_terminating_victims_count_against_nothing),
		T(test_protected_pod),
		T(test_observed_budget),
		T(test_update_pdb),
		T(test_sched_budget_event_strict),
		T(test_sched_budget_event_prefer),
		T(test_sched_budget_event_moves_failed_preemptions),
		T(test_sched_protection_lifted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
