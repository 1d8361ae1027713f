/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved input of the CRI fuzz target (tests/fuzz/fuzz-cri.c: the gRPC answer parser
 * and the CRI decoders) in the normal and sanitizer builds: the regressions (a fuzz-found crash:
 * an image filesystem refused with its list freed as if it had been kept) and the seeds.
 */
#define LLVMFuzzerTestOneInput fuzz_cri_one
#include "../fuzz/fuzz-cri.c"
#undef LLVMFuzzerTestOneInput

#include "../fuzz/replay.h"

static void test_cri(void **state)
{
	(void)state;
	replay_target("cri", fuzz_cri_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_cri) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
