/* The decision parts of issue 28's brakes, without a server: the preemption budget's sliding
 * minute (cluster-wide, per pool, a preemption bigger than the budget, what a restart finds), and
 * the cycle that consults it — a postponed preemption is a decision of its own and nothing is
 * assumed deleted — and the nomination that expires into a decision with kube-style words. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "budget.h"
#include "cycle.h"
#include "../objects.h"

#define S 1000000000LL
#define T0 (1714557600LL * S) /* 2024-05-01T10:00:00Z */

/* ---- the budget alone ------------------------------------------------------------------------- */

struct verdict {
	int r;
	int64_t until;
	budget_scope scope;
	char why[512];
};

static struct verdict take(budget *b, const char *node, const char *pool, size_t n, int64_t at)
{
	struct verdict v = { .until = -1, .scope = BUDGET_SCOPES };
	v.r = budget_take(b, node, pool, n, at, &v.until, &v.scope, v.why, sizeof(v.why));
	return v;
}

static void test_cluster_minute(void **state)
{
	(void)state;
	budget *b = NULL;
	budget_opts o = { .per_minute = 2 };
	assert_int_equal(budget_new(&o, &b), 0);
	assert_true(budget_limits(b));
	assert_int_equal(take(b, "n1", NULL, 1, T0).r, 0);
	assert_int_equal(take(b, "n2", NULL, 1, T0 + 10 * S).r, 0);
	assert_int_equal(budget_used(b, NULL, T0 + 20 * S), 2);
	/* the third waits for the first to age out of the minute */
	struct verdict v = take(b, "n3", NULL, 1, T0 + 20 * S);
	assert_int_equal(v.r, 1);
	assert_int_equal(v.until, T0 + 60 * S);
	assert_int_equal(v.scope, BUDGET_CLUSTER);
	assert_string_equal(v.why, "1 victim on node n3 would exceed the budget of 2 victims per minute "
	                           "(max-victims-per-minute).");
	assert_int_equal(take(b, "n3", NULL, 1, T0 + 60 * S - 1).r, 1);
	assert_int_equal(take(b, "n3", NULL, 1, T0 + 60 * S).r, 0);
	/* two at once need both slots: until the second of the earlier ones goes */
	v = take(b, "n4", NULL, 2, T0 + 61 * S);
	assert_int_equal(v.r, 1);
	assert_int_equal(v.until, T0 + 120 * S);
	/* victims already terminating cost nothing */
	assert_int_equal(take(b, "n4", NULL, 0, T0 + 61 * S).r, 0);
	budget_stats st;
	budget_get_stats(b, &st);
	assert_int_equal(st.postponed[BUDGET_CLUSTER], 3);
	assert_int_equal(st.postponed[BUDGET_POOL], 0);
	assert_int_equal(st.taken, 3);
	budget_free(b);
}

/* More victims than a whole budget: alone, in a minute without others (else never). */
static void test_bigger_than_budget(void **state)
{
	(void)state;
	budget *b = NULL;
	budget_opts o = { .per_minute = 2 };
	assert_int_equal(budget_new(&o, &b), 0);
	assert_int_equal(take(b, "n1", NULL, 3, T0).r, 0);
	struct verdict v = take(b, "n2", NULL, 1, T0 + 5 * S);
	assert_int_equal(v.r, 1);
	assert_int_equal(v.until, T0 + 60 * S);
	assert_int_equal(take(b, "n2", NULL, 1, T0 + 60 * S).r, 0);
	v = take(b, "n3", NULL, 5, T0 + 70 * S);
	assert_int_equal(v.r, 1);
	assert_int_equal(v.until, T0 + 120 * S);
	assert_string_equal(v.why, "5 victims on node n3 are more than the budget of 2 victims per minute "
	                           "(max-victims-per-minute): they go alone, once a minute has passed without others.");
	budget_free(b);
}

struct pools_seen {
	char text[256];
};

static void seen(const char *pool, size_t used, void *ud)
{
	struct pools_seen *p = ud;
	size_t l = strlen(p->text);
	snprintf(p->text + l, sizeof(p->text) - l, "%s=%zu ", pool, used);
}

/* Each pool its own budget; a node without the label only the cluster's (none here). */
static void test_pools_independent(void **state)
{
	(void)state;
	budget *b = NULL;
	budget_opts o = { .pool_label = "pool", .per_pool_per_minute = 1 };
	assert_int_equal(budget_new(&o, &b), 0);
	assert_string_equal(budget_pool_label(b), "pool");
	assert_int_equal(take(b, "a1", "a", 1, T0).r, 0);
	struct verdict v = take(b, "a2", "a", 1, T0 + S);
	assert_int_equal(v.r, 1);
	assert_int_equal(v.scope, BUDGET_POOL);
	assert_int_equal(v.until, T0 + 60 * S);
	assert_string_equal(v.why, "1 victim on node a2 would exceed the budget of 1 victim per minute of node pool "
	                           "pool=a (max-victims-per-minute-per-pool).");
	assert_int_equal(take(b, "b1", "b", 1, T0 + S).r, 0);
	assert_int_equal(take(b, "x1", NULL, 4, T0 + S).r, 0);
	assert_int_equal(budget_used(b, NULL, T0 + 2 * S), 6);
	assert_int_equal(budget_used(b, "a", T0 + 2 * S), 1);
	struct pools_seen p = { "" };
	budget_foreach_pool(b, T0 + 2 * S, seen, &p);
	assert_true(!strcmp(p.text, "a=1 b=1 ") || !strcmp(p.text, "b=1 a=1 "));
	/* a minute on, the pools are empty and forgotten */
	p.text[0] = '\0';
	budget_foreach_pool(b, T0 + 62 * S, seen, &p);
	assert_string_equal(p.text, "");
	budget_free(b);
}

/* The cluster's budget holds longer than the pool's: it is the one named. */
static void test_both_budgets(void **state)
{
	(void)state;
	budget *b = NULL;
	budget_opts o = { .per_minute = 2, .pool_label = "pool", .per_pool_per_minute = 1 };
	assert_int_equal(budget_new(&o, &b), 0);
	assert_int_equal(take(b, "b1", "b", 1, T0).r, 0);
	assert_int_equal(take(b, "a1", "a", 1, T0 + 30 * S).r, 0);
	struct verdict v = take(b, "a2", "a", 1, T0 + 40 * S);
	assert_int_equal(v.r, 1);
	assert_int_equal(v.scope, BUDGET_POOL);
	assert_int_equal(v.until, T0 + 90 * S);
	v = take(b, "c1", "c", 1, T0 + 40 * S);
	assert_int_equal(v.scope, BUDGET_CLUSTER);
	assert_int_equal(v.until, T0 + 60 * S);
	budget_free(b);
	/* both hold until the same time: the pool's is named, the narrower one */
	assert_int_equal(budget_new(&o, &b), 0);
	assert_int_equal(take(b, "a1", "a", 1, T0).r, 0);
	assert_int_equal(take(b, "b1", "b", 1, T0).r, 0);
	v = take(b, "a2", "a", 1, T0 + S);
	assert_int_equal(v.scope, BUDGET_POOL);
	assert_int_equal(v.until, T0 + 60 * S);
	budget_free(b);
}

/* What a restart finds terminating counts, at the time it was deleted. */
static void test_seed(void **state)
{
	(void)state;
	budget *b = NULL;
	budget_opts o = { .per_minute = 2 };
	assert_int_equal(budget_new(&o, &b), 0);
	assert_int_equal(budget_seed(b, NULL, 1, T0 - 30 * S), 0);
	assert_int_equal(budget_seed(b, NULL, 1, T0 - 50 * S), 0);
	struct verdict v = take(b, "n1", NULL, 1, T0);
	assert_int_equal(v.r, 1);
	assert_int_equal(v.until, T0 + 10 * S); /* the older seed ages out first */
	budget_free(b);
	assert_null(budget_free(NULL));
	assert_false(budget_limits(NULL));
}

/* ---- the cycle with the budget and with deadlines ---------------------------------------------------- */

struct world {
	queue *q;
	cluster *c;
	cycle *cy;
	budget *b;
	decision d;
	char expired[512];
	unsigned n_expired;
};

static void setup(struct world *w)
{
	cluster_opts co = { .scheduler_name = "preemptd" };
	memset(w, 0, sizeof(*w));
	assert_int_equal(queue_new(NULL, T0, &w->q), 0);
	assert_int_equal(cluster_new(w->q, &co, &w->c), 0);
	assert_int_equal(cycle_new(w->q, w->c, &w->cy), 0);
	decision_init(&w->d);
}

static void teardown(struct world *w)
{
	decision_done(&w->d);
	cycle_free(w->cy);
	budget_free(w->b);
	cluster_free(w->c);
	queue_free(w->q);
}

static int run(struct world *w)
{
	pp_err err = { "" };
	int r = cycle_run_one(w->cy, &w->d, &err);
	if (r < 0)
		fail_msg("cycle_run_one: %s", err.msg);
	return r;
}

static void on_expired(const decision *d, void *ud)
{
	struct world *w = ud;
	assert_int_equal(d->kind, DECISION_NOMINATION_EXPIRED);
	w->n_expired++;
	snprintf(w->expired, sizeof(w->expired), "%s %s %s victims=%zu%s%s: %s", d->pod.name, d->pod.uid, d->node,
	         d->n_victims, d->n_victims ? " " : "", d->n_victims ? d->victims[0].pod.name : "", d->message);
}

static void advance_to(struct world *w, int64_t t)
{
	pp_err err = { "" };
	if (cycle_advance(w->cy, t, on_expired, w, &err) < 0)
		fail_msg("cycle_advance: %s", err.msg);
}

static const char *nominated_of(struct world *w, const char *name)
{
	pp_pod_info pi;
	if (pp_cluster_pod_info(queue_cluster(w->q), "default", name, &pi) < 0)
		return "(absent)";
	return pi.nominated_node_name ? pi.nominated_node_name : "";
}

#define RUNNING_OLD "\"phase\":\"Running\",\"startTime\":\"2024-05-01T09:00:00Z\""
#define ON(node) "\"nodeName\":\"" node "\""

static void test_cycle_postpones(void **state)
{
	(void)state;
	struct world w;
	budget_opts o = { .per_minute = 1 };
	setup(&w);
	assert_int_equal(budget_new(&o, &w.b), 0);
	cycle_set_budget(w.cy, w.b);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put(w.c, NODE_JSON("n2", "4")), 0);
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 10, "other", 0, "3", ON("n1"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "v2", "uid-v2", 11, "other", 0, "3", ON("n2"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "3", "", "\"phase\":\"Pending\""), 0);
	assert_int_equal(put_pod(w.c, "q", "uid-q", 13, "preemptd", 90, "3", "", "\"phase\":\"Pending\""), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_PREEMPT);
	assert_string_equal(w.d.pod.name, "p");
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_POSTPONED);
	assert_string_equal(w.d.pod.name, "q");
	assert_string_equal(w.d.pod.uid, "uid-q");
	assert_string_equal(w.d.node, "n2");
	assert_string_equal(w.d.message, "0/2 nodes are available: 2 Insufficient cpu. preemption postponed: 1 victim on "
	                                 "node n2 would exceed the budget of 1 victim per minute (max-victims-per-minute).");
	assert_int_equal(w.d.n_victims, 1);
	assert_string_equal(w.d.victims[0].pod.name, "v2");
	/* nothing of it is assumed: v2 is no victim yet, q holds no node */
	assert_true(cluster_write_wanted(w.c, CLUSTER_WRITE_DELETE, "default", "v2", "uid-v2"));
	assert_string_equal(nominated_of(&w, "q"), "");
	queue_counts qc;
	queue_get_counts(w.q, &qc);
	assert_int_equal(qc.postponed, 1);
	/* a timer for the retry, not a loop */
	assert_int_equal(queue_next_due(w.q), T0 + 60 * S);
	advance_to(&w, T0 + 60 * S);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_PREEMPT);
	assert_string_equal(w.d.pod.name, "q");
	queue_get_counts(w.q, &qc);
	assert_int_equal(qc.postponed, 0);
	teardown(&w);
}

static void test_cycle_nomination_expires(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(cycle_set_nomination_timeout(w.cy, 0, 30 * S), 0);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 10, "other", 0, "3", ON("n1"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "3", "", "\"phase\":\"Pending\""), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_PREEMPT);
	/* the API shows v1 terminating (grace 30 s, as v1 has no terminationGracePeriodSeconds) and p nominated */
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 14, "other", 0, "3", ON("n1"),
	                         RUNNING_OLD ",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
	                         "\"reason\":\"PreemptionByScheduler\"}]"),
	                 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 15, "preemptd", 100, "3", "",
	                         "\"phase\":\"Pending\",\"nominatedNodeName\":\"n1\""),
	                 0);
	advance_to(&w, T0 + 59 * S);
	assert_int_equal(w.n_expired, 0);
	assert_string_equal(nominated_of(&w, "p"), "n1");
	advance_to(&w, T0 + 60 * S);
	assert_int_equal(w.n_expired, 1);
	assert_string_equal(w.expired, "p uid-p n1 victims=1 v1: Nomination to node n1 expired: 1 pod preempted there "
	                               "has not terminated within its grace period + 30s");
	/* cleared, and it stays so while the watch still shows the nomination */
	assert_string_equal(nominated_of(&w, "p"), "");
	assert_int_equal(put_pod(w.c, "p", "uid-p", 16, "preemptd", 100, "3", "",
	                         "\"phase\":\"Pending\",\"nominatedNodeName\":\"n1\""),
	                 0);
	assert_string_equal(nominated_of(&w, "p"), "");
	/* v1 is stuck: no victim any more, so p has nowhere to go */
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_UNSCHEDULABLE);
	teardown(&w);
}

/* A fixed timeout is named as such. */
static void test_cycle_fixed_timeout_words(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(cycle_set_nomination_timeout(w.cy, 90 * S, 0), 0);
	assert_int_equal(cycle_set_nomination_timeout(w.cy, -1, 0), -EINVAL);
	assert_int_equal(cycle_set_min_runtime(w.cy, -1), -EINVAL);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 10, "other", 0, "2", ON("n1"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "v2", "uid-v2", 11, "other", 0, "2", ON("n1"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "4", "", "\"phase\":\"Pending\""), 0);
	assert_int_equal(run(&w), 1);
	advance_to(&w, T0 + 90 * S);
	assert_int_equal(w.n_expired, 1);
	assert_string_equal(w.expired, "p uid-p n1 victims=2 v1: Nomination to node n1 expired: 2 pods preempted there "
	                               "have not terminated within 1m30s");
	teardown(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_minute),
		cmocka_unit_test(test_bigger_than_budget),
		cmocka_unit_test(test_pools_independent),
		cmocka_unit_test(test_both_budgets),
		cmocka_unit_test(test_seed),
		cmocka_unit_test(test_cycle_postpones),
		cmocka_unit_test(test_cycle_nomination_expires),
		cmocka_unit_test(test_cycle_fixed_timeout_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
