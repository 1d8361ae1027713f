/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One resource of the API server kept in step, as client-go's reflector keeps an informer: list
 * (first at resourceVersion=0, limit/continue, one page at a time) then watch from the list's
 * resourceVersion with bookmarks and a timeoutSeconds random in [t, 2t); a watch that ends, or is
 * cut after it brought events or lived a second, is resumed at once from the last resourceVersion
 * seen; 410 Gone (too old) relists from that resourceVersion (from etcd if it is too old too);
 * any failure (connection, HTTP error, a body that is not JSON, a very short watch) retries after
 * a jittered exponential back-off, which starts over after two quiet minutes. Objects are decoded as they arrive, one at a time (kstream): memory is
 * one object, not a page or a stream. Nothing blocks: every call runs on the kube_multi of the
 * event loop.
 *
 * The user sees objects through ops: a relist is bracketed by list_begin / list_done (what was not
 * delivered between them is gone), watch events come as ADDED / MODIFIED / DELETED. How to tell a
 * human goes through ops->log; the reflector has no log of its own (kube/ is shared by programs
 * with different journals).
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "kmulti.h"
#include "kval.h"

typedef struct kube_reflector kube_reflector;

typedef enum kube_event_type {
	KUBE_LISTED = 0, /* an item of a (re)list */
	KUBE_ADDED,
	KUBE_MODIFIED,
	KUBE_DELETED,
} kube_event_type;

/* Something worth a log line. verb/path/status set for an API call's outcome (verb NULL: a plain
 * message); error is -errno or 0. */
typedef struct kube_reflector_note {
	int priority; /* syslog */
	const char *verb, *path;
	long status;
	int error;
	const char *text;
} kube_reflector_note;

typedef struct kube_reflector_ops {
	/* A list starts (the first, or a relist). May be NULL. */
	void (*list_begin)(void *userdata);
	/* One object (valid only during the call); source names it in messages (the list or watch
	 * URL). < 0 (-ENOMEM) aborts the call in progress, which is retried. */
	int (*object)(void *userdata, kube_event_type type, const kval *obj, const char *source);
	/* Every page of the list was delivered; rv is the list's resourceVersion. May be NULL. */
	void (*list_done)(void *userdata, const char *rv);
	/* May be NULL: then nothing is told. */
	void (*note)(void *userdata, const kube_reflector_note *n);
} kube_reflector_ops;

typedef struct kube_reflector_opts {
	const char *path;            /* collection path, e.g. "/api/v1/pods" */
	const char *field_selector;  /* unescaped, or NULL */
	const char *what;            /* names the objects in messages: "pod" */
	const char *forbidden_hint;  /* said once with a 403 to the first list, or NULL */
	unsigned page_limit;         /* 0: 500 */
	uint64_t watch_timeout_usec; /* shortest timeoutSeconds, each in [t, 2t); 0: 300 s */
	uint64_t retry_max_usec;     /* back-off cap; 0: 30 s */
} kube_reflector_opts;

typedef struct kube_reflector_stats {
	uint64_t lists;        /* lists completed */
	uint64_t relists_gone; /* relists forced by 410 Gone */
	uint64_t watches;      /* watch calls started */
	uint64_t failures;     /* calls that ended in an error (each retried) */
	uint64_t events;       /* watch events delivered (bookmarks excluded) */
} kube_reflector_stats;

/* The strings of o are copied. */
int kube_reflector_new(sd_event *e, kube_multi *m, const kube_reflector_opts *o, const kube_reflector_ops *ops,
                       void *userdata, kube_reflector **ret);
kube_reflector *kube_reflector_free(kube_reflector *r);

/* Starts the first list. */
void kube_reflector_start(kube_reflector *r);

/* Whether a list has completed at least once (the cache is synced). */
bool kube_reflector_synced(const kube_reflector *r);
/* The resourceVersion the next watch starts from ("" before the first list). */
const char *kube_reflector_resource_version(const kube_reflector *r);
void kube_reflector_get_stats(const kube_reflector *r, kube_reflector_stats *ret);

/*
 * Feeds one watch stream's bytes as if they came from the API server (any chunking), without a
 * call: what a recorded stream replays in benchmarks and tests. Must not be called while a call
 * of the reflector is in progress. Returns 0 or the decoder's / object callback's -errno.
 */
int kube_reflector_replay(kube_reflector *r, const void *buf, size_t len);

/*
 * Without a kube_multi (kube_reflector_new with m NULL), the calls are replayed too: the list or
 * watch the reflector would send now is kube_reflector_replay_request() (its path and query, NULL:
 * none), its body is fed by kube_reflector_replay(), and kube_reflector_replay_end() ends it with
 * an HTTP status as the call's end would: the next list page, a relist after 410 Gone, the watch
 * after the last page, by the same code as with an API server. -EBUSY with a kube_multi.
 */
int kube_reflector_replay_end(kube_reflector *r, long status);
const char *kube_reflector_replay_request(const kube_reflector *r);
