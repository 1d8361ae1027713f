/* PriorityClass validation and Priority admission, with the examples of the Kubernetes
 * "Pod Priority and Preemption" page. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "preempt.h"

static int setup(void **state)
{
	pp_pcset *s = NULL;
	assert_int_equal(pp_pcset_new(&s), 0);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	assert_null(pp_pcset_free(*state));
	return 0;
}

static void test_builtin_system_classes(void **state)
{
	pp_pcset *s = *state;
	int32_t prio = 0;
	pp_preemption_policy pol = PP_PREEMPT_NEVER;

	assert_int_equal(pp_pcset_count(s), 2);
	assert_int_equal(pp_pcset_resolve(s, "system-cluster-critical", NULL, &prio, &pol, NULL), 0);
	assert_int_equal(prio, 2000000000);
	assert_int_equal(pol, PP_PREEMPT_LOWER_PRIORITY);
	assert_int_equal(pp_pcset_resolve(s, "system-node-critical", NULL, &prio, &pol, NULL), 0);
	assert_int_equal(prio, 2000001000);
	assert_true(pp_priority_is_critical(prio));
	assert_null(pp_pcset_default(s));

	/* `kubectl get priorityclasses` lists them back: accepted, nothing added. */
	assert_int_equal(pp_pcset_add(s, "system-node-critical", 2000001000, false, PP_PREEMPT_LOWER_PRIORITY, NULL), 0);
	assert_int_equal(pp_pcset_count(s), 2);
	/* ...but not with other values. */
	pp_err err = { "" };
	assert_int_equal(pp_pcset_add(s, "system-node-critical", 5, false, PP_PREEMPT_LOWER_PRIORITY, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "reserved for system use only"));
	assert_int_equal(pp_pcset_add(s, "system-cluster-critical", 2000000000, true, PP_PREEMPT_LOWER_PRIORITY, NULL),
	                 -EINVAL);
	assert_int_equal(pp_pcset_remove(s, "system-cluster-critical", NULL), -EPERM);
}

static void test_docs_high_priority(void **state)
{
	pp_pcset *s = *state;
	int32_t prio = 0;
	pp_preemption_policy pol = PP_PREEMPT_NEVER;
	const char *cls = NULL;

	/* The docs' PriorityClass "high-priority" (value 1000000, globalDefault false) and the nginx
	 * pod using priorityClassName: high-priority. */
	assert_int_equal(pp_pcset_add_full(s, "high-priority", 1000000, false, PP_PREEMPT_LOWER_PRIORITY,
	                                   "This priority class should be used for XYZ service pods only.", NULL), 0);
	const pp_priority_class *c = pp_pcset_find(s, "high-priority");
	assert_non_null(c);
	assert_string_equal(c->description, "This priority class should be used for XYZ service pods only.");
	assert_int_equal(pp_pcset_admit(s, "high-priority", NULL, NULL, &prio, &pol, &cls, NULL), 0);
	assert_int_equal(prio, 1000000);
	assert_int_equal(pol, PP_PREEMPT_LOWER_PRIORITY);
	assert_string_equal(cls, "high-priority");

	/* A pod without a class and no globalDefault: 0, PreemptLowerPriority. */
	pol = PP_PREEMPT_NEVER;
	assert_int_equal(pp_pcset_admit(s, NULL, NULL, NULL, &prio, &pol, &cls, NULL), 0);
	assert_int_equal(prio, 0);
	assert_int_equal(pol, PP_PREEMPT_LOWER_PRIORITY);
	assert_null(cls);
	assert_int_equal(pp_pcset_resolve(s, "", NULL, &prio, &pol, NULL), 0);
	assert_int_equal(prio, 0);
}

static void test_docs_non_preempting(void **state)
{
	pp_pcset *s = *state;
	int32_t prio = 0;
	pp_preemption_policy pol = PP_PREEMPT_LOWER_PRIORITY;

	/* The docs' "high-priority-nonpreempting" (value 1000000, preemptionPolicy Never). */
	assert_int_equal(pp_pcset_add(s, "high-priority-nonpreempting", 1000000, false, PP_PREEMPT_NEVER, NULL), 0);
	assert_int_equal(pp_pcset_resolve(s, "high-priority-nonpreempting", NULL, &prio, &pol, NULL), 0);
	assert_int_equal(prio, 1000000);
	assert_int_equal(pol, PP_PREEMPT_NEVER);

	/* The pod may not ask for another policy than its class's. */
	pp_err err = { "" };
	pp_preemption_policy want = PP_PREEMPT_LOWER_PRIORITY;
	assert_int_equal(pp_pcset_admit(s, "high-priority-nonpreempting", NULL, &want, &prio, &pol, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "spec.preemptionPolicy"));
	want = PP_PREEMPT_NEVER;
	assert_int_equal(pp_pcset_admit(s, "high-priority-nonpreempting", NULL, &want, &prio, &pol, NULL, NULL), 0);
}

static void test_policy_names(void **state)
{
	(void)state;
	pp_preemption_policy p = PP_PREEMPT_LOWER_PRIORITY;
	pp_err err = { "" };
	assert_int_equal(pp_preemption_policy_parse("Never", &p, NULL), 0);
	assert_int_equal(p, PP_PREEMPT_NEVER);
	assert_int_equal(pp_preemption_policy_parse("PreemptLowerPriority", &p, NULL), 0);
	assert_int_equal(p, PP_PREEMPT_LOWER_PRIORITY);
	p = PP_PREEMPT_NEVER;
	assert_int_equal(pp_preemption_policy_parse("never", &p, &err), -EINVAL); /* exact spelling */
	assert_int_equal(p, PP_PREEMPT_NEVER);
	assert_non_null(strstr(err.msg, "\"never\""));
	assert_int_equal(pp_preemption_policy_parse("", &p, NULL), -EINVAL);
	assert_string_equal(pp_preemption_policy_name(PP_PREEMPT_NEVER), "Never");
	assert_string_equal(pp_preemption_policy_name(PP_PREEMPT_LOWER_PRIORITY), "PreemptLowerPriority");
}

static void test_global_default(void **state)
{
	pp_pcset *s = *state;
	int32_t prio = 0;
	pp_preemption_policy pol = PP_PREEMPT_LOWER_PRIORITY;
	const char *cls = NULL;
	pp_err err = { "" };

	assert_int_equal(pp_pcset_add(s, "batch", -10, true, PP_PREEMPT_NEVER, NULL), 0);
	assert_int_equal(pp_pcset_add(s, "other", 7, true, PP_PREEMPT_LOWER_PRIORITY, &err), -EEXIST);
	assert_string_equal(err.msg, "priorityclasses/other: globalDefault: Forbidden: PriorityClass batch is already "
	                             "marked as default. Only one default can exist");
	assert_null(pp_pcset_find(s, "other"));

	/* A pod without a class gets the default's value, policy and name. */
	assert_int_equal(pp_pcset_admit(s, NULL, NULL, NULL, &prio, &pol, &cls, NULL), 0);
	assert_int_equal(prio, -10);
	assert_int_equal(pol, PP_PREEMPT_NEVER);
	assert_string_equal(cls, "batch");
	/* A pod naming another class is not affected by the default. */
	assert_int_equal(pp_pcset_admit(s, "system-cluster-critical", NULL, NULL, &prio, &pol, &cls, NULL), 0);
	assert_int_equal(prio, 2000000000);

	/* Moving the default: first clear, then set another. */
	assert_int_equal(pp_pcset_add(s, "other", 7, false, PP_PREEMPT_LOWER_PRIORITY, NULL), 0);
	assert_int_equal(pp_pcset_update(s, "other", 7, true, PP_PREEMPT_LOWER_PRIORITY, NULL, NULL), -EEXIST);
	assert_int_equal(pp_pcset_update(s, "batch", -10, false, PP_PREEMPT_NEVER, NULL, NULL), 0);
	assert_int_equal(pp_pcset_update(s, "other", 7, true, PP_PREEMPT_LOWER_PRIORITY, "now default", NULL), 0);
	assert_string_equal(pp_pcset_default(s)->name, "other");
	assert_string_equal(pp_pcset_find(s, "other")->description, "now default");
}

/* TestDefaultPriority "multiple default classes resolves to the minimum value among them": a
 * cluster can hold two defaults (the API server checks its cache only); admission takes the
 * lowest. Creating a second one stays forbidden. */
static void test_several_existing_defaults(void **state)
{
	pp_pcset *s = *state;
	int32_t prio = 0;
	const char *cls = NULL;
	pp_err err = { "" };

	assert_int_equal(pp_pcset_add_existing(s, "high", 2000, true, PP_PREEMPT_LOWER_PRIORITY, NULL, &err), 0);
	assert_int_equal(pp_pcset_add_existing(s, "low", 1000, true, PP_PREEMPT_LOWER_PRIORITY, NULL, &err), 0);
	assert_int_equal(pp_pcset_add_existing(s, "low-too", 1000, true, PP_PREEMPT_LOWER_PRIORITY, NULL, &err), 0);
	assert_string_equal(pp_pcset_default(s)->name, "low");
	assert_int_equal(pp_pcset_admit(s, NULL, NULL, NULL, &prio, NULL, &cls, NULL), 0);
	assert_int_equal(prio, 1000);
	assert_string_equal(cls, "low");
	/* duplicates and invalid classes are still refused */
	assert_int_equal(pp_pcset_add_existing(s, "low", 5, false, PP_PREEMPT_LOWER_PRIORITY, NULL, &err), -EEXIST);
	assert_int_equal(pp_pcset_add_existing(s, "Bad_Name", 5, false, PP_PREEMPT_LOWER_PRIORITY, NULL, &err), -EINVAL);
	/* admission of a new default is refused, naming the lowest */
	assert_int_equal(pp_pcset_add(s, "new", 1, true, PP_PREEMPT_LOWER_PRIORITY, &err), -EEXIST);
	assert_string_equal(err.msg, "priorityclasses/new: globalDefault: Forbidden: PriorityClass low is already "
	                             "marked as default. Only one default can exist");
	/* removing the lowest hands the default to the next */
	assert_int_equal(pp_pcset_remove(s, "low", NULL), 0);
	assert_string_equal(pp_pcset_default(s)->name, "low-too");
	assert_int_equal(pp_pcset_remove(s, "low-too", NULL), 0);
	assert_string_equal(pp_pcset_default(s)->name, "high");
}

static void test_unknown_class_and_spec_priority(void **state)
{
	pp_pcset *s = *state;
	int32_t prio = 99;
	pp_preemption_policy pol = PP_PREEMPT_NEVER;
	pp_err err = { "" };

	assert_int_equal(pp_pcset_resolve(s, "no-such-class", NULL, &prio, &pol, &err), -ENOENT);
	assert_string_equal(err.msg, "spec.priorityClassName: no PriorityClass with name no-such-class was found");
	assert_int_equal(prio, 99);
	assert_int_equal(pol, PP_PREEMPT_NEVER);

	assert_int_equal(pp_pcset_add(s, "high-priority", 1000000, false, PP_PREEMPT_LOWER_PRIORITY, NULL), 0);
	int32_t given = 5;
	assert_int_equal(pp_pcset_resolve(s, "high-priority", &given, &prio, &pol, &err), -EINVAL);
	assert_string_equal(err.msg, "spec.priority: Forbidden: the integer value of priority (5) must not be provided "
	                             "in pod spec; priority admission controller computed 1000000 from the given "
	                             "PriorityClass name");
	assert_int_equal(prio, 99);
	given = 1000000; /* an equal value is accepted */
	assert_int_equal(pp_pcset_resolve(s, "high-priority", &given, &prio, &pol, NULL), 0);
	assert_int_equal(prio, 1000000);
	given = 3; /* without class and default, spec.priority must be 0 */
	assert_int_equal(pp_pcset_resolve(s, NULL, &given, &prio, &pol, NULL), -EINVAL);
}

static void test_validation(void **state)
{
	pp_pcset *s = *state;
	pp_err err = { "" };

	assert_int_equal(pp_pcset_add(s, "Upper", 1, false, PP_PREEMPT_LOWER_PRIORITY, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "metadata.name"));
	assert_int_equal(pp_pcset_add(s, "-dash", 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), -EINVAL);
	assert_int_equal(pp_pcset_add(s, "dash-", 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), -EINVAL);
	assert_int_equal(pp_pcset_add(s, "a..b", 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), -EINVAL);
	assert_int_equal(pp_pcset_add(s, "a.-b", 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), -EINVAL);
	assert_int_equal(pp_pcset_add(s, "under_score", 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), -EINVAL);
	assert_int_equal(pp_pcset_add(s, "", 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), -EINVAL);
	assert_int_equal(pp_pcset_add(s, NULL, 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), -EINVAL);
	char long_name[300];
	memset(long_name, 'a', 254);
	long_name[254] = 0;
	assert_int_equal(pp_pcset_add(s, long_name, 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), -EINVAL);
	assert_true(pp_is_dns_subdomain("a.b-c.d0"));
	assert_false(pp_is_dns_subdomain("a.b."));
	/* IsDNS1123Subdomain has no per-label limit (only IsDNS1123Label does): 64 and 253 pass. */
	memset(long_name, 'a', 64);
	long_name[64] = 0;
	assert_true(pp_is_dns_subdomain(long_name));
	assert_int_equal(pp_pcset_add(s, long_name, 1, false, PP_PREEMPT_LOWER_PRIORITY, NULL), 0);
	memset(long_name, 'b', 253);
	long_name[253] = 0;
	assert_true(pp_is_dns_subdomain(long_name));

	/* The user range ends at one billion; there is no lower bound. */
	assert_int_equal(pp_pcset_add(s, "max", 1000000000, false, PP_PREEMPT_LOWER_PRIORITY, NULL), 0);
	assert_int_equal(pp_pcset_add(s, "too-high", 1000000001, false, PP_PREEMPT_LOWER_PRIORITY, &err), -EINVAL);
	assert_string_equal(err.msg, "priorityclasses/too-high: value: Forbidden: maximum allowed value of a user "
	                             "defined priority is 1000000000");
	assert_int_equal(pp_pcset_add(s, "lowest", INT32_MIN, false, PP_PREEMPT_LOWER_PRIORITY, NULL), 0);

	/* The system- prefix is reserved. */
	assert_int_equal(pp_pcset_add(s, "system-foo", 10, false, PP_PREEMPT_LOWER_PRIORITY, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "reserved for system use only"));
	assert_int_equal(pp_pcset_add(s, "systemx", 10, false, PP_PREEMPT_LOWER_PRIORITY, NULL), 0);

	assert_int_equal(pp_pcset_add(s, "max", 1, false, PP_PREEMPT_LOWER_PRIORITY, &err), -EEXIST);
	assert_string_equal(err.msg, "priorityclasses/max: already exists");
	assert_int_equal(pp_pcset_add(s, "bad-policy", 1, false, (pp_preemption_policy)7, NULL), -EINVAL);
}

static void test_update_and_delete(void **state)
{
	pp_pcset *s = *state;
	pp_err err = { "" };
	int32_t prio = 0;

	assert_int_equal(pp_pcset_add(s, "web", 100, false, PP_PREEMPT_LOWER_PRIORITY, NULL), 0);
	assert_int_equal(pp_pcset_update(s, "web", 200, false, PP_PREEMPT_LOWER_PRIORITY, NULL, &err), -EINVAL);
	assert_string_equal(err.msg, "priorityclasses/web: value: Forbidden: may not be changed in an update.");
	assert_int_equal(pp_pcset_update(s, "web", 100, false, PP_PREEMPT_NEVER, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "immutable"));
	assert_int_equal(pp_pcset_update(s, "nope", 100, false, PP_PREEMPT_NEVER, NULL, NULL), -ENOENT);
	assert_int_equal(pp_pcset_find(s, "web")->value, 100);

	assert_int_equal(pp_pcset_remove(s, "web", NULL), 0);
	assert_null(pp_pcset_find(s, "web"));
	assert_int_equal(pp_pcset_remove(s, "web", NULL), -ENOENT);
	/* Once deleted, new pods naming it are rejected. */
	assert_int_equal(pp_pcset_resolve(s, "web", NULL, &prio, NULL, NULL), -ENOENT);
	assert_int_equal(pp_pcset_count(s), 2);
	assert_null(pp_pcset_get(s, 2));
	assert_string_equal(pp_pcset_get(s, 0)->name, "system-cluster-critical");
	assert_null(pp_pcset_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_builtin_system_classes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_docs_high_priority, setup, teardown),
		cmocka_unit_test_setup_teardown(test_docs_non_preempting, setup, teardown),
		cmocka_unit_test(test_policy_names),
		cmocka_unit_test_setup_teardown(test_global_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_several_existing_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_class_and_spec_priority, setup, teardown),
		cmocka_unit_test_setup_teardown(test_validation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_and_delete, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
