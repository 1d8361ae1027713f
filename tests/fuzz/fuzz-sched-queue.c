/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the scheduling queue (lib/sched_queue.c) under arbitrary operation sequences,
 * extreme option values and times that go backwards. A model kept here tracks which pods are
 * queued and with which priority; after every operation the queue must agree with it:
 * state_of() and the stats match the model, pop returns a pod no active pod outranks, and
 * per-operation errors are exactly the documented ones.
 * Input: 3 option bytes, then 4-byte operations {op, pod, a, b}.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched_queue.h"
#include "fuzz-common.h"

/* fuzz-links: lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NPODS 24

struct model {
	bool queued[NPODS];
	bool in_flight[NPODS];
	int32_t prio[NPODS];
};

static const int64_t option_values[] = {
	0, 1, 1000, PP_SQ_NSEC_PER_SEC, 10 * PP_SQ_NSEC_PER_SEC, INT64_MAX / 2, INT64_MAX, -1, INT64_MIN,
};

static int32_t prio_of(uint8_t a, uint8_t b)
{
	static const int32_t special[] = { INT32_MIN, -1, 0, 1, 1000000000, 2000000000, 2000001000, INT32_MAX };
	return (a & 0x80) ? special[b & 7] : (int32_t)(a & 0x0f) - 4;
}

static void check(const pp_sq_queue *q, const char *pods, const struct model *m)
{
	size_t n = 0;
	pp_sq_stats st;

	for (int i = 0; i < NPODS; i++) {
		pp_sq_state s = pp__sq_state_of(q, &pods[i]);
		FUZZ_CHECK((s != PP_SQ_NONE) == m->queued[i], "pod %d: state %d, model queued %d", i, (int)s,
		           (int)m->queued[i]);
		FUZZ_CHECK((s == PP_SQ_IN_FLIGHT) == m->in_flight[i], "pod %d: state %d, model in flight %d", i,
		           (int)s, (int)m->in_flight[i]);
		n += m->queued[i];
	}
	pp__sq_get_stats(q, &st);
	FUZZ_CHECK(st.active + st.backoff + st.unschedulable + st.in_flight == n, "stats %zu+%zu+%zu+%zu != %zu",
	           st.active, st.backoff, st.unschedulable, st.in_flight, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char pods[NPODS];
	struct model m;
	pp_sq_queue *q = NULL;
	pp_sq_opts opts = { 0 };
	int64_t now = 0;

	if (size < 3)
		return 0;
	memset(&m, 0, sizeof(m));
	opts.initial_backoff = option_values[data[0] % (sizeof(option_values) / sizeof(option_values[0]))];
	opts.max_backoff = option_values[data[1] % (sizeof(option_values) / sizeof(option_values[0]))];
	opts.max_unschedulable = option_values[data[2] % (sizeof(option_values) / sizeof(option_values[0]))];
	if (pp__sq_new(&opts, &q) < 0)
		return 0;
	data += 3;
	size -= 3;
	for (; size >= 4; data += 4, size -= 4) {
		int i = data[1] % NPODS, r;
		uint8_t a = data[2], b = data[3];
		void *pod = &pods[i];
		switch (data[0] % 10) {
		case 0: /* add */
			r = pp__sq_add(q, pod, prio_of(a, b), now);
			FUZZ_CHECK(m.queued[i] ? r == -EEXIST : r == 0, "add pod %d: %d", i, r);
			if (r == 0) {
				m.queued[i] = true;
				m.prio[i] = prio_of(a, b);
			}
			break;
		case 1: /* remove */
			r = pp__sq_remove(q, pod);
			FUZZ_CHECK(m.queued[i] ? r == 0 : r == -ENOENT, "remove pod %d: %d", i, r);
			m.queued[i] = m.in_flight[i] = false;
			break;
		case 2: /* update priority */
			r = pp__sq_update_priority(q, pod, prio_of(a, b));
			FUZZ_CHECK(m.queued[i] ? r == 0 : r == -ENOENT, "update pod %d: %d", i, r);
			if (r == 0)
				m.prio[i] = prio_of(a, b);
			break;
		case 3: { /* pop: the winner is not outranked by any active pod */
			void *got = NULL;
			unsigned attempts = 0;
			int32_t best = INT32_MIN;
			bool any = false;
			pp__sq_flush(q, now);
			for (int k = 0; k < NPODS; k++)
				if (pp__sq_state_of(q, &pods[k]) == PP_SQ_ACTIVE) {
					any = true;
					if (m.prio[k] > best)
						best = m.prio[k];
				}
			r = pp__sq_pop(q, now, &got, &attempts);
			FUZZ_CHECK(any ? r == 0 : r == -EAGAIN, "pop: %d with%s active pods", r, any ? "" : "out");
			if (r == 0) {
				int k = (int)((char *)got - pods);
				FUZZ_ASSERT(k >= 0 && k < NPODS && m.queued[k] && !m.in_flight[k]);
				FUZZ_CHECK(m.prio[k] == best, "popped priority %d, best active %d", (int)m.prio[k], (int)best);
				FUZZ_ASSERT(attempts >= 1);
				m.in_flight[k] = true;
			}
			break;
		}
		case 4: /* done */
			r = pp__sq_done(q, pod);
			FUZZ_CHECK(m.in_flight[i] ? r == 0 : r < 0, "done pod %d: %d", i, r);
			if (r == 0)
				m.queued[i] = m.in_flight[i] = false;
			break;
		case 5: /* failed attempt */
			r = pp__sq_add_unschedulable(q, pod, (uint32_t)a << (b % 25), now);
			FUZZ_CHECK(m.in_flight[i] ? r == 0 : r < 0, "add_unschedulable pod %d: %d", i, r);
			if (r == 0)
				m.in_flight[i] = false;
			break;
		case 6:
			(void)pp__sq_move_on_event(q, (uint32_t)a << (b % 25), (b & 0x80) ? pod : NULL, PP_SCHED_QE_NODE_UPDATE, now);
			break;
		case 7:
			r = pp__sq_activate(q, pod, PP_SCHED_QE_FORCE_ACTIVATE, now);
			FUZZ_CHECK(m.queued[i] ? r == 0 : r == -ENOENT, "activate pod %d: %d", i, r);
			break;
		case 8: /* time passes, in steps from 1 ns to years; sometimes backwards */
			if (a & 0x80)
				now -= (int64_t)b;
			else if (now < INT64_MAX / 4)
				now += (int64_t)b << (a % 48);
			break;
		case 9:
			(void)pp__sq_next_backoff_expiry(q);
			(void)pp__sq_next_leftover_flush(q);
			(void)pp__sq_backoff_duration(q, (unsigned)a << (b % 32));
			pp__sq_flush(q, now);
			break;
		}
		check(q, pods, &m);
	}
	pp__sq_free(q);
	return 0;
}
