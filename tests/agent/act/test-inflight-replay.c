/* SPDX-License-Identifier: MIT */
/*
 * Replays the saved inputs of the victim-record fuzz target (tests/fuzz/fuzz-inflight.c) through
 * the normal build, so that a fixed finding stays fixed without clang.
 */
#define LLVMFuzzerTestOneInput fuzz_inflight_one
#include "../../fuzz/fuzz-inflight.c"
#undef LLVMFuzzerTestOneInput

#include "../../fuzz/replay.h"
#include "scratch.h"

static void test_inflight(void **state)
{
	(void)state;
	replay_target("inflight", fuzz_inflight_one);
}

static char tmpdir[100];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(scratch_template(tmpdir, sizeof(tmpdir), "evictd-inflight-replay")))
		return -1;
	return setenv("FUZZ_TMPDIR", tmpdir, 1);
}

static int cleanup(void **state)
{
	char cmd[160];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inflight),
	};
	return cmocka_run_group_tests(tests, setup, cleanup);
}
