/* The scheduling queue: activeQ order, backoff durations and expiry in simulated time, moves of
 * unschedulable pods on cluster events, the 5-minute leftover flush, Never pods. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sched_queue.h"

#define S PP_SQ_NSEC_PER_SEC
#define MS (S / 1000)

/* Event bits as the scheduler uses them; the queue only intersects masks. */
#define REJ_RESOURCES 0x1u
#define REJ_TAINT 0x2u

static char pods[64]; /* pod identities: &pods[i] */
#define P(i) ((void *)&pods[i])

static int idx(void *p)
{
	return (int)((char *)p - pods);
}

static pp_sq_queue *new_queue(void)
{
	pp_sq_queue *q = NULL;
	assert_int_equal(pp__sq_new(NULL, &q), 0);
	return q;
}

static int pop(pp_sq_queue *q, int64_t now)
{
	void *p = NULL;
	int r = pp__sq_pop(q, now, &p, NULL);
	if (r == -EAGAIN)
		return -1;
	assert_int_equal(r, 0);
	return idx(p);
}

static void test_priority_then_fifo(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	/* Arrival order 0..5 with priorities; equal priorities must come out in arrival order. */
	int32_t prio[] = { 0, 100, 0, 1000, 100, -5 };
	for (int i = 0; i < 6; i++)
		assert_int_equal(pp__sq_add(q, P(i), prio[i], 0), 0);
	assert_int_equal(pp__sq_add(q, P(1), 7, 0), -EEXIST);
	int want[] = { 3, 1, 4, 0, 2, 5 };
	for (int i = 0; i < 6; i++) {
		assert_int_equal(pop(q, 0), want[i]);
		assert_int_equal(pp__sq_done(q, P(want[i])), 0);
	}
	assert_int_equal(pop(q, 0), -1);
	pp__sq_free(q);
}

static void test_fifo_by_time_of_add(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	/* Same priority, added at different times: the earlier timestamp wins, not the pointer. */
	assert_int_equal(pp__sq_add(q, P(9), 5, 10 * S), 0);
	assert_int_equal(pp__sq_add(q, P(2), 5, 11 * S), 0);
	assert_int_equal(pp__sq_add(q, P(5), 5, 11 * S), 0);
	assert_int_equal(pop(q, 12 * S), 9);
	assert_int_equal(pop(q, 12 * S), 2);
	assert_int_equal(pop(q, 12 * S), 5);
	pp__sq_free(q);
}

static void test_many_pods_heap_order(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	static char many[3000];
	/* Priorities cycle through 7 values; the queue must return non-increasing priority and, within
	 * one priority, increasing arrival index — across heap growth and map growth. */
	for (int i = 0; i < 3000; i++)
		assert_int_equal(pp__sq_add(q, &many[i], (i * 5) % 7, i), 0);
	/* Remove a few from the middle to exercise heap removal and map deletion. */
	for (int i = 100; i < 3000; i += 97)
		assert_int_equal(pp__sq_remove(q, &many[i]), 0);
	int32_t last_prio = INT32_MAX;
	long last_i = -1;
	int n = 0;
	void *p;
	while (pp__sq_pop(q, 5000, &p, NULL) == 0) {
		long i = (char *)p - many;
		int32_t pr = (int32_t)((i * 5) % 7);
		assert_true(pr <= last_prio);
		if (pr == last_prio)
			assert_true(i > last_i);
		else
			last_prio = pr;
		last_i = i;
		assert_true(i < 100 || (i - 100) % 97 != 0);
		n++;
	}
	assert_int_equal(n, 3000 - 30);
	pp__sq_free(q);
}

static void test_backoff_durations(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	/* podInitialBackoffSeconds = 1, doubled per failed attempt, capped at podMaxBackoffSeconds = 10. */
	assert_int_equal(pp__sq_backoff_duration(q, 1), 1 * S);
	assert_int_equal(pp__sq_backoff_duration(q, 2), 2 * S);
	assert_int_equal(pp__sq_backoff_duration(q, 3), 4 * S);
	assert_int_equal(pp__sq_backoff_duration(q, 4), 8 * S);
	assert_int_equal(pp__sq_backoff_duration(q, 5), 10 * S);
	assert_int_equal(pp__sq_backoff_duration(q, 40), 10 * S);
	pp__sq_free(q);

	pp_sq_opts o = { .initial_backoff = 250 * MS, .max_backoff = 3 * S };
	assert_int_equal(pp__sq_new(&o, &q), 0);
	assert_int_equal(pp__sq_backoff_duration(q, 1), 250 * MS);
	assert_int_equal(pp__sq_backoff_duration(q, 4), 2 * S);
	assert_int_equal(pp__sq_backoff_duration(q, 5), 3 * S);
	pp__sq_free(q);
}

/* A pod that fails and is immediately requeued by an event waits out its backoff in backoffQ. */
static void test_backoff_expiry_with_clock(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	int64_t t = 100 * S;
	assert_int_equal(pp__sq_add(q, P(0), 0, t), 0);
	int64_t expect[] = { 1 * S, 2 * S, 4 * S, 8 * S, 10 * S, 10 * S };
	for (int attempt = 0; attempt < 6; attempt++) {
		assert_int_equal(pop(q, t), 0);
		assert_int_equal(pp__sq_add_unschedulable(q, P(0), REJ_RESOURCES, t), 0);
		assert_int_equal(pp__sq_state_of(q, P(0)), PP_SQ_UNSCHEDULABLE);
		/* A node frees resources 100 ms later: the pod moves, but only to backoffQ. */
		assert_int_equal(pp__sq_move_on_event(q, REJ_RESOURCES, NULL, PP_SCHED_QE_NODE_UPDATE, t + 100 * MS), 1);
		assert_int_equal(pp__sq_state_of(q, P(0)), PP_SQ_BACKOFF);
		assert_int_equal(pp__sq_next_backoff_expiry(q), t + expect[attempt]);
		/* One nanosecond before expiry it is not poppable; at expiry it is. */
		assert_int_equal(pop(q, t + expect[attempt] - 1), -1);
		assert_int_equal(pp__sq_state_of(q, P(0)), PP_SQ_BACKOFF);
		t += expect[attempt];
	}
	pp__sq_free(q);
}

/* SchedulerPopFromBackoffQ (kube 1.33+, activeQueue.unlockedPop → backoffQ.popBackoff): with
 * activeQ empty the pod whose backoff expires first is popped at once; a pod in activeQ still
 * goes first; a pod backing off after an error (podErrorBackoffQ) waits out its backoff. */
static void test_pop_from_backoff(void **state)
{
	(void)state;
	pp_sq_opts o = { .pop_from_backoff = true };
	pp_sq_queue *q = NULL;
	assert_int_equal(pp__sq_new(&o, &q), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(pp__sq_add(q, P(i), 0, 0), 0);
		assert_int_equal(pop(q, 0), i);
		assert_int_equal(pp__sq_add_unschedulable(q, P(i), REJ_RESOURCES, (i + 1) * 100 * MS), 0);
	}
	assert_int_equal(pp__sq_move_on_event(q, REJ_RESOURCES, NULL, PP_SCHED_QE_NODE_UPDATE, 300 * MS), 2);
	assert_true(pp__sq_poppable(q));
	/* a new pod in activeQ is popped before them */
	assert_int_equal(pp__sq_add(q, P(2), 0, 300 * MS), 0);
	assert_int_equal(pop(q, 300 * MS), 2);
	assert_int_equal(pp__sq_done(q, P(2)), 0);
	/* then the one whose backoff ends first (P0: 1.1 s), long before it ends */
	assert_int_equal(pop(q, 300 * MS), 0);
	assert_int_equal(pop(q, 300 * MS), 1);
	/* an error's backoff is waited out */
	assert_int_equal(pp__sq_add_backing_off(q, P(3), 0, 300 * MS), 0);
	assert_false(pp__sq_poppable(q));
	assert_int_equal(pop(q, 300 * MS), -1);
	assert_int_equal(pop(q, 1300 * MS), 3);
	pp__sq_free(q);

	/* off (kube before 1.33, the simulations): the backoff is waited out */
	assert_int_equal(pp__sq_new(NULL, &q), 0);
	assert_int_equal(pp__sq_add(q, P(0), 0, 0), 0);
	assert_int_equal(pop(q, 0), 0);
	assert_int_equal(pp__sq_add_unschedulable(q, P(0), REJ_RESOURCES, 0), 0);
	assert_int_equal(pp__sq_move_on_event(q, REJ_RESOURCES, NULL, PP_SCHED_QE_NODE_UPDATE, 300 * MS), 1);
	assert_false(pp__sq_poppable(q));
	assert_int_equal(pop(q, 300 * MS), -1);
	assert_int_equal(pop(q, 1 * S), 0);
	pp__sq_free(q);
}

/* An event after the backoff already expired sends the pod straight to activeQ. */
static void test_event_after_backoff_goes_active(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	assert_int_equal(pp__sq_add(q, P(1), 0, 0), 0);
	assert_int_equal(pop(q, 0), 1);
	assert_int_equal(pp__sq_add_unschedulable(q, P(1), REJ_RESOURCES, 0), 0);
	assert_int_equal(pp__sq_move_on_event(q, REJ_RESOURCES, NULL, PP_SCHED_QE_NODE_UPDATE, 5 * S), 1);
	assert_int_equal(pp__sq_state_of(q, P(1)), PP_SQ_ACTIVE);
	assert_int_equal(pop(q, 5 * S), 1);
	pp__sq_free(q);
}

static void test_move_only_matching_rejectors(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	assert_int_equal(pp__sq_add(q, P(0), 0, 0), 0);
	assert_int_equal(pp__sq_add(q, P(1), 0, 0), 0);
	assert_int_equal(pop(q, 0), 0);
	assert_int_equal(pp__sq_add_unschedulable(q, P(0), REJ_RESOURCES, 0), 0);
	assert_int_equal(pop(q, 0), 1);
	assert_int_equal(pp__sq_add_unschedulable(q, P(1), REJ_TAINT, 0), 0);
	/* A taint change does not help a pod that lacked cpu. */
	assert_int_equal(pp__sq_move_on_event(q, REJ_TAINT, NULL, PP_SCHED_QE_NODE_UPDATE, 20 * S), 1);
	assert_int_equal(pp__sq_state_of(q, P(0)), PP_SQ_UNSCHEDULABLE);
	assert_int_equal(pp__sq_state_of(q, P(1)), PP_SQ_ACTIVE);
	assert_int_equal(pp__sq_move_on_event(q, 0, NULL, PP_SCHED_QE_NODE_UPDATE, 20 * S), 0);
	pp_sq_stats st;
	pp__sq_get_stats(q, &st);
	assert_int_equal(st.active, 1);
	assert_int_equal(st.unschedulable, 1);
	assert_int_equal(st.backoff, 0);
	pp__sq_free(q);
}

/* An event during the pod's own attempt is not lost: the failure goes to backoff, not to the
 * unschedulable pool where nothing would wake it. */
static void test_event_while_in_flight(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	assert_int_equal(pp__sq_add(q, P(3), 0, 0), 0);
	assert_int_equal(pop(q, 0), 3);
	assert_int_equal(pp__sq_state_of(q, P(3)), PP_SQ_IN_FLIGHT);
	assert_int_equal(pp__sq_move_on_event(q, REJ_RESOURCES, NULL, PP_SCHED_QE_NODE_UPDATE, 0), 0);
	assert_int_equal(pp__sq_add_unschedulable(q, P(3), REJ_RESOURCES | REJ_TAINT, 0), 0);
	assert_int_equal(pp__sq_state_of(q, P(3)), PP_SQ_BACKOFF);
	assert_int_equal(pop(q, 1 * S), 3);
	/* The remembered events are per attempt: the next failure parks it. */
	assert_int_equal(pp__sq_add_unschedulable(q, P(3), REJ_RESOURCES, 1 * S), 0);
	assert_int_equal(pp__sq_state_of(q, P(3)), PP_SQ_UNSCHEDULABLE);
	pp__sq_free(q);
}

static void test_leftover_flush_after_5min(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	assert_int_equal(pp__sq_add(q, P(0), 0, 0), 0);
	assert_int_equal(pp__sq_add(q, P(1), 0, 0), 0);
	assert_int_equal(pop(q, 0), 0);
	assert_int_equal(pp__sq_add_unschedulable(q, P(0), REJ_TAINT, 0), 0);
	assert_int_equal(pop(q, 60 * S), 1);
	assert_int_equal(pp__sq_add_unschedulable(q, P(1), REJ_TAINT, 60 * S), 0);
	assert_int_equal(pp__sq_next_leftover_flush(q), 300 * S);
	assert_int_equal(pop(q, 300 * S - 1), -1);
	assert_int_equal(pop(q, 300 * S), 0);
	assert_int_equal(pp__sq_state_of(q, P(1)), PP_SQ_UNSCHEDULABLE);
	assert_int_equal(pp__sq_next_leftover_flush(q), 360 * S);
	assert_int_equal(pop(q, 360 * S), 1);
	pp__sq_free(q);
}

/* Requeued pods get a new timestamp, so a pod that failed waits behind pods that arrived while it
 * was being tried, within its priority; higher priority still goes first. */
static void test_requeued_pod_goes_behind_equal_priority(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	assert_int_equal(pp__sq_add(q, P(0), 10, 0), 0);
	assert_int_equal(pop(q, 0), 0);
	assert_int_equal(pp__sq_add(q, P(1), 10, 1 * S), 0);
	assert_int_equal(pp__sq_add(q, P(2), 5, 1 * S), 0);
	assert_int_equal(pp__sq_add_unschedulable(q, P(0), REJ_RESOURCES, 2 * S), 0);
	assert_int_equal(pp__sq_activate(q, P(0), PP_SCHED_QE_FORCE_ACTIVATE, 2 * S), 0);
	assert_int_equal(pop(q, 2 * S), 1);
	assert_int_equal(pop(q, 2 * S), 0);
	assert_int_equal(pop(q, 2 * S), 2);
	pp__sq_free(q);
}

/* preemptionPolicy: Never changes nothing in the queue: a Never pod of priority 100 goes before a
 * preempting pod of priority 50 and backs off like any pod. (The cycle never preempts for it.) */
static void test_never_pods_ordered_and_backed_off(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	assert_int_equal(pp__sq_add(q, P(0), 50, 0), 0);  /* PreemptLowerPriority */
	assert_int_equal(pp__sq_add(q, P(1), 100, 0), 0); /* Never */
	assert_int_equal(pop(q, 0), 1);
	assert_int_equal(pp__sq_add_unschedulable(q, P(1), REJ_RESOURCES, 0), 0);
	assert_int_equal(pp__sq_move_on_event(q, REJ_RESOURCES, NULL, PP_SCHED_QE_NODE_UPDATE, 0), 1);
	assert_int_equal(pop(q, 0), 0); /* the Never pod is backing off */
	assert_int_equal(pop(q, 999 * MS), -1);
	assert_int_equal(pop(q, 1 * S), 1);
	pp__sq_free(q);
}

static void test_remove_and_errors(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	assert_int_equal(pp__sq_remove(q, P(0)), -ENOENT);
	assert_int_equal(pp__sq_add(q, NULL, 0, 0), -EINVAL);
	assert_int_equal(pp__sq_add(q, P(0), 0, 0), 0);
	assert_int_equal(pp__sq_done(q, P(0)), -EINVAL); /* not in flight */
	assert_int_equal(pp__sq_add_unschedulable(q, P(0), 1, 0), -EINVAL);
	assert_int_equal(pop(q, 0), 0);
	assert_int_equal(pp__sq_remove(q, P(0)), 0); /* deleted while in flight */
	assert_int_equal(pp__sq_state_of(q, P(0)), PP_SQ_NONE);
	assert_int_equal(pp__sq_add_unschedulable(q, P(0), 1, 0), -ENOENT);
	pp_sq_stats st;
	pp__sq_get_stats(q, &st);
	assert_int_equal(st.in_flight, 0);
	assert_null(pp__sq_free(NULL));
	pp__sq_free(q);
}

static void test_update_priority_resorts(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	for (int i = 0; i < 4; i++)
		assert_int_equal(pp__sq_add(q, P(i), 1, 0), 0);
	assert_int_equal(pp__sq_update_priority(q, P(3), 9), 0);
	assert_int_equal(pop(q, 0), 3);
	assert_int_equal(pop(q, 0), 0);
	pp__sq_free(q);
}

/* Time never goes backwards: a stale `now` does not shorten a backoff. */
static void test_clock_not_backwards(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
	assert_int_equal(pp__sq_add(q, P(0), 0, 10 * S), 0);
	assert_int_equal(pop(q, 10 * S), 0);
	assert_int_equal(pp__sq_add_unschedulable(q, P(0), 1, 3 * S), 0);
	assert_int_equal(pp__sq_move_on_event(q, 1, NULL, PP_SCHED_QE_NODE_UPDATE, 3 * S), 1);
	assert_int_equal(pp__sq_next_backoff_expiry(q), 11 * S);
	pp__sq_free(q);
}

/* scheduler_queue_incoming_pods_total: each entry into a queue is counted once, under the queue it
 * entered and the event that moved it, with kube-scheduler's labels. */
static void test_incoming_pods_by_queue_and_event(void **state)
{
	(void)state;
	pp_sq_queue *q = new_queue();
#define IN(queue, ev) pp__sq_incoming(q, PP_SCHED_QUEUE_##queue, PP_SCHED_QE_##ev)
	assert_int_equal(pp__sq_add(q, P(0), 0, 0), 0);
	assert_int_equal(pp__sq_add(q, P(1), 0, 0), 0);
	assert_int_equal(IN(ACTIVE, POD_ADD), 2);
	assert_int_equal(pop(q, 0), 0);
	assert_int_equal(pp__sq_add_unschedulable(q, P(0), REJ_RESOURCES, 0), 0);
	assert_int_equal(IN(UNSCHEDULABLE, SCHEDULE_ATTEMPT_FAILURE), 1);
	/* an event while it backs off (1 s): backoffQ, then activeQ once the backoff is over */
	assert_int_equal(pp__sq_move_on_event(q, REJ_RESOURCES, NULL, PP_SCHED_QE_NODE_ADD, 500 * MS), 1);
	assert_int_equal(IN(BACKOFF, NODE_ADD), 1);
	assert_int_equal(IN(ACTIVE, NODE_ADD), 0);
	pp__sq_flush(q, 1 * S);
	assert_int_equal(IN(ACTIVE, BACKOFF_COMPLETE), 1);
	/* a binding refused: straight to backoffQ, not a PodAdd */
	assert_int_equal(pp__sq_add_backing_off(q, P(2), 0, 1 * S), 0);
	assert_int_equal(IN(BACKOFF, SCHEDULE_ATTEMPT_FAILURE), 1);
	assert_int_equal(IN(ACTIVE, POD_ADD), 2);
	assert_int_equal(pp__sq_activate(q, P(2), PP_SCHED_QE_FORCE_ACTIVATE, 1 * S), 0);
	assert_int_equal(IN(ACTIVE, FORCE_ACTIVATE), 1);
	/* a re-sort is no entry */
	assert_int_equal(pp__sq_update_priority(q, P(1), 5), 0);
	/* the leftover flush after 5 minutes in unschedulablePods */
	assert_int_equal(pop(q, 1 * S), 1);
	assert_int_equal(pp__sq_add_unschedulable(q, P(1), REJ_TAINT, 1 * S), 0);
	pp__sq_flush(q, 1 * S + PP_SQ_DEFAULT_MAX_UNSCHEDULABLE);
	assert_int_equal(IN(ACTIVE, UNSCHEDULABLE_TIMEOUT), 1);
	uint64_t total = 0;
	for (int qi = 0; qi < PP_SCHED_QUEUE_COUNT; qi++)
		for (int e = 0; e < PP_SCHED_QE_COUNT; e++)
			total += pp__sq_incoming(q, (pp_sched_queue)qi, (pp_sched_queue_event)e);
	assert_int_equal(total, 9);
	assert_int_equal(pp__sq_incoming(q, PP_SCHED_QUEUE_COUNT, PP_SCHED_QE_POD_ADD), 0);
	assert_string_equal(pp_sched_queue_name(PP_SCHED_QUEUE_UNSCHEDULABLE), "unschedulable");
	assert_string_equal(pp_sched_queue_event_name(PP_SCHED_QE_SCHEDULE_ATTEMPT_FAILURE), "ScheduleAttemptFailure");
	assert_null(pp_sched_queue_event_name(PP_SCHED_QE_COUNT));
#undef IN
	pp__sq_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_priority_then_fifo),
		cmocka_unit_test(test_fifo_by_time_of_add),
		cmocka_unit_test(test_many_pods_heap_order),
		cmocka_unit_test(test_backoff_durations),
		cmocka_unit_test(test_backoff_expiry_with_clock),
		cmocka_unit_test(test_pop_from_backoff),
		cmocka_unit_test(test_event_after_backoff_goes_active),
		cmocka_unit_test(test_move_only_matching_rejectors),
		cmocka_unit_test(test_event_while_in_flight),
		cmocka_unit_test(test_leftover_flush_after_5min),
		cmocka_unit_test(test_requeued_pod_goes_behind_equal_priority),
		cmocka_unit_test(test_never_pods_ordered_and_backed_off),
		cmocka_unit_test(test_remove_and_errors),
		cmocka_unit_test(test_update_priority_resorts),
		cmocka_unit_test(test_clock_not_backwards),
		cmocka_unit_test(test_incoming_pods_by_queue_and_event),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
