/* SPDX-License-Identifier: MIT */
/*
 * jsonw (base/jsonw.c), the one JSON writer: what the status file, spool records and state files
 * of evictd and kube/'s request bodies rely on. The text must be JSON a validating parser takes
 * (yajl's, which evictd-kube reads the spool with): nesting and separators, int64 and uint64
 * extremes, quotes and control bytes escaped, a byte that is not UTF-8 turned into U+FFFD instead
 * of written raw (a raw one made the whole record unreadable). The size bound is an error, never a
 * truncated document passed off as whole.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yajl/yajl_parse.h>

#include "jsonw.h"

/* Whether yajl's parser, UTF-8 checking on (its default), takes the text whole. */
static int parses(const char *text)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	yajl_status s;

	assert_non_null(h);
	s = yajl_parse(h, (const unsigned char *)text, strlen(text));
	if (s == yajl_status_ok)
		s = yajl_complete_parse(h);
	yajl_free(h);
	return s == yajl_status_ok;
}

static void test_nesting_and_separators(void **state)
{
	jsonbuf j;

	(void)state;
	jb_init(&j, 4096);
	jb_begin_object(&j);
	jb_key(&j, "a");
	jb_begin_array(&j);
	jb_begin_object(&j);
	jb_end_object(&j);
	jb_begin_array(&j);
	jb_end_array(&j);
	jb_bool(&j, false);
	jb_null(&j);
	jb_string(&j, NULL);
	jb_end_array(&j);
	jb_key(&j, "b"), jb_begin_object(&j);
	jb_key(&j, "c"), jb_string(&j, "d");
	jb_end_object(&j);
	jb_end_object(&j);
	assert_int_equal(jb_error(&j), 0);
	assert_string_equal(j.buf, "{\"a\":[{},[],false,null,null],\"b\":{\"c\":\"d\"}}");
	assert_int_equal(j.len, strlen(j.buf));
	assert_true(parses(j.buf));
	jb_free(&j);
}

static void test_number_extremes(void **state)
{
	jsonbuf j;

	(void)state;
	jb_init(&j, 4096);
	jb_begin_array(&j);
	jb_int(&j, INT64_MIN);
	jb_int(&j, INT64_MAX);
	jb_int(&j, 0);
	jb_uint(&j, UINT64_MAX);
	jb_end_array(&j);
	assert_int_equal(jb_error(&j), 0);
	assert_string_equal(j.buf, "[-9223372036854775808,9223372036854775807,0,18446744073709551615]");
	jb_free(&j);
}

static void test_quotes_and_control_bytes_escaped(void **state)
{
	jsonbuf j;

	(void)state;
	jb_init(&j, 4096);
	jb_begin_object(&j);
	jb_key(&j, "k\"");
	jb_string(&j, "q\"b\\n\nt\tr\r\x01\x1f");
	jb_end_object(&j);
	assert_int_equal(jb_error(&j), 0);
	assert_string_equal(j.buf, "{\"k\\\"\":\"q\\\"b\\\\n\\nt\\tr\\r\\u0001\\u001F\"}");
	assert_true(parses(j.buf));
	jb_free(&j);
}

static void test_invalid_utf8_becomes_replacement_character(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "a\xff" "b", "\"a\xef\xbf\xbd" "b\"" },             /* a byte no sequence starts with */
		{ "\xc3", "\"\xef\xbf\xbd\"" },                         /* cut short at the end */
		{ "\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"" },         /* overlong '/' */
		{ "\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" }, /* a surrogate */
		{ "\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" }, /* > U+10FFFF */
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
		/* ASCII is passed eight bytes at a time: a bad byte on either side of a word's edge */
		{ "abcdefg\xff" "ijklmnop", "\"abcdefg\xef\xbf\xbd" "ijklmnop\"" },
		{ "abcdefgh\xff", "\"abcdefgh\xef\xbf\xbd\"" },
		{ "abcdefghijklmno\xc3", "\"abcdefghijklmno\xef\xbf\xbd\"" },
		{ "abcdefgh\xc3\xa9xyz", "\"abcdefgh\xc3\xa9xyz\"" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		jsonbuf j;

		jb_init(&j, 4096);
		jb_string(&j, cases[i].in);
		assert_int_equal(jb_error(&j), 0);
		assert_string_equal(j.buf, cases[i].out);
		assert_true(parses(j.buf));
		jb_free(&j);
	}
}

static void test_bound_is_an_error_with_no_text(void **state)
{
	jsonbuf j;
	char big[200];

	(void)state;
	jb_init(&j, 64);
	jb_begin_array(&j);
	for (int i = 0; i < 100; i++)
		jb_string(&j, "0123456789");
	jb_end_array(&j);
	assert_int_equal(jb_error(&j), -E2BIG);
	assert_null(j.buf);
	assert_int_equal(j.len, 0);
	jb_free(&j);

	/* one string past the bound on its own; and a number or a bracket that would cross it */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	jb_init(&j, 64);
	jb_string(&j, big);
	assert_int_equal(jb_error(&j), -E2BIG);
	assert_null(j.buf);
	jb_free(&j);

	jb_init(&j, 24);
	jb_begin_array(&j);
	jb_int(&j, INT64_MIN); /* 1 + 1 + 20 = 22 bytes: still below 24 */
	assert_int_equal(jb_error(&j), 0);
	jb_int(&j, 1);
	assert_int_equal(jb_error(&j), -E2BIG);
	jb_end_array(&j);
	assert_int_equal(jb_error(&j), -E2BIG);
	assert_null(j.buf);
	jb_free(&j);
}

static void test_bound_is_checked_after_the_repair(void **state)
{
	jsonbuf j;
	char s[30];

	/* 30 bad bytes fit the bound raw (32 with the quotes) but not as 90 bytes of U+FFFD */
	(void)state;
	memset(s, 0xff, sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	jb_init(&j, 64);
	jb_string(&j, s);
	assert_int_equal(jb_error(&j), -E2BIG);
	jb_free(&j);
}

static void test_a_value_where_a_key_is_due_is_refused(void **state)
{
	jsonbuf j;

	(void)state;
	jb_init(&j, 4096);
	jb_begin_object(&j);
	jb_int(&j, 1);
	assert_int_equal(jb_error(&j), -EINVAL);
	assert_null(j.buf);
	jb_free(&j);
}

static void test_streamed_string(void **state)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	(void)state;
	assert_non_null(f);
	json_string(f, "a\"\xff\x1f");
	fputc(',', f);
	json_string(f, NULL);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(text, "\"a\\\"\xef\xbf\xbd\\u001F\",\"\"");
	free(text);
}

/* The ASCII-safe stream form (preemptctl's output): every byte sequence comes out as a JSON string
 * a consumer parses, with nothing in it that a line-by-line reader takes for a line end. */
static char *fput_json_of(const char *s, size_t len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	assert_non_null(f);
	assert_int_equal(jsonw_fput_string_n(f, s, len), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_fput_string_escaping(void **state)
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
		char *s = fput_json_of(cases[i].in, cases[i].len);
		assert_string_equal(s, cases[i].out);
		assert_true(parses(s));
		free(s);
	}
}

static void test_fput_string_null_and_failed_stream(void **state)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	(void)state;
	assert_non_null(f);
	assert_int_equal(jsonw_fput_string(f, NULL), 0);
	fputc(',', f);
	assert_int_equal(jsonw_fput_string(f, "\xe2\x80\xa9"), 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(text, "\"\",\"\\u2029\"");
	free(text);

	/* a stream that cannot be written is an error, not a silent half line */
	f = fopen("/dev/full", "w");
	if (!f)
		skip();
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(jsonw_fput_string(f, "x"), -EIO);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nesting_and_separators),
		cmocka_unit_test(test_number_extremes),
		cmocka_unit_test(test_quotes_and_control_bytes_escaped),
		cmocka_unit_test(test_invalid_utf8_becomes_replacement_character),
		cmocka_unit_test(test_bound_is_an_error_with_no_text),
		cmocka_unit_test(test_bound_is_checked_after_the_repair),
		cmocka_unit_test(test_a_value_where_a_key_is_due_is_refused),
		cmocka_unit_test(test_streamed_string),
		cmocka_unit_test(test_fput_string_escaping),
		cmocka_unit_test(test_fput_string_null_and_failed_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
