/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved fuzz input of the libpreempt-only fuzz targets (regressions and seed
 * corpora) through the normal build, so that a fixed finding stays fixed without clang.
 */
#define LLVMFuzzerTestOneInput fuzz_quantity_one
#include "../fuzz/fuzz-quantity.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput fuzz_priority_one
#include "../fuzz/fuzz-priority.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput fuzz_sched_queue_one
#include "../fuzz/fuzz-sched-queue.c"
#undef LLVMFuzzerTestOneInput

#include "../fuzz/replay.h"

static void test_quantity(void **state)
{
	(void)state;
	replay_target("quantity", fuzz_quantity_one);
}

static void test_priority(void **state)
{
	(void)state;
	replay_target("priority", fuzz_priority_one);
}

static void test_sched_queue(void **state)
{
	(void)state;
	replay_target("sched-queue", fuzz_sched_queue_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantity),
		cmocka_unit_test(test_priority),
		cmocka_unit_test(test_sched_queue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
