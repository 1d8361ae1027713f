/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved fuzz input of evictd-kube's condition parsers (evictd's status file, a Node's
 * conditions) through the normal build, so that a fixed finding stays fixed without clang.
 */
#define LLVMFuzzerTestOneInput fuzz_condparse_one
#include "../../fuzz/fuzz-condparse.c"
#undef LLVMFuzzerTestOneInput

#include "../../fuzz/replay.h"

static void test_condparse(void **state)
{
	(void)state;
	replay_target("condparse", fuzz_condparse_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_condparse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
