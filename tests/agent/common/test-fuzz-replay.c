/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved fuzz input of agent/common's fuzz targets (configuration with drop-ins, the
 * kubelet's configuration, exec argv, eviction outcomes) through the normal build, so that a fixed
 * finding stays fixed without clang.
 */
#define LLVMFuzzerTestOneInput fuzz_config_one
#include "../../fuzz/fuzz-config.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput fuzz_exec_argv_one
#include "../../fuzz/fuzz-exec-argv.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput fuzz_outcome_one
#include "../../fuzz/fuzz-outcome.c"
#undef LLVMFuzzerTestOneInput

#define LLVMFuzzerTestOneInput fuzz_kubelet_config_one
#include "../../fuzz/fuzz-kubelet-config.c"
#undef LLVMFuzzerTestOneInput

#include "../../fuzz/replay.h"

static void test_config(void **state)
{
	(void)state;
	replay_target("config", fuzz_config_one);
}

static void test_exec_argv(void **state)
{
	(void)state;
	replay_target("exec-argv", fuzz_exec_argv_one);
}

static void test_outcome(void **state)
{
	(void)state;
	replay_target("outcome", fuzz_outcome_one);
}

static void test_kubelet_config(void **state)
{
	(void)state;
	replay_target("kubelet-config", fuzz_kubelet_config_one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_exec_argv),
		cmocka_unit_test(test_outcome),
		cmocka_unit_test(test_kubelet_config),
	};
	return cmocka_run_group_tests(tests, replay_group_setup, replay_group_teardown);
}
