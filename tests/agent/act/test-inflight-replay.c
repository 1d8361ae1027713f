/* SPDX-License-Identifier: MIT */
/*
 * Replays the saved inputs of the victim-record fuzz target (tests/fuzz/fuzz-inflight.c) through
 * the normal build, so that a fixed finding stays fixed without clang.
 */
#define LLVMFuzzerTestOneInput fuzz_inflight_one
#include "../../fuzz/fuzz-inflight.c"
#undef LLVMFuzzerTestOneInput

#include "../../fuzz/replay.h"

static void test_inflight(void **state)
{
	(void)state;
	replay_target("inflight", fuzz_inflight_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inflight),
	};
	return cmocka_run_group_tests(tests, replay_group_setup, replay_group_teardown);
}
