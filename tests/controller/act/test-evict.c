/* The act stage under --pdb strict against a recording transport (act/evict.h): what goes on the
 * wire and in which order — one eviction at a time, the budget-covered victim first, the
 * nomination after the last one —, what a budget's refusal does (nothing more evicted, nothing
 * nominated, the budget counted spent, the preemptor decided again), a victim gone meanwhile,
 * leadership lost half-way; and what the answers of kube-apiserver's eviction handler say
 * (eviction.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "act.h"
#include "cycle.h"
#include "evict.h"
#include "eviction.h"
#include "journal.h"
#include "../objects.h"

#define T0 (1714557600LL * 1000000000LL)
#define MAXREQ 64

struct call {
	char method[16], path[256], body[4096];
	transport_done_fn done;
	void *userdata;
	bool answered;
};

struct fake {
	transport t;
	struct call calls[MAXREQ];
	size_t n;
};

static int fake_start(transport *t, const transport_request *rq, transport_done_fn done, void *userdata,
                      void **ret_handle)
{
	struct fake *f = (struct fake *)t;
	if (f->n == MAXREQ)
		return -ENOBUFS;
	struct call *c = &f->calls[f->n++];
	snprintf(c->method, sizeof(c->method), "%s", rq->method);
	snprintf(c->path, sizeof(c->path), "%s", rq->path);
	snprintf(c->body, sizeof(c->body), "%s", rq->body ? rq->body : "");
	c->done = done;
	c->userdata = userdata;
	*ret_handle = c;
	return 0;
}

static void fake_cancel(transport *t, void *handle)
{
	(void)t;
	(void)handle;
}

static void answer(struct fake *f, size_t i, long status, const char *body)
{
	assert_true(i < f->n);
	struct call *c = &f->calls[i];
	assert_false(c->answered);
	c->answered = true;
	transport_answer a = { .status = status, .body = body ? body : "{}", .len = body ? strlen(body) : 2,
	                       .retry_after_s = -1 };
	c->done(c->userdata, &a);
}

struct world {
	struct fake fake;
	queue *q;
	cluster *c;
	cycle *cy;
	act *a;
	decision d;
	bool closed;
};

static bool gate(void *userdata, long *ret_timeout_ms)
{
	struct world *w = userdata;
	*ret_timeout_ms = 0;
	return !w->closed;
}

#define BUDGET_REFUSAL                                                                                      \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"Cannot " \
	"evict pod as it would violate the pod's disruption budget.\",\"reason\":\"TooManyRequests\",\"details\":" \
	"{\"causes\":[{\"reason\":\"DisruptionBudget\",\"message\":\"The disruption budget web needs 2 healthy pods " \
	"and has 2 currently\"}]},\"code\":429}"

/* n1 (4 cpu): "a" (priority 5, kube's first victim, no budget) and "web-0" (priority 1, covered by
 * budget web, 1 disruption allowed); p (priority 100, 4 cpu) needs both gone. */
static void setup(struct world *w)
{
	memset(w, 0, sizeof(*w));
	journal_setup(LOGGING_STDERR, "test-evict");
	w->fake.t = (transport){ .start = fake_start, .cancel = fake_cancel };
	cluster_opts co = { .scheduler_name = "preemptd", .pdb_policy = PP_PDB_STRICT };
	act_opts ao = { .scheduler_name = "preemptd", .identity = "host_abcde", .pdb_policy = PP_PDB_STRICT };
	assert_int_equal(queue_new(NULL, T0, &w->q), 0);
	assert_int_equal(cluster_new(w->q, &co, &w->c), 0);
	assert_int_equal(cycle_new(w->q, w->c, &w->cy), 0);
	assert_int_equal(act_new(NULL, &w->fake.t, w->c, &ao, &w->a), 0);
	act_set_gate(w->a, gate, w);
	cycle_decision_init(&w->d);
	assert_int_equal(put(w->c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w->c, "a", "uid-a", 10, "other", 5, "2", "\"nodeName\":\"n1\"",
	                         "\"phase\":\"Running\",\"startTime\":\"2024-05-01T09:00:00Z\""), 0);
	assert_int_equal(put(w->c, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"default\","
	                           "\"name\":\"web-0\",\"uid\":\"uid-w\",\"resourceVersion\":\"11\",\"labels\":{\"app\":"
	                           "\"web\"}},\"spec\":{\"nodeName\":\"n1\",\"priority\":1,\"containers\":[{\"name\":\"c\","
	                           "\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},\"status\":{\"phase\":\"Running\","
	                           "\"startTime\":\"2024-05-01T09:00:00Z\"}}"), 0);
	assert_int_equal(put(w->c, "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":"
	                           "{\"namespace\":\"default\",\"name\":\"web\"},\"spec\":{\"minAvailable\":1,\"selector\":"
	                           "{\"matchLabels\":{\"app\":\"web\"}}},\"status\":{\"disruptionsAllowed\":1}}"), 0);
	assert_int_equal(put_pod(w->c, "p", "uid-p", 12, "preemptd", 100, "4", "", "\"phase\":\"Pending\""), 0);
}

static void teardown(struct world *w)
{
	cycle_decision_done(&w->d);
	act_free(w->a);
	cycle_free(w->cy);
	cluster_free(w->c);
	queue_free(w->q);
}

static void decide(struct world *w, decision_kind want)
{
	pp_err err = { "" };
	assert_int_equal(cycle_run_one(w->cy, &w->d, &err), 1);
	assert_int_equal(w->d.kind, want);
	act_decision(w->a, &w->d, T0);
}

static void expect_call(struct world *w, size_t i, const char *method, const char *path)
{
	assert_true(i < w->fake.n);
	assert_string_equal(w->fake.calls[i].method, method);
	assert_string_equal(w->fake.calls[i].path, path);
}

static bool any_nomination(struct world *w)
{
	for (size_t i = 0; i < w->fake.n; i++)
		if (strstr(w->fake.calls[i].body, "nominatedNodeName"))
			return true;
	return false;
}

static void test_one_at_a_time_budget_first(void **state)
{
	(void)state;
	struct world w;
	evict_stats st;
	setup(&w);
	decide(&w, DECISION_PREEMPT);
	/* kube's order is a, web-0; the budget-covered one goes first, and alone */
	assert_int_equal(w.fake.n, 1);
	expect_call(&w, 0, "POST", "/api/v1/namespaces/default/pods/web-0/eviction");
	assert_string_equal(w.fake.calls[0].body,
	                    "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"namespace\":\"default\","
	                    "\"name\":\"web-0\"},\"deleteOptions\":{\"preconditions\":{\"uid\":\"uid-w\"}}}");
	evict_get_stats(act_evictor(w.a), &st);
	assert_int_equal(st.in_progress, 1);
	answer(&w.fake, 0, 201, "{\"kind\":\"Status\",\"status\":\"Success\",\"code\":201}");
	/* its Preempted Event, and the next victim */
	assert_int_equal(w.fake.n, 3);
	expect_call(&w, 1, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	/* kube's words, then why this pod, as under --pdb prefer (cycle/explain.c) */
	if (!strstr(w.fake.calls[1].body, "\"note\":\"Preempted by pod uid-p on node n1 (priority "))
		fail_msg("%s", w.fake.calls[1].body);
	expect_call(&w, 2, "POST", "/api/v1/namespaces/default/pods/a/eviction");
	assert_false(any_nomination(&w));
	answer(&w.fake, 2, 201, NULL);
	/* the last one went: the preemptor's nomination and FitError, its FailedScheduling */
	assert_int_equal(w.fake.n, 6);
	expect_call(&w, 3, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	expect_call(&w, 4, "PATCH", "/api/v1/namespaces/default/pods/p/status");
	if (!strstr(w.fake.calls[4].body, "\"nominatedNodeName\":\"n1\""))
		fail_msg("%s", w.fake.calls[4].body);
	expect_call(&w, 5, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	evict_get_stats(act_evictor(w.a), &st);
	assert_int_equal(st.evicted, 2);
	assert_int_equal(st.completed, 1);
	assert_int_equal(st.in_progress, 0);
	for (size_t i = 0; i < w.fake.n; i++) /* no DELETE, no condition of ours */
		assert_true(strcmp(w.fake.calls[i].method, "DELETE") != 0 &&
		            !strstr(w.fake.calls[i].body, "PreemptionByScheduler"));
	teardown(&w);
}

static void test_refusal_withdraws(void **state)
{
	(void)state;
	struct world w;
	evict_stats st;
	cluster_counts cc;
	setup(&w);
	decide(&w, DECISION_PREEMPT);
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.assumed, 3); /* the nomination and both deletions */
	answer(&w.fake, 0, 429, BUDGET_REFUSAL);
	/* nothing more: no second eviction, no nomination */
	assert_int_equal(w.fake.n, 1);
	evict_get_stats(act_evictor(w.a), &st);
	assert_int_equal(st.refused[EVICTION_BUDGET], 1);
	assert_int_equal(st.withdrawn, 1);
	assert_int_equal(st.withdrawn_partial, 0);
	assert_int_equal(st.in_progress, 0);
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.assumed, 1); /* the nomination assumed withdrawn, until the watch agrees */
	/* the budget counted spent: the preemptor, requeued at once, has no way left */
	int32_t allowed = -1;
	assert_int_equal(cluster_pod_budget(w.c, "default", "web-0", &allowed, NULL), 1);
	assert_int_equal(allowed, 0);
	pp_err err = { "" };
	assert_int_equal(cycle_run_one(w.cy, &w.d, &err), 1);
	assert_int_equal(w.d.kind, DECISION_UNSCHEDULABLE);
	assert_non_null(strstr(w.d.message, "PodDisruptionBudget default/web"));
	teardown(&w);
}

static void test_partial_then_refusal(void **state)
{
	(void)state;
	struct world w;
	evict_stats st;
	setup(&w);
	decide(&w, DECISION_PREEMPT);
	answer(&w.fake, 0, 201, NULL);
	expect_call(&w, 2, "POST", "/api/v1/namespaces/default/pods/a/eviction");
	/* a's namespace has a {} budget the dry run does not see: the 500 of two budgets, say */
	answer(&w.fake, 2, 500, "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"This pod has more than one "
	                        "PodDisruptionBudget, which the eviction subresource does not support.\",\"code\":500}");
	assert_int_equal(w.fake.n, 3);
	assert_false(any_nomination(&w));
	evict_get_stats(act_evictor(w.a), &st);
	assert_int_equal(st.refused[EVICTION_MULTIPLE_BUDGETS], 1);
	assert_int_equal(st.withdrawn_partial, 1);
	/* a is protected now; web-0 is being evicted (its assumed deletion stays): no way left on n1 */
	assert_true(pp_cluster_pod_protected(queue_cluster(w.q), "default", "a"));
	pp_err err = { "" };
	assert_int_equal(cycle_run_one(w.cy, &w.d, &err), 1);
	assert_int_equal(w.d.kind, DECISION_UNSCHEDULABLE);
	/* a budget of a's namespace changes: the protection is lifted */
	assert_int_equal(put(w.c, "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":"
	                          "{\"namespace\":\"default\",\"name\":\"web\"},\"spec\":{\"minAvailable\":1,\"selector\":"
	                          "{\"matchLabels\":{\"app\":\"web\"}}},\"status\":{\"disruptionsAllowed\":0}}"), 0);
	assert_false(pp_cluster_pod_protected(queue_cluster(w.q), "default", "a"));
	teardown(&w);
}

/* A victim gone meanwhile (404) or replaced (409 of the uid precondition) frees its room anyway. */
static void test_gone_victim_next(void **state)
{
	(void)state;
	struct world w;
	evict_stats st;
	setup(&w);
	decide(&w, DECISION_PREEMPT);
	answer(&w.fake, 0, 409, "{\"kind\":\"Status\",\"message\":\"Operation cannot be fulfilled on Pod \\\"web-0\\\": "
	                        "the UID in the precondition (uid-w) does not match the UID in record (uid-x)\"}");
	expect_call(&w, 1, "POST", "/api/v1/namespaces/default/pods/a/eviction");
	answer(&w.fake, 1, 404, NULL);
	assert_true(any_nomination(&w));
	evict_get_stats(act_evictor(w.a), &st);
	assert_int_equal(st.evicted, 0);
	assert_int_equal(st.completed, 1);
	teardown(&w);
}

/* Leadership lost half-way: the next eviction is not sent, nothing is nominated, the model forgets. */
static void test_gate_closed_half_way(void **state)
{
	(void)state;
	struct world w;
	evict_stats st;
	cluster_counts cc;
	setup(&w);
	decide(&w, DECISION_PREEMPT);
	w.closed = true;
	answer(&w.fake, 0, 201, NULL);
	assert_int_equal(w.fake.n, 1);
	evict_get_stats(act_evictor(w.a), &st);
	assert_int_equal(st.in_progress, 0);
	assert_int_equal(st.withdrawn + st.withdrawn_partial + st.completed, 0);
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.assumed, 2); /* web-0's deletion (the API accepted it) and the withdrawn nomination */
	teardown(&w);
}

/* The preemptor deleted while its victims are evicted: the ones left are spared. */
static void test_preemptor_gone(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	decide(&w, DECISION_PREEMPT);
	cluster_delete(w.c, CLUSTER_PODS, "default", "p");
	answer(&w.fake, 0, 201, NULL);
	assert_int_equal(w.fake.n, 2); /* web-0's Event, no eviction of a */
	expect_call(&w, 1, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	teardown(&w);
}

static void test_answers(void **state)
{
	static const struct {
		long status;
		const char *body;
		eviction_refusal want;
		const char *pdb;
	} cases[] = {
		{ 429, BUDGET_REFUSAL, EVICTION_BUDGET, "web" },
		{ 429,
		  "{\"kind\":\"Status\",\"message\":\"Cannot evict pod as it would violate the pod's disruption budget.\","
		  "\"details\":{\"causes\":[{\"reason\":\"DisruptionBudget\",\"message\":\"The disruption budget db-0.x is "
		  "still being processed by the server.\"}],\"retryAfterSeconds\":10},\"code\":429}",
		  EVICTION_BUDGET_PENDING, "db-0.x" },
		/* API Priority and Fairness: load, not a refusal */
		{ 429, "{\"kind\":\"Status\",\"message\":\"Too many requests, please try again later.\",\"details\":"
		       "{\"retryAfterSeconds\":1},\"code\":429}", EVICTION_NOT_REFUSED, "" },
		{ 500, "{\"kind\":\"Status\",\"message\":\"This pod has more than one PodDisruptionBudget, which the "
		       "eviction subresource does not support.\",\"code\":500}", EVICTION_MULTIPLE_BUDGETS, "" },
		{ 500, "{\"kind\":\"Status\",\"message\":\"Internal error occurred: etcd\",\"code\":500}", EVICTION_NOT_REFUSED,
		  "" },
		{ 403, "{\"kind\":\"Status\",\"message\":\"poddisruptionbudget.policy \\\"db\\\" is forbidden: pdb "
		       "disruptions allowed is negative\",\"details\":{\"name\":\"db\",\"group\":\"policy\",\"kind\":"
		       "\"poddisruptionbudget\"},\"code\":403}", EVICTION_BUDGET_FORBIDDEN, "db" },
		{ 403, "{\"kind\":\"Status\",\"message\":\"pods \\\"a\\\" is forbidden: User cannot create resource "
		       "\\\"pods/eviction\\\"\",\"details\":{\"name\":\"a\",\"kind\":\"pods\"},\"code\":403}", EVICTION_OTHER,
		  "" },
		/* a cause that names no valid budget: refused all the same, no name */
		{ 429, "{\"details\":{\"causes\":[{\"reason\":\"DisruptionBudget\",\"message\":\"The disruption budget "
		       "BAD/NAME needs 1\"}]}}", EVICTION_BUDGET, "" },
		{ 429, "{\"details\":{\"causes\":[{\"reason\":\"DisruptionBudget\"}]}}", EVICTION_BUDGET, "" },
		{ 429, "not json", EVICTION_NOT_REFUSED, "" },
		{ 400, "", EVICTION_OTHER, "" },
		{ 503, NULL, EVICTION_NOT_REFUSED, "" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		eviction_answer a;
		eviction_answer_read(cases[i].status, cases[i].body, cases[i].body ? strlen(cases[i].body) : 0, &a);
		if (a.refusal != cases[i].want || strcmp(a.pdb, cases[i].pdb) != 0)
			fail_msg("case %zu: %s \"%s\", want %s \"%s\"", i, eviction_refusal_name(a.refusal), a.pdb,
			         eviction_refusal_name(cases[i].want), cases[i].pdb);
	}
	eviction_answer a;
	eviction_answer_read(429, BUDGET_REFUSAL, strlen(BUDGET_REFUSAL), &a);
	assert_string_equal(a.message, "Cannot evict pod as it would violate the pod's disruption budget. The disruption "
	                               "budget web needs 2 healthy pods and has 2 currently");
	assert_string_equal(eviction_refusal_name(EVICTION_BUDGET), "disruption_budget");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_at_a_time_budget_first),
		cmocka_unit_test(test_refusal_withdraws),
		cmocka_unit_test(test_partial_then_refusal),
		cmocka_unit_test(test_gone_victim_next),
		cmocka_unit_test(test_gate_closed_half_way),
		cmocka_unit_test(test_preemptor_gone),
		cmocka_unit_test(test_answers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
