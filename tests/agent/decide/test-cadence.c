/* SPDX-License-Identifier: MIT */
/*
 * The adaptive polling cadence: how soon the daemon reads its node signals again, given how far
 * each signal is from its thresholds and how fast it could fall (cadence.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent-test.h"
#include "cadence.h"
#include "thresholds.h"

#define Mi (1LL << 20)
#define Gi (1LL << 30)
#define MS 1000ULL

/* Every signal known and far from everything; the caller moves the ones under test. */
static void idle_node(node_signals *n)
{
	for (int s = 0; s < _SIGNAL_MAX; s++)
		n->s[s] = (signal_obs){ .known = true, .available = 1LL << 50, .capacity = 1LL << 51 };
	n->s[SIGNAL_MEMORY_SOME] = n->s[SIGNAL_MEMORY_FULL] = (signal_obs){ .known = true, .capacity = 10000 };
}

static uint64_t next(const evictd_config *c, const node_signals *n, threshold_state *st, uint64_t now)
{
	evaluation ev;
	thresholds_evaluate(c, n, st, now, &ev);
	return cadence_next_usec(c, n, &ev, now);
}

static void test_idle_node_polls_once_per_interval(void **state)
{
	evictd_config *c = config_from("[agent]\ninterval = 2s\n[eviction-hard]\npid.available = 1000\n");
	node_signals n;
	threshold_state st = { 0 };
	(void)state;

	idle_node(&n);
	assert_int_equal(next(c, &n, &st, 0), 2000 * MS);
	config_free(c);
}

static void test_wait_is_headroom_over_rate(void **state)
{
	evictd_config *c = config_from("[agent]\ndisk-max-rate = 1Gi\n[eviction-hard]\nmemory.available = 100Mi\n"
	                               "nodefs.available = 1Gi\nimagefs.available = 0%\n");
	node_signals n;
	threshold_state st = { 0 };
	(void)state;

	idle_node(&n);
	/* nodefs: 256 MiB above its threshold at 1 GiB/s -> 250 ms */
	n.s[SIGNAL_NODEFS_AVAILABLE] = (signal_obs){ .known = true, .available = Gi + 256 * Mi, .capacity = 100 * Gi };
	assert_int_equal(next(c, &n, &st, 0), 250 * MS);
	/* memory: 100 MiB + 1.5 GiB at the default 6 GiB/s -> 250 ms as well; 768 MiB -> 125 ms wins */
	n.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = true, .available = 100 * Mi + 768 * Mi, .capacity = 8 * Gi };
	assert_int_equal(next(c, &n, &st, 0), 125 * MS);
	/* closing in: never faster than the floor */
	n.s[SIGNAL_NODEFS_AVAILABLE].available = Gi + 1;
	assert_int_equal(next(c, &n, &st, 0), CADENCE_MIN_USEC);
	/* a signal that cannot be observed sets no deadline */
	n.s[SIGNAL_NODEFS_AVAILABLE] = (signal_obs){ .known = false };
	n.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = false };
	assert_int_equal(next(c, &n, &st, 0), c->interval_usec);
	config_free(c);
}

static void test_soft_threshold_counts_and_its_grace_is_a_deadline(void **state)
{
	evictd_config *c = config_from("[agent]\ninterval = 10s\npid-max-rate = 1k\n"
	                               "[eviction-hard]\npid.available = 1000\n"
	                               "[eviction-soft]\npid.available = 5000\n"
	                               "[eviction-soft-grace-period]\npid.available = 3s\n");
	node_signals n;
	threshold_state st = { 0 };
	(void)state;

	idle_node(&n);
	/* 2000 pids above the soft threshold at 1k/s: 2 s (the hard one is 6 s away) */
	n.s[SIGNAL_PID_AVAILABLE] = (signal_obs){ .known = true, .available = 7000, .capacity = 100000 };
	assert_int_equal(next(c, &n, &st, 0), 2000 * MS);
	/* soft met at t=1s: due when its grace ends (t=4s), unless the hard one is nearer */
	n.s[SIGNAL_PID_AVAILABLE].available = 4500;
	assert_int_equal(next(c, &n, &st, 1000 * MS), 3000 * MS);
	n.s[SIGNAL_PID_AVAILABLE].available = 2000; /* hard: 1 s away */
	assert_int_equal(next(c, &n, &st, 2000 * MS), 1000 * MS);
	/* grace over: actionable, polled while evictions run */
	assert_int_equal(next(c, &n, &st, 4000 * MS), CADENCE_MET_USEC);
	config_free(c);
}

static void test_psi_and_met_hard_thresholds(void **state)
{
	evictd_config *c = config_from("[eviction]\npsi-memory-some = 40%\n[eviction-hard]\nmemory.available = 0%\n"
	                               "nodefs.available = 0%\nnodefs.inodesFree = 0%\nimagefs.available = 0%\n"
	                               "imagefs.inodesFree = 0%\n");
	node_signals n;
	threshold_state st = { 0 };
	(void)state;

	idle_node(&n);
	/* PSI close to its threshold adds no deadline: avg10 moves every 2 s, triggers wake us */
	n.s[SIGNAL_MEMORY_SOME].available = 3900;
	assert_int_equal(next(c, &n, &st, 0), c->interval_usec);
	n.s[SIGNAL_MEMORY_SOME].available = 4100;
	assert_int_equal(next(c, &n, &st, 0), CADENCE_MET_USEC);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_node_polls_once_per_interval),
		cmocka_unit_test(test_wait_is_headroom_over_rate),
		cmocka_unit_test(test_soft_threshold_counts_and_its_grace_is_a_deadline),
		cmocka_unit_test(test_psi_and_met_hard_thresholds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
