/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved input of the admission configuration's fuzz target
 * (tests/fuzz/{regressions,corpus}/admission) through the normal build, so that a fixed finding
 * stays fixed without clang.
 */
#define LLVMFuzzerTestOneInput fuzz_admission_one
#include "../fuzz/fuzz-admission.c"
#undef LLVMFuzzerTestOneInput

#include "../fuzz/replay.h"

static void test_admission(void **state)
{
	(void)state;
	replay_target("admission", fuzz_admission_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admission),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
