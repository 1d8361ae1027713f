/* The input gate (kube/k8s_input.c): input streams through it chunk by chunk, within a size bound,
 * and must be well-formed UTF-8 without NUL bytes, reported as FILE:LINE:COLUMN, before a parser
 * sees it — libfyaml 0.7.12 hangs on invalid UTF-8 in a directive line (tests/fuzz/FINDINGS.md,
 * k8s-libfyaml-hang), and a NUL used to end a YAML document silently (issue 12). */
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
#include "kstream.h"

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
	/* NUL bytes: valid UTF-8, but no Kubernetes text holds one; in and after an 8-byte block */
	BAD("a\0b", "in.yaml:1:2: NUL byte: Kubernetes objects are UTF-8 text without NUL bytes\n");
	BAD("kind: Pod\nmetadata:\0", "in.yaml:2:10: NUL byte: Kubernetes objects are UTF-8 text without NUL bytes\n");
	BAD("0123456789abcdef\n0123456789abcdef\0",
	    "in.yaml:2:17: NUL byte: Kubernetes objects are UTF-8 text without NUL bytes\n");
}

/* A sequence cut between two chunks is whole again; a bad byte in the second is found where the
 * sequence started. */
static void test_utf8_across_chunks(void **state)
{
	static const char text[] = "name: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n";
	char *msg = NULL;
	size_t size = 0;
	(void)state;

	for (size_t cut = 0; cut <= sizeof(text) - 1; cut++) {
		FILE *f = open_memstream(&msg, &size);
		diag d;
		k8s_gate g;
		diag_init(&d, f);
		k8s_gate_init(&g, "in.yaml", 0, &d);
		assert_int_equal(k8s_gate_feed(&g, text, cut), 0);
		assert_int_equal(k8s_gate_feed(&g, text + cut, sizeof(text) - 1 - cut), 0);
		assert_int_equal(k8s_gate_end(&g), 0);
		assert_int_equal(g.line, 2);
		fclose(f);
		assert_string_equal(msg, "");
		free(msg);
	}
	FILE *f = open_memstream(&msg, &size);
	diag d;
	k8s_gate g;
	diag_init(&d, f);
	k8s_gate_init(&g, "in.yaml", 0, &d);
	assert_int_equal(k8s_gate_feed(&g, "ab\xe2\x82", 4), 0);
	assert_int_equal(k8s_gate_feed(&g, "z", 1), -EILSEQ);
	fclose(f);
	assert_string_equal(msg, "in.yaml:1:3: invalid UTF-8 (byte 0xe2): Kubernetes objects are UTF-8 text\n");
	free(msg);
}

/* Streams text through a pipe (no size known in advance) with the given bound. */
static int read_pipe(const char *text, size_t len, size_t max, uint64_t *items, char **msg)
{
	int fds[2];
	size_t size = 0;
	FILE *f = open_memstream(msg, &size);
	kstream *s = NULL;
	diag d;
	int r;

	assert_non_null(f);
	assert_int_equal(pipe(fds), 0);
	/* small enough for the pipe buffer, so no writer thread is needed */
	assert_true(len < 4096);
	assert_int_equal(write(fds[1], text, len), (ssize_t)len);
	close(fds[1]);
	diag_init(&d, f);
	assert_int_equal(kstream_new(&s, KSTREAM_AUTO, "pipe.json", &d, NULL, NULL), 0);
	kstream_set_limits(s, max, 0);
	r = kstream_read_fd(s, fds[0]);
	*items = kstream_items(s);
	kstream_free(s);
	close(fds[0]);
	fclose(f);
	return r;
}

static void test_read_bounded(void **state)
{
	char *msg = NULL;
	uint64_t items = 0;
	static const char text[] = "{\"kind\": \"List\", \"items\": [{}]}\n";

	(void)state;
	/* exactly at the bound: read whole */
	assert_int_equal(read_pipe(text, sizeof(text) - 1, sizeof(text) - 1, &items, &msg), 0);
	assert_int_equal(items, 1);
	assert_string_equal(msg, "");
	free(msg);

	/* one byte over: refused, naming the file */
	msg = NULL;
	assert_int_equal(read_pipe(text, sizeof(text) - 1, sizeof(text) - 2, &items, &msg), -EFBIG);
	assert_string_equal(msg, "preemptctl: pipe.json: larger than 31 bytes, refusing to read it\n");
	free(msg);

	/* past the first 64 KiB chunk, YAML pulling from a regular file */
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	for (int i = 0; i < 20000; i++)
		fputs("# padding line\n", tmp);
	fputs("kind: Pod\n", tmp);
	fflush(tmp);
	rewind(tmp);
	size_t size = 0;
	FILE *f = open_memstream(&msg, &size);
	diag d;
	kstream *s = NULL;
	diag_init(&d, f);
	assert_int_equal(kstream_new(&s, KSTREAM_AUTO, "big.yaml", &d, NULL, NULL), 0);
	assert_int_equal(kstream_read_fd(s, fileno(tmp)), 0);
	assert_int_equal(kstream_items(s), 1);
	kstream_free(s);
	/* a bound below the file's size: refused once the bound is passed */
	rewind(tmp);
	assert_int_equal(kstream_new(&s, KSTREAM_AUTO, "big.yaml", &d, NULL, NULL), 0);
	kstream_set_limits(s, 1000, 0);
	assert_int_equal(kstream_read_fd(s, fileno(tmp)), -EFBIG);
	kstream_free(s);
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
		cmocka_unit_test(test_utf8_across_chunks),
		cmocka_unit_test(test_read_bounded),
		cmocka_unit_test(test_loader_rejects_before_parsing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
