/* preemptd's scheduling queue (controller/queue/queue.c) on the wall clock: pop order (priority,
 * then time), a pod that fits nowhere parked as unschedulable and moved by a node that joins into
 * backoffQ, then activeQ when its backoff ends; the options reach the library (backoff length,
 * the unschedulable flush, popping from backoffQ); the queue's clock never steps back; the wake-up
 * time is the earlier of a backoff's end and the flush; events go to the sink set now. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "queue.h"

#define S 1000000000LL
#define T0 (1714557600LL * S)
#define GI (1024LL * 1024 * 1024)

struct seen {
	char order[256]; /* "kind:name " per event */
	unsigned n;
};

static void record(const pp_sched_event *ev, void *userdata)
{
	struct seen *s = userdata;
	size_t len = strlen(s->order);
	snprintf(s->order + len, sizeof(s->order) - len, "%s:%s ", pp_sched_event_name(ev->kind), ev->name);
	s->n++;
}

static void add_node(queue *q, const char *name, int64_t cpu_m)
{
	pp_resource alloc[] = { { "cpu", cpu_m }, { "memory", 32 * GI }, { "pods", 110 } };
	pp_node_spec n = { .name = name, .allocatable = alloc, .n_allocatable = 3 };
	pp_err err = { "" };
	if (pp_sched_add_node(queue_sched(q), &n, &err) < 0)
		fail_msg("add node %s: %s", name, err.msg);
}

static void add_pending(queue *q, const char *name, int32_t prio, int64_t cpu_m)
{
	pp_resource req[] = { { "cpu", cpu_m }, { "memory", GI } };
	pp_pod_spec p = { .namespace_ = "default", .name = name, .priority = prio, .requests = req, .n_requests = 2,
		          .termination_grace_period_s = -1 };
	pp_err err = { "" };
	if (pp_sched_add_pod(queue_sched(q), &p, &err) < 0)
		fail_msg("add pod %s: %s", name, err.msg);
}

static int cycle(queue *q)
{
	pp_err err = { "" };
	int r = pp_sched_schedule_one(queue_sched(q), &err);
	if (r < 0)
		fail_msg("schedule_one: %s", err.msg);
	return r;
}

static queue_counts counts(const queue *q)
{
	queue_counts c;
	queue_get_counts(q, &c);
	return c;
}

static void advance(queue *q, int64_t to)
{
	pp_err err = { "" };
	assert_int_equal(queue_advance(q, to, &err), 0);
}

/* Higher priority first; equal priority in arrival order. */
static void test_pop_order(void **state)
{
	(void)state;
	queue *q = NULL;
	struct seen s = { "", 0 };
	assert_int_equal(queue_new(NULL, T0, &q), 0);
	queue_set_sink(q, record, &s);
	add_node(q, "n1", 64000);
	add_pending(q, "low", 0, 100);
	add_pending(q, "high", 1000, 100);
	add_pending(q, "mid-a", 50, 100);
	add_pending(q, "mid-b", 50, 100);
	assert_int_equal(counts(q).active, 4);
	assert_true(queue_has_active(q));
	while (cycle(q) == 1)
		;
	assert_string_equal(s.order, "bind:high bind:mid-a bind:mid-b bind:low ");
	assert_int_equal(counts(q).active, 0);
	assert_false(queue_has_active(q));
	assert_int_equal(queue_incoming(q, PP_SCHED_QUEUE_ACTIVE, PP_SCHED_QE_POD_ADD), 4);
	queue_free(q);
}

/* A pod that fits nowhere is parked (unschedulable); a node joining moves it to backoffQ while
 * its backoff runs, and the end of the backoff to activeQ. The queue wakes up for that end. */
static void test_unschedulable_backoff_active(void **state)
{
	(void)state;
	queue *q = NULL;
	struct seen s = { "", 0 };
	assert_int_equal(queue_new(&(queue_opts){ .initial_backoff_ns = 3 * S }, T0, &q), 0);
	queue_set_sink(q, record, &s);
	add_node(q, "small", 1000);
	add_pending(q, "big", 0, 4000);
	assert_int_equal(cycle(q), 1);
	assert_string_equal(s.order, "unschedulable:big ");
	assert_int_equal(counts(q).unschedulable, 1);
	assert_int_equal(counts(q).active, 0);
	assert_false(queue_has_active(q));

	add_node(q, "large", 8000);
	assert_int_equal(counts(q).unschedulable, 0);
	assert_int_equal(counts(q).backoff, 1);
	assert_false(queue_has_active(q));
	assert_int_equal(queue_incoming(q, PP_SCHED_QUEUE_BACKOFF, PP_SCHED_QE_NODE_ADD), 1);
	/* the option's 3 s, not the library's default 1 s */
	assert_int_equal(queue_next_due(q), T0 + 3 * S);
	advance(q, T0 + 2 * S);
	assert_int_equal(counts(q).backoff, 1);
	advance(q, T0 + 3 * S);
	assert_int_equal(counts(q).backoff, 0);
	assert_int_equal(counts(q).active, 1);
	assert_int_equal(queue_incoming(q, PP_SCHED_QUEUE_ACTIVE, PP_SCHED_QE_BACKOFF_COMPLETE), 1);
	assert_int_equal(cycle(q), 1);
	assert_string_equal(s.order, "unschedulable:big bind:big ");
	queue_free(q);
}

/* An unschedulable pod nothing helps is flushed back after max_unschedulable; with nothing else
 * due, that is when the queue wakes up. */
static void test_unschedulable_flush(void **state)
{
	(void)state;
	queue *q = NULL;
	assert_int_equal(queue_new(&(queue_opts){ .max_unschedulable_ns = 60 * S }, T0, &q), 0);
	add_node(q, "small", 1000);
	add_pending(q, "big", 0, 4000);
	assert_int_equal(cycle(q), 1);
	assert_int_equal(counts(q).unschedulable, 1);
	assert_int_equal(queue_next_due(q), T0 + 60 * S);
	advance(q, T0 + 59 * S);
	assert_int_equal(counts(q).unschedulable, 1);
	advance(q, T0 + 60 * S);
	assert_int_equal(counts(q).unschedulable, 0);
	assert_int_equal(counts(q).active, 1);
	assert_int_equal(queue_incoming(q, PP_SCHED_QUEUE_ACTIVE, PP_SCHED_QE_UNSCHEDULABLE_TIMEOUT), 1);
	queue_free(q);
}

/* With pop_from_backoff (kube 1.33+), a pod in backoffQ is poppable when activeQ is empty. */
static void test_pop_from_backoff(void **state)
{
	(void)state;
	for (int on = 0; on <= 1; on++) {
		queue *q = NULL;
		assert_int_equal(queue_new(&(queue_opts){ .pop_from_backoff = on }, T0, &q), 0);
		add_node(q, "small", 1000);
		add_pending(q, "big", 0, 4000);
		assert_int_equal(cycle(q), 1);
		add_node(q, "large", 8000);
		assert_int_equal(counts(q).backoff, 1);
		assert_int_equal(queue_has_active(q), on);
		queue_free(q);
	}
}

/* The wall clock may step back (NTP); the queue's time does not, and that is no error. */
static void test_clock_never_steps_back(void **state)
{
	(void)state;
	queue *q = NULL;
	assert_int_equal(queue_new(NULL, T0, &q), 0);
	assert_int_equal(queue_now(q), T0);
	advance(q, T0 + 5 * S);
	assert_int_equal(queue_now(q), T0 + 5 * S);
	advance(q, T0 + 1 * S);
	assert_int_equal(queue_now(q), T0 + 5 * S);
	assert_int_equal(queue_next_due(q), INT64_MAX);
	queue_free(q);
}

/* Events go to the sink set now: none after it is taken away. */
static void test_sink_changes(void **state)
{
	(void)state;
	queue *q = NULL;
	struct seen a = { "", 0 }, b = { "", 0 };
	assert_int_equal(queue_new(NULL, T0, &q), 0);
	add_node(q, "n1", 64000);
	add_pending(q, "p1", 0, 100);
	add_pending(q, "p2", 0, 100);
	add_pending(q, "p3", 0, 100);
	queue_set_sink(q, record, &a);
	assert_int_equal(cycle(q), 1);
	queue_set_sink(q, record, &b);
	assert_int_equal(cycle(q), 1);
	queue_set_sink(q, NULL, NULL);
	assert_int_equal(cycle(q), 1);
	assert_string_equal(a.order, "bind:p1 ");
	assert_string_equal(b.order, "bind:p2 ");
	assert_int_equal(pp_cluster_pod_count(queue_cluster(q)), 3);
	queue_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pop_order),
		cmocka_unit_test(test_unschedulable_backoff_active),
		cmocka_unit_test(test_unschedulable_flush),
		cmocka_unit_test(test_pop_from_backoff),
		cmocka_unit_test(test_clock_never_steps_back),
		cmocka_unit_test(test_sink_changes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
