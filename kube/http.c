/* SPDX-License-Identifier: MIT */
/*
 * The API server client (http.h): one kube_client per server with its credentials (certificate,
 * token, or an exec plugin's renewable credential), the curl handle set-up every request shares,
 * and the blocking request and paged list. One file because credentials and request set-up are
 * one contract: a request is made with the credential generation it read, and a 401 marks exactly
 * that generation rejected. The event-loop side is kmulti.c, the exec plugin kexec.c.
 */
#include "http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kexec.h"
#include "clock.h"
#include "grow.h"

struct kube_client {
	char *server;
	char *ca_path, *cert_path, *key_path, *token;
	struct curl_blob ca, cert, key; /* .data owned here */
	long connect_timeout_ms, request_timeout_ms;
	char *user_agent;
	char *proxy_url;
	kube_exec *exec;   /* the credential comes from this plugin, run again before it expires */
	int64_t expiry_ns; /* wall clock; 0: never */
	bool stale;        /* the API server refused the credential (401): run the plugin again */
	int64_t renew_not_before_ns; /* monotonic: after a failed run, not at every request */
	int64_t obtained_ns; /* wall clock: when the plugin last answered */
	bool async_renewal;  /* the plugin runs on the event loop (kmulti), never in kube_easy_setup */
	unsigned cred_gen;   /* counts the plugin's credentials: which one a refused call carried */
};


/* A plugin's credential is renewed this long before its expirationTimestamp (client-go renews at
 * expiry; a request started just before would be refused). */
#define EXEC_RENEW_MARGIN_NS (INT64_C(10) * 1000000000)

static int dup_blob(const kube_blob *in, char **path, struct curl_blob *b)
{
	if (in->path && !(*path = strdup(in->path)))
		return -ENOMEM;
	if (in->data) {
		b->data = malloc(in->len);
		if (!b->data)
			return -ENOMEM;
		memcpy(b->data, in->data, in->len);
		b->len = in->len;
		b->flags = CURL_BLOB_NOCOPY;
	}
	return 0;
}

int kube_client_new(const kube_config *cfg, const kube_client_opts *opts, kube_client **ret)
{
	static bool global_done;
	kube_client *c;

	if (!cfg || !cfg->server)
		return -EINVAL;
	if (!global_done) {
		/* Once, before any handle; evictd-kube is single-threaded. */
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -EIO;
		global_done = true;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->connect_timeout_ms = opts && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 5000;
	c->request_timeout_ms = opts && opts->request_timeout_ms > 0 ? opts->request_timeout_ms : 30000;
	if (!(c->server = strdup(cfg->server)) ||
	    !(c->user_agent = strdup(opts && opts->user_agent ? opts->user_agent : "evictd")) ||
	    dup_blob(&cfg->ca, &c->ca_path, &c->ca) < 0 || dup_blob(&cfg->cert, &c->cert_path, &c->cert) < 0 ||
	    dup_blob(&cfg->key, &c->key_path, &c->key) < 0 || (cfg->token && !(c->token = strdup(cfg->token))) ||
	    (cfg->proxy_url && !(c->proxy_url = strdup(cfg->proxy_url)))) {
		kube_client_free(c);
		return -ENOMEM;
	}
	c->exec = kube_exec_ref(cfg->exec);
	c->expiry_ns = cfg->expiry_ns;
	c->obtained_ns = clock_wall_ns(); /* the kubeconfig ran the plugin just now */
	if (c->exec) {
		c->cert.flags = CURL_BLOB_COPY;
		c->key.flags = CURL_BLOB_COPY;
	}
	*ret = c;
	return 0;
}

static void wipe_blob(struct curl_blob *b)
{
	if (b->data)
		explicit_bzero(b->data, b->len);
	free(b->data);
}

kube_client *kube_client_free(kube_client *c)
{
	if (!c)
		return NULL;
	free(c->server);
	free(c->ca_path);
	free(c->cert_path);
	free(c->key_path);
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	wipe_blob(&c->ca);
	wipe_blob(&c->cert);
	wipe_blob(&c->key);
	free(c->user_agent);
	free(c->proxy_url);
	kube_exec_unref(c->exec);
	free(c);
	return NULL;
}

const char *kube_client_server(const kube_client *c)
{
	return c->server;
}

void kube_client_describe(const kube_client *c, char *buf, size_t size)
{
	snprintf(buf, size, "API server %s, CA %s%s%s", c->server,
	         c->ca.data ? "certificate-authority-data" : c->ca_path ? c->ca_path : "the system's trust store",
	         c->proxy_url ? ", proxy " : "", c->proxy_url ? c->proxy_url : "");
}

int kube_client_set_token(kube_client *c, const char *token)
{
	char *t = strdup(token);

	if (!t)
		return -ENOMEM;
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	c->token = t;
	return 0;
}

long kube_client_request_timeout_ms(const kube_client *c)
{
	return c->request_timeout_ms;
}

unsigned kube_client_credential_gen(const kube_client *c)
{
	return c->cred_gen;
}

void kube_client_credential_rejected_gen(kube_client *c, unsigned gen)
{
	/* a call that went out before the last renewal says nothing about the new credential */
	if (gen == c->cred_gen)
		kube_client_credential_rejected(c);
}

void kube_client_credential_rejected(kube_client *c)
{
	if (c->exec)
		c->stale = true;
}

void kube_client_set_credential(kube_client *c, kube_exec_cred *cred)
{
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	c->token = cred->token;
	if (cred->cert) {
		wipe_blob(&c->cert);
		wipe_blob(&c->key);
		/* curl copies a blob set with CURL_BLOB_COPY: a renewal cannot pull it from under a
		 * transfer in flight */
		c->cert = (struct curl_blob){ .data = cred->cert, .len = cred->cert_len, .flags = CURL_BLOB_COPY };
		c->key = (struct curl_blob){ .data = cred->key, .len = cred->key_len, .flags = CURL_BLOB_COPY };
	}
	c->obtained_ns = clock_wall_ns();
	c->expiry_ns = cred->expiry_ns;
	c->stale = false;
	c->renew_not_before_ns = 0;
	c->cred_gen++;
	*cred = (kube_exec_cred){ 0 };
}

void kube_client_renewal_failed(kube_client *c, int64_t retry_ns)
{
	c->renew_not_before_ns = clock_mono_ns() + retry_ns;
}

/* Runs the plugin again; on failure the old credential stays (the server will say 401 again,
 * and the next request tries once more). */
static void exec_renew(kube_client *c)
{
	kube_exec_cred cred;
	char err[600];

	if (clock_mono_ns() < c->renew_not_before_ns)
		return;
	if (kube_exec_run(c->exec, &cred, err, sizeof(err)) < 0) {
		/* said on stderr (the journal under systemd): the requests fail with 401 meanwhile */
		fprintf(stderr, "%s (tried again in %d s)\n", err, (int)(KUBE_EXEC_RETRY_NS / 1000000000));
		kube_client_renewal_failed(c, KUBE_EXEC_RETRY_NS);
		return;
	}
	kube_client_set_credential(c, &cred);
}

static bool exec_due(const kube_client *c)
{
	if (!c->exec)
		return false;
	if (c->stale)
		return true;
	if (!c->expiry_ns)
		return false;
	return clock_wall_ns() + EXEC_RENEW_MARGIN_NS >= c->expiry_ns;
}

kube_exec *kube_client_exec(const kube_client *c)
{
	return c->exec;
}

void kube_client_set_async_renewal(kube_client *c, bool async)
{
	c->async_renewal = async;
}

/*
 * Asynchronous renewal starts early: at 80% of the credential's lifetime, or sooner when less than
 * the plugin's deadline and two retry delays would be left then, so that a plugin that hangs
 * until it is killed still leaves time to run it again before the credential lapses. Never before a tenth
 * of the lifetime has passed: a credential shorter than that margin is not renewed in a loop.
 */
bool kube_client_renewal_due(const kube_client *c)
{
	int64_t now, life, at, late;

	if (!c->exec)
		return false;
	if (clock_mono_ns() < c->renew_not_before_ns)
		return false;
	if (c->stale)
		return true;
	if (!c->expiry_ns)
		return false;
	now = clock_wall_ns();
	life = c->expiry_ns - c->obtained_ns;
	at = c->obtained_ns + life / 10 * 8;
	late = c->expiry_ns - 2 * KUBE_EXEC_RETRY_NS - (int64_t)KUBE_EXEC_DEADLINE_MS * 1000000;
	if (late < at)
		at = late;
	if (at < c->obtained_ns + life / 10)
		at = c->obtained_ns + life / 10;
	return now >= at;
}

int64_t kube_client_expiry_ns(const kube_client *c)
{
	return c->expiry_ns;
}

bool kube_client_credential_valid(const kube_client *c)
{
	if (!c->exec)
		return true;
	return !c->stale && (!c->expiry_ns || clock_wall_ns() < c->expiry_ns);
}

int kube_easy_setup(kube_client *c, CURL *h, const char *method, const char *path, const char *body,
                    const char *content_type, long timeout_ms, struct curl_slist **headers)
{
	struct curl_slist *hl = NULL, *t;
	char *url = NULL;
	char ct[128];
	CURLcode cc = CURLE_OK;

	*headers = NULL;
	/* with an event loop, kmulti runs the plugin without blocking it (kexec-async.h) */
	if (!c->async_renewal && exec_due(c))
		exec_renew(c);
	if (asprintf(&url, "%s%s", c->server, path) < 0)
		return -ENOMEM;
	/* every option below is set on every use: handles are reused across requests */
	cc |= curl_easy_setopt(h, CURLOPT_URL, url);
	free(url); /* curl copies strings */
	cc |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	cc |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	cc |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	cc |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	cc |= curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent);
	cc |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
	cc |= curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms < 0 ? 0L : timeout_ms ? timeout_ms
	                                                                              : c->request_timeout_ms);
	if (c->ca.data) {
		cc |= curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &c->ca);
		cc |= curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	} else if (c->ca_path) {
		cc |= curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_path);
		cc |= curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	if (c->cert.data)
		cc |= curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &c->cert);
	else if (c->cert_path)
		cc |= curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_path);
	if (c->key.data)
		cc |= curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &c->key);
	else if (c->key_path)
		cc |= curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_path);
	if (c->proxy_url)
		cc |= curl_easy_setopt(h, CURLOPT_PROXY, c->proxy_url);
	if (c->token) {
		cc |= curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
		cc |= curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, c->token);
	}
	if (strcmp(method, "GET") == 0)
		cc |= curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	else {
		cc |= curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
		if (body) {
			cc |= curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
			cc |= curl_easy_setopt(h, CURLOPT_COPYPOSTFIELDS, body);
		}
	}
	if (!(t = curl_slist_append(hl, "Accept: application/json")))
		goto nomem;
	hl = t;
	/* no "Expect: 100-continue" round trip (up to 1 s) before a request body */
	if (!(t = curl_slist_append(hl, "Expect:")))
		goto nomem;
	hl = t;
	if (content_type) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", content_type);
		if (!(t = curl_slist_append(hl, ct)))
			goto nomem;
		hl = t;
	}
	cc |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
	if (cc != CURLE_OK) {
		curl_slist_free_all(hl);
		return -EINVAL;
	}
	*headers = hl;
	return 0;
nomem:
	curl_slist_free_all(hl);
	return -ENOMEM;
}

size_t kube_body_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	kube_body *b = userdata;
	size_t n = size * nmemb;

	if (b->len + n > b->max) {
		b->overflow = true;
		return 0; /* aborts the transfer */
	}
	if (GROW_ARRAY_FROM(&b->buf, &b->cap, b->len + n + 1, 4096) < 0)
		return 0;
	memcpy(b->buf + b->len, ptr, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return n;
}

void kube_body_free(kube_body *b)
{
	free(b->buf);
	*b = (kube_body){ 0 };
}

int kube_curl_errno(CURLcode cc)
{
	switch (cc) {
	case CURLE_OK:
		return 0;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_WRITE_ERROR:
		return -EFBIG;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CONNECT_ERROR:
		return -EKEYREJECTED;
	default:
		return -EIO;
	}
}

int kube_request(kube_client *c, const char *method, const char *path, const char *body,
                 const char *content_type, size_t max_body, long *ret_status, char **ret_body,
                 size_t *ret_len, char *err, size_t err_size)
{
	kube_body b = { .max = max_body };
	struct curl_slist *hl = NULL;
	char cerr[CURL_ERROR_SIZE] = "";
	CURL *h = curl_easy_init();
	long status = 0;
	bool retried = false;
	CURLcode cc;
	int r;

	if (!h)
		return -ENOMEM;
retry:
	r = kube_easy_setup(c, h, method, path, body, content_type, 0, &hl);
	if (r < 0)
		goto out;
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, kube_body_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	cc = curl_easy_perform(h);
	if (cc != CURLE_OK) {
		r = b.overflow ? -EFBIG : kube_curl_errno(cc);
		snprintf(err, err_size, "%s %s: %s", method, path,
		         b.overflow ? "response too large" : cerr[0] ? cerr : curl_easy_strerror(cc));
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	/* an exec plugin's credential refused: renewed and tried once more, as client-go does */
	if (status == 401 && c->exec && !retried) {
		retried = true;
		kube_client_credential_rejected(c);
		kube_body_free(&b);
		b = (kube_body){ .max = max_body };
		curl_slist_free_all(hl);
		hl = NULL;
		goto retry;
	}
	*ret_status = status;
	if (ret_body) {
		*ret_body = b.buf ? b.buf : strdup("");
		if (!*ret_body) {
			r = -ENOMEM;
			goto out;
		}
		b.buf = NULL;
	}
	if (ret_len)
		*ret_len = b.len;
	r = 0;
out:
	kube_body_free(&b);
	curl_slist_free_all(hl);
	curl_easy_cleanup(h);
	return r;
}

typedef struct list_ctx {
	const kube_list_ops *ops;
	void *userdata;
	int error;
	long status;
	kube_body errbody; /* a non-200 answer's body, for the message */
} list_ctx;

static size_t list_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	list_ctx *l = userdata;

	if (l->status != 200)
		return kube_body_write(ptr, size, nmemb, &l->errbody);
	int r = l->ops->chunk(l->userdata, ptr, size * nmemb);
	if (r < 0) {
		l->error = r;
		return 0;
	}
	return size * nmemb;
}

static size_t list_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	list_ctx *l = userdata;
	size_t n = size * nmemb;
	int code;

	/* "HTTP/1.1 200 OK" / "HTTP/2 200": the status line of each response */
	if (n > 5 && memcmp(ptr, "HTTP/", 5) == 0) {
		const char *sp = memchr(ptr, ' ', n);
		if (sp && sscanf(sp, " %d", &code) == 1)
			l->status = code;
	}
	return n;
}

int kube_list(kube_client *c, const char *path, unsigned limit, const kube_list_ops *ops, void *userdata,
              char *err, size_t err_size)
{
	char cont[4096] = "";
	char cerr[CURL_ERROR_SIZE];
	CURL *h = curl_easy_init();
	bool retried = false;
	int r = 0;

	if (!h)
		return -ENOMEM;
	for (;;) {
		list_ctx l = { .ops = ops, .userdata = userdata, .errbody = { .max = 4096 } };
		struct curl_slist *hl = NULL;
		char *url = NULL, *esc = NULL;
		CURLcode cc;

		if (cont[0] && !(esc = kube_escape(cont))) {
			r = -ENOMEM;
			break;
		}
		if (asprintf(&url, "%s%climit=%u%s%s", path, strchr(path, '?') ? '&' : '?', limit,
		             esc ? "&continue=" : "", esc ? esc : "") < 0) {
			free(esc);
			r = -ENOMEM;
			break;
		}
		free(esc);
		r = kube_easy_setup(c, h, "GET", url, NULL, NULL, -1, &hl);
		free(url);
		if (r < 0)
			break;
		cerr[0] = '\0';
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 0L);
		/* a stalled server fails the list instead of hanging it */
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (c->request_timeout_ms + 999) / 1000);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, list_write);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, &l);
		curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, list_header);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, &l);
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
		cc = curl_easy_perform(h);
		curl_slist_free_all(hl);
		if (l.error < 0) {
			r = l.error;
			snprintf(err, err_size, "GET %s: reading the list failed", path);
			kube_body_free(&l.errbody);
			break;
		}
		if (cc != CURLE_OK) {
			r = kube_curl_errno(cc);
			snprintf(err, err_size, "GET %s: %s", path, cerr[0] ? cerr : curl_easy_strerror(cc));
			kube_body_free(&l.errbody);
			break;
		}
		if (l.status == 401 && c->exec && !retried) {
			retried = true;
			kube_client_credential_rejected(c);
			kube_body_free(&l.errbody);
			continue; /* the same page, with the plugin's new credential */
		}
		if (l.status != 200) {
			r = l.status == 403 ? -EACCES : l.status == 410 ? -ESTALE : l.status == 404 ? -ENOENT : -EIO;
			snprintf(err, err_size, "GET %s: HTTP %ld: %.300s", path, l.status,
			         l.errbody.buf ? l.errbody.buf : "");
			kube_body_free(&l.errbody);
			break;
		}
		kube_body_free(&l.errbody);
		cont[0] = '\0';
		r = ops->page_end(userdata, cont, sizeof(cont));
		if (r < 0) {
			snprintf(err, err_size, "GET %s: reading the list failed", path);
			break;
		}
		if (!cont[0])
			break;
	}
	curl_easy_cleanup(h);
	return r;
}

char *kube_escape(const char *s)
{
	char *e = curl_easy_escape(NULL, s, 0), *r;

	if (!e)
		return NULL;
	r = strdup(e);
	curl_free(e);
	return r;
}
