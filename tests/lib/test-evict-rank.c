/* The kubelet's eviction ranking: memory/disk/pid comparator chains, critical pods, ties. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "preempt.h"

static void rank(pp_evict_signal sig, const pp_evict_pod *pods, size_t n, const char *const *want)
{
	size_t order[16];
	assert_int_equal(pp_evict_rank(sig, pods, n, order), 0);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(pods[order[i]].name, want[i]);
}

#define MI (1024 * 1024)

static void test_memory_chain(void **state)
{
	(void)state;
	const pp_evict_pod pods[] = {
		/* the seeds' rule: within its request, lower priority is still ranked after a
		 * higher-priority pod exceeding its request */
		{ "default", "low-within", "u1", 0, true, 100 * MI, 200 * MI },
		{ "default", "high-over", "u2", 1000, true, 300 * MI, 200 * MI },
		{ "default", "low-over-small", "u3", 0, true, 210 * MI, 200 * MI },
		{ "default", "low-over-big", "u4", 0, true, 900 * MI, 200 * MI },
		{ "default", "besteffort", "u5", 0, true, 50 * MI, 0 },
	};
	/* exceeds first (priority, then usage - request), then the pods within their requests */
	rank(PP_EVICT_MEMORY, pods, 5,
	     (const char *const[]){ "low-over-big", "besteffort", "low-over-small", "high-over", "low-within" });
	assert_true(pp_evict_exceeds_request(PP_EVICT_MEMORY, &pods[1]));
	assert_false(pp_evict_exceeds_request(PP_EVICT_MEMORY, &pods[0]));
	assert_false(pp_evict_exceeds_request(PP_EVICT_PID, &pods[1]));
}

static void test_disk_chain(void **state)
{
	(void)state;
	const pp_evict_pod pods[] = {
		{ "a", "writer", "1", 10, true, 5000, 1000 },
		{ "a", "quiet", "2", 0, true, 10, 1000 },
		{ "a", "logger", "3", 10, true, 9000, 1000 },
	};
	rank(PP_EVICT_DISK, pods, 3, (const char *const[]){ "logger", "writer", "quiet" });
}

static void test_pid_chain(void **state)
{
	(void)state;
	const pp_evict_pod pods[] = {
		{ "a", "forky-high", "1", 100, true, 5000, 0 },
		{ "a", "few-low", "2", 0, true, 3, 0 },
		{ "a", "many-low", "3", 0, true, 400, 0 },
	};
	/* priority first, then process count; requests play no part */
	rank(PP_EVICT_PID, pods, 3, (const char *const[]){ "many-low", "few-low", "forky-high" });
}

static void test_ties_and_unmeasured(void **state)
{
	(void)state;
	const pp_evict_pod pods[] = {
		{ "b", "x", "1", 0, true, 100, 0 },
		{ "a", "y", "2", 0, true, 100, 0 },
		{ "a", "x", "3", 0, true, 100, 0 },
		{ "a", "blind", "4", -5, false, 0, 0 },
	};
	/* equal figures: namespace, then name; unmeasured pods last whatever their priority */
	rank(PP_EVICT_MEMORY, pods, 4, (const char *const[]){ "x", "y", "x", "blind" });
	size_t order[4];
	assert_int_equal(pp_evict_rank(PP_EVICT_MEMORY, pods, 4, order), 0);
	assert_string_equal(pods[order[0]].namespace_, "a");
	assert_string_equal(pods[order[2]].namespace_, "b");
	assert_int_equal(pp_evict_rank(PP_EVICT_MEMORY, NULL, 0, NULL), 0);
	assert_int_equal(pp_evict_rank((pp_evict_signal)9, pods, 4, order), -EINVAL);
}

static void test_critical(void **state)
{
	(void)state;
	assert_true(pp_priority_is_critical(PP_SYSTEM_CLUSTER_CRITICAL));
	assert_true(pp_priority_is_critical(PP_SYSTEM_NODE_CRITICAL));
	assert_false(pp_priority_is_critical(PP_HIGHEST_USER_PRIORITY));
	/* critical pods are ranked like others (by priority they come last); the caller skips them */
	const pp_evict_pod pods[] = {
		{ "kube-system", "dns", "1", PP_SYSTEM_CLUSTER_CRITICAL, true, 900 * MI, 10 * MI },
		{ "default", "app", "2", 0, true, 300 * MI, 10 * MI },
	};
	rank(PP_EVICT_MEMORY, pods, 2, (const char *const[]){ "app", "dns" });
}

static void test_extreme_values(void **state)
{
	(void)state;
	/* usage - request must not overflow */
	const pp_evict_pod pods[] = {
		{ "a", "neg", "1", 0, true, INT64_MIN, INT64_MAX },
		{ "a", "pos", "2", 0, true, INT64_MAX, INT64_MIN },
	};
	rank(PP_EVICT_MEMORY, pods, 2, (const char *const[]){ "pos", "neg" });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_chain), cmocka_unit_test(test_disk_chain),
		cmocka_unit_test(test_pid_chain),    cmocka_unit_test(test_ties_and_unmeasured),
		cmocka_unit_test(test_critical),     cmocka_unit_test(test_extreme_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
