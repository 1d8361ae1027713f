/* SPDX-License-Identifier: MIT */
#include "reflector.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "backoff.h"
#include "kstream.h"

#define EVENT_TREE_MAX (16u << 20) /* one watch event's decoded tree; an object is far smaller */
/* client-go's handleWatch: a watch that ended within a second without a single event (bookmarks
 * count) is an error, backed off; one that lived longer or brought events is reopened at once. */
#define SHORT_WATCH_USEC 1000000ULL
/* client-go's reflector backoff manager (NewExponentialBackoffManager(..., 2*time.Minute, ...)):
 * two quiet minutes since the last backoff start it over from the shortest delay. */
#define BACKOFF_RESET_USEC (120ULL * 1000000ULL)

typedef enum rf_state { RF_IDLE, RF_LISTING, RF_WATCHING, RF_BACKOFF } rf_state;

struct kube_reflector {
	sd_event *event;
	kube_multi *multi;
	kube_reflector_ops ops;
	void *userdata;
	char *path, *selector, *what, *forbidden_hint; /* selector: escaped, or NULL */
	char *list_source, *watch_source;              /* names of the inputs in messages */
	unsigned page_limit;
	uint64_t watch_timeout_usec, retry_max_usec, backoff_usec;
	uint64_t backoff_at;     /* when the last backoff started (CLOCK_MONOTONIC), 0: never */
	uint64_t watch_started;  /* when the watch in progress was sent */
	uint64_t watch_events;   /* events of the watch in progress, bookmarks included */
	rf_state state;
	kube_call *call;
	sd_event_source *timer;
	char rv[64];       /* resourceVersion to watch from; "" → list */
	char cont[4096];   /* continue token of the list in progress */
	char list_rv[64];
	/* the resourceVersion the next list asks for (client-go's relistResourceVersion()): "0" at
	 * first (the watch cache may answer), the last one seen after a 410 on the watch, "" (a
	 * quorum read) when the API server said that one is too old too */
	char list_from[64];
	bool paginated; /* a list came back in pages: the server honours limit, keep asking for it */
	bool synced;
	/* the body of the call in progress (list page or watch), decoded as it arrives */
	kstream *stream;
	diag diag;
	char diag_buf[1024];
	bool bad_body; /* the decoder refused the body */
	bool relist;   /* the stream said 410 */
	bool warned_forbidden;
	kube_reflector_stats stats;
	/* without a kube_multi (a replay): the call the reflector would make now, answered by
	 * kube_reflector_replay() and kube_reflector_replay_end() */
	char replay_request[8192];
};

static void start_list_page(kube_reflector *r);
static void start_watch(kube_reflector *r);

__attribute__((format(printf, 6, 7)))
static void note(kube_reflector *r, int prio, const char *verb, long status, int error, const char *fmt, ...)
{
	char text[1536];
	va_list ap;

	if (!r->ops.note)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	kube_reflector_note n = { .priority = prio, .verb = verb, .path = verb ? r->path : NULL, .status = status,
	                          .error = error, .text = text };
	r->ops.note(r->userdata, &n);
}

static int on_backoff(sd_event_source *s, uint64_t usec, void *userdata)
{
	kube_reflector *r = userdata;

	(void)s;
	(void)usec;
	r->state = RF_IDLE;
	if (r->rv[0])
		start_watch(r);
	else
		start_list_page(r);
	return 0;
}

static uint64_t now_usec(kube_reflector *r)
{
	uint64_t now = 0;

	if (!r->event || sd_event_now(r->event, CLOCK_MONOTONIC, &now) < 0)
		return 0;
	return now;
}

static void retry_later(kube_reflector *r)
{
	uint64_t now = now_usec(r), delay;

	if (r->backoff_at && now > r->backoff_at + BACKOFF_RESET_USEC)
		r->backoff_usec = 0;
	r->backoff_at = now;
	delay = backoff_next(&r->backoff_usec, r->retry_max_usec);
	r->stats.failures++;
	r->state = RF_BACKOFF;
	if (!now || sd_event_source_set_time(r->timer, now + delay) < 0 ||
	    sd_event_source_set_enabled(r->timer, SD_EVENT_ONESHOT) < 0)
		note(r, LOG_ERR, NULL, 0, 0, "Cannot arm the retry timer; %ss are no longer followed", r->what);
}

/* --- the body decoder ---------------------------------------------------------------------- */

/* Problems the stream went on after (an object with a duplicate key is dropped): told. */
static void note_dropped(kube_reflector *r)
{
	if (r->diag.nerrors || r->diag.nwarnings)
		note(r, LOG_WARNING, NULL, 0, 0, "Ignoring an object from the API server: %s", diag_take_line(&r->diag));
}

static void stream_done(kube_reflector *r)
{
	r->stream = kstream_free(r->stream);
	diag_close_buffer(&r->diag);
}

static int stream_start(kube_reflector *r, const char *source, size_t total_max, size_t item_max,
                        kstream_item_fn fn)
{
	int ret;

	stream_done(r);
	r->bad_body = false;
	ret = diag_open_buffer(&r->diag, r->diag_buf, sizeof(r->diag_buf));
	if (ret < 0)
		return ret;
	ret = kstream_new(&r->stream, KSTREAM_JSON, source, &r->diag, fn, r);
	if (ret < 0) {
		stream_done(r);
		return ret;
	}
	kstream_set_limits(r->stream, total_max, item_max);
	return 0;
}

/* Body bytes as curl hands them over (a 200's only). */
static int stream_data(kube_call *call, const char *buf, size_t len, void *userdata)
{
	kube_reflector *r = userdata;
	int ret;

	(void)call;
	if (!r->stream)
		return -EINVAL;
	ret = kstream_feed(r->stream, buf, len);
	if (ret < 0 && ret != -ENOMEM)
		r->bad_body = true;
	return ret;
}

/* --- list ---------------------------------------------------------------------------------- */

/* One item of the list page (API list items carry no kind). */
static int list_item(void *userdata, const kval *item)
{
	kube_reflector *r = userdata;

	note_dropped(r);
	return r->ops.object(r->userdata, KUBE_LISTED, item, kstream_name(r->stream));
}

static void list_failed(kube_reflector *r)
{
	stream_done(r);
	r->cont[0] = '\0';
	retry_later(r);
}

static void list_done(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                      void *userdata)
{
	kube_reflector *r = userdata;
	const char *s;

	(void)call;
	(void)len;
	r->call = NULL;
	if (error == 0 && status == 200 && !r->bad_body) {
		int ret = kstream_end(r->stream);
		if (ret < 0 && ret != -ENOMEM)
			r->bad_body = true;
		else if (ret < 0)
			error = ret;
	}
	if (r->bad_body) {
		note(r, LOG_WARNING, "LIST", status, -EBADMSG, "response is not JSON (%s)", diag_take_line(&r->diag));
		list_failed(r);
		return;
	}
	if (error == 0 && status == 410 && r->list_from[0]) {
		/* client-go: "Expired" or "too large resource version" on a list from the last
		 * resourceVersion: list again from etcd (resourceVersion=""), without waiting */
		note(r, LOG_INFO, NULL, 0, 0, "List from resourceVersion %s refused (410 Gone): listing from the "
		     "API server's storage", r->list_from);
		stream_done(r);
		r->cont[0] = '\0';
		r->list_from[0] = '\0';
		start_list_page(r);
		return;
	}
	if (error < 0 || status != 200) {
		if (status == 403 && r->forbidden_hint && !r->warned_forbidden) {
			note(r, LOG_ERR, "LIST", status, 0, "%s", r->forbidden_hint);
			r->warned_forbidden = true;
		} else
			note(r, LOG_WARNING, "LIST", status, error, "%s", error ? msg : body);
		list_failed(r);
		return;
	}
	note_dropped(r);
	/* a list always has metadata.resourceVersion: without it, this was some other object */
	s = kstream_list_resource_version(r->stream);
	if (!s) {
		note(r, LOG_WARNING, "LIST", status, -EBADMSG, "not a %s list", r->what);
		list_failed(r);
		return;
	}
	if (strlen(s) < sizeof(r->list_rv))
		snprintf(r->list_rv, sizeof(r->list_rv), "%s", s);
	s = kstream_list_continue(r->stream);
	snprintf(r->cont, sizeof(r->cont), "%s", s && strlen(s) < sizeof(r->cont) ? s : "");
	stream_done(r);
	if (r->cont[0]) {
		/* client-go's reflector: a paginated answer means the server honours limit (no watch
		 * cache, or one that pages): later lists keep the pages */
		r->paginated = true;
		start_list_page(r);
		return;
	}
	/* the whole list is in: what is not in it is gone */
	r->stats.lists++;
	r->synced = true;
	snprintf(r->rv, sizeof(r->rv), "%s", r->list_rv);
	snprintf(r->list_from, sizeof(r->list_from), "%s", r->list_rv);
	r->backoff_usec = 0;
	if (r->ops.list_done)
		r->ops.list_done(r->userdata, r->list_rv);
	start_watch(r);
}

static void start_list_page(kube_reflector *r)
{
	char path[8192];
	char *esc = NULL;
	int ret;

	if (r->cont[0] && !(esc = kube_escape(r->cont))) {
		retry_later(r);
		return;
	}
	if (!r->cont[0] && r->ops.list_begin)
		r->ops.list_begin(r->userdata);
	/*
	 * As client-go's reflector and pager ask: the first list at resourceVersion=0 with limit (the
	 * watch cache answers and may ignore limit; a server that pages is followed, and the pages
	 * after the first carry continue and no resourceVersion). A relist from a known
	 * resourceVersion asks for no limit, so that the watch cache can answer it, unless the
	 * server paged before; one from "" (etcd) pages.
	 */
	bool from_rv = !r->cont[0] && r->list_from[0];
	bool limited = r->cont[0] || !from_rv || strcmp(r->list_from, "0") == 0 || r->paginated;
	char limit[32] = "";
	if (limited)
		snprintf(limit, sizeof(limit), "%slimit=%u", from_rv ? "&" : "", r->page_limit);
	snprintf(path, sizeof(path), "%s?%s%s%s%s%s%s%s%s", r->path, r->selector ? "fieldSelector=" : "",
	         r->selector ? r->selector : "", r->selector && (from_rv || limited) ? "&" : "",
	         from_rv ? "resourceVersion=" : "", from_rv ? r->list_from : "", limit, esc ? "&continue=" : "",
	         esc ? esc : "");
	free(esc);
	r->state = RF_LISTING;
	/* items are decoded one at a time as the page arrives: memory is one object, not the page, so
	 * the page has no total bound (an object's tree has). limit= does not bound it: the watch
	 * cache answers resourceVersion=0 whole whatever the limit, and the relist from a
	 * resourceVersion asks for none: 150,000 pods are over 100 MiB, and a bound refused them,
	 * retried for ever, and never synced. Its time is bounded by progress (kmulti.h). */
	ret = stream_start(r, r->list_source, 0, 0, list_item);
	if (ret >= 0 && !r->multi)
		snprintf(r->replay_request, sizeof(r->replay_request), "%s", path);
	else if (ret >= 0) {
		kube_call_opts o = { .method = "GET", .path = path, .data = stream_data, .done = list_done,
		                     .userdata = r, .progress_deadline = true };
		ret = kube_multi_start(r->multi, &o, &r->call);
	}
	if (ret < 0) {
		note(r, LOG_ERR, NULL, 0, 0, "Cannot start the %s list: %s", r->what, strerror(-ret));
		stream_done(r);
		retry_later(r);
	}
}

/* --- watch --------------------------------------------------------------------------------- */

/* One watch event: {"type": ..., "object": {...}}. */
static int watch_event(void *userdata, const kval *ev)
{
	kube_reflector *r = userdata;
	const kval *type = kval_get(ev, "type"), *obj = kval_get(ev, "object");
	const kval *rv = kval_get(kval_get(obj, "metadata"), "resourceVersion");
	const char *t = kval_str(type);
	int ret = 0;

	note_dropped(r);
	if (kval_type_of(type) != KVAL_STRING || kval_type_of(obj) != KVAL_MAP) {
		note(r, LOG_WARNING, NULL, 0, 0, "Ignoring a malformed watch event from the API server (no type or object)");
		return 0;
	}
	if (strcmp(t, "ERROR") == 0) {
		const kval *code = kval_get(obj, "code"), *m = kval_get(obj, "message");
		if (kval_type_of(code) == KVAL_INT && strcmp(kval_str(code), "410") == 0) {
			note(r, LOG_INFO, NULL, 0, 0, "Watch resourceVersion %s expired (410 Gone): relisting", r->rv);
			r->relist = true;
		} else
			note(r, LOG_WARNING, NULL, 0, 0, "Watch error from the API server: %.300s",
			     kval_type_of(m) == KVAL_STRING ? kval_str(m) : "(no message)");
		return 0;
	}
	kube_event_type et = KUBE_LISTED;
	if (strcmp(t, "ADDED") == 0)
		et = KUBE_ADDED;
	else if (strcmp(t, "MODIFIED") == 0)
		et = KUBE_MODIFIED;
	else if (strcmp(t, "DELETED") == 0)
		et = KUBE_DELETED;
	if (et != KUBE_LISTED) {
		r->stats.events++;
		ret = r->ops.object(r->userdata, et, obj, r->stream ? kstream_name(r->stream) : r->watch_source);
	}
	r->watch_events++;
	/* BOOKMARK: only the resourceVersion moves */
	if (ret >= 0 && kval_type_of(rv) == KVAL_STRING && kval_len(rv) < sizeof(r->rv))
		snprintf(r->rv, sizeof(r->rv), "%s", kval_str(rv));
	return ret;
}

static void watch_done(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                       void *userdata)
{
	kube_reflector *r = userdata;

	(void)call;
	(void)len;
	r->call = NULL;
	/* JSON cannot be resynchronised after a syntax error: the stream is given up */
	if (r->bad_body) {
		note(r, LOG_WARNING, NULL, 0, 0, "Malformed watch stream from the API server (%s): watching again",
		     diag_take_line(&r->diag));
		stream_done(r);
		retry_later(r);
		return;
	}
	/* no kstream_end: a partial event at the end (the server cut the stream) is dropped, and the
	 * watch resumes before it */
	note_dropped(r);
	stream_done(r);
	if (status == 410 || r->relist) {
		if (!r->relist) /* the ERROR event told it otherwise */
			note(r, LOG_INFO, NULL, 0, 0, "Watch resourceVersion %s expired (410 Gone): relisting", r->rv);
		r->relist = false;
		/* client-go relists from the last resourceVersion seen: the watch cache can answer
		 * that; a 410 to the list sends it to etcd */
		snprintf(r->list_from, sizeof(r->list_from), "%s", r->rv);
		r->rv[0] = '\0';
		r->backoff_usec = 0;
		r->stats.relists_gone++;
		start_list_page(r);
		return;
	}
	bool healthy = r->watch_events > 0 || now_usec(r) >= r->watch_started + SHORT_WATCH_USEC;
	if (error == 0 && status == 200 && healthy) {
		/* timeoutSeconds elapsed or the server closed: resume where we are */
		start_watch(r);
		return;
	}
	if (status == 200 && healthy) {
		/* a healthy stream cut (a proxy, a restarting API server): client-go's watch loop
		 * reopens it at once, from the last resourceVersion; its backoff is for errors */
		r->stats.failures++;
		note(r, LOG_INFO, NULL, 0, 0, "Watch stream cut (%s): watching again from resourceVersion %s", msg,
		     r->rv);
		start_watch(r);
		return;
	}
	if (status == 200)
		note(r, LOG_WARNING, NULL, 0, 0, "Very short watch (no event within a second%s%s): watching again "
		     "after a backoff", error ? ", " : "", error ? msg : "");
	else
		note(r, LOG_WARNING, "WATCH", status, error, "%s", error ? msg : body);
	retry_later(r);
}

/*
 * The server ends a watch after timeoutSeconds and a live one sends a bookmark about once a
 * minute: silence for the watch's own bound plus a margin (as much again, 5 s to 30 s) means the
 * connection is dead. Checked by one timer per watch (kmulti.c), not a wake-up per second.
 */
static long watch_idle_timeout_s(uint64_t watch_timeout_usec)
{
	long t = (long)(watch_timeout_usec / 1000000);
	return t + (t < 5 ? 5 : t > 30 ? 30 : t);
}

/* client-go's watch loop: timeoutSeconds = minWatchTimeout × (1 + rand), in [t, 2t), so that a
 * fleet of clients restarted together does not reconnect in step every t. */
static uint64_t watch_timeout_s(const kube_reflector *r)
{
	uint64_t t = r->watch_timeout_usec / 1000000;

	if (t == 0)
		t = 1;
	return t + (uint64_t)random() % t;
}

static void start_watch(kube_reflector *r)
{
	char path[1024];
	uint64_t timeout_s = watch_timeout_s(r);
	int ret;

	snprintf(path, sizeof(path),
	         "%s?%s%s%swatch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%llu", r->path,
	         r->selector ? "fieldSelector=" : "", r->selector ? r->selector : "", r->selector ? "&" : "", r->rv,
	         (unsigned long long)timeout_s);
	r->state = RF_WATCHING;
	r->relist = false;
	r->stats.watches++;
	r->watch_started = now_usec(r);
	r->watch_events = 0;
	/* events are concatenated JSON values; a watch never ends, so no total bound */
	ret = stream_start(r, r->watch_source, 0, EVENT_TREE_MAX, watch_event);
	if (ret >= 0 && !r->multi)
		snprintf(r->replay_request, sizeof(r->replay_request), "%s", path);
	else if (ret >= 0) {
		kube_call_opts o = { .method = "GET", .path = path, .timeout_ms = -1,
		                     .idle_timeout_s = watch_idle_timeout_s(timeout_s * 1000000),
		                     .data = stream_data, .done = watch_done, .userdata = r };
		ret = kube_multi_start(r->multi, &o, &r->call);
	}
	if (ret < 0) {
		note(r, LOG_ERR, NULL, 0, 0, "Cannot start the %s watch: %s", r->what, strerror(-ret));
		stream_done(r);
		retry_later(r);
	}
}

/* --- the object ---------------------------------------------------------------------------- */

int kube_reflector_new(sd_event *e, kube_multi *m, const kube_reflector_opts *o, const kube_reflector_ops *ops,
                       void *userdata, kube_reflector **ret)
{
	kube_reflector *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->event = e ? sd_event_ref(e) : NULL;
	r->multi = m;
	r->ops = *ops;
	r->userdata = userdata;
	r->page_limit = o->page_limit ? o->page_limit : 500;
	r->watch_timeout_usec = o->watch_timeout_usec ? o->watch_timeout_usec : 300000000ULL;
	r->retry_max_usec = o->retry_max_usec ? o->retry_max_usec : 30000000ULL;
	strcpy(r->list_from, "0");
	if (!(r->path = strdup(o->path)) || !(r->what = strdup(o->what ? o->what : "object")) ||
	    (o->field_selector && !(r->selector = kube_escape(o->field_selector))) ||
	    (o->forbidden_hint && !(r->forbidden_hint = strdup(o->forbidden_hint))) ||
	    !(r->list_source = strdup(o->path)) || !(r->watch_source = malloc(strlen(o->path) + sizeof("?watch=1")))) {
		kube_reflector_free(r);
		return -ENOMEM;
	}
	if (e) {
		err = sd_event_add_time(e, &r->timer, CLOCK_MONOTONIC, UINT64_MAX, 0, on_backoff, r);
		if (err < 0) {
			kube_reflector_free(r);
			return err;
		}
		(void)sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
		(void)sd_event_source_set_description(r->timer, "kube-reflector-retry");
	}
	strcpy(stpcpy(r->watch_source, o->path), "?watch=1");
	*ret = r;
	return 0;
}

kube_reflector *kube_reflector_free(kube_reflector *r)
{
	if (!r)
		return NULL;
	if (r->call)
		kube_call_cancel(r->multi, r->call);
	sd_event_source_disable_unref(r->timer);
	sd_event_unref(r->event);
	stream_done(r);
	free(r->path);
	free(r->selector);
	free(r->what);
	free(r->forbidden_hint);
	free(r->list_source);
	free(r->watch_source);
	free(r);
	return NULL;
}

void kube_reflector_start(kube_reflector *r)
{
	start_list_page(r);
}

bool kube_reflector_synced(const kube_reflector *r)
{
	return r->synced;
}

const char *kube_reflector_resource_version(const kube_reflector *r)
{
	return r->rv;
}

void kube_reflector_get_stats(const kube_reflector *r, kube_reflector_stats *ret)
{
	*ret = r->stats;
}

int kube_reflector_replay(kube_reflector *r, const void *buf, size_t len)
{
	int ret;

	if (r->call)
		return -EBUSY;
	if (!r->stream) {
		ret = stream_start(r, r->watch_source, 0, EVENT_TREE_MAX, watch_event);
		if (ret < 0)
			return ret;
	}
	ret = kstream_feed(r->stream, buf, len);
	note_dropped(r);
	return ret;
}

int kube_reflector_replay_end(kube_reflector *r, long status)
{
	static const char body[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\"}";

	if (r->multi)
		return -EBUSY;
	if (!r->stream)
		return -EINVAL;
	r->replay_request[0] = '\0';
	if (r->state == RF_LISTING)
		list_done(NULL, 0, status, body, sizeof(body) - 1, "", r);
	else
		watch_done(NULL, 0, status, body, sizeof(body) - 1, "", r);
	return 0;
}

const char *kube_reflector_replay_request(const kube_reflector *r)
{
	return r->replay_request[0] ? r->replay_request : NULL;
}
