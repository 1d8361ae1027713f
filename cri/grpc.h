/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Unary gRPC calls over HTTP/2 cleartext on a unix socket, with libcurl (prior knowledge, no
 * TLS) driven by an sd-event loop through the multi interface: no thread, no blocking call. The
 * protocol is grpc/grpc doc/PROTOCOL-HTTP2.md: POST /<package>.<Service>/<Method>, content-type
 * application/grpc, te: trailers, grpc-timeout; one Length-Prefixed-Message each way; the status
 * in the trailers (grpc-status, grpc-message), or alone in a Trailers-Only answer.
 *
 * Every call has a deadline (sent as grpc-timeout and enforced locally by curl) and a bound on
 * the answer's size; an answer is accepted only whole and well-formed: HTTP status 200, a gRPC
 * content type, exactly one uncompressed message whose length prefix matches the body, and a
 * grpc-status trailer. Anything else ends the call with an error that says what was wrong.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* grpc-status codes (grpc/grpc include/grpc/impl/codegen/status.h) that the client names. */
enum {
	GRPC_OK = 0,
	GRPC_DEADLINE_EXCEEDED = 4,
	GRPC_NOT_FOUND = 5,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_STATUS_MAX = 16,
};

/* "OK", "CANCELLED", ... "UNAUTHENTICATED"; "UNKNOWN-CODE" for others. */
const char *grpc_status_name(long code);

/*
 * The answer to one call, assembled from what curl hands over (header lines, trailers included,
 * and body bytes). Pure: the fuzz target and the unit tests feed it directly.
 */
typedef struct grpc_answer {
	size_t max_message;  /* the largest message accepted (bytes of protobuf) */
	long http_status;    /* from the status line; 0 before it */
	bool grpc_content;   /* content-type application/grpc or application/grpc+... */
	bool has_status;
	long grpc_status;
	char grpc_message[256]; /* percent-decoded, truncated; control bytes replaced by '?' */
	uint8_t *body;       /* the raw DATA bytes, prefix included */
	size_t len, cap;
	bool overflow;       /* more than max_message + 5 bytes came */
	bool bad_header;     /* a grpc-status that is not a decimal code, or seen twice */
} grpc_answer;

/* One header line as curl gives it ("name: value\r\n" or "HTTP/2 200\r\n"). Never fails. */
void grpc_answer_header(grpc_answer *a, const char *line, size_t len);
/* Body bytes; returns -EFBIG once the bound is passed (the rest is not kept), -ENOMEM. */
int grpc_answer_body(grpc_answer *a, const void *data, size_t len);
/*
 * After the exchange: 0 with *msg and *len the single message (pointing into a->body), or
 * -EPROTO (not a gRPC answer, no grpc-status), -ETIMEDOUT (grpc-status DEADLINE_EXCEEDED: the
 * grpc-timeout sent ran out on the runtime's side), -EREMOTEIO (any other grpc-status not OK), -EBADMSG (the
 * framing: no message, two, compressed, a length that disagrees with the body), -EFBIG (over the
 * bound). why (may be NULL) says what, for the log.
 */
int grpc_answer_finish(const grpc_answer *a, const uint8_t **msg, size_t *len, char *why, size_t why_size);
void grpc_answer_done(grpc_answer *a);

/* "2000m": a grpc-timeout header value of at most 8 digits for usec (rounded up). */
void grpc_timeout_format(uint64_t usec, char *buf, size_t size);

/* --- calls on an event loop ----------------------------------------------------------------- */

typedef struct grpc_channel grpc_channel;
typedef struct grpc_call grpc_call;

/*
 * A call ended. error: 0 and msg/len the answer's message (valid during the callback only), or
 * -errno as for grpc_answer_finish, or -ETIMEDOUT (the deadline), -ECONNREFUSED / -ENOENT /
 * -EACCES (the socket), -EIO; grpc_status is the code the server sent (-1 when none), why the
 * reason in words. The call is freed after the callback.
 */
typedef void (*grpc_done_fn)(int error, long grpc_status, const uint8_t *msg, size_t len, const char *why,
                             void *userdata);

/* socket_path: the unix socket (at most 107 bytes, the kernel's sun_path). */
int grpc_channel_new(sd_event *e, const char *socket_path, const char *user_agent, grpc_channel **ret);
/* Ends the calls in flight: each done is called with -ECANCELED (to free what it holds). */
grpc_channel *grpc_channel_free(grpc_channel *ch);
const char *grpc_channel_socket(const grpc_channel *ch);

typedef struct grpc_call_opts {
	const char *path;        /* "/runtime.v1.ImageService/ListImages" */
	const uint8_t *request;  /* the serialized request message (copied) */
	size_t request_len;
	uint64_t timeout_usec;   /* the deadline; > 0 */
	size_t max_message;      /* the largest answer accepted */
	grpc_done_fn done;
	void *userdata;
} grpc_call_opts;

/* Starts a call. 0 (*ret may be NULL) or -errno; on failure done is not called. */
int grpc_call_start(grpc_channel *ch, const grpc_call_opts *o, grpc_call **ret);
/* Aborts one call; done is not called. */
void grpc_call_cancel(grpc_channel *ch, grpc_call *call);
unsigned grpc_channel_calls(const grpc_channel *ch);
