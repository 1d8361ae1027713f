/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Asynchronous API calls on an sd-event loop: libcurl's multi interface driven by sd-event io
 * and timer sources (base/curl-event.h, shared with cri/'s gRPC calls), no threads. A slow or
 * absent API server never blocks the loop; every call ends exactly once in its done callback.
 *
 * A client whose credential comes from an exec plugin has it renewed here, on the loop
 * (kexec-async.h), never inside a call: one plugin run at a time, started by the first call after
 * kube_client_renewal_due; calls keep the credential in use while it is valid, and those started
 * while it is not (refused, expired) wait for the run to end. One kube_multi per such client.
 */

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-event.h>

#include "http.h"

typedef struct kube_multi kube_multi;
typedef struct kube_call kube_call;

/* Streamed body bytes (watches); < 0 aborts the call (done gets that error). NULL: buffered. */
typedef int (*kube_data_fn)(kube_call *call, const char *buf, size_t len, void *userdata);

/*
 * The call ended. error: 0 when an HTTP answer came (status set; body holds it when buffered,
 * NUL-terminated, possibly truncated to max_body with error -EFBIG), else -errno (-ETIMEDOUT,
 * -ECONNREFUSED, -EKEYREJECTED for TLS failures, -EIO...) with msg saying what curl saw. The
 * call is freed after the callback returns.
 */
typedef void (*kube_done_fn)(kube_call *call, int error, long status, const char *body, size_t len,
                             const char *msg, void *userdata);

int kube_multi_new(sd_event *e, kube_client *c, kube_multi **ret);
/* Aborts calls in flight without calling their callbacks. */
kube_multi *kube_multi_free(kube_multi *m);
/* The client it was made with. */
kube_client *kube_multi_client(const kube_multi *m);

typedef struct kube_call_opts {
	const char *method, *path, *body, *content_type;
	long timeout_ms;          /* 0: the client's; < 0: none (watches) */
	/*
	 * > 0: end the call when no body byte arrives for that long (watches: a dead connection).
	 * An sd-event timer re-armed only when it fires, not curl's low-speed check, which asks for a
	 * timer every second of an idle stream.
	 */
	long idle_timeout_s;
	/*
	 * Lists: the client's request timeout bounds the time without a byte, and ten times it the
	 * whole call (timeout_ms and idle_timeout_s are then ignored). The API server may need long
	 * to send 150,000 pods whole, and bounds that itself (kube-apiserver's 60 s request timeout,
	 * a 504); client-go sets no deadline on a list at all. A whole-call bound of 30 s cut such a
	 * list at every try, and the watch never synced.
	 */
	bool progress_deadline;
	size_t max_body;          /* buffered answers; 0: 16 MiB */
	kube_data_fn data;        /* NULL: buffered */
	kube_done_fn done;
	void *userdata;
} kube_call_opts;

/* Starts a call. Returns 0 (*ret may be NULL) or -errno; on failure done is not called. */
int kube_multi_start(kube_multi *m, const kube_call_opts *o, kube_call **ret);

/* Aborts one call; its done callback is not called. */
void kube_call_cancel(kube_multi *m, kube_call *call);

/* HTTP status of a streamed call once headers are in (0 before). */
long kube_call_status(const kube_call *call);
/* The userdata the call was started with. */
void *kube_call_userdata(const kube_call *call);
/* The answer's Retry-After in seconds (429, 503), -1 when it had none; valid in the done callback. */
long kube_call_retry_after(const kube_call *call);

unsigned kube_multi_count(const kube_multi *m);
