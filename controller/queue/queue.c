/* SPDX-License-Identifier: MIT */
#include "queue.h"

#include <errno.h>
#include <stdlib.h>

struct queue {
	pp_sched *sched;
	pp_sched_event_fn sink;
	void *sink_userdata;
};

/* pp_sched takes its callback once, at creation; the cycle that wants the events changes. */
static void forward(const pp_sched_event *ev, void *userdata)
{
	queue *q = userdata;

	if (q->sink)
		q->sink(ev, q->sink_userdata);
}

int queue_new(const queue_opts *o, int64_t now_ns, queue **ret)
{
	queue *q = calloc(1, sizeof(*q));
	pp_cluster *c = NULL;
	int r;

	if (!q)
		return -ENOMEM;
	pp_sched_options so = {
		.initial_backoff_ns = o ? o->initial_backoff_ns : 0,
		.max_backoff_ns = o ? o->max_backoff_ns : 0,
		.max_unschedulable_ns = o ? o->max_unschedulable_ns : 0,
		.external_termination = true,
	};
	r = pp_cluster_new(&c);
	if (r >= 0) {
		r = pp_sched_new(c, &so, now_ns, forward, q, &q->sched, NULL);
		if (r < 0)
			pp_cluster_free(c);
		else if (o && o->pop_from_backoff)
			pp_sched_set_pop_from_backoff(q->sched, true);
	}
	if (r < 0) {
		free(q);
		return r;
	}
	*ret = q;
	return 0;
}

queue *queue_free(queue *q)
{
	if (q) {
		pp_sched_free(q->sched);
		free(q);
	}
	return NULL;
}

pp_sched *queue_sched(queue *q)
{
	return q->sched;
}

const pp_cluster *queue_cluster(const queue *q)
{
	return pp_sched_cluster(q->sched);
}

void queue_set_sink(queue *q, pp_sched_event_fn fn, void *userdata)
{
	q->sink = fn;
	q->sink_userdata = userdata;
}

int queue_advance(queue *q, int64_t now_ns, pp_err *err)
{
	/* the wall clock may step back (NTP); the queue's time may not */
	if (now_ns < pp_sched_now(q->sched))
		now_ns = pp_sched_now(q->sched);
	return pp_sched_advance(q->sched, now_ns, err);
}

int64_t queue_now(const queue *q)
{
	return pp_sched_now(q->sched);
}

int64_t queue_next_due(const queue *q)
{
	int64_t a = pp_sched_next_wakeup(q->sched), b = pp_sched_next_flush(q->sched);
	return a < b ? a : b;
}

void queue_get_counts(const queue *q, queue_counts *ret)
{
	pp_sched_stats st;

	pp_sched_get_stats(q->sched, &st);
	*ret = (queue_counts){ st.active, st.backoff, st.unschedulable, pp_sched_postponed_count(q->sched) };
}

uint64_t queue_incoming(const queue *q, pp_sched_queue which, pp_sched_queue_event event)
{
	return pp_sched_incoming_pods(q->sched, which, event);
}

bool queue_has_active(const queue *q)
{
	return pp_sched_has_poppable(q->sched);
}
