/* SPDX-License-Identifier: MIT */
/*
 * The clock helpers (base/clock.c): each name reads the clock it says in the unit it says. A
 * helper reading the wrong clock or scaling by the wrong power of ten would stretch or shrink
 * every deadline and age the daemons compute (and a wall time in microseconds read as
 * nanoseconds would put a Kubernetes timestamp in 1970).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

static int64_t ts_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_mono_units(void **state)
{
	(void)state;
	int64_t before = ts_ns(CLOCK_MONOTONIC);
	uint64_t usec = clock_mono_usec();
	int64_t ns = clock_mono_ns();
	uint64_t id_usec = clock_usec_on(CLOCK_MONOTONIC);
	int64_t id_ns = clock_ns_on(CLOCK_MONOTONIC);
	int64_t after = ts_ns(CLOCK_MONOTONIC);

	assert_true(usec >= (uint64_t)(before / 1000) && usec <= (uint64_t)(after / 1000));
	assert_true(ns >= before && ns <= after);
	assert_true(id_usec >= usec && id_usec <= (uint64_t)(after / 1000));
	assert_true(id_ns >= ns && id_ns <= after);
}

static void test_wall_units(void **state)
{
	(void)state;
	int64_t before = ts_ns(CLOCK_REALTIME);
	uint64_t usec = clock_wall_usec();
	int64_t ns = clock_wall_ns();
	uint64_t id_usec = clock_usec_on(CLOCK_REALTIME);
	int64_t id_ns = clock_ns_on(CLOCK_REALTIME);
	int64_t after = ts_ns(CLOCK_REALTIME);

	assert_true(usec >= (uint64_t)(before / 1000) && usec <= (uint64_t)(after / 1000));
	assert_true(ns >= before && ns <= after);
	assert_true(id_usec >= usec && id_usec <= (uint64_t)(after / 1000));
	assert_true(id_ns >= ns && id_ns <= after);
	/* a wall time, not an uptime: after 2020-01-01 */
	assert_true(usec / NOW_USEC_PER_SEC > 1577836800);
	assert_true(ns / NOW_NSEC_PER_SEC > 1577836800);
}

static void test_mono_is_not_wall(void **state)
{
	(void)state;
	int64_t wall = clock_wall_ns(), mono = clock_mono_ns();

	/* the monotonic clock counts from boot, the wall clock from 1970: decades apart */
	assert_true(wall - mono > 10 * 365 * 86400 * NOW_NSEC_PER_SEC);
}

static void test_sleep_measured_in_microseconds(void **state)
{
	(void)state;
	uint64_t t0 = clock_mono_usec();
	int64_t n0 = clock_mono_ns();
	struct timespec d = { 0, 20 * 1000 * 1000 };

	nanosleep(&d, NULL);
	/* at least 20 ms, in each unit (no upper bound: a loaded machine sleeps longer) */
	assert_true(clock_mono_usec() - t0 >= 20000);
	assert_true(clock_mono_ns() - n0 >= 20000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mono_units),
		cmocka_unit_test(test_wall_units),
		cmocka_unit_test(test_mono_is_not_wall),
		cmocka_unit_test(test_sleep_measured_in_microseconds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
