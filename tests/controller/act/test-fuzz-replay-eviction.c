/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved input of the eviction answer's fuzz target (tests/fuzz/{regressions,corpus}/
 * eviction) through the normal build.
 */
#define LLVMFuzzerTestOneInput fuzz_eviction_one
#include "../../fuzz/fuzz-eviction.c"
#undef LLVMFuzzerTestOneInput

#include "../../fuzz/replay.h"

static void test_replay(void **state)
{
	(void)state;
	replay_target("eviction", fuzz_eviction_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
