/* preemptctl's input gate (controller/k8s_input.c): files are read whole within a size bound and
 * must be well-formed UTF-8, reported as FILE:LINE:COLUMN, before libfyaml sees them — libfyaml
 * 0.7.12 hangs on invalid UTF-8 in a directive line (tests/fuzz/FINDINGS.md, k8s-libfyaml-hang). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "k8s.h"
#include "k8s_input.h"

/* Runs the UTF-8 check over len bytes; returns its result and the message it printed. */
static int utf8(const char *s, size_t len, char **msg)
{
	size_t size = 0;
	FILE *f = open_memstream(msg, &size);
	diag d;
	int r;

	assert_non_null(f);
	diag_init(&d, f);
	r = k8s_input_check_utf8("in.yaml", s, len, &d);
	fclose(f);
	assert_int_equal(d.nerrors, r < 0 ? 1 : 0);
	return r;
}

/* literals only: their length includes embedded NULs */
#define BAD(lit, message) expect_bad(lit, sizeof(lit) - 1, message)
#define GOOD(lit) expect_good(lit, sizeof(lit) - 1)

static void expect_bad(const char *s, size_t len, const char *message)
{
	char *msg = NULL;
	assert_int_equal(utf8(s, len, &msg), -EILSEQ);
	assert_string_equal(msg, message);
	free(msg);
}

static void expect_good(const char *s, size_t len)
{
	char *msg = NULL;
	assert_int_equal(utf8(s, len, &msg), 0);
	assert_string_equal(msg, "");
	free(msg);
}

static void test_utf8_accepts_every_well_formed_sequence(void **state)
{
	(void)state;
	expect_good("", 0);
	GOOD("kind: Pod\n");
	/* U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF, BOM */
	static const char all[] = "\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf"
	                          "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\xef\xbb\xbf";
	expect_good(all, sizeof(all) - 1);
	/* a NUL byte is valid UTF-8; libfyaml gets the length, not a C string */
	GOOD("a\0b");
	GOOD("%YAML 1.2\n---\ndescription: caf\xc3\xa9\n");
}

static void test_utf8_rejects_with_line_and_column(void **state)
{
	(void)state;
	/* the finding itself: a directive line with a stray byte */
	BAD("%\xff\n", "in.yaml:1:2: invalid UTF-8 (byte 0xff): Kubernetes objects are UTF-8 text\n");
	/* columns count characters, not bytes: "é" is one column */
	BAD("kind: Pod\nname: \xc3\xa9\xc3\xa9x\x80\n",
	           "in.yaml:2:10: invalid UTF-8 (byte 0x80): Kubernetes objects are UTF-8 text\n");
	/* overlong forms */
	BAD("\xc0\xaf", "in.yaml:1:1: invalid UTF-8 (byte 0xc0): Kubernetes objects are UTF-8 text\n");
	BAD("\xc1\xbf", "in.yaml:1:1: invalid UTF-8 (byte 0xc1): Kubernetes objects are UTF-8 text\n");
	BAD("\xe0\x9f\xbf", "in.yaml:1:1: invalid UTF-8 (byte 0xe0): Kubernetes objects are UTF-8 text\n");
	BAD("\xf0\x8f\xbf\xbf", "in.yaml:1:1: invalid UTF-8 (byte 0xf0): Kubernetes objects are UTF-8 text\n");
	/* surrogates, above U+10FFFF, bytes that never occur */
	BAD("a\xed\xa0\x80", "in.yaml:1:2: invalid UTF-8 (byte 0xed): Kubernetes objects are UTF-8 text\n");
	BAD("\xf4\x90\x80\x80", "in.yaml:1:1: invalid UTF-8 (byte 0xf4): Kubernetes objects are UTF-8 text\n");
	BAD("\xf5\x80\x80\x80", "in.yaml:1:1: invalid UTF-8 (byte 0xf5): Kubernetes objects are UTF-8 text\n");
	BAD("\xfe", "in.yaml:1:1: invalid UTF-8 (byte 0xfe): Kubernetes objects are UTF-8 text\n");
	/* truncated: at the end of the input, and cut by an ASCII byte */
	BAD("ab\xe2\x82", "in.yaml:1:3: invalid UTF-8 (byte 0xe2): Kubernetes objects are UTF-8 text\n");
	BAD("\xe2\x82z", "in.yaml:1:1: invalid UTF-8 (byte 0xe2): Kubernetes objects are UTF-8 text\n");
	/* the check must not read past len: the valid continuation lies outside it */
	expect_bad("\xc3\xa9", 1, "in.yaml:1:1: invalid UTF-8 (byte 0xc3): Kubernetes objects are UTF-8 text\n");
}

/* Reads text through a pipe (no size known in advance) with the given bound. */
static int read_pipe(const char *text, size_t len, size_t max, char **out, size_t *outlen, char **msg)
{
	int fds[2];
	size_t size = 0;
	FILE *f = open_memstream(msg, &size), *in;
	diag d;
	int r;

	assert_non_null(f);
	assert_int_equal(pipe(fds), 0);
	/* small enough for the pipe buffer, so no writer thread is needed */
	assert_true(len < 4096);
	assert_int_equal(write(fds[1], text, len), (ssize_t)len);
	close(fds[1]);
	in = fdopen(fds[0], "r");
	assert_non_null(in);
	diag_init(&d, f);
	r = k8s_input_read(in, "pipe.json", max, out, outlen, &d);
	fclose(in);
	fclose(f);
	return r;
}

static void test_read_bounded(void **state)
{
	char *buf = NULL, *msg = NULL;
	size_t len = 0;
	static const char text[] = "{\"kind\": \"List\", \"items\": []}\n";

	(void)state;
	/* exactly at the bound: read whole, NUL-terminated */
	assert_int_equal(read_pipe(text, sizeof(text) - 1, sizeof(text) - 1, &buf, &len, &msg), 0);
	assert_int_equal(len, sizeof(text) - 1);
	assert_string_equal(buf, text);
	assert_string_equal(msg, "");
	free(buf);
	free(msg);

	/* one byte over: refused, naming the file; nothing returned */
	buf = NULL;
	msg = NULL;
	assert_int_equal(read_pipe(text, sizeof(text) - 1, sizeof(text) - 2, &buf, &len, &msg), -EFBIG);
	assert_null(buf);
	assert_string_equal(msg, "preemptctl: pipe.json: larger than 29 bytes, refusing to read it\n");
	free(msg);

	/* growth past the first 64 KiB chunk in steps, through a regular file of unknown use */
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	for (int i = 0; i < 20000; i++)
		fputs("# padding line\n", tmp);
	rewind(tmp);
	size_t size = 0;
	FILE *f = open_memstream(&msg, &size);
	diag d;
	diag_init(&d, f);
	assert_int_equal(k8s_input_read(tmp, "big.yaml", K8S_INPUT_MAX, &buf, &len, &d), 0);
	assert_int_equal(len, 20000 * 15);
	assert_memory_equal(buf + len - 15, "# padding line\n", 15);
	free(buf);
	/* a regular file larger than the bound is refused by its size, before reading */
	rewind(tmp);
	buf = NULL;
	assert_int_equal(k8s_input_read(tmp, "big.yaml", 1000, &buf, &len, &d), -EFBIG);
	assert_null(buf);
	fclose(tmp);
	fclose(f);
	assert_string_equal(msg, "preemptctl: big.yaml: larger than 1000 bytes, refusing to read it\n");
	free(msg);
}

/* The loader runs the gate: the fuzzer's hang inputs end in one clear error. */
static void test_loader_rejects_before_parsing(void **state)
{
	static const char hang[] = "apiVersion: v1\nkind: Node\nmetadata:\n  name: worker-1\n%--\xff\n";
	char *msg = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&msg, &size);
	k8s_cluster c;
	diag d;

	(void)state;
	assert_non_null(f);
	diag_init(&d, f);
	k8s_cluster_init(&c);
	assert_int_equal(k8s_load_string(&c, "nodes.yaml", hang, sizeof(hang) - 1, &d), -EINVAL);
	fclose(f);
	assert_string_equal(msg, "nodes.yaml:5:4: invalid UTF-8 (byte 0xff): Kubernetes objects are UTF-8 text\n");
	assert_int_equal(d.nerrors, 1);
	assert_int_equal(c.nnodes, 0);
	k8s_cluster_done(&c);
	free(msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_accepts_every_well_formed_sequence),
		cmocka_unit_test(test_utf8_rejects_with_line_and_column),
		cmocka_unit_test(test_read_bounded),
		cmocka_unit_test(test_loader_rejects_before_parsing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
