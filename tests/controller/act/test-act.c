/* The act stage against a recording transport: what goes on the wire for a binding, a preemption
 * and an unschedulable pod (paths, verbs, bodies with their uid guards, Events), what a 409, a
 * 404, a 5xx with Retry-After and a closed gate do, and writes made obsolete by the watch. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "act.h"
#include "cycle.h"
#include "journal.h"
#include "../live-model.h"
#include "../objects.h"

#define MAXREQ 64

struct call {
	char method[16], path[256], body[4096];
	transport_done_fn done;
	void *userdata;
	bool answered, cancelled;
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
	((struct call *)handle)->cancelled = true;
}

/* Answers call i. */
static void answer(struct fake *f, size_t i, long status, const char *body, long retry_after)
{
	assert_true(i < f->n);
	struct call *c = &f->calls[i];
	assert_false(c->answered);
	c->answered = true;
	transport_answer a = { .status = status, .body = body ? body : "{}", .len = body ? strlen(body) : 2,
	                       .retry_after_s = retry_after };
	c->done(c->userdata, &a);
}

struct world {
	struct fake fake;
	queue *q;
	cluster *c;
	cycle *cy;
	act *a;
	decision d;
	sd_event *e;
	bool closed; /* the gate */
};

static bool gate(void *userdata, long *ret_timeout_ms)
{
	struct world *w = userdata;
	*ret_timeout_ms = 0;
	return !w->closed;
}

/* o: the act's options but its names (NULL: the defaults) */
static void setup_with(struct world *w, bool with_loop, const act_opts *o)
{
	memset(w, 0, sizeof(*w));
	journal_setup(LOGGING_STDERR, "test-act");
	w->fake.t = (transport){ .start = fake_start, .cancel = fake_cancel };
	act_opts ao = o ? *o : (act_opts){ 0 };
	ao.scheduler_name = "preemptd";
	ao.identity = "host_abcde";
	if (with_loop)
		assert_int_equal(sd_event_new(&w->e), 0);
	live_model_new(&w->q, &w->c);
	assert_int_equal(cycle_new(w->q, w->c, &w->cy), 0);
	assert_int_equal(act_new(w->e, &w->fake.t, w->c, &ao, &w->a), 0);
	act_set_gate(w->a, gate, w);
	cycle_decision_init(&w->d);
}

static void setup(struct world *w, bool with_loop)
{
	setup_with(w, with_loop, NULL);
}

static void teardown(struct world *w)
{
	cycle_decision_done(&w->d);
	act_free(w->a);
	cycle_free(w->cy);
	live_model_free(w->q, w->c);
	sd_event_unref(w->e);
}

static void decide(struct world *w, decision_kind want)
{
	pp_err err = { "" };
	assert_int_equal(cycle_run_one(w->cy, &w->d, &err), 1);
	assert_int_equal(w->d.kind, want);
	act_decision(w->a, &w->d, T0);
}

static void decide_at(struct world *w, decision_kind want, int64_t now)
{
	pp_err err = { "" };
	assert_int_equal(cycle_run_one(w->cy, &w->d, &err), 1);
	assert_int_equal(w->d.kind, want);
	act_decision(w->a, &w->d, now);
}

static void expect_call(struct world *w, size_t i, const char *method, const char *path)
{
	assert_true(i < w->fake.n);
	assert_string_equal(w->fake.calls[i].method, method);
	assert_string_equal(w->fake.calls[i].path, path);
}

static void expect_in_body(struct world *w, size_t i, const char *text)
{
	if (!strstr(w->fake.calls[i].body, text))
		fail_msg("call %zu body lacks %s:\n%s", i, text, w->fake.calls[i].body);
}

static void test_bind_on_the_wire(void **state)
{
	(void)state;
	struct world w;
	setup(&w, false);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	decide(&w, DECISION_BIND);
	assert_int_equal(w.fake.n, 1);
	expect_call(&w, 0, "POST", "/api/v1/namespaces/default/pods/p/binding");
	assert_string_equal(w.fake.calls[0].body,
	                    "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"namespace\":\"default\","
	                    "\"name\":\"p\",\"uid\":\"uid-p\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
	                    "\"name\":\"n1\"}}");
	answer(&w.fake, 0, 201, "{\"kind\":\"Status\",\"status\":\"Success\",\"code\":201}", -1);
	/* then the Event, never before the binding is accepted */
	assert_int_equal(w.fake.n, 2);
	expect_call(&w, 1, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	expect_in_body(&w, 1, "\"reportingController\":\"preemptd\",\"reportingInstance\":\"host_abcde\","
	                      "\"action\":\"Binding\",\"reason\":\"Scheduled\",\"type\":\"Normal\","
	                      "\"note\":\"Successfully assigned default/p to n1\"");
	expect_in_body(&w, 1, "\"regarding\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"namespace\":\"default\","
	                      "\"name\":\"p\",\"uid\":\"uid-p\"}");
	expect_in_body(&w, 1, "\"eventTime\":\"2024-05-01T10:00:00.000000Z\"");
	answer(&w.fake, 1, 201, NULL, -1);
	act_stats st;
	act_get_stats(w.a, &st);
	assert_int_equal(st.bound, 1);
	teardown(&w);
}

/* 409: someone else decided. No second binding; the pod waits for news. The refusal is a Warning
 * FailedScheduling Event in the API server's words (kube's handleSchedulingFailure after a failed
 * binding cycle), not a Scheduled one. */
static void test_bind_conflict(void **state)
{
	(void)state;
	struct world w;
	cluster_counts cc;
	setup(&w, false);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	decide(&w, DECISION_BIND);
	answer(&w.fake, 0, 409, "{\"kind\":\"Status\",\"message\":\"pod p is already assigned to node n2\"}", -1);
	assert_int_equal(w.fake.n, 2);
	expect_call(&w, 1, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	expect_in_body(&w, 1, "\"reason\":\"FailedScheduling\",\"type\":\"Warning\"");
	expect_in_body(&w, 1, "\"note\":\"pod p is already assigned to node n2\"");
	act_stats st;
	act_get_stats(w.a, &st);
	assert_int_equal(st.bind_conflicts, 1);
	assert_int_equal(st.bind_failures, 1);
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.held, 1);
	pp_err err = { "" };
	assert_int_equal(cycle_run_one(w.cy, &w.d, &err), 0);
	teardown(&w);
}

/* A 503 with Retry-After is sent again after it, not before; the pod deleted meanwhile drops the
 * write instead. */
static void test_retry_after_and_obsolete(void **state)
{
	(void)state;
	struct world w;
	struct timespec t0, t1;
	setup(&w, true);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	decide(&w, DECISION_BIND);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	answer(&w.fake, 0, 503, "{\"kind\":\"Status\",\"message\":\"etcd leader changed\"}", 1);
	while (w.fake.n < 2)
		assert_true(sd_event_run(w.e, 3000000) >= 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >= 950);
	expect_call(&w, 1, "POST", "/api/v1/namespaces/default/pods/p/binding");
	/* the pod is deleted while the retry waits: the next retry is not sent */
	answer(&w.fake, 1, 500, NULL, -1);
	cluster_delete(w.c, CLUSTER_PODS, "default", "p");
	for (int i = 0; i < 40; i++)
		(void)sd_event_run(w.e, 100000);
	assert_int_equal(w.fake.n, 2);
	writer_stats ws;
	writer_get_stats(act_writer(w.a), &ws);
	assert_int_equal(ws.obsolete, 1);
	assert_int_equal(ws.retries, 2);
	teardown(&w);
}

static void test_preemption_on_the_wire(void **state)
{
	(void)state;
	struct world w;
	setup(&w, false);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v", "uid-v", 10, "other", 0, "4", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 100, "3", "", PENDING), 0);
	decide(&w, DECISION_PREEMPT);
	/* the victim's chain starts with its condition; the preemptor's status and Event go beside it */
	assert_int_equal(w.fake.n, 3);
	expect_call(&w, 0, "PATCH", "/api/v1/namespaces/default/pods/v/status");
	expect_in_body(&w, 0, "{\"metadata\":{\"uid\":\"uid-v\"},\"status\":{\"conditions\":[{\"type\":"
	                      "\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"PreemptionByScheduler\",\"message\":"
	                      "\"preemptd: preempting to accommodate a higher priority pod\"");
	expect_call(&w, 1, "PATCH", "/api/v1/namespaces/default/pods/p/status");
	expect_in_body(&w, 1, "\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\","
	                      "\"message\":\"0/1 nodes are available: 1 Insufficient cpu.\"");
	expect_in_body(&w, 1, "\"nominatedNodeName\":\"n1\"");
	expect_call(&w, 2, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	expect_in_body(&w, 2, "\"reason\":\"FailedScheduling\",\"type\":\"Warning\"");
	/* kube's FitError first, then what decided (cycle/explain.c) */
	expect_in_body(&w, 2, "\"note\":\"0/1 nodes are available: 1 Insufficient cpu. Preempting on node n1, picked by "
	                      "the only node where preemption helps. Victims: default/v (priority 0 < 100; no "
	                      "PodDisruptionBudget).\"");
	answer(&w.fake, 0, 200, "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"12\"}}", -1);
	expect_call(&w, 3, "DELETE", "/api/v1/namespaces/default/pods/v");
	assert_string_equal(w.fake.calls[3].body,
	                    "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":{\"uid\":\"uid-v\"}}");
	answer(&w.fake, 3, 200, NULL, -1);
	expect_call(&w, 4, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	expect_in_body(&w, 4, "\"action\":\"Preempting\",\"reason\":\"Preempted\",\"type\":\"Normal\","
	                      "\"note\":\"Preempted by pod uid-p on node n1 (priority 0 < 100; no PodDisruptionBudget)\"");
	expect_in_body(&w, 4, "\"related\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"namespace\":\"default\","
	                      "\"name\":\"p\",\"uid\":\"uid-p\"}");
	teardown(&w);
}

/* A lower-priority pod nominated to the node the preemptor takes, that no longer fits beside it,
 * loses its nomination on the wire: {"status":{"nominatedNodeName":null}}, uid-guarded. */
static void test_weaker_nomination_cleared(void **state)
{
	(void)state;
	struct world w;
	setup(&w, false);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v", "uid-v", 10, "other", 0, "3", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "l", "uid-l", 11, "preemptd", 50, "2", "", PENDING ",\"nominatedNodeName\":\"n1\""), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "3", "", PENDING), 0);
	decide(&w, DECISION_PREEMPT);
	assert_string_equal(w.d.pod.name, "p");
	assert_int_equal(w.d.n_cleared, 1);
	assert_string_equal(w.d.cleared[0].name, "l");
	bool found = false;
	for (size_t i = 0; i < w.fake.n; i++)
		if (!strcmp(w.fake.calls[i].path, "/api/v1/namespaces/default/pods/l/status")) {
			assert_string_equal(w.fake.calls[i].method, "PATCH");
			assert_string_equal(w.fake.calls[i].body,
			                    "{\"metadata\":{\"uid\":\"uid-l\"},\"status\":{\"nominatedNodeName\":null}}");
			found = true;
		}
	assert_true(found);
	teardown(&w);
}

/* The Event names of the pod's Events (metadata.name "POD.<time>"), in the order they were sent. */
static size_t event_names(struct world *w, const char *pod, char names[][64], size_t max)
{
	char prefix[80];
	size_t n = 0;

	snprintf(prefix, sizeof(prefix), "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"%s.", pod);
	for (size_t i = 0; i < w->fake.n && n < max; i++)
		if (!strncmp(w->fake.calls[i].body, prefix, strlen(prefix)))
			sscanf(w->fake.calls[i].body + strlen(prefix) - strlen(pod) - 1, "%63[^\"]", names[n++]);
	return n;
}

/* A pod whose nomination is cleared and that then fails in the same turn (one time for both) gets
 * two Events under two names: the second is not refused as a duplicate (409). */
static void test_two_events_one_turn(void **state)
{
	(void)state;
	struct world w;
	char names[4][64];
	setup(&w, false);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v", "uid-v", 10, "other", 0, "3", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "l", "uid-l", 11, "preemptd", 50, "2", "", PENDING ",\"nominatedNodeName\":\"n1\""), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "3", "", PENDING), 0);
	decide(&w, DECISION_PREEMPT);
	for (size_t i = 0; i < w.fake.n; i++)
		if (!strcmp(w.fake.calls[i].path, "/api/v1/namespaces/default/pods/l/status"))
			answer(&w.fake, i, 200, "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"13\"}}", -1);
	assert_int_equal(event_names(&w, "l", names, 4), 1);
	decide(&w, DECISION_UNSCHEDULABLE);
	assert_string_equal(w.d.pod.name, "l");
	for (size_t i = 0; i < w.fake.n; i++)
		if (!w.fake.calls[i].answered && !strcmp(w.fake.calls[i].path, "/api/v1/namespaces/default/pods/l/status"))
			answer(&w.fake, i, 200, "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"14\"}}", -1);
	assert_int_equal(event_names(&w, "l", names, 4), 2);
	assert_string_not_equal(names[0], names[1]);
	teardown(&w);
}

/* The same FitError again: no second status patch, no second Event, but the first Event's series
 * (client-go's recordToSink: count 2, a patch of the series only). A new one: both. */
static void test_unschedulable_not_repeated(void **state)
{
	(void)state;
	struct world w;
	setup(&w, false);
	assert_int_equal(put(w.c, NODE_JSON("n1", "1")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "2", "", PENDING), 0);
	decide(&w, DECISION_UNSCHEDULABLE);
	assert_int_equal(w.fake.n, 2);
	expect_in_body(&w, 0, "\"lastTransitionTime\":\"2024-05-01T10:00:00Z\"");
	answer(&w.fake, 0, 200, NULL, -1);
	answer(&w.fake, 1, 201, NULL, -1);
	/* a node update with nothing new for it wakes it: same message */

	pp_err err = { "" };
	assert_int_equal(queue_advance(w.q, T0 + 400 * S, &err), 0);
	decide(&w, DECISION_UNSCHEDULABLE);
	assert_int_equal(w.fake.n, 3);
	assert_string_equal(w.fake.calls[2].method, "PATCH");
	assert_non_null(strstr(w.fake.calls[2].path, "/apis/events.k8s.io/v1/namespaces/default/events/p."));
	expect_in_body(&w, 2, "{\"series\":{\"count\":2,\"lastObservedTime\":\"");
	answer(&w.fake, 2, 200, NULL, -1);
	/* a node too small for it does not wake it (kube's QueueingHints); the unschedulable
	 * timeout (5 min) does, and the message has changed */
	assert_int_equal(put(w.c, NODE_JSON("n2", "1")), 0);
	assert_int_equal(queue_advance(w.q, T0 + 720 * S, &err), 0);
	decide(&w, DECISION_UNSCHEDULABLE);
	assert_int_equal(w.fake.n, 5);
	expect_in_body(&w, 3, "0/2 nodes are available: 2 Insufficient cpu.");
	/* the condition was False already: its transition time is left alone */
	assert_null(strstr(w.fake.calls[3].body, "lastTransitionTime"));
	teardown(&w);
}

/* The pods whose last FailedScheduling is remembered are bounded (client-go's events cache:
 * 4096; 2 here): under churn the least recent are forgotten, and their next FailedScheduling is a
 * new Event rather than a series patch; preemptd's memory stays flat however many pods fail. */
static void test_event_memos_bounded(void **state)
{
	(void)state;
	struct world w;
	setup_with(&w, false, &(act_opts){ .event_memo_max = 2 });
	assert_int_equal(put(w.c, NODE_JSON("n1", "1")), 0);
	assert_int_equal(put_pod(w.c, "a", "uid-a", 10, "preemptd", 0, "2", "", PENDING), 0);
	assert_int_equal(put_pod(w.c, "b", "uid-b", 11, "preemptd", 0, "2", "", PENDING), 0);
	assert_int_equal(put_pod(w.c, "c", "uid-c", 12, "preemptd", 0, "2", "", PENDING), 0);
	for (int i = 0; i < 3; i++)
		decide_at(&w, DECISION_UNSCHEDULABLE, T0 + (i + 1) * S);
	assert_int_equal(w.fake.n, 6); /* each: its status patch and its Event */
	for (size_t i = 0; i < 6; i++)
		answer(&w.fake, i, i % 2 ? 201 : 200, NULL, -1);
	assert_string_equal(w.fake.calls[1].method, "POST");

	/* a, the least recent, was forgotten when c's came: its repeat is a new Event */
	pp_err err = { "" };
	assert_int_equal(queue_advance(w.q, T0 + 400 * S, &err), 0);
	decide_at(&w, DECISION_UNSCHEDULABLE, T0 + 400 * S);
	assert_int_equal(w.fake.n, 7);
	assert_string_equal(w.fake.calls[6].method, "POST");
	assert_string_equal(w.fake.calls[6].path, "/apis/events.k8s.io/v1/namespaces/default/events");
	expect_in_body(&w, 6, "\"reason\":\"FailedScheduling\"");
	teardown(&w);
}

/* An API server slower than the decisions: the bindings, status patches and deletions wait for
 * their turn, however many; past the bound of unfinished writes (4 here, the one in flight
 * included), an Event is dropped instead (client-go's broadcaster queue), counted, so that a slow
 * server costs Events and not memory without end. */
static void test_events_dropped_when_writes_pile_up(void **state)
{
	(void)state;
	struct world w;
	setup_with(&w, false, &(act_opts){ .writer = { .max_in_flight = 1, .max_waiting_events = 4 } });
	assert_int_equal(put(w.c, NODE_JSON("n1", "1")), 0);
	const char *pods[] = { "a", "b", "c", "d" };
	for (int i = 0; i < 4; i++) {
		char uid[16];
		snprintf(uid, sizeof(uid), "uid-%s", pods[i]);
		assert_int_equal(put_pod(w.c, pods[i], uid, 10 + i, "preemptd", 0, "2", "", PENDING), 0);
	}
	/* each: a status patch and an Event; one in flight, the rest waiting */
	for (int i = 0; i < 4; i++)
		decide(&w, DECISION_UNSCHEDULABLE);
	assert_int_equal(w.fake.n, 1);
	writer_stats ws;
	writer_get_stats(act_writer(w.a), &ws);
	assert_int_equal(ws.queue_full, 2); /* c's and d's Events */
	assert_int_equal(ws.waiting, 5);    /* a's Event, b's patch and Event, c's and d's patches */
	for (size_t i = 0; i < w.fake.n; i++)
		answer(&w.fake, i, w.fake.calls[i].method[0] == 'P' && w.fake.calls[i].method[1] == 'O' ? 201 : 200, NULL, -1);
	assert_int_equal(w.fake.n, 6);
	size_t patches = 0, events = 0;
	for (size_t i = 0; i < w.fake.n; i++) {
		patches += !strcmp(w.fake.calls[i].method, "PATCH");
		events += !strcmp(w.fake.calls[i].path, "/apis/events.k8s.io/v1/namespaces/default/events");
	}
	assert_int_equal(patches, 4); /* every pod's condition written */
	assert_int_equal(events, 2);
	teardown(&w);
}

/* The series' Event is gone (an Event lives an hour on the API server): the patch gets 404, and
 * the next repeat is a new Event, as client-go's recordEvent creates one then. */
static void test_series_event_gone(void **state)
{
	(void)state;
	struct world w;
	pp_err err = { "" };
	setup(&w, false);
	assert_int_equal(put(w.c, NODE_JSON("n1", "1")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "2", "", PENDING), 0);
	decide(&w, DECISION_UNSCHEDULABLE);
	answer(&w.fake, 0, 200, NULL, -1);
	answer(&w.fake, 1, 201, NULL, -1);
	assert_int_equal(queue_advance(w.q, T0 + 400 * S, &err), 0);
	decide(&w, DECISION_UNSCHEDULABLE);
	assert_int_equal(w.fake.n, 3);
	assert_string_equal(w.fake.calls[2].method, "PATCH");
	answer(&w.fake, 2, 404, "{\"kind\":\"Status\",\"reason\":\"NotFound\"}", -1);
	assert_int_equal(queue_advance(w.q, T0 + 800 * S, &err), 0);
	decide(&w, DECISION_UNSCHEDULABLE);
	assert_int_equal(w.fake.n, 4);
	expect_call(&w, 3, "POST", "/apis/events.k8s.io/v1/namespaces/default/events");
	expect_in_body(&w, 3, "\"reason\":\"FailedScheduling\"");
	teardown(&w);
}

/* Not the leader: nothing goes out, and the assumed binding is dropped (the pod is queued again,
 * backing off). */
static void test_closed_gate(void **state)
{
	(void)state;
	struct world w;
	queue_counts qc;
	setup(&w, false);
	w.closed = true;
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	decide(&w, DECISION_BIND);
	assert_int_equal(w.fake.n, 0);
	queue_get_counts(w.q, &qc);
	assert_int_equal(qc.backoff, 1);
	teardown(&w);
}

/* A body that could not be built (too big, out of memory) ends the chain: no empty request goes
 * out in its place. */
static void test_step_without_body(void **state)
{
	(void)state;
	write_chain *ch = write_chain_new("default", "web-0", "uid-w");
	assert_non_null(ch);
	errno = E2BIG;
	assert_int_equal(write_chain_add(ch, CLUSTER_WRITE_STATUS, "PATCH", strdup("/api/v1/namespaces/default/pods/web-0/status"),
	                                 "application/strategic-merge-patch+json", NULL),
	                 -E2BIG);
	errno = ENOMEM;
	assert_int_equal(write_chain_add(ch, CLUSTER_WRITE_DELETE, "DELETE", strdup("/api/v1/namespaces/default/pods/web-0"),
	                                 "application/json", NULL),
	                 -ENOMEM);
	write_chain_free(ch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_on_the_wire),
		cmocka_unit_test(test_bind_conflict),
		cmocka_unit_test(test_retry_after_and_obsolete),
		cmocka_unit_test(test_preemption_on_the_wire),
		cmocka_unit_test(test_weaker_nomination_cleared),
		cmocka_unit_test(test_two_events_one_turn),
		cmocka_unit_test(test_unschedulable_not_repeated),
		cmocka_unit_test(test_series_event_gone),
		cmocka_unit_test(test_event_memos_bounded),
		cmocka_unit_test(test_events_dropped_when_writes_pile_up),
		cmocka_unit_test(test_closed_gate),
		cmocka_unit_test(test_step_without_body),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
