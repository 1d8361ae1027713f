/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved input of the stream reader's fuzz target (tests/fuzz/{regressions,corpus}/
 * kstream) through the normal build, so that a fixed finding stays fixed without clang.
 */
#define LLVMFuzzerTestOneInput fuzz_kstream_one
#include "../fuzz/fuzz-kstream.c"
#undef LLVMFuzzerTestOneInput

#include "../fuzz/replay.h"

static void test_kstream(void **state)
{
	(void)state;
	replay_target("kstream", fuzz_kstream_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kstream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
