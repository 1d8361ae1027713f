/* SPDX-License-Identifier: MIT */
#include "grpc.h"

#include "curl-event.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

const char *grpc_status_name(long code)
{
	static const char *const names[] = { "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
		                             "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
		                             "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
		                             "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED" };
	return code >= 0 && code <= GRPC_STATUS_MAX ? names[code] : "UNKNOWN-CODE";
}

/* --- the answer ----------------------------------------------------------------------------- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* grpc-message is percent-encoded UTF-8; a bad escape is kept as written (the spec: decode leniently). */
static void decode_message(const char *v, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < size; i++) {
		unsigned char c = (unsigned char)v[i];
		if (c == '%' && i + 2 < len + 0 && hexval(v[i + 1]) >= 0 && hexval(v[i + 2]) >= 0) {
			c = (unsigned char)(hexval(v[i + 1]) * 16 + hexval(v[i + 2]));
			i += 2;
		}
		/* the log must not carry control bytes a runtime sent */
		out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	out[o] = '\0';
}

static bool header_is(const char *line, size_t len, const char *name, const char **value, size_t *vlen)
{
	size_t n = strlen(name);

	if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return false;
	*value = line + n + 1;
	*vlen = len - n - 1;
	while (*vlen && (**value == ' ' || **value == '\t')) {
		(*value)++;
		(*vlen)--;
	}
	while (*vlen && ((*value)[*vlen - 1] == '\r' || (*value)[*vlen - 1] == '\n' || (*value)[*vlen - 1] == ' '))
		(*vlen)--;
	return true;
}

void grpc_answer_header(grpc_answer *a, const char *line, size_t len)
{
	const char *v;
	size_t vl;

	if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		/* a new status line starts a new header block (curl shows one per response) */
		const char *sp = memchr(line, ' ', len);
		long st = 0;
		size_t i = sp ? (size_t)(sp - line) + 1 : len;
		for (unsigned d = 0; i < len && d < 3 && line[i] >= '0' && line[i] <= '9'; i++, d++)
			st = st * 10 + (line[i] - '0');
		a->http_status = st;
		return;
	}
	if (header_is(line, len, "content-type", &v, &vl)) {
		a->grpc_content = (vl == 16 && strncasecmp(v, "application/grpc", 16) == 0) ||
		                  (vl > 16 && strncasecmp(v, "application/grpc", 16) == 0 && (v[16] == '+' || v[16] == ';'));
	} else if (header_is(line, len, "grpc-status", &v, &vl)) {
		long code = 0;
		bool ok = vl > 0 && vl <= 3 && !(vl > 1 && v[0] == '0');
		for (size_t i = 0; ok && i < vl; i++) {
			ok = v[i] >= '0' && v[i] <= '9';
			code = code * 10 + (v[i] - '0');
		}
		if (!ok || a->has_status)
			a->bad_header = true;
		a->has_status = true;
		a->grpc_status = ok ? code : -1;
	} else if (header_is(line, len, "grpc-message", &v, &vl))
		decode_message(v, vl, a->grpc_message, sizeof(a->grpc_message));
}

int grpc_answer_body(grpc_answer *a, const void *data, size_t len)
{
	size_t limit = a->max_message + 5;

	if (len == 0 && !a->overflow)
		return 0;
	if (a->overflow || len > limit - a->len) {
		a->overflow = true;
		return -EFBIG;
	}
	if (a->len + len > a->cap) {
		size_t cap = a->cap ? a->cap : 4096;
		while (cap < a->len + len)
			cap = cap > limit / 2 ? limit : cap * 2;
		uint8_t *n = realloc(a->body, cap);
		if (!n)
			return -ENOMEM;
		a->body = n;
		a->cap = cap;
	}
	memcpy(a->body + a->len, data, len);
	a->len += len;
	return 0;
}

int grpc_answer_finish(const grpc_answer *a, const uint8_t **msg, size_t *len, char *why, size_t why_size)
{
	char dummy[8];
	uint32_t n;

	if (!why) {
		why = dummy;
		why_size = sizeof(dummy);
	}
	if (a->overflow) {
		snprintf(why, why_size, "answer larger than %zu bytes", a->max_message);
		return -EFBIG;
	}
	if (a->http_status != 200) {
		snprintf(why, why_size, "HTTP status %ld, not 200: not a gRPC answer", a->http_status);
		return -EPROTO;
	}
	if (!a->grpc_content) {
		snprintf(why, why_size, "content type is not application/grpc");
		return -EPROTO;
	}
	if (!a->has_status || a->bad_header) {
		snprintf(why, why_size, a->bad_header ? "malformed grpc-status" : "no grpc-status in the answer");
		return -EPROTO;
	}
	if (a->grpc_status == GRPC_DEADLINE_EXCEEDED) {
		/* the runtime kept the grpc-timeout the call sent (containerd and grpc servers do): the
		 * call's own deadline, whichever side noticed it first */
		snprintf(why, why_size, "deadline exceeded: the runtime answered DEADLINE_EXCEEDED (4): %s",
		         a->grpc_message[0] ? a->grpc_message : "no message");
		return -ETIMEDOUT;
	}
	if (a->grpc_status != GRPC_OK) {
		snprintf(why, why_size, "%s (%ld): %s", grpc_status_name(a->grpc_status), a->grpc_status,
		         a->grpc_message[0] ? a->grpc_message : "no message");
		return -EREMOTEIO;
	}
	if (a->len < 5) {
		snprintf(why, why_size, a->len ? "truncated message prefix (%zu bytes)" : "no message in an OK answer", a->len);
		return -EBADMSG;
	}
	if (a->body[0] != 0) {
		snprintf(why, why_size, "compressed flag %u without a negotiated encoding", a->body[0]);
		return -EBADMSG;
	}
	n = (uint32_t)a->body[1] << 24 | (uint32_t)a->body[2] << 16 | (uint32_t)a->body[3] << 8 | a->body[4];
	if (n > a->max_message) {
		snprintf(why, why_size, "message of %" PRIu32 " bytes announced, larger than %zu", n, a->max_message);
		return -EFBIG;
	}
	if ((size_t)n != a->len - 5) {
		snprintf(why, why_size, "length prefix %" PRIu32 " disagrees with %zu body bytes (%s)", n, a->len - 5,
		         (size_t)n < a->len - 5 ? "more than one message" : "truncated");
		return -EBADMSG;
	}
	*msg = a->body + 5;
	*len = n;
	return 0;
}

void grpc_answer_done(grpc_answer *a)
{
	free(a->body);
	a->body = NULL;
	a->len = a->cap = 0;
}

void grpc_timeout_format(uint64_t usec, char *buf, size_t size)
{
	uint64_t ms = (usec + 999) / 1000;
	/* 8 digits at most: milliseconds up to 27 h, then seconds */
	if (ms <= 99999999)
		snprintf(buf, size, "%" PRIu64 "m", ms ? ms : 1);
	else
		snprintf(buf, size, "%" PRIu64 "S", ms / 1000 > 99999999 ? 99999999 : ms / 1000);
}

/* --- calls on the event loop: curl multi driven by sd-event (curl-event.h) ------------------ */

/* Connections open at once where each call has its own (libcurl < 8.0.0). */
#define CONNECTIONS_MAX 16

struct grpc_call {
	grpc_channel *ch;
	grpc_call *prev, *next;
	CURL *h;
	struct curl_slist *headers;
	uint8_t *request; /* prefix + message */
	grpc_answer answer;
	grpc_done_fn done;
	void *userdata;
	char cerr[CURL_ERROR_SIZE];
};

struct grpc_channel {
	curl_event *loop;
	CURLM *multi; /* curl_event_multi(loop) */
	grpc_call *calls;
	unsigned n_calls;
	bool reuse; /* streams share a connection (libcurl >= 8.0.0) */
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char user_agent[64];
};

static void call_done(CURL *easy, CURLcode cc, void *userdata);

int grpc_channel_new(sd_event *e, const char *socket_path, const char *user_agent, grpc_channel **ret)
{
	grpc_channel *ch;
	int r;

	if (strlen(socket_path) >= sizeof(ch->socket))
		return -ENAMETOOLONG;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	snprintf(ch->socket, sizeof(ch->socket), "%s", socket_path);
	snprintf(ch->user_agent, sizeof(ch->user_agent), "%s", user_agent ? user_agent : "evictd");
	r = curl_event_new(e, "cri", call_done, ch, &ch->loop);
	if (r < 0) {
		grpc_channel_free(ch);
		return r;
	}
	ch->multi = curl_event_multi(ch->loop);
	/*
	 * libcurl before 8.0.0 (Debian 12 has 7.88.1) fails every request after the first on a reused
	 * prior-knowledge HTTP/2 connection with "Error in the HTTP2 framing layer" (curl issue
	 * 10634, fixed by pull request 10643 in 8.0.0): there each call gets its own connection — on
	 * a unix socket a connect and the HTTP/2 preface, tens of microseconds — and at most
	 * CONNECTIONS_MAX are open at once (the rest wait their turn, within their deadlines). From
	 * 8.0.0 on, calls are streams of one connection.
	 */
	ch->reuse = curl_version_info(CURLVERSION_NOW)->version_num >= 0x080000;
	curl_multi_setopt(ch->multi, CURLMOPT_PIPELINING, ch->reuse ? (long)CURLPIPE_MULTIPLEX : (long)CURLPIPE_NOTHING);
	curl_multi_setopt(ch->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, ch->reuse ? 2L : (long)CONNECTIONS_MAX);
	*ret = ch;
	return 0;
}

static void call_free(grpc_channel *ch, grpc_call *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		ch->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	ch->n_calls--;
	curl_multi_remove_handle(ch->multi, c->h);
	curl_easy_cleanup(c->h);
	curl_slist_free_all(c->headers);
	grpc_answer_done(&c->answer);
	free(c->request);
	free(c);
}

grpc_channel *grpc_channel_free(grpc_channel *ch)
{
	if (!ch)
		return NULL;
	while (ch->calls) {
		grpc_call *c = ch->calls;
		if (c->done)
			c->done(-ECANCELED, -1, NULL, 0, "cancelled", c->userdata);
		call_free(ch, c);
	}
	curl_event_free(ch->loop);
	free(ch);
	return NULL;
}

const char *grpc_channel_socket(const grpc_channel *ch)
{
	return ch->socket;
}

unsigned grpc_channel_calls(const grpc_channel *ch)
{
	return ch->n_calls;
}

static size_t on_header(char *line, size_t size, size_t n, void *userdata)
{
	grpc_call *c = userdata;

	grpc_answer_header(&c->answer, line, size * n);
	return size * n;
}

static size_t on_body(char *data, size_t size, size_t n, void *userdata)
{
	grpc_call *c = userdata;

	return grpc_answer_body(&c->answer, data, size * n) < 0 ? 0 : size * n;
}

static int call_setup(grpc_channel *ch, grpc_call *c, const grpc_call_opts *o)
{
	char url[512], tmo[32], hdr[64];
	const char *fixed[] = { "Content-Type: application/grpc", "TE: trailers", hdr, "Expect:" };
	long ms = (long)((o->timeout_usec + 999) / 1000);

	snprintf(url, sizeof(url), "http://localhost%s", o->path);
	grpc_timeout_format(o->timeout_usec, tmo, sizeof(tmo));
	snprintf(hdr, sizeof(hdr), "grpc-timeout: %s", tmo);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		struct curl_slist *l = curl_slist_append(c->headers, fixed[i]);
		if (!l)
			return -ENOMEM;
		c->headers = l;
	}
	if (curl_easy_setopt(c->h, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(c->h, CURLOPT_UNIX_SOCKET_PATH, ch->socket) != CURLE_OK ||
	    curl_easy_setopt(c->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE) != CURLE_OK ||
	    curl_easy_setopt(c->h, CURLOPT_PROTOCOLS_STR, "http") != CURLE_OK)
		return -ENOMEM;
	curl_easy_setopt(c->h, CURLOPT_USERAGENT, ch->user_agent);
	curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->headers);
	curl_easy_setopt(c->h, CURLOPT_POST, 1L);
	curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, c->request);
	curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE, (long)(o->request_len + 5));
	curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, ms);
	curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS, ms);
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	if (!ch->reuse) {
		curl_easy_setopt(c->h, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(c->h, CURLOPT_FORBID_REUSE, 1L);
	}
	curl_easy_setopt(c->h, CURLOPT_PIPEWAIT, ch->reuse ? 1L : 0L);
	curl_easy_setopt(c->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->h, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->h, CURLOPT_ERRORBUFFER, c->cerr);
	curl_easy_setopt(c->h, CURLOPT_PRIVATE, c);
	return 0;
}

int grpc_call_start(grpc_channel *ch, const grpc_call_opts *o, grpc_call **ret)
{
	grpc_call *c;
	int r;

	if (o->timeout_usec == 0 || o->request_len > UINT32_MAX - 5)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ch = ch;
	c->done = o->done;
	c->userdata = o->userdata;
	c->answer.max_message = o->max_message;
	c->request = malloc(o->request_len + 5);
	c->h = curl_easy_init();
	if (!c->request || !c->h) {
		r = -ENOMEM;
		goto fail;
	}
	c->request[0] = 0;
	c->request[1] = (uint8_t)(o->request_len >> 24);
	c->request[2] = (uint8_t)(o->request_len >> 16);
	c->request[3] = (uint8_t)(o->request_len >> 8);
	c->request[4] = (uint8_t)o->request_len;
	if (o->request_len)
		memcpy(c->request + 5, o->request, o->request_len);
	r = call_setup(ch, c, o);
	if (r < 0)
		goto fail;
	if (curl_multi_add_handle(ch->multi, c->h) != CURLM_OK) {
		r = -ENOMEM;
		goto fail;
	}
	c->next = ch->calls;
	if (ch->calls)
		ch->calls->prev = c;
	ch->calls = c;
	ch->n_calls++;
	if (ret)
		*ret = c;
	return 0;
fail:
	if (c->h)
		curl_easy_cleanup(c->h);
	curl_slist_free_all(c->headers);
	free(c->request);
	free(c);
	return r;
}

void grpc_call_cancel(grpc_channel *ch, grpc_call *call)
{
	if (call)
		call_free(ch, call);
}

/* What a transfer that did not complete means for the socket's user. */
static int transport_error(const grpc_channel *ch, CURLcode cc, char *why, size_t size, const char *cerr)
{
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(why, size, "deadline exceeded: %s", cerr);
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		/* curl says "couldn't connect" for all three: the socket tells which */
		if (access(ch->socket, F_OK) < 0) {
			snprintf(why, size, "%s: %s", ch->socket, strerror(errno));
			return -errno;
		}
		snprintf(why, size, "cannot connect to %s: %s", ch->socket, cerr);
		return access(ch->socket, R_OK | W_OK) < 0 ? -EACCES : -ECONNREFUSED;
	case CURLE_OUT_OF_MEMORY:
		snprintf(why, size, "out of memory");
		return -ENOMEM;
	default:
		snprintf(why, size, "%s", cerr);
		return -EIO;
	}
}

static void call_done(CURL *easy, CURLcode cc, void *userdata)
{
	grpc_channel *ch = userdata;
	grpc_call *c = NULL;
	const uint8_t *msg = NULL;
	size_t len = 0;
	char why[512];
	int error;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&c);
	if (!c)
		return;
	if (cc == CURLE_OK || (cc == CURLE_WRITE_ERROR && c->answer.overflow))
		error = grpc_answer_finish(&c->answer, &msg, &len, why, sizeof(why));
	else
		error = transport_error(ch, cc, why, sizeof(why), c->cerr[0] ? c->cerr : curl_easy_strerror(cc));
	if (c->done)
		c->done(error, c->answer.has_status ? c->answer.grpc_status : -1, msg, len, why, c->userdata);
	call_free(ch, c);
}
