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

static void test_idle_node_sleeps_past_the_interval(void **state)
{
	evictd_config *c = config_from("[agent]\ninterval = 2s\n[eviction-hard]\npid.available = 1000\n");
	node_signals n;
	threshold_state st = { 0 };
	(void)state;

	idle_node(&n);
	/* no threshold within reach at the fastest fall: the longest sleep on a rate model alone */
	assert_int_equal(next(c, &n, &st, 0), CADENCE_RATE_MAX_USEC);
	config_free(c);
	/* an interval longer than that is the cap instead */
	c = config_from("[agent]\ninterval = 1m\n[eviction-hard]\npid.available = 1000\n");
	assert_int_equal(next(c, &n, &st, 0), 60000 * MS);
	config_free(c);
}

/* What has no rate model or cannot be read now is bounded by the interval alone. */
static void test_interval_bounds_signals_without_a_rate_or_a_reading(void **state)
{
	evictd_config *c = config_from("[agent]\ninterval = 1s\n[eviction]\npsi-memory-some = 40%\n"
	                               "[eviction-hard]\nmemory.available = 0%\nnodefs.available = 1Gi\n"
	                               "nodefs.inodesFree = 0%\nimagefs.available = 0%\nimagefs.inodesFree = 0%\n");
	node_signals n;
	threshold_state st = { 0 };
	evaluation ev;
	uint64_t due[_SIGNAL_MAX];
	(void)state;

	idle_node(&n);
	thresholds_evaluate(c, &n, &st, 0, &ev);
	cadence_plan(c, &n, &ev, 0, due);
	assert_int_equal(due[SIGNAL_MEMORY_SOME], 1000 * MS);        /* PSI: no rate model */
	assert_int_equal(due[SIGNAL_NODEFS_AVAILABLE], CADENCE_RATE_MAX_USEC);
	assert_true(due[SIGNAL_MEMORY_AVAILABLE] == UINT64_MAX);    /* no threshold: never */
	/* nodefs-path not mounted yet: read every interval, it may appear */
	n.s[SIGNAL_NODEFS_AVAILABLE] = (signal_obs){ .known = false };
	thresholds_evaluate(c, &n, &st, 0, &ev);
	cadence_plan(c, &n, &ev, 0, due);
	assert_int_equal(due[SIGNAL_NODEFS_AVAILABLE], 1000 * MS);
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
	/* a signal that cannot be observed is read every interval */
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
	/* PSI close to its threshold: no rate model, read every interval like far from it */
	n.s[SIGNAL_MEMORY_SOME].available = 3900;
	assert_int_equal(next(c, &n, &st, 0), c->interval_usec);
	n.s[SIGNAL_MEMORY_SOME].available = 4100;
	assert_int_equal(next(c, &n, &st, 0), CADENCE_MET_USEC);
	config_free(c);
}

/* A 64-CPU node allocates 32 times faster than a 2-CPU one: the same headroom is polled sooner. */
static void test_rates_scale_with_online_cpus(void **state)
{
	const char *conf = "[eviction-hard]\nmemory.available = 100Mi\npid.available = 1000\nnodefs.available = 0%\n"
	                   "nodefs.inodesFree = 0%\nimagefs.available = 0%\nimagefs.inodesFree = 0%\n";
	evictd_config *two = config_from(conf), *many = config_from(conf);
	node_signals n;
	threshold_state st = { 0 };
	(void)state;

	cadence_derive_rates(two, 2);
	cadence_derive_rates(many, 64);
	assert_int_equal(two->memory_max_rate, 12 * Gi);
	assert_int_equal(many->memory_max_rate, CADENCE_MEMORY_BANDWIDTH); /* 384 GiB/s, capped */
	assert_int_equal(two->pid_max_rate, 20000);
	assert_int_equal(many->pid_max_rate, 640000);
	assert_int_equal(two->disk_max_rate, many->disk_max_rate); /* a device figure */

	idle_node(&n);
	/* 24 GiB above the memory threshold: 2 s at 12 GiB/s; 96 ms at 256 GiB/s */
	n.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = true, .available = 100 * Mi + 24 * Gi, .capacity = 64 * Gi };
	assert_int_equal(next(two, &n, &st, 0), 2000 * MS);
	assert_int_equal(next(many, &n, &st, 0), 93750);
	/* 64k tasks above the pid threshold: 3.2 s at 20k/s; 100 ms at 640k/s */
	idle_node(&n);
	n.s[SIGNAL_PID_AVAILABLE] = (signal_obs){ .known = true, .available = 1000 + 64000, .capacity = 4194304 };
	assert_int_equal(next(two, &n, &st, 0), 3200 * MS);
	assert_int_equal(next(many, &n, &st, 0), 100 * MS);
	/* no CPU count: one CPU */
	cadence_derive_rates(two, 0);
	assert_int_equal(two->memory_max_rate, 6 * Gi);
	assert_int_equal(two->online_cpus, 1);
	config_free(two);
	config_free(many);
}

static void test_explicit_rate_keys_win(void **state)
{
	evictd_config *c = config_from("[agent]\nmemory-max-rate = 1Gi\npid-max-rate = 500\n");
	(void)state;

	cadence_derive_rates(c, 64);
	assert_int_equal(c->memory_max_rate, Gi);
	assert_int_equal(c->pid_max_rate, 500);
	assert_int_equal(c->online_cpus, 64);
	config_free(c);
}

/* Injected clock: which signals a tick reads, and when each is due again. */
static void test_only_due_signals_are_read(void **state)
{
	evictd_config *c = config_from("[agent]\ninterval = 1s\ndisk-max-rate = 1Gi\nmemory-max-rate = 1Gi\n"
	                               "[eviction-hard]\nmemory.available = 1Gi\nnodefs.available = 1Gi\n"
	                               "nodefs.inodesFree = 0%\nimagefs.available = 0%\nimagefs.inodesFree = 0%\n");
	node_signals n;
	threshold_state st = { 0 };
	evaluation ev;
	cadence_state cs = { 0 };
	bool want[_SIGNAL_MAX] = { 0 }, rd[_SIGNAL_MAX];
	(void)state;

	want[SIGNAL_MEMORY_AVAILABLE] = want[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = want[SIGNAL_NODEFS_AVAILABLE] = true;
	idle_node(&n);
	n.s[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = (signal_obs){ .known = true, .available = 1LL << 50, .capacity = 1LL << 51 };
	n.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = true, .available = Gi + 5 * Gi, .capacity = 64 * Gi };
	n.s[SIGNAL_NODEFS_AVAILABLE] = (signal_obs){ .known = true, .available = Gi + 10 * Mi, .capacity = 100 * Gi };
	/* start: everything is due */
	assert_int_equal(cadence_due(&cs, want, 0, 0, false, rd), 3);
	thresholds_evaluate(c, &n, &st, 0, &ev);
	/* nodefs 10 MiB above at 1 GiB/s: ~9.8 ms -> the 10 ms floor; memory 5 GiB above: 5 s */
	assert_int_equal(cadence_update(&cs, c, &n, &ev, rd, 0), CADENCE_MIN_USEC);
	/* at 10 ms only nodefs is due: memory's headroom was measured at 0 and holds until 5 s */
	assert_int_equal(cadence_due(&cs, want, 10 * MS, 0, false, rd), 1);
	assert_true(rd[SIGNAL_NODEFS_AVAILABLE] && !rd[SIGNAL_MEMORY_AVAILABLE]);
	/* nodefs moves away (200 MiB above: ~195 ms); memory keeps its due time, not 5 s from now */
	n.s[SIGNAL_NODEFS_AVAILABLE].available = Gi + 200 * Mi;
	thresholds_evaluate(c, &n, &st, 10 * MS, &ev);
	assert_int_equal(cadence_update(&cs, c, &n, &ev, rd, 10 * MS), 195312);
	assert_int_equal(cs.due_at[SIGNAL_MEMORY_AVAILABLE], 5000 * MS);
	/* an event (PSI, reload) reads every wanted signal at once */
	assert_int_equal(cadence_due(&cs, want, 20 * MS, 0, true, rd), 3);
	/* the timer's accuracy is part of "due": a tick fired early within it still reads */
	assert_int_equal(cadence_due(&cs, want, 5000 * MS - 300 * MS, 312500, false, rd), 2);
	assert_true(rd[SIGNAL_MEMORY_AVAILABLE]);
	/* a tick that fires before anything is due still reads the earliest: it was armed for it */
	assert_int_equal(cadence_due(&cs, want, 100 * MS, 0, false, rd), 1);
	assert_true(rd[SIGNAL_NODEFS_AVAILABLE]);
	config_free(c);
}

static void test_timer_coalesces_long_sleeps_inside_the_deadline(void **state)
{
	uint64_t at, acc;
	(void)state;

	cadence_timer(10 * MS, &at, &acc);
	assert_int_equal(at, 10 * MS);
	assert_int_equal(acc, 1 * MS);
	cadence_timer(CADENCE_RATE_MAX_USEC, &at, &acc);
	assert_int_equal(acc, CADENCE_RATE_MAX_USEC / 16);
	assert_int_equal(at + acc, CADENCE_RATE_MAX_USEC); /* never after the deadline */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_node_sleeps_past_the_interval),
		cmocka_unit_test(test_interval_bounds_signals_without_a_rate_or_a_reading),
		cmocka_unit_test(test_wait_is_headroom_over_rate),
		cmocka_unit_test(test_soft_threshold_counts_and_its_grace_is_a_deadline),
		cmocka_unit_test(test_psi_and_met_hard_thresholds),
		cmocka_unit_test(test_rates_scale_with_online_cpus),
		cmocka_unit_test(test_explicit_rate_keys_win),
		cmocka_unit_test(test_only_due_signals_are_read),
		cmocka_unit_test(test_timer_coalesces_long_sleeps_inside_the_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
