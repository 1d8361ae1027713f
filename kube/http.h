/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * HTTPS to the API server with libcurl: TLS always verified against the kubeconfig's CA (file
 * or blob), client certificate and key from files or blobs, or a bearer token. Credentials
 * never reach a log: curl's verbose mode is never enabled and messages carry only the method,
 * the path and curl's error text.
 */

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kubeconfig.h"

typedef struct kube_client kube_client;

typedef struct kube_client_opts {
	long connect_timeout_ms; /* 0: 5 s */
	long request_timeout_ms; /* 0: 30 s; watches use their own bound (see kube_watch_path) */
	const char *user_agent;  /* NULL: "evictd" */
} kube_client_opts;

/* Takes nothing from cfg (copies what it needs). Returns 0 or -ENOMEM / -EINVAL. */
int kube_client_new(const kube_config *cfg, const kube_client_opts *opts, kube_client **ret);
kube_client *kube_client_free(kube_client *c);

const char *kube_client_server(const kube_client *c);
/* "API server URL, CA FILE" (or the kubeconfig's certificate-authority-data, or the system's trust
 * store; and the proxy when one is set): what a connection or TLS failure is about. */
void kube_client_describe(const kube_client *c, char *buf, size_t size);

/* Replaces the bearer token (a projected service-account token is rotated on disk by the kubelet;
 * the caller re-reads it). Calls started afterwards use it. 0 or -ENOMEM. */
int kube_client_set_token(kube_client *c, const char *token);

/* Every call's bound but watches and lists (opts' request_timeout_ms, 30 s by default). */
long kube_client_request_timeout_ms(const kube_client *c);

/* The API server answered 401: with an exec plugin, the next request runs it again for a new
 * credential (kube_request and kube_list do so themselves, and retry once). */
void kube_client_credential_rejected(kube_client *c);
/* The same for a call set up while kube_client_credential_gen said gen: a 401 to a call that went
 * out with the credential before the last renewal does not run the plugin again. */
unsigned kube_client_credential_gen(const kube_client *c);
void kube_client_credential_rejected_gen(kube_client *c, unsigned gen);

/* A failed plugin run is tried again after this long, not at every request. */
#define KUBE_EXEC_RETRY_NS (INT64_C(10) * 1000000000)

/* The exec plugin the credential comes from, NULL when none. */
struct kube_exec *kube_client_exec(const kube_client *c);
/* true: requests never run the plugin themselves; the event loop's owner (kmulti) renews the
 * credential when kube_client_renewal_due says so and hands it over with
 * kube_client_set_credential. */
void kube_client_set_async_renewal(kube_client *c, bool async);
bool kube_client_renewal_due(const kube_client *c);
/* false while the credential was refused (401) or has expired: requests should wait for the
 * renewal rather than be refused. Always true without an exec plugin. */
bool kube_client_credential_valid(const kube_client *c);
/* Takes the plugin's answer (*cred is emptied). */
struct kube_exec_cred;
void kube_client_set_credential(kube_client *c, struct kube_exec_cred *cred);
/* The credential's expirationTimestamp (wall clock, ns); 0: it does not expire. */
int64_t kube_client_expiry_ns(const kube_client *c);
/* The next renewal not before retry_ns from now. */
void kube_client_renewal_failed(kube_client *c, int64_t retry_ns);

/*
 * Prepares an easy handle for METHOD server+path with an optional body (copied by curl) and
 * content type. *headers receives the list to free after the transfer (curl_slist_free_all).
 * timeout_ms 0: the client's request timeout; < 0: none (watches, bounded by low-speed limits).
 */
int kube_easy_setup(kube_client *c, CURL *h, const char *method, const char *path, const char *body,
                    const char *content_type, long timeout_ms, struct curl_slist **headers);

/* Bounded response body collection for curl's write callback. */
typedef struct kube_body {
	char *buf;
	size_t len, cap, max;
	bool overflow;
} kube_body;

size_t kube_body_write(char *ptr, size_t size, size_t nmemb, void *userdata);
void kube_body_free(kube_body *b);

/*
 * Synchronous request (preemptctl, tests; never from an event loop). Returns 0 with the HTTP
 * status in *ret_status and the body (NUL-terminated, at most max_body) in *ret_body, or
 * -EIO / -ETIMEDOUT / -ECONNREFUSED / -EFBIG with err[] saying "METHOD path: what".
 */
int kube_request(kube_client *c, const char *method, const char *path, const char *body,
                 const char *content_type, size_t max_body, long *ret_status, char **ret_body,
                 size_t *ret_len, char *err, size_t err_size);

/* A page-by-page list reader (limit/continue), synchronous. */
typedef struct kube_list_ops {
	/* Bytes of the current page's body, in any chunking; < 0 aborts. */
	int (*chunk)(void *userdata, const void *buf, size_t len);
	/* The page ended (HTTP 200): copy its metadata.continue into cont ("" for the last page). */
	int (*page_end)(void *userdata, char *cont, size_t cont_size);
} kube_list_ops;

/*
 * GET path?limit=N[&continue=...] until the last page. path may hold a query already. A non-200
 * answer stops with -EIO (403: -EACCES, 410: -ESTALE: the continue token expired, relist) and
 * err[] holding the status and the Status message.
 */
int kube_list(kube_client *c, const char *path, unsigned limit, const kube_list_ops *ops, void *userdata,
              char *err, size_t err_size);

/* Maps a finished transfer's CURLcode to -errno. */
int kube_curl_errno(CURLcode cc);

/* URL query escaping for a value (field selectors, continue tokens). Returns malloc'ed or NULL. */
char *kube_escape(const char *s);
