/* SPDX-License-Identifier: MIT */
/*
 * Where preemptd's requests go: one call in, one answer out, asynchronously. The daemon's
 * transport is kube/'s libcurl multi interface on sd-event (transport_kube); a benchmark or a
 * test puts a counting sink in its place, so that what is measured is preemptd and not a server.
 */
#ifndef CTL_TRANSPORT_H
#define CTL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "kmulti.h"

typedef struct transport_request {
	const char *method, *path, *content_type, *body; /* body: NUL-terminated, or NULL */
	long timeout_ms;                                 /* 0: the client's */
} transport_request;

typedef struct transport_answer {
	int error;   /* 0: an HTTP answer came (status set); else -errno with msg */
	long status;
	const char *body; /* NUL-terminated */
	size_t len;
	long retry_after_s; /* Retry-After of a 429/503, -1 when none */
	const char *msg;
} transport_answer;

typedef void (*transport_done_fn)(void *userdata, const transport_answer *a);

typedef struct transport transport;
struct transport {
	/* Starts a call; done runs exactly once, later (never from inside start). 0 or -errno. */
	int (*start)(transport *t, const transport_request *rq, transport_done_fn done, void *userdata,
	             void **ret_handle);
	/* Drops a call in flight; its done does not run. */
	void (*cancel)(transport *t, void *handle);
	void (*free)(transport *t);
};

/* The API server through m (which must outlive it). */
int transport_kube_new(kube_multi *m, transport **ret);

/* --shadow's: GETs go to inner (which it owns from then on), every write is refused (-EROFS,
 * logged as the bug it is, counted). */
int transport_readonly_new(transport *inner, transport **ret);
/* Writes refused so far (0 for any other transport). */
uint64_t transport_readonly_refused(const transport *t);

#endif
