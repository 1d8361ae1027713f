/* SPDX-License-Identifier: MIT */
/*
 * preemptd's API writes, in chains: the steps of a chain go one after the other (a victim's
 * condition, then its DELETE, then its Event), chains go side by side up to a bound. Every step
 * is guarded and idempotent or refused by the API server when it no longer applies:
 *   - before it is sent (and before each retry) the model is asked whether it still means
 *     anything (cluster_write_wanted): a pod gone, replaced or bound meanwhile drops the chain;
 *   - 2xx: the next step; 409 (someone else decided), 404 (gone), 422 (a replaced pod's uid
 *     guard), 403 and other refusals end the chain, and the model drops what it assumed;
 *   - 5xx, 429 and a failed connection are retried with a jittered back-off, a 429's or 503's
 *     Retry-After honoured — unless the hooks call the answer a refusal (an eviction's 429 from a
 *     PodDisruptionBudget is no load to wait out);
 *   - only while the gate allows (the Lease holder), and never with a timeout that would let a
 *     request land after the lease could have expired.
 */
#ifndef CTL_WRITER_H
#define CTL_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "model-cluster.h"
#include "transport.h"

typedef struct writer writer;

#define WRITER_STEPS_MAX 4

typedef struct write_step {
	cluster_write kind;
	const char *verb; /* "POST", "PATCH", "DELETE" */
	char *path;       /* owned */
	const char *content_type;
	char *body;       /* owned, may be NULL */
} write_step;

/* A chain about one pod. Filled by the caller, handed over with writer_submit(). */
typedef struct write_chain write_chain;

/* How a step ended. */
typedef enum write_result {
	WRITE_OK = 0,
	WRITE_OBSOLETE,  /* not sent (or not re-sent): the model says it means nothing any more */
	WRITE_CONFLICT,  /* 409 */
	WRITE_GONE,      /* 404, or 422 from the uid guard: the pod is not that pod any more */
	WRITE_REFUSED,   /* 403, 400, other 4xx */
	WRITE_ABANDONED, /* leadership lost, or shutting down */
} write_result;
const char *write_result_name(write_result r);

typedef struct writer_hooks {
	/* May a write start now? *ret_timeout_ms: the longest it may take (the lease's remaining
	 * time), 0 for the transport's default. NULL: always. */
	bool (*may_write)(void *userdata, long *ret_timeout_ms);
	/* A step ended (logs, metrics); node: write_chain_set_node's. status: the HTTP status (0 when none); msg: the Status message
	 * or the failure. May be NULL. */
	void (*step_done)(void *userdata, const char *ns, const char *name, const char *node, const write_step *st,
	                  write_result r, long status, const char *msg);
	/* A 429 or 5xx answer to st that ends the chain (WRITE_REFUSED) instead of being retried.
	 * NULL: every one is retried. */
	bool (*refusal)(void *userdata, const write_step *st, const transport_answer *a);
	void *userdata;
} writer_hooks;

typedef struct writer_opts {
	unsigned max_in_flight;   /* 0: 32 */
	uint64_t retry_max_usec;  /* back-off cap; 0: 30 s */
	/* Past this many chains unfinished (waiting for a slot, a retry or an answer), a chain of
	 * Events only is dropped instead of queued (0: 1000, client-go's event broadcaster queue): a
	 * slow or absent API server costs Events, not memory. */
	unsigned max_waiting_events;
} writer_opts;

/* e may be NULL (then nothing is retried: a failed step ends its chain). */
int writer_new(sd_event *e, transport *t, cluster *c, const writer_opts *o, const writer_hooks *h, writer **ret);
/* Pending writes are dropped (their assumptions too: writer_abandon_all). */
writer *writer_free(writer *w);

/* A chain about pod ns/name (uid). NULL when out of memory. */
write_chain *write_chain_new(const char *ns, const char *name, const char *uid);
/* Adds a step (path and body are taken, even on failure). 0 or -ENOMEM / -E2BIG; a NULL path or
 * body (not built) is refused with -ENOMEM, or -E2BIG when errno says the body was too big. */
int write_chain_add(write_chain *ch, cluster_write kind, const char *verb, char *path, const char *content_type,
                    char *body);
/* The node the chain is about (for what the hooks tell). 0 or -ENOMEM. */
int write_chain_set_node(write_chain *ch, const char *node);
/* How a chain ended: r of its last step (WRITE_OK: every step landed), the HTTP status (0: none)
 * and the answer's body when one came (NULL otherwise; valid during the call). */
typedef void (*write_end_fn)(void *userdata, write_result r, long status, const char *body, size_t len);
/* fn runs once when the writer ends the chain, however it ends (refused, made obsolete, dropped or
 * abandoned included). */
void write_chain_on_end(write_chain *ch, write_end_fn fn, void *userdata);
write_chain *write_chain_free(write_chain *ch);

/* A chain about pod ns/name (uid) made of steps[0..n) (their paths and bodies taken, even on
 * failure; what write_chain_add refuses, refused here) and handed over as writer_submit does:
 * the one call for a chain whose steps are known. node, on_end: as write_chain_set_node and
 * write_chain_on_end (NULL: none). 0, or -ENOMEM / -E2BIG: then nothing is sent and the chain is
 * dropped as writer_drop drops it (on_end told, the model forgets what the steps assumed). */
int writer_send(writer *w, const char *ns, const char *name, const char *uid, const char *node, write_step *steps,
                size_t n, write_end_fn on_end, void *userdata);

/* Takes the chain; it starts when a slot is free (and the gate allows). */
void writer_submit(writer *w, write_chain *ch);
/* A chain that will not be sent: the model forgets what its steps assumed. */
void writer_drop(writer *w, write_chain *ch);
/* Every chain dropped, in flight or waiting; the model forgets what they assumed. */
void writer_abandon_all(writer *w);
/* Chains waiting for a slot: started now if the gate allows (after it opened). */
void writer_kick(writer *w);

typedef struct writer_stats {
	uint64_t sent, retries, obsolete, abandoned;
	uint64_t queue_full;      /* chains of Events dropped: too many writes unfinished */
	size_t in_flight, waiting;
} writer_stats;
void writer_get_stats(const writer *w, writer_stats *ret);

/* Requests answered, by verb and HTTP status (status 0: no answer). Calls fn for each pair. */
void writer_foreach_code(const writer *w, void (*fn)(void *userdata, const char *verb, long status, uint64_t n),
                         void *userdata);

#endif
