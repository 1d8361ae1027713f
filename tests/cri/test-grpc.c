/* SPDX-License-Identifier: MIT */
/*
 * The gRPC answer parser (cri/grpc.c) on answers grpcio cannot be made to send: what curl hands
 * over, header line by header line (trailers included, in the order curl replays them) and body
 * chunk by chunk. Each case is an answer a broken or hostile runtime could send.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "grpc.h"

static int run(const char *const *lines, const void *body, size_t body_len, size_t max, const uint8_t **msg,
               size_t *len, char *why, size_t why_size)
{
	grpc_answer a = { .max_message = max };
	int r = 0;
	bool body_done = false;

	for (size_t i = 0; lines[i]; i++) {
		/* curl: the blank line ends the header block; the body comes before the trailers */
		if (strcmp(lines[i], "\r\n") == 0 && !body_done) {
			for (size_t o = 0; o < body_len && r == 0; o += 3) /* chunks unrelated to framing */
				r = grpc_answer_body(&a, (const uint8_t *)body + o, body_len - o < 3 ? body_len - o : 3);
			body_done = true;
			continue;
		}
		grpc_answer_header(&a, lines[i], strlen(lines[i]));
	}
	static uint8_t copy[64];
	r = grpc_answer_finish(&a, msg, len, why, why_size);
	if (r == 0) {
		assert_true(*len <= sizeof(copy));
		memcpy(copy, *msg, *len);
		*msg = copy;
	}
	grpc_answer_done(&a);
	return r;
}

static const uint8_t ok_body[] = { 0, 0, 0, 0, 3, 0x0a, 0x01, 'x' };

static void test_ok_with_trailers(void **state)
{
	const char *lines[] = { "HTTP/2 200\r\n", "content-type: application/grpc\r\n", "\r\n", "grpc-status: 0\r\n",
		                "grpc-message: \r\n", NULL };
	const uint8_t *msg;
	size_t len;
	char why[128];

	(void)state;
	assert_int_equal(run(lines, ok_body, sizeof(ok_body), 1024, &msg, &len, why, sizeof(why)), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(msg, ok_body + 5, 3);
}

static void test_content_type_suffix(void **state)
{
	const char *lines[] = { "HTTP/2 200\r\n", "Content-Type: application/grpc+proto\r\n", "\r\n",
		                "grpc-status: 0\r\n", NULL };
	const uint8_t *msg;
	size_t len;

	(void)state;
	assert_int_equal(run(lines, ok_body, sizeof(ok_body), 1024, &msg, &len, NULL, 0), 0);
}

static void test_trailers_only_error(void **state)
{
	/* an immediate error: one HEADERS block with the status and no body */
	const char *lines[] = { "HTTP/2 200\r\n", "content-type: application/grpc\r\n", "grpc-status: 12\r\n",
		                "grpc-message: unknown method X for service runtime.v1.ImageService%0A%25\r\n", "\r\n",
		                NULL };
	const uint8_t *msg;
	size_t len;
	char why[256];

	(void)state;
	assert_int_equal(run(lines, NULL, 0, 1024, &msg, &len, why, sizeof(why)), -EREMOTEIO);
	/* the name, the code, the decoded message with the control byte made harmless */
	assert_string_equal(why, "UNIMPLEMENTED (12): unknown method X for service runtime.v1.ImageService?%");
}

/* The runtime ran out the grpc-timeout the call sent: the call's deadline, not a refusal. */
static void test_runtime_deadline(void **state)
{
	const char *lines[] = { "HTTP/2 200\r\n", "content-type: application/grpc\r\n", "grpc-status: 4\r\n",
		                "grpc-message: Deadline Exceeded\r\n", "\r\n", NULL };
	const uint8_t *msg;
	size_t len;
	char why[256];

	(void)state;
	assert_int_equal(run(lines, NULL, 0, 1024, &msg, &len, why, sizeof(why)), -ETIMEDOUT);
	assert_string_equal(why, "deadline exceeded: the runtime answered DEADLINE_EXCEEDED (4): Deadline Exceeded");
}

static void test_no_status(void **state)
{
	const char *lines[] = { "HTTP/2 200\r\n", "content-type: application/grpc\r\n", "\r\n", NULL };
	const uint8_t *msg;
	size_t len;
	char why[128];

	(void)state;
	assert_int_equal(run(lines, ok_body, sizeof(ok_body), 1024, &msg, &len, why, sizeof(why)), -EPROTO);
	assert_string_equal(why, "no grpc-status in the answer");
}

static void test_bad_status(void **state)
{
	const char *bad[] = { "grpc-status: 01\r\n", "grpc-status: x\r\n", "grpc-status: \r\n", "grpc-status: 1234\r\n" };
	const uint8_t *msg;
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *lines[] = { "HTTP/2 200\r\n", "content-type: application/grpc\r\n", "\r\n", bad[i], NULL };
		assert_int_equal(run(lines, ok_body, sizeof(ok_body), 1024, &msg, &len, NULL, 0), -EPROTO);
	}
	/* two statuses: which one is true? neither */
	const char *twice[] = { "HTTP/2 200\r\n", "content-type: application/grpc\r\n", "grpc-status: 0\r\n", "\r\n",
		                "grpc-status: 0\r\n", NULL };
	assert_int_equal(run(twice, ok_body, sizeof(ok_body), 1024, &msg, &len, NULL, 0), -EPROTO);
}

static void test_not_grpc(void **state)
{
	const char *http500[] = { "HTTP/2 500\r\n", "content-type: application/grpc\r\n", "\r\n", "grpc-status: 0\r\n",
		                  NULL };
	const char *html[] = { "HTTP/2 200\r\n", "content-type: text/html\r\n", "\r\n", "grpc-status: 0\r\n", NULL };
	const char *grpcweb[] = { "HTTP/2 200\r\n", "content-type: application/grpcweb\r\n", "\r\n",
		                  "grpc-status: 0\r\n", NULL };
	const uint8_t *msg;
	size_t len;
	char why[128];

	(void)state;
	assert_int_equal(run(http500, ok_body, sizeof(ok_body), 1024, &msg, &len, why, sizeof(why)), -EPROTO);
	assert_string_equal(why, "HTTP status 500, not 200: not a gRPC answer");
	assert_int_equal(run(html, ok_body, sizeof(ok_body), 1024, &msg, &len, NULL, 0), -EPROTO);
	assert_int_equal(run(grpcweb, ok_body, sizeof(ok_body), 1024, &msg, &len, NULL, 0), -EPROTO);
}

static void test_framing(void **state)
{
	const char *lines[] = { "HTTP/2 200\r\n", "content-type: application/grpc\r\n", "\r\n", "grpc-status: 0\r\n",
		                NULL };
	const uint8_t compressed[] = { 1, 0, 0, 0, 3, 0x0a, 0x01, 'x' };
	const uint8_t two[] = { 0, 0, 0, 0, 1, 'x', 0, 0, 0, 0, 1, 'y' };
	const uint8_t truncated[] = { 0, 0, 0, 0, 9, 0x0a, 0x01, 'x' };
	const uint8_t short_prefix[] = { 0, 0, 0 };
	const uint8_t huge[] = { 0, 0x7f, 0xff, 0xff, 0xff, 1 };
	const uint8_t *msg;
	size_t len;
	char why[160];

	(void)state;
	assert_int_equal(run(lines, compressed, sizeof(compressed), 1024, &msg, &len, NULL, 0), -EBADMSG);
	assert_int_equal(run(lines, two, sizeof(two), 1024, &msg, &len, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "length prefix 1 disagrees with 7 body bytes (more than one message)");
	assert_int_equal(run(lines, truncated, sizeof(truncated), 1024, &msg, &len, NULL, 0), -EBADMSG);
	assert_int_equal(run(lines, short_prefix, sizeof(short_prefix), 1024, &msg, &len, NULL, 0), -EBADMSG);
	assert_int_equal(run(lines, NULL, 0, 1024, &msg, &len, why, sizeof(why)), -EBADMSG);
	assert_string_equal(why, "no message in an OK answer");
	/* a prefix announcing 2 GiB is refused from the prefix, not after allocating */
	assert_int_equal(run(lines, huge, sizeof(huge), 1024, &msg, &len, NULL, 0), -EFBIG);
}

static void test_bound(void **state)
{
	grpc_answer a = { .max_message = 10 };
	uint8_t chunk[16] = { 0 };
	const uint8_t *msg;
	size_t len;

	(void)state;
	/* 15 = 5 + 10 fits; one byte more and nothing more is kept */
	assert_int_equal(grpc_answer_body(&a, chunk, 15), 0);
	assert_int_equal(grpc_answer_body(&a, chunk, 1), -EFBIG);
	assert_int_equal(a.len, 15);
	grpc_answer_header(&a, "HTTP/2 200", 10);
	assert_int_equal(grpc_answer_finish(&a, &msg, &len, NULL, 0), -EFBIG);
	grpc_answer_done(&a);
}

static void test_timeout_format(void **state)
{
	char b[32];

	(void)state;
	grpc_timeout_format(2000000, b, sizeof(b));
	assert_string_equal(b, "2000m");
	grpc_timeout_format(1, b, sizeof(b));
	assert_string_equal(b, "1m"); /* rounded up: never a zero deadline */
	grpc_timeout_format(UINT64_C(200000000) * 1000, b, sizeof(b));
	assert_string_equal(b, "200000S");
	assert_string_equal(grpc_status_name(4), "DEADLINE_EXCEEDED");
	assert_string_equal(grpc_status_name(99), "UNKNOWN-CODE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok_with_trailers), cmocka_unit_test(test_content_type_suffix),
		cmocka_unit_test(test_trailers_only_error), cmocka_unit_test(test_runtime_deadline), cmocka_unit_test(test_no_status),
		cmocka_unit_test(test_bad_status), cmocka_unit_test(test_not_grpc),
		cmocka_unit_test(test_framing), cmocka_unit_test(test_bound),
		cmocka_unit_test(test_timeout_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
