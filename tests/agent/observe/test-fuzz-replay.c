/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved fuzz input of the pod descriptor fuzz target (observe/podmeta.c) through the
 * normal build, so that a fixed finding stays fixed without clang. The configuration's, exec argv's
 * and eviction outcomes' are agent/common's (tests/agent/common/test-fuzz-replay.c).
 */
#define LLVMFuzzerTestOneInput fuzz_podmeta_one
#include "../../fuzz/fuzz-podmeta.c"
#undef LLVMFuzzerTestOneInput

#include "../../fuzz/replay.h"

static void test_podmeta(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		print_message("# skip podmeta corpus: needs root: descriptors are trusted only when root-owned\n");
		skip();
	}
	replay_target("podmeta", fuzz_podmeta_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_podmeta),
	};
	return cmocka_run_group_tests(tests, replay_group_setup, replay_group_teardown);
}
