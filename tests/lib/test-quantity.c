/* Quantity and duration parsing, with the examples of the Kubernetes documentation and the
 * rounding rules of resource.Quantity. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "preempt.h"

static int64_t value(const char *s)
{
	int64_t v = -12345;
	pp_err err = { "" };
	int r = pp_quantity_parse(s, &v, &err);
	if (r < 0)
		fail_msg("pp_quantity_parse(\"%s\") = %d: %s", s, r, err.msg);
	return v;
}

static int64_t milli(const char *s)
{
	int64_t v = -12345;
	int r = pp_quantity_parse_milli(s, &v, NULL);
	if (r < 0)
		fail_msg("pp_quantity_parse_milli(\"%s\") = %d", s, r);
	return v;
}

static void test_memory_suffixes(void **state)
{
	(void)state;
	/* The "Resource units in Kubernetes" page: these all mean roughly 128 MB. */
	assert_int_equal(value("128974848"), 128974848);
	assert_int_equal(value("129e6"), 129000000);
	assert_int_equal(value("129M"), 129000000);
	assert_int_equal(value("128974848000m"), 128974848);
	assert_int_equal(value("123Mi"), 128974848);
	assert_int_equal(value("1Ki"), 1024);
	assert_int_equal(value("1.5Gi"), 1610612736);
	assert_int_equal(value("1G"), 1000000000);
	assert_int_equal(value("7Ei"), 8070450532247928832LL);
}

static void test_cpu_millis(void **state)
{
	(void)state;
	assert_int_equal(milli("100m"), 100);
	assert_int_equal(milli("0.1"), 100);
	assert_int_equal(milli("1"), 1000);
	assert_int_equal(milli("1.5"), 1500);
	assert_int_equal(milli("2k"), 2000000);
	assert_int_equal(milli("1e-3"), 1);
	assert_int_equal(milli("1E+3"), 1000000);
	/* MilliValue rounds up, away from zero */
	assert_int_equal(milli("0.5m"), 1);
	assert_int_equal(milli("100u"), 1);
	assert_int_equal(milli("1n"), 1);
	assert_int_equal(milli("0"), 0);
}

static void test_rounding_and_odd_forms(void **state)
{
	(void)state;
	assert_int_equal(value("0.5"), 1);      /* Value() = ceil */
	assert_int_equal(value("1.000000001"), 2);
	assert_int_equal(value("100m"), 1);
	assert_int_equal(value(".5Ki"), 512);
	assert_int_equal(value("5."), 5);
	assert_int_equal(value("."), 0);
	assert_int_equal(value("Ki"), 0);       /* an empty number with a suffix is 0, as in Kubernetes */
	assert_int_equal(value("+3"), 3);
	assert_int_equal(value("-3"), -3);
	assert_int_equal(value("-1.5"), -2);    /* away from zero */
	assert_int_equal(value("1e-1000"), 1);   /* tiny but positive: rounds up to 1 */
	assert_int_equal(milli("0.000000000000000000000000000000000000001"), 1);
}

static void expect_error(const char *s, int expected)
{
	int64_t v = 777;
	pp_err err = { "" };
	int r = pp_quantity_parse(s, &v, &err);
	if (r != expected)
		fail_msg("pp_quantity_parse(\"%s\") = %d, expected %d", s, r, expected);
	assert_int_equal(v, 777); /* out-parameter untouched on failure */
	assert_true(strlen(err.msg) > 0);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("", -EINVAL);
	expect_error("1x", -EINVAL);
	expect_error("1K", -EINVAL);   /* kilo is lower-case k */
	expect_error("1ki", -EINVAL);
	expect_error("1e", -EINVAL);
	expect_error("1 Gi", -EINVAL);
	expect_error(" 1", -EINVAL);
	expect_error("1..2", -EINVAL);
	expect_error("1e+", -EINVAL);
	expect_error("8Ei", -ERANGE);  /* 2^63 does not fit */
	expect_error("10E", -ERANGE);
	expect_error("1e19", -ERANGE);
	expect_error("1e1000000000", -ERANGE);

	pp_err err = { "" };
	int64_t v;
	assert_int_equal(pp_quantity_parse("1x", &v, &err), -EINVAL);
	assert_string_equal(err.msg, "invalid quantity \"1x\": unknown suffix \"x\"");
}

static int64_t dur(const char *s)
{
	int64_t v = -1;
	pp_err err = { "" };
	if (pp_duration_parse(s, &v, &err) < 0)
		fail_msg("pp_duration_parse(\"%s\"): %s", s, err.msg);
	return v;
}

static void test_durations(void **state)
{
	(void)state;
	assert_int_equal(dur("30s"), 30000000000LL);
	assert_int_equal(dur("1m30s"), 90000000000LL);
	assert_int_equal(dur("5m"), 300000000000LL);
	assert_int_equal(dur("1.5h"), 5400000000000LL);
	assert_int_equal(dur("300ms"), 300000000LL);
	assert_int_equal(dur("10us"), 10000LL);
	assert_int_equal(dur("1ns"), 1LL);
	assert_int_equal(dur("0"), 0LL);
	assert_int_equal(dur("0s"), 0LL);
	assert_int_equal(dur(".5s"), 500000000LL);

	int64_t v = 9;
	assert_int_equal(pp_duration_parse("30", &v, NULL), -EINVAL);  /* Go requires a unit */
	assert_int_equal(pp_duration_parse("-1s", &v, NULL), -EINVAL);
	assert_int_equal(pp_duration_parse("1d", &v, NULL), -EINVAL);
	assert_int_equal(pp_duration_parse("", &v, NULL), -EINVAL);
	assert_int_equal(pp_duration_parse("s", &v, NULL), -EINVAL);
	assert_int_equal(pp_duration_parse("3000000h", &v, NULL), -ERANGE);
	assert_int_equal(v, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memory_suffixes),
		cmocka_unit_test(test_cpu_millis),
		cmocka_unit_test(test_rounding_and_odd_forms),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_durations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
