/* Preemption decisions on hand-made clusters: each best-candidate criterion, the PDB reprieve
 * order, eligibility, filters and their verdicts, pod requests, and model mutations. */
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

static void node(const char *name, int64_t cpu, int64_t pods)
{
	pp_resource alloc[] = { { "cpu", cpu }, { "memory", 1LL << 35 }, { "pods", pods } };
	pp_label l = { "kubernetes.io/hostname", name };
	pp_node_spec n = { .name = name, .labels = &l, .n_labels = 1, .allocatable = alloc, .n_allocatable = 3 };
	pp_err err = { "" };
	if (pp_cluster_add_node(C, &n, &err) < 0)
		fail_msg("%s", err.msg);
}

/* A bound (node != NULL) or pending pod with one label app=<app> (NULL: none). */
static void pod(const char *ns, const char *name, const char *on, int32_t prio, int64_t cpu, int64_t start,
                const char *app)
{
	pp_resource req[] = { { "cpu", cpu } };
	pp_label l = { "app", app };
	pp_pod_spec p = { .namespace_ = ns, .name = name, .priority = prio, .requests = req, .n_requests = 1,
		          .node_name = on, .has_start_time = start >= 0, .start_time_ns = start,
		          .labels = app ? &l : NULL, .n_labels = app ? 1 : 0, .termination_grace_period_s = -1 };
	pp_err err = { "" };
	if (pp_cluster_add_pod(C, &p, &err) < 0)
		fail_msg("%s", err.msg);
}

static pp_preemption *decide(const char *ns, const char *name)
{
	pp_preemption *r = NULL;
	pp_err err = { "" };
	pp_preempt_options o = { .now_ns = 1000, .explain = true };
	if (pp_cluster_preempt(C, ns, name, &o, &r, &err) < 0)
		fail_msg("%s", err.msg);
	/* The explain-less fast path must agree. */
	pp_preemption *q = NULL;
	o.explain = false;
	assert_int_equal(pp_cluster_preempt(C, ns, name, &o, &q, NULL), 0);
	assert_int_equal(pp_preemption_outcome(q), pp_preemption_outcome(r));
	assert_int_equal(pp_preemption_victim_count(q), pp_preemption_victim_count(r));
	assert_int_equal(pp_preemption_criterion(q), pp_preemption_criterion(r));
	if (pp_preemption_node(r))
		assert_string_equal(pp_preemption_node(q), pp_preemption_node(r));
	/* ... on the runner-up too, though it prunes nodes that cannot beat it */
	for (size_t rank = 0; rank < 3; rank++) {
		const pp_candidate *a = pp_preemption_candidate(q, rank), *b = pp_preemption_candidate(r, rank);
		assert_true((a == NULL) == (b == NULL));
		if (!a)
			continue;
		assert_string_equal(a->node, b->node);
		assert_int_equal(a->priority_sum, b->priority_sum);
		assert_int_equal(a->n_victims, b->n_victims);
		assert_int_equal(a->earliest_start_ns, b->earliest_start_ns);
	}
	assert_string_equal(pp_preemption_unresolvable(q), pp_preemption_unresolvable(r));
	pp_preemption_free(q);
	return r;
}

static void expect(pp_preemption *r, const char *node, pp_criterion crit, const char *const *victims)
{
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_PREEMPT);
	assert_string_equal(pp_preemption_node(r), node);
	assert_int_equal(pp_preemption_criterion(r), crit);
	size_t n = 0;
	while (victims[n])
		n++;
	assert_int_equal(pp_preemption_victim_count(r), n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(pp_preemption_victim(r, i)->name, victims[i]);
	pp_preemption_free(r);
}

static void collect_node(const char *node, void *userdata)
{
	char *buf = userdata;
	strcat(buf, buf[0] ? " " : "");
	strcat(buf, node);
}

static void test_bind_nodes(void **state)
{
	(void)state;
	char got[256] = "";
	/* b and c have the same room left: a tie of the best score; a is fuller; d too small */
	node("a", 2000, 10);
	node("b", 2000, 10);
	node("c", 2000, 10);
	node("d", 400, 10);
	pod("default", "a1", "a", 0, 1000, 1, NULL);
	pod("default", "p", NULL, 0, 500, -1, NULL);
	assert_int_equal(pp_cluster_bind_nodes(C, "default", "p", collect_node, got, NULL), 2);
	assert_string_equal(got, "b c");
	pp_preemption *r = decide("default", "p");
	const pp_node_explain *ea = pp_preemption_node_explain(r, 0), *eb = pp_preemption_node_explain(r, 1);
	assert_int_equal(pp_preemption_node_explain(r, 3)->score, -1); /* d: does not fit */
	assert_true(ea->score >= 0 && ea->score < eb->score);
	assert_int_equal(eb->score, pp_preemption_node_explain(r, 2)->score);
	pp_preemption_free(r);
	/* the nominated node first, when it fits: as the cycle tries it */
	assert_int_equal(pp_cluster_set_nominated_node(C, "default", "p", "a", NULL), 0);
	got[0] = '\0';
	assert_int_equal(pp_cluster_bind_nodes(C, "default", "p", collect_node, got, NULL), 1);
	assert_string_equal(got, "a");
	pod("default", "big", NULL, 0, 5000, -1, NULL);
	assert_int_equal(pp_cluster_bind_nodes(C, "default", "big", collect_node, got, NULL), 0);
	assert_int_equal(pp_cluster_bind_nodes(C, "default", "a1", NULL, NULL, NULL), -EINVAL);
	assert_int_equal(pp_cluster_bind_nodes(C, "default", "nope", NULL, NULL, NULL), -ENOENT);
}

static void test_fits_without_preemption(void **state)
{
	(void)state;
	node("n2", 2000, 10);
	node("n1", 2000, 10);
	node("n3", 500, 10);
	pod("default", "busy", "n1", 0, 1500, 1, NULL);
	pod("default", "web", NULL, 0, 1000, -1, NULL);
	pp_preemption *r = decide("default", "web");
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_FITS);
	assert_string_equal(pp_preemption_node(r), "n2"); /* smallest feasible name, n1 is full */
	assert_int_equal(pp_preemption_victim_count(r), 0);
	assert_int_equal(pp_preemption_node_count(r), 3);
	const pp_node_explain *e = pp_preemption_node_explain(r, 0);
	assert_string_equal(e->node, "n1");
	assert_int_equal(e->verdict, PP_NODE_NOT_HELPFUL);
	assert_string_equal(e->reason, "Insufficient cpu");
	assert_int_equal(pp_preemption_node_explain(r, 2)->verdict, PP_NODE_UNRESOLVABLE); /* 1000m > 500m alloc */
	pp_preemption_free(r);
}

static void test_criterion_pdb_violations(void **state)
{
	(void)state;
	node("a", 1000, 10);
	node("b", 1000, 10);
	pod("default", "a-low", "a", 1, 1000, 1, "guarded");
	pod("default", "b-low", "b", 5, 1000, 1, NULL);
	pp_label_selector sel = { .present = true, .match_labels = &(pp_label){ "app", "guarded" }, .n_match_labels = 1 };
	pp_pdb_spec pdb = { .namespace_ = "default", .name = "guard", .selector = sel, .has_disruptions_allowed = true };
	assert_int_equal(pp_cluster_add_pdb(C, &pdb, NULL), 0);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	/* a's victim has the lower priority but violates the budget: b wins on criterion 1. */
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_pdb_violations(r), 0);
	const pp_node_explain *ea = pp_preemption_node_explain(r, 0);
	assert_int_equal(ea->verdict, PP_NODE_CANDIDATE);
	assert_int_equal(ea->num_pdb_violations, 1);
	assert_true(ea->victims[0].violates_pdb);
	assert_int_equal(ea->lost_at, PP_CRIT_PDB_VIOLATIONS);
	expect(r, "b", PP_CRIT_PDB_VIOLATIONS, (const char *const[]){ "b-low", NULL });
}

static void test_criterion_highest_priority(void **state)
{
	(void)state;
	node("a", 1000, 10);
	node("b", 1000, 10);
	pod("default", "a1", "a", 5, 1000, 1, NULL);
	pod("default", "b1", "b", 3, 1000, 1, NULL);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	expect(decide("default", "pre"), "b", PP_CRIT_HIGHEST_PRIORITY, (const char *const[]){ "b1", NULL });
}

static void test_runner_up(void **state)
{
	(void)state;
	/* c wins on the highest victim priority (2); of a (5) and b (3), b comes closer: the
	 * runner-up is the best of the others, not merely one that got as far. */
	node("a", 1000, 10);
	node("b", 1000, 10);
	node("c", 1000, 10);
	pod("default", "a1", "a", 5, 1000, 1, NULL);
	pod("default", "b1", "b", 3, 1000, 1, NULL);
	pod("default", "c1", "c", 2, 600, 7, NULL);
	pod("default", "c2", "c", 2, 400, 9, NULL);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	pp_preemption *r = decide("default", "pre");
	const pp_candidate *w = pp_preemption_candidate(r, 0), *ru = pp_preemption_candidate(r, 1);
	assert_string_equal(w->node, "c");
	assert_int_equal(w->highest_priority, 2);
	assert_int_equal(w->n_victims, 2);
	assert_int_equal(w->num_pdb_violations, 0);
	assert_int_equal(w->priority_sum, 2 * (2 + (1LL << 31)));
	assert_int_equal(w->earliest_start_ns, 7);
	assert_string_equal(ru->node, "b");
	assert_int_equal(ru->highest_priority, 3);
	assert_null(pp_preemption_candidate(r, 2));
	expect(r, "c", PP_CRIT_HIGHEST_PRIORITY, (const char *const[]){ "c1", "c2", NULL });

	/* one candidate: no runner-up */
	assert_int_equal(pp_cluster_remove_pod(C, "default", "a1", NULL), 0);
	assert_int_equal(pp_cluster_remove_pod(C, "default", "b1", NULL), 0);
	pod("default", "a1", "a", 50, 1000, 1, NULL);
	pod("default", "b1", "b", 50, 1000, 1, NULL);
	r = decide("default", "pre");
	assert_string_equal(pp_preemption_candidate(r, 0)->node, "c");
	assert_null(pp_preemption_candidate(r, 1));
	expect(r, "c", PP_CRIT_SINGLE_CANDIDATE, (const char *const[]){ "c1", "c2", NULL });
}

static void test_criterion_priority_sum(void **state)
{
	(void)state;
	node("a", 1000, 10);
	node("b", 1000, 10);
	/* both have highest victim priority 3; a's victims sum higher */
	pod("default", "a1", "a", 3, 500, 1, NULL);
	pod("default", "a2", "a", 3, 500, 2, NULL);
	pod("default", "b1", "b", 3, 500, 1, NULL);
	pod("default", "b2", "b", 1, 500, 2, NULL);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	expect(decide("default", "pre"), "b", PP_CRIT_PRIORITY_SUM, (const char *const[]){ "b1", "b2", NULL });
}

static void test_criterion_victim_count(void **state)
{
	(void)state;
	/* The reference's hand-made case: {7} vs {7, INT32_MIN} tie on Σ(p + 2^31). */
	node("a", 1000, 10);
	node("b", 1000, 10);
	pod("default", "a1", "a", 7, 500, 1, NULL);
	pod("default", "a2", "a", INT32_MIN, 500, 2, NULL);
	pod("default", "b1", "b", 7, 1000, 1, NULL);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	expect(decide("default", "pre"), "b", PP_CRIT_VICTIM_COUNT, (const char *const[]){ "b1", NULL });
}

static void test_criterion_start_time(void **state)
{
	(void)state;
	node("a", 1000, 10);
	node("b", 1000, 10);
	pod("default", "a1", "a", 3, 1000, 50, NULL);
	pod("default", "b1", "b", 3, 1000, 20, NULL);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	/* the later-started victim is preferred (younger pods are cheaper to lose) */
	expect(decide("default", "pre"), "a", PP_CRIT_START_TIME, (const char *const[]){ "a1", NULL });
}

static void test_criterion_node_name(void **state)
{
	(void)state;
	node("zeta", 1000, 10);
	node("alpha", 1000, 10);
	pod("default", "z1", "zeta", 3, 1000, 20, NULL);
	pod("default", "a1", "alpha", 3, 1000, 20, NULL);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	expect(decide("default", "pre"), "alpha", PP_CRIT_NODE_NAME, (const char *const[]){ "a1", NULL });
}

static void test_single_candidate_and_no_start_time(void **state)
{
	(void)state;
	node("a", 1000, 10);
	node("b", 1000, 10);
	pod("default", "b-high", "b", 100, 1000, 1, NULL);
	/* no start time: counts as now (1000), the youngest — so the other pod is more important */
	pod("default", "new", "a", 3, 500, -1, NULL);
	pod("default", "old", "a", 3, 500, 999, NULL);
	pod("default", "pre", NULL, 10, 500, -1, NULL);
	/* reprieve keeps the most important ("old") first; "new" is the victim */
	expect(decide("default", "pre"), "a", PP_CRIT_SINGLE_CANDIDATE, (const char *const[]){ "new", NULL });
}

static void test_pdb_reprieve_order(void **state)
{
	(void)state;
	/* Reference §11: the most important matching pod consumes the budget; the less important one
	 * becomes violating and is reprieved first — so the older, more important pod is evicted. */
	node("n", 1000, 10);
	pod("default", "older", "n", 3, 500, 1, "db");
	pod("default", "newer", "n", 3, 500, 2, "db");
	pp_label_selector sel = { .present = true, .match_labels = &(pp_label){ "app", "db" }, .n_match_labels = 1 };
	pp_pdb_spec pdb = { .namespace_ = "default", .name = "db", .selector = sel, .min_available = { PP_IOP_INT, 1 } };
	assert_int_equal(pp_cluster_add_pdb(C, &pdb, NULL), 0);
	int32_t allowed = -1;
	assert_int_equal(pp_cluster_pdb_disruptions_allowed(C, "default", "db", &allowed), 0);
	assert_int_equal(allowed, 1); /* computed: 2 healthy - minAvailable 1 */
	pod("default", "pre", NULL, 10, 500, -1, NULL);
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_pdb_violations(r), 0);
	expect(r, "n", PP_CRIT_SINGLE_CANDIDATE, (const char *const[]){ "older", NULL });

	/* Listed in disruptedPods: neither consumes nor violates. With budget 0 and "older" listed,
	 * "newer" violates, is reprieved first and kept; "older" goes without a violation. */
	assert_int_equal(pp_cluster_remove_pdb(C, "default", "db", NULL), 0);
	const char *disrupted[] = { "older" };
	pp_pdb_spec pdb2 = { .namespace_ = "default", .name = "db", .selector = sel, .has_disruptions_allowed = true,
		             .disruptions_allowed = 0, .disrupted_pods = disrupted, .n_disrupted_pods = 1 };
	assert_int_equal(pp_cluster_add_pdb(C, &pdb2, NULL), 0);
	r = decide("default", "pre");
	assert_int_equal(pp_preemption_pdb_violations(r), 0);
	expect(r, "n", PP_CRIT_SINGLE_CANDIDATE, (const char *const[]){ "older", NULL });
}

static void test_pdb_victims_sorted_after_split(void **state)
{
	(void)state;
	/* PR #128307: victims from both groups come back in importance order. */
	node("n", 1000, 10);
	pod("default", "v-low", "n", 1, 400, 1, "db");
	pod("default", "nv-high", "n", 5, 400, 1, NULL);
	pod("default", "keep", "n", 0, 200, 1, NULL);
	pp_label_selector sel = { .present = true, .match_labels = &(pp_label){ "app", "db" }, .n_match_labels = 1 };
	pp_pdb_spec pdb = { .namespace_ = "default", .name = "db", .selector = sel, .has_disruptions_allowed = true };
	assert_int_equal(pp_cluster_add_pdb(C, &pdb, NULL), 0);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_pdb_violations(r), 1);
	assert_true(pp_preemption_victim(r, 1)->violates_pdb);
	/* which budget: v-low's, with 0 disruptions allowed; the others select none */
	assert_int_equal(pp_preemption_victim_pdb_count(r, 0), 0);
	assert_int_equal(pp_preemption_victim_pdb_count(r, 1), 1);
	const pp_victim_pdb *b = pp_preemption_victim_pdb(r, 1, 0);
	assert_string_equal(b->namespace_, "default");
	assert_string_equal(b->name, "db");
	assert_int_equal(b->disruptions_allowed, 0);
	assert_true(b->violated);
	assert_false(b->disrupted);
	assert_null(pp_preemption_victim_pdb(r, 1, 1));
	assert_int_equal(pp_preemption_victim_pdb_count(r, 2), 0);
	expect(r, "n", PP_CRIT_SINGLE_CANDIDATE, (const char *const[]){ "nv-high", "v-low", "keep", NULL });
}

static void test_victim_pdb_budget(void **state)
{
	(void)state;
	/* Two pods of one budget that allows one disruption, both needed: the more important (the
	 * older) takes the budget, the younger is beyond it; a second budget selects the younger
	 * only, and lists it in disruptedPods: not charged. */
	node("n", 1000, 10);
	pod("default", "old", "n", 3, 500, 1, "db");
	pod("default", "young", "n", 3, 500, 2, "db");
	pp_label_selector sel = { .present = true, .match_labels = &(pp_label){ "app", "db" }, .n_match_labels = 1 };
	pp_pdb_spec pdb = { .namespace_ = "default", .name = "db", .selector = sel, .has_disruptions_allowed = true,
		            .disruptions_allowed = 1 };
	assert_int_equal(pp_cluster_add_pdb(C, &pdb, NULL), 0);
	const char *disrupted[] = { "young" };
	pp_pdb_spec other = { .namespace_ = "default", .name = "zone", .selector = sel, .has_disruptions_allowed = true,
		              .disrupted_pods = disrupted, .n_disrupted_pods = 1 };
	assert_int_equal(pp_cluster_add_pdb(C, &other, NULL), 0);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_victim_count(r), 2);
	assert_string_equal(pp_preemption_victim(r, 0)->name, "old");
	assert_int_equal(pp_preemption_victim_pdb_count(r, 0), 2);
	const pp_victim_pdb *o = pp_preemption_victim_pdb(r, 0, 0), *oz = pp_preemption_victim_pdb(r, 0, 1);
	assert_string_equal(o->name, "db");
	assert_false(o->violated);
	assert_int_equal(o->disruptions_allowed, 1);
	assert_string_equal(oz->name, "zone");
	assert_true(oz->violated); /* zone allows 0, and "old" is not in its disruptedPods */
	const pp_victim_pdb *y = pp_preemption_victim_pdb(r, 1, 0), *yz = pp_preemption_victim_pdb(r, 1, 1);
	assert_string_equal(y->name, "db");
	assert_true(y->violated);
	assert_true(yz->disrupted);
	assert_false(yz->violated);
	pp_preemption_free(r);
}

static void test_never_policy(void **state)
{
	(void)state;
	node("n", 1000, 10);
	pod("default", "low", "n", 0, 1000, 1, NULL);
	pp_resource req[] = { { "cpu", 1000 } };
	pp_pod_spec p = { .namespace_ = "default", .name = "np", .priority = 1000000, .requests = req, .n_requests = 1,
		          .preemption_policy = PP_PREEMPT_NEVER };
	assert_int_equal(pp_cluster_add_pod(C, &p, NULL), 0);
	pp_preemption *r = decide("default", "np");
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	/* a caller tells "not eligible" by its value, and gets kube's words for it */
	assert_int_equal(pp_preemption_eligibility(r), PP_NOT_ELIGIBLE_NEVER);
	assert_string_equal(pp_eligibility_reason(PP_NOT_ELIGIBLE_NEVER), "not eligible due to preemptionPolicy=Never.");
	assert_null(pp_preemption_node(r));
	assert_string_equal(pp_preemption_reason(r), "0/1 nodes are available: 1 Insufficient cpu. preemption: not "
	                                             "eligible due to preemptionPolicy=Never.");
	pp_preemption_free(r);
}

static void test_nominated_node_with_terminating_victim(void **state)
{
	(void)state;
	node("n", 1000, 10);
	node("m", 1000, 10);
	pod("default", "going", "n", 0, 1000, 1, NULL);
	pod("default", "other", "m", 0, 1000, 1, NULL);
	assert_int_equal(pp_cluster_mark_terminating(C, "default", "going", 5, true, NULL), 0);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	assert_int_equal(pp_cluster_set_nominated_node(C, "default", "pre", "n", NULL), 0);
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	assert_non_null(strstr(pp_preemption_reason(r), "not eligible due to a terminating pod on the nominated node."));
	assert_int_equal(pp_preemption_eligibility(r), PP_NOT_ELIGIBLE_TERMINATING);
	pp_preemption_free(r);

	/* A terminating pod deleted by someone else does not block; it may itself be a victim. */
	assert_int_equal(pp_cluster_remove_pod(C, "default", "going", NULL), 0);
	pod("default", "going", "n", 0, 1000, 1, NULL);
	assert_int_equal(pp_cluster_mark_terminating(C, "default", "going", 5, false, NULL), 0);
	r = decide("default", "pre");
	const pp_node_explain *en = pp_preemption_node_explain(r, 1);
	assert_string_equal(en->node, "n");
	assert_int_equal(en->verdict, PP_NODE_CANDIDATE);
	assert_true(en->victims[0].terminating);
	assert_int_equal(en->lost_at, PP_CRIT_NODE_NAME); /* equal in every criterion: "m" < "n" */
	expect(r, "m", PP_CRIT_NODE_NAME, (const char *const[]){ "other", NULL });
}

static void test_unresolvable_filters(void **state)
{
	(void)state;
	pp_resource alloc[] = { { "cpu", 1000 }, { "pods", 10 } };
	pp_taint taint = { "dedicated", "gpu", PP_EFFECT_NO_SCHEDULE };
	pp_node_spec tainted = { .name = "t", .taints = &taint, .n_taints = 1, .allocatable = alloc, .n_allocatable = 2 };
	pp_node_spec cordoned = { .name = "u", .allocatable = alloc, .n_allocatable = 2, .unschedulable = true };
	assert_int_equal(pp_cluster_add_node(C, &tainted, NULL), 0);
	assert_int_equal(pp_cluster_add_node(C, &cordoned, NULL), 0);
	pod("default", "t1", "t", 0, 1000, 1, NULL);
	pod("default", "u1", "u", 0, 1000, 1, NULL);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	assert_string_equal(pp_preemption_reason(r),
	                    "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were "
	                    "unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for "
	                    "scheduling.");
	/* attempted: no victims helped, which is not "not eligible" */
	assert_int_equal(pp_preemption_eligibility(r), PP_ELIGIBLE);
	/* what "not helpful" hides (kubernetes#97182) */
	assert_string_equal(pp_preemption_unresolvable(r),
	                    "1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable");
	pp_preemption_free(r);

	/* Tolerating both makes both nodes candidates. */
	pp_toleration tol[] = { { .key = "dedicated", .op = PP_TOLERATION_EQUAL, .value = "gpu" },
		                { .key = "node.kubernetes.io/unschedulable", .op = PP_TOLERATION_EXISTS } };
	pp_resource req[] = { { "cpu", 1000 } };
	pp_pod_spec p = { .namespace_ = "default", .name = "tol", .priority = 10, .requests = req, .n_requests = 1,
		          .tolerations = tol, .n_tolerations = 2 };
	assert_int_equal(pp_cluster_add_pod(C, &p, NULL), 0);
	expect(decide("default", "tol"), "t", PP_CRIT_NODE_NAME, (const char *const[]){ "t1", NULL });
}

static void on_unschedulable(const pp_sched_event *ev, void *ud)
{
	if (ev->kind == PP_SCHED_UNSCHEDULABLE && strcmp(ev->name, "pre") == 0)
		snprintf(ud, 512, "%s", ev->message);
}

/* FitError sorts the "<count> <reason>" strings, not the reasons: "1 node(s) ..." comes before
 * "2 Insufficient cpu" although "Insufficient" sorts before "node(s)"; the preemption part is
 * sorted the same way, and the scheduling cycle words its message identically. */
static void test_reasons_sorted_with_counts(void **state)
{
	(void)state;
	pp_resource alloc[] = { { "cpu", 1000 }, { "pods", 10 } };
	pp_node_spec cordoned = { .name = "c", .allocatable = alloc, .n_allocatable = 2, .unschedulable = true };
	assert_int_equal(pp_cluster_add_node(C, &cordoned, NULL), 0);
	node("a", 1000, 10);
	node("b", 1000, 10);
	pod("default", "a1", "a", 100, 800, 1, NULL);
	pod("default", "b1", "b", 100, 800, 1, NULL);
	pod("default", "pre", NULL, 10, 500, -1, NULL);
	static const char want[] = "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu. "
	                           "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
	                           "2 No preemption victims found for incoming pod.";
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	assert_string_equal(pp_preemption_reason(r), want);
	pp_preemption_free(r);

	pp_preempt_options o = { .now_ns = 1000 }; /* the explain-less path words it the same */
	assert_int_equal(pp_cluster_preempt(C, "default", "pre", &o, &r, NULL), 0);
	assert_string_equal(pp_preemption_reason(r), want);
	pp_preemption_free(r);

	/* The scheduling cycle reports the same message for the pod. */
	pp_sched *s = NULL;
	char got[512] = "";
	assert_int_equal(pp_sched_new(C, NULL, 0, on_unschedulable, got, &s, NULL), 0);
	C = NULL; /* the scheduler owns the cluster now */
	assert_int_equal(pp_sched_schedule_one(s, NULL), 1);
	assert_string_equal(got, want);
	pp_sched_free(s);
}

static void test_affinity_to_lower_priority_pod(void **state)
{
	(void)state;
	/* The documented limitation: a pod with required affinity to a lower-priority pod on the node
	 * cannot preempt there — removing all lower-priority pods removes the affinity target. */
	node("n", 1000, 10);
	pod("default", "cache", "n", 0, 1000, 1, "cache");
	pp_resource req[] = { { "cpu", 500 } };
	pp_pod_affinity_term t = { .selector = { .present = true, .match_labels = &(pp_label){ "app", "cache" },
		                                 .n_match_labels = 1 },
		                   .topology_key = "kubernetes.io/hostname" };
	pp_pod_spec p = { .namespace_ = "default", .name = "web", .priority = 10, .requests = req, .n_requests = 1,
		          .affinity = &t, .n_affinity = 1 };
	assert_int_equal(pp_cluster_add_pod(C, &p, NULL), 0);
	pp_preemption *r = decide("default", "web");
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_NONE);
	assert_string_equal(pp_preemption_node_explain(r, 0)->reason, "node(s) didn't match pod affinity rules");
	pp_preemption_free(r);
}

static void test_anti_affinity_resolvable(void **state)
{
	(void)state;
	node("n", 4000, 10);
	pod("default", "noisy", "n", 0, 100, 1, "noisy");
	pp_resource req[] = { { "cpu", 100 } };
	pp_pod_affinity_term t = { .selector = { .present = true, .match_labels = &(pp_label){ "app", "noisy" },
		                                 .n_match_labels = 1 },
		                   .topology_key = "kubernetes.io/hostname" };
	pp_pod_spec p = { .namespace_ = "default", .name = "quiet", .priority = 10, .requests = req, .n_requests = 1,
		          .anti_affinity = &t, .n_anti_affinity = 1 };
	assert_int_equal(pp_cluster_add_pod(C, &p, NULL), 0);
	expect(decide("default", "quiet"), "n", PP_CRIT_SINGLE_CANDIDATE, (const char *const[]){ "noisy", NULL });
}

static void test_nominated_pods_count(void **state)
{
	(void)state;
	node("a", 1000, 10);
	node("b", 1000, 10);
	/* b's capacity is promised to an equal-priority nominated pod; a lower one is ignored */
	pp_resource req[] = { { "cpu", 1000 } };
	pp_pod_spec nom = { .namespace_ = "default", .name = "nom", .priority = 10, .requests = req, .n_requests = 1,
		            .nominated_node_name = "b" };
	assert_int_equal(pp_cluster_add_pod(C, &nom, NULL), 0);
	pp_pod_spec weak = { .namespace_ = "default", .name = "weak", .priority = 1, .requests = req, .n_requests = 1,
		             .nominated_node_name = "a" };
	assert_int_equal(pp_cluster_add_pod(C, &weak, NULL), 0);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_outcome(r), PP_OUTCOME_FITS);
	assert_string_equal(pp_preemption_node(r), "a");
	pp_preemption_free(r);
}

static void test_cleared_nominations(void **state)
{
	(void)state;
	node("a", 1000, 10);
	pod("default", "low", "a", 0, 1000, 1, NULL);
	pp_resource req[] = { { "cpu", 100 } };
	pp_pod_spec weak = { .namespace_ = "default", .name = "weak", .priority = 1, .requests = req, .n_requests = 1,
		             .nominated_node_name = "a" };
	assert_int_equal(pp_cluster_add_pod(C, &weak, NULL), 0);
	pod("default", "pre", NULL, 10, 1000, -1, NULL);
	pp_preemption *r = decide("default", "pre");
	assert_int_equal(pp_preemption_cleared_nomination_count(r), 1);
	assert_string_equal(pp_preemption_cleared_nomination(r, 0)->name, "weak");
	expect(r, "a", PP_CRIT_SINGLE_CANDIDATE, (const char *const[]){ "low", NULL });
}

static void test_extended_resources_and_pod_count(void **state)
{
	(void)state;
	pp_resource alloc[] = { { "cpu", 8000 }, { "pods", 2 }, { "example.com/gpu", 2 } };
	pp_node_spec n = { .name = "g", .allocatable = alloc, .n_allocatable = 3 };
	assert_int_equal(pp_cluster_add_node(C, &n, NULL), 0);
	pp_resource one_gpu[] = { { "cpu", 100 }, { "example.com/gpu", 1 } };
	pp_pod_spec a = { .namespace_ = "default", .name = "g1", .priority = 0, .requests = one_gpu, .n_requests = 2,
		          .node_name = "g", .has_start_time = true, .start_time_ns = 1 };
	assert_int_equal(pp_cluster_add_pod(C, &a, NULL), 0);
	a.name = "g2";
	a.priority = 20;
	assert_int_equal(pp_cluster_add_pod(C, &a, NULL), 0);
	a.name = "want";
	a.priority = 10;
	a.node_name = NULL;
	assert_int_equal(pp_cluster_add_pod(C, &a, NULL), 0);
	pp_preemption *r = decide("default", "want");
	assert_string_equal(pp_preemption_node_explain(r, 0)->victims[0].name, "g1");
	expect(r, "g", PP_CRIT_SINGLE_CANDIDATE, (const char *const[]){ "g1", NULL });

	/* no "pods" in allocatable: the node admits nothing, and preemption cannot change that */
	pp_resource no_pods[] = { { "cpu", 8000 } };
	pp_node_spec z = { .name = "z", .allocatable = no_pods, .n_allocatable = 1 };
	assert_int_equal(pp_cluster_add_node(C, &z, NULL), 0);
	r = decide("default", "want");
	assert_int_equal(pp_preemption_node_explain(r, 1)->verdict, PP_NODE_UNRESOLVABLE);
	assert_string_equal(pp_preemption_node_explain(r, 1)->reason, "Too many pods; Insufficient example.com/gpu");
	pp_preemption_free(r);
}

static void test_mutation_errors(void **state)
{
	(void)state;
	pp_err err = { "" };
	node("n", 1000, 10);
	pod("default", "p", "n", 0, 100, 1, NULL);
	pp_resource req[] = { { "cpu", 1 } };
	pp_pod_spec dup = { .namespace_ = "default", .name = "p", .requests = req, .n_requests = 1 };
	assert_int_equal(pp_cluster_add_pod(C, &dup, &err), -EEXIST);
	assert_string_equal(err.msg, "pods/default/p: already exists");
	pp_pod_spec lost = { .namespace_ = "default", .name = "q", .node_name = "nowhere" };
	assert_int_equal(pp_cluster_add_pod(C, &lost, &err), -ENOENT);
	assert_string_equal(err.msg, "pods/default/q: spec.nodeName: node \"nowhere\" not found");
	assert_int_equal(pp_cluster_remove_node(C, "n", &err), -EBUSY);
	assert_int_equal(pp_cluster_bind_pod(C, "default", "p", "n", &err), -EBUSY);
	pp_resource neg[] = { { "cpu", -1 } };
	pp_pod_spec bad = { .namespace_ = "default", .name = "bad", .requests = neg, .n_requests = 1 };
	assert_int_equal(pp_cluster_add_pod(C, &bad, &err), -EINVAL);
	assert_string_equal(err.msg, "pods/default/bad: requests.cpu: must be greater than or equal to 0");
	pp_pdb_spec both = { .namespace_ = "default", .name = "x", .min_available = { PP_IOP_INT, 1 },
		             .max_unavailable = { PP_IOP_INT, 1 } };
	assert_int_equal(pp_cluster_add_pdb(C, &both, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "cannot be both set"));
	pp_preemption *r = NULL;
	assert_int_equal(pp_cluster_preempt(C, "default", "p", NULL, &r, &err), -EINVAL); /* bound */
	assert_int_equal(pp_cluster_preempt(C, "default", "none", NULL, &r, &err), -ENOENT);
	assert_null(r);
	assert_int_equal(pp_cluster_remove_pod(C, "default", "p", NULL), 0);
	assert_int_equal(pp_cluster_remove_node(C, "n", NULL), 0);
	assert_int_equal(pp_cluster_node_count(C), 0);
	assert_int_equal(pp_cluster_pod_count(C), 0);
}

/* ------------------------------------------------------------------------------------------ */

static void test_pod_requests(void **state)
{
	(void)state;
	pp_resource out[8];
	size_t n = 0;
	pp_err err = { "" };

	/* Two containers of 0.5m: one rounding per pod, 1m (not 2m). */
	pp_quantity_kv half[] = { { "cpu", "0.5m" }, { "memory", "64Mi" } };
	pp_container_requests two[] = { { PP_CONTAINER, half, 2 }, { PP_CONTAINER, half, 2 } };
	assert_int_equal(pp_pod_requests(two, 2, NULL, 0, NULL, 0, out, 8, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(out[0].name, "cpu");
	assert_int_equal(out[0].value, 1);
	assert_int_equal(out[1].value, 128LL << 20);

	/* The sidecar example: sidecar 100m runs alongside; init 500m runs after it; app 200m.
	 * Σ containers + sidecars = 300m; init peak = 500m + 100m = 600m -> 600m. */
	pp_quantity_kv side[] = { { "cpu", "100m" } }, init[] = { { "cpu", "500m" } }, app[] = { { "cpu", "200m" } };
	pp_container_requests pod[] = { { PP_SIDECAR, side, 1 }, { PP_INIT_CONTAINER, init, 1 }, { PP_CONTAINER, app, 1 } };
	assert_int_equal(pp_pod_requests(pod, 3, NULL, 0, NULL, 0, out, 8, &n, NULL), 0);
	assert_int_equal(out[0].value, 600);
	/* Init container before the sidecar: its peak is its own 500m; total max(300m, 500m). */
	pp_container_requests pod2[] = { { PP_INIT_CONTAINER, init, 1 }, { PP_SIDECAR, side, 1 }, { PP_CONTAINER, app, 1 } };
	assert_int_equal(pp_pod_requests(pod2, 3, NULL, 0, NULL, 0, out, 8, &n, NULL), 0);
	assert_int_equal(out[0].value, 500);

	/* Overhead is added; pod-level cpu replaces the aggregate; unknown names ignored. */
	pp_quantity_kv oh[] = { { "cpu", "250m" } }, lvl[] = { { "cpu", "1" } };
	pp_quantity_kv misc[] = { { "cpu", "100m" }, { "example.com/foo", "2" }, { "pods", "1" }, { "bogus", "3" } };
	pp_container_requests c1[] = { { PP_CONTAINER, misc, 4 } };
	assert_int_equal(pp_pod_requests(c1, 1, lvl, 1, oh, 1, out, 8, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].value, 1250);
	assert_string_equal(out[1].name, "example.com/foo");
	assert_int_equal(out[1].value, 2);

	/* Errors name the field. */
	pp_quantity_kv badq[] = { { "cpu", "1x" } };
	pp_container_requests c2[] = { { PP_CONTAINER, app, 1 }, { PP_INIT_CONTAINER, init, 1 }, { PP_SIDECAR, badq, 1 } };
	assert_int_equal(pp_pod_requests(c2, 3, NULL, 0, NULL, 0, out, 8, &n, &err), -EINVAL);
	assert_string_equal(err.msg, "initContainers[1].resources.requests.cpu: invalid quantity \"1x\": unknown "
	                             "suffix \"x\"");
	pp_quantity_kv negq[] = { { "memory", "-1" } };
	pp_container_requests c3[] = { { PP_CONTAINER, negq, 1 } };
	assert_int_equal(pp_pod_requests(c3, 1, NULL, 0, NULL, 0, out, 8, &n, &err), -EINVAL);
	assert_int_equal(pp_pod_requests(c1, 1, NULL, 0, NULL, 0, out, 1, &n, &err), -ENOBUFS);

	assert_true(pp_resource_is_accounted("nvidia.com/gpu"));
	assert_true(pp_resource_is_accounted("hugepages-2Mi"));
	assert_false(pp_resource_is_accounted("bogus"));
	assert_false(pp_resource_is_accounted("requests.example.com/x"));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_fits_without_preemption),
		T(test_criterion_pdb_violations),
		T(test_criterion_highest_priority),
		T(test_runner_up),
		T(test_victim_pdb_budget),
		T(test_bind_nodes),
		T(test_criterion_priority_sum),
		T(test_criterion_victim_count),
		T(test_criterion_start_time),
		T(test_criterion_node_name),
		T(test_single_candidate_and_no_start_time),
		T(test_pdb_reprieve_order),
		T(test_pdb_victims_sorted_after_split),
		T(test_never_policy),
		T(test_nominated_node_with_terminating_victim),
		T(test_unresolvable_filters),
		T(test_reasons_sorted_with_counts),
		T(test_affinity_to_lower_priority_pod),
		T(test_anti_affinity_resolvable),
		T(test_nominated_pods_count),
		T(test_cleared_nominations),
		T(test_extended_resources_and_pod_count),
		T(test_mutation_errors),
		cmocka_unit_test(test_pod_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
