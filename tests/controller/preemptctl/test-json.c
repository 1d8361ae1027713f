/* preemptctl's JSON string writer (controller/preemptctl/json.c): what it prints for any bytes is
 * valid JSON a consumer can parse — quotes, backslashes and control characters escaped, invalid
 * UTF-8 replaced by U+FFFD, never passed through. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "json.h"

static char *json_of(const char *s, size_t len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	assert_non_null(f);
	assert_int_equal(json_write_string_n(f, s, len), 0);
	fclose(f);
	return buf;
}

static void test_json_escaping(void **state)
{
	static const struct { const char *in; size_t len; const char *out; } cases[] = {
		{ "plain", 5, "\"plain\"" },
		{ "a\"b\\c", 5, "\"a\\\"b\\\\c\"" },
		{ "\n\t\r\b\f", 5, "\"\\n\\t\\r\\b\\f\"" },
		{ "\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"" },
		{ "nul\0x", 5, "\"nul\\u0000x\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
		{ "bad\xff\xc3", 5, "\"bad\\ufffd\\ufffd\"" },
		{ "\xc0\xaf", 2, "\"\\ufffd\\ufffd\"" },             /* overlong '/' */
		{ "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"" }, /* UTF-16 surrogate */
		{ "\xe2\x80\xa8", 3, "\"\\u2028\"" },
		{ "", 0, "\"\"" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = json_of(cases[i].in, cases[i].len);
		assert_string_equal(s, cases[i].out);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escaping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
