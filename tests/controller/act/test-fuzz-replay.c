/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved input of the Lease reader's fuzz target (tests/fuzz/{regressions,corpus}/
 * lease) through the normal build, and checks what the reader makes of the seeds.
 */
#define LLVMFuzzerTestOneInput fuzz_lease_one
#include "../../fuzz/fuzz-lease.c"
#undef LLVMFuzzerTestOneInput

#include "../../fuzz/replay.h"

static void test_replay(void **state)
{
	(void)state;
	replay_target("lease", fuzz_lease_one);
}

static void test_seeds_read(void **state)
{
	static const char text[] = "{\"kind\":\"Lease\",\"metadata\":{\"resourceVersion\":\"1234\"},\"spec\":"
	                            "{\"holderIdentity\":\"a_1\",\"leaseDurationSeconds\":15,\"leaseTransitions\":3,"
	                            "\"acquireTime\":\"2024-05-01T10:00:00.123456Z\","
	                            "\"renewTime\":\"2024-05-01T10:05:02.654321Z\"}}";
	static const char status[] = "{\"kind\":\"Status\",\"metadata\":{},\"code\":404}";
	static const char bad[] = "{\"kind\":\"Lease\",\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":"
	                          "{\"leaseDurationSeconds\":\"15\"}}";
	lease_record r;

	(void)state;
	assert_int_equal(lease_record_parse(text, strlen(text), &r), 0);
	assert_string_equal(r.resource_version, "1234");
	assert_string_equal(r.holder, "a_1");
	assert_int_equal(r.duration_s, 15);
	assert_int_equal(r.transitions, 3);
	assert_string_equal(r.renew_time, "2024-05-01T10:05:02.654321Z");
	assert_int_equal(lease_record_parse(status, strlen(status), &r), -EINVAL);
	assert_int_equal(lease_record_parse(bad, strlen(bad), &r), -EINVAL);
	assert_int_equal(lease_record_parse("{", 1, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_seeds_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
