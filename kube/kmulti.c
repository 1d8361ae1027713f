/* SPDX-License-Identifier: MIT */
#include "kmulti.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "curl-event.h"
#include "kexec-async.h"
#include "clock.h"

#define DEFAULT_MAX_BODY (16u * 1024 * 1024)

struct kube_call {
	kube_multi *m;
	kube_call *prev, *next;
	CURL *h;
	struct curl_slist *headers;
	kube_body body;
	kube_data_fn data;
	kube_done_fn done;
	void *userdata;
	long status;
	long retry_after_s; /* a Retry-After header in seconds, -1 when none */
	int error; /* from the data callback */
	sd_event_source *idle_timer; /* idle_timeout_s: no body byte for idle_usec ends the call */
	uint64_t idle_usec, last_data_usec;
	char cerr[CURL_ERROR_SIZE];
	/* started while the credential was being renewed and unusable: set up once it is in */
	bool waiting;
	char *method, *path, *body_copy, *content_type;
	long timeout_ms, idle_timeout_s;
	bool progress_deadline; /* a list: its timeout is a failure, not a stream's normal end */
	unsigned cred_gen; /* the client's credential it went out with */
};

struct kube_multi {
	sd_event *event;
	kube_client *client;
	curl_event *loop;
	CURLM *multi; /* curl_event_multi(loop) */
	kube_call *calls;
	unsigned n_calls;
	kube_exec_job *renewal; /* the exec plugin, running; one at a time */
};

static void call_done(CURL *easy, CURLcode cc, void *userdata);
static void call_finish(kube_multi *m, kube_call *c, int error, long status, const char *text);

int kube_multi_new(sd_event *e, kube_client *c, kube_multi **ret)
{
	kube_multi *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	m->event = sd_event_ref(e);
	m->client = c;
	if (kube_client_exec(c))
		kube_client_set_async_renewal(c, true);
	r = curl_event_new(e, "kube-http", call_done, m, &m->loop);
	if (r < 0) {
		kube_multi_free(m);
		return r;
	}
	m->multi = curl_event_multi(m->loop);
	*ret = m;
	return 0;
}

static void call_free(kube_multi *m, kube_call *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		m->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	m->n_calls--;
	sd_event_source_disable_unref(c->idle_timer);
	curl_multi_remove_handle(m->multi, c->h);
	curl_easy_cleanup(c->h);
	curl_slist_free_all(c->headers);
	kube_body_free(&c->body);
	free(c->method);
	free(c->path);
	free(c->body_copy);
	free(c->content_type);
	free(c);
}

kube_client *kube_multi_client(const kube_multi *m)
{
	return m->client;
}

kube_multi *kube_multi_free(kube_multi *m)
{
	if (!m)
		return NULL;
	m->renewal = kube_exec_job_free(m->renewal);
	while (m->calls)
		call_free(m, m->calls);
	curl_event_free(m->loop);
	sd_event_unref(m->event);
	free(m);
	return NULL;
}

static size_t call_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	kube_call *c = userdata;
	size_t n = size * nmemb;

	if (c->status == 0)
		curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &c->status);
	if (c->idle_timer) /* the loop's cached time: no clock read per chunk */
		(void)sd_event_now(c->m->event, CLOCK_MONOTONIC, &c->last_data_usec);
	/* a streamed call passes on only a 200's body; errors are buffered for the message */
	if (c->data && c->status == 200) {
		int r = c->data(c, ptr, n, c->userdata);
		if (r < 0) {
			c->error = r;
			return 0;
		}
		return n;
	}
	return kube_body_write(ptr, size, nmemb, &c->body);
}

/* Only Retry-After is wanted (429 and 503 carry it); the delta-seconds form, as the API server
 * sends it. */
static size_t call_header(char *buf, size_t size, size_t nitems, void *userdata)
{
	kube_call *c = userdata;
	size_t n = size * nitems;
	static const char name[] = "retry-after:";

	if (n > sizeof(name) - 1 && strncasecmp(buf, name, sizeof(name) - 1) == 0) {
		char v[32];
		size_t len = n - (sizeof(name) - 1);
		char *end;
		if (len >= sizeof(v))
			len = sizeof(v) - 1;
		memcpy(v, buf + sizeof(name) - 1, len);
		v[len] = '\0';
		long x = strtol(v, &end, 10);
		if (end != v && x >= 0)
			c->retry_after_s = x;
	} else if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
		c->retry_after_s = -1; /* a new response (after a redirect or 100 Continue) */
	}
	return n;
}

/* Fires at the earliest moment the call can have been silent for idle_usec; re-armed while it was not. */
static int on_idle(sd_event_source *s, uint64_t usec, void *userdata)
{
	kube_call *c = userdata;
	char text[96];

	if (c->last_data_usec + c->idle_usec > usec) {
		(void)sd_event_source_set_time(s, c->last_data_usec + c->idle_usec);
		(void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
		return 0;
	}
	snprintf(text, sizeof(text), "nothing received for %" PRIu64 " s", c->idle_usec / 1000000);
	call_finish(c->m, c, -ETIMEDOUT, c->status, text);
	return 0;
}

static int idle_timer_start(kube_multi *m, kube_call *c, uint64_t idle_usec)
{
	int r = sd_event_now(m->event, CLOCK_MONOTONIC, &c->last_data_usec);
	if (r < 0)
		return r;
	c->idle_usec = idle_usec;
	/* a liveness bound, not a deadline: 1 s of slack lets it share a wake-up */
	r = sd_event_add_time(m->event, &c->idle_timer, CLOCK_MONOTONIC, c->last_data_usec + idle_usec, 1000000,
	                      on_idle, c);
	if (r < 0)
		return r;
	(void)sd_event_source_set_description(c->idle_timer, "kube-call-idle");
	return 0;
}

static void renewal_start(kube_multi *m);

/* Sets the call up with the client's credential of now and hands it to curl. */
static int call_launch(kube_multi *m, kube_call *c)
{
	int r;

	c->cred_gen = kube_client_credential_gen(m->client);
	r = kube_easy_setup(m->client, c->h, c->method, c->path, c->body_copy, c->content_type, c->timeout_ms,
	                    &c->headers);
	if (r < 0)
		return r;
	if (c->idle_timeout_s > 0 && (r = idle_timer_start(m, c, (uint64_t)c->idle_timeout_s * 1000000)) < 0)
		return r;
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, call_write);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->h, CURLOPT_HEADERFUNCTION, call_header);
	curl_easy_setopt(c->h, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->h, CURLOPT_ERRORBUFFER, c->cerr);
	curl_easy_setopt(c->h, CURLOPT_PRIVATE, c);
	if (curl_multi_add_handle(m->multi, c->h) != CURLM_OK)
		return -ENOMEM;
	return 0;
}

static int dup_opt(const char *in, char **out)
{
	if (in && !(*out = strdup(in)))
		return -ENOMEM;
	return 0;
}

int kube_multi_start(kube_multi *m, const kube_call_opts *o, kube_call **ret)
{
	kube_call *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->m = m;
	c->h = curl_easy_init();
	c->data = o->data;
	c->retry_after_s = -1;
	c->done = o->done;
	c->userdata = o->userdata;
	c->body.max = o->data ? 64 * 1024 : o->max_body ? o->max_body : DEFAULT_MAX_BODY;
	c->timeout_ms = o->timeout_ms;
	c->idle_timeout_s = o->idle_timeout_s;
	c->progress_deadline = o->progress_deadline;
	if (o->progress_deadline) {
		long t = kube_client_request_timeout_ms(m->client);
		c->timeout_ms = 10 * t;
		c->idle_timeout_s = (t + 999) / 1000;
	}
	/* the list links it (call_free unlinks it on every path below) */
	c->next = m->calls;
	if (m->calls)
		m->calls->prev = c;
	m->calls = c;
	m->n_calls++;
	if (!c->h || dup_opt(o->method, &c->method) < 0 || dup_opt(o->path, &c->path) < 0 ||
	    dup_opt(o->body, &c->body_copy) < 0 || dup_opt(o->content_type, &c->content_type) < 0) {
		call_free(m, c);
		return -ENOMEM;
	}
	renewal_start(m);
	if (m->renewal && !kube_client_credential_valid(m->client))
		c->waiting = true; /* one plugin run for all, not a refused request each */
	else if ((r = call_launch(m, c)) < 0) {
		call_free(m, c);
		return r;
	}
	if (ret)
		*ret = c;
	return 0;
}

/* The calls that waited for the credential go now, with it (or, when the plugin failed, with
 * the old one: the server's answer says what is wrong). A done callback may start or cancel
 * calls: the list is walked again from its head after each. */
static void waiting_launch(kube_multi *m)
{
	for (;;) {
		kube_call *c = m->calls;
		int r;

		while (c && !c->waiting)
			c = c->next;
		if (!c || m->renewal)
			return;
		c->waiting = false;
		r = call_launch(m, c);
		if (r < 0)
			call_finish(m, c, r, 0, "cannot start the request");
	}
}

static void renewal_done(int r, kube_exec_cred *cred, const char *err, void *userdata)
{
	kube_multi *m = userdata;
	kube_client *client = m->client;

	m->renewal = NULL; /* the job frees itself after this returns */
	if (r == 0)
		kube_client_set_credential(client, cred);
	else {
		int64_t left_s = kube_client_expiry_ns(client) / 1000000000 - clock_wall_ns() / NOW_NSEC_PER_SEC;

		kube_client_renewal_failed(client, KUBE_EXEC_RETRY_NS);
		/* one line; the journal under systemd */
		if (!kube_client_expiry_ns(client))
			fprintf(stderr, "%s (tried again in %d s)\n", err, (int)(KUBE_EXEC_RETRY_NS / 1000000000));
		else if (kube_client_credential_valid(client))
			fprintf(stderr, "%s (tried again in %d s; the credential in use is valid for %" PRId64 " s more)\n",
			        err, (int)(KUBE_EXEC_RETRY_NS / 1000000000), left_s);
		else
			fprintf(stderr, "%s (tried again in %d s; the credential in use has expired: requests are refused meanwhile)\n",
			        err, (int)(KUBE_EXEC_RETRY_NS / 1000000000));
	}
	waiting_launch(m);
}

/* Runs the plugin when the credential is due for renewal, unless it runs already. */
static void renewal_start(kube_multi *m)
{
	char err[600];
	int r;

	if (m->renewal || !kube_client_renewal_due(m->client))
		return;
	r = kube_exec_start(m->event, kube_client_exec(m->client), renewal_done, m, &m->renewal, err, sizeof(err));
	if (r < 0) {
		kube_client_renewal_failed(m->client, KUBE_EXEC_RETRY_NS);
		fprintf(stderr, "%s (tried again in %d s)\n", err, (int)(KUBE_EXEC_RETRY_NS / 1000000000));
	}
}

void kube_call_cancel(kube_multi *m, kube_call *call)
{
	if (call)
		call_free(m, call);
}

long kube_call_status(const kube_call *call)
{
	return call->status;
}

void *kube_call_userdata(const kube_call *call)
{
	return call->userdata;
}

long kube_call_retry_after(const kube_call *call)
{
	return call->retry_after_s;
}

unsigned kube_multi_count(const kube_multi *m)
{
	return m->n_calls;
}

/* Maps an end to what done() is told, tells it, frees the call. */
static void call_finish(kube_multi *m, kube_call *c, int error, long status, const char *text)
{
	char msg[CURL_ERROR_SIZE + 64];

	/* a watch's end by timeout after a 200 is its normal end; a list's is a failure */
	if (error == -ETIMEDOUT && c->data && status == 200 && !c->progress_deadline)
		error = 0;
	snprintf(msg, sizeof(msg), "%s", error == 0 ? "" : text);
	if (error == -EFBIG)
		snprintf(msg, sizeof(msg), "response larger than %zu bytes", c->body.max);
	if (c->done)
		c->done(c, error, error == 0 || status ? status : 0, c->body.buf ? c->body.buf : "", c->body.len, msg,
		        c->userdata);
	call_free(m, c);
}

static void call_done(CURL *easy, CURLcode cc, void *userdata)
{
	kube_multi *m = userdata;
	kube_call *c = NULL;
	long status = 0;
	int error;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&c);
	if (!c)
		return;
	curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
	/* the caller retries as for any failure; an exec plugin's credential is renewed first */
	if (status == 401)
		kube_client_credential_rejected_gen(m->client, c->cred_gen);
	if (c->error < 0)
		error = c->error;
	else if (cc == CURLE_WRITE_ERROR && c->body.overflow)
		error = -EFBIG;
	else
		error = kube_curl_errno(cc);
	call_finish(m, c, error, status, c->cerr[0] ? c->cerr : curl_easy_strerror(cc));
}
