/* The preemption budget's sliding minute (issue 28): cluster-wide, per pool, a preemption bigger
 * than the budget, what a restart finds. The cycle that consults it: test-cycle.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "victim-budget.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cluster_minute),
		cmocka_unit_test(test_bigger_than_budget),
		cmocka_unit_test(test_pools_independent),
		cmocka_unit_test(test_both_budgets),
		cmocka_unit_test(test_seed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
