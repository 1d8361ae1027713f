/* SPDX-License-Identifier: MIT */
#include "podwatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backoff.h"
#include "kagent-log.h"
#include "kpod.h"
#include "kstream.h"
#include "log.h"

#define LIST_MAX_BYTES (64u << 20)   /* one list page (limit= bounds it far below) */
#define EVENT_TREE_MAX (16u << 20)   /* one watch event's decoded tree; a Pod is far smaller */
#define LIST_SOURCE "/api/v1/pods"  /* names the input in the decoder's messages */
#define WATCH_SOURCE "/api/v1/pods?watch=1"

typedef enum pw_state { PW_IDLE, PW_LISTING, PW_WATCHING, PW_BACKOFF } pw_state;

struct podwatch {
	sd_event *event;
	kube_multi *multi;
	descdir *dir;
	char *node, *selector; /* selector: escaped "spec.nodeName=<node>" */
	unsigned page_limit;
	uint64_t watch_timeout_usec, retry_max_usec, backoff_usec;
	pw_state state;
	kube_call *call;
	sd_event_source *timer;
	char rv[64];             /* resourceVersion to watch from; "" → list */
	char cont[4096];         /* continue token of the list in progress */
	char list_rv[64];
	/* uids seen by the list in progress (prune afterwards), sorted at the end */
	char **seen;
	size_t n_seen, cap_seen;
	/* the body of the call in progress (list page or watch), decoded as it arrives */
	kstream *stream;
	karena arena;            /* one pod's decoded strings, reset after each */
	FILE *diag_out;          /* the stream's messages, into diag_buf (bounded) */
	diag diag;
	char diag_buf[1024];
	bool bad_body;           /* the decoder refused the body */
	bool relist;             /* the stream said 410 */
	bool warned_forbidden;
};

static void start_list_page(podwatch *w);
static void start_watch(podwatch *w);

static void seen_clear(podwatch *w)
{
	for (size_t i = 0; i < w->n_seen; i++)
		free(w->seen[i]);
	w->n_seen = 0;
}

static int seen_add(podwatch *w, const char *uid)
{
	if (w->n_seen == w->cap_seen) {
		size_t nc = w->cap_seen ? w->cap_seen * 2 : 128;
		char **n = realloc(w->seen, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->seen = n;
		w->cap_seen = nc;
	}
	if (!(w->seen[w->n_seen] = strdup(uid)))
		return -ENOMEM;
	w->n_seen++;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool seen_has(const char *uid, void *userdata)
{
	podwatch *w = userdata;
	/* no pods listed: seen is NULL, which bsearch() may not be given */
	return w->n_seen && bsearch(&uid, w->seen, w->n_seen, sizeof(*w->seen), str_cmp) != NULL;
}

static int on_backoff(sd_event_source *s, uint64_t usec, void *userdata)
{
	podwatch *w = userdata;

	(void)s;
	(void)usec;
	w->state = PW_IDLE;
	if (w->rv[0])
		start_watch(w);
	else
		start_list_page(w);
	return 0;
}

static void retry_later(podwatch *w)
{
	uint64_t now, delay = backoff_next(&w->backoff_usec, w->retry_max_usec);

	w->state = PW_BACKOFF;
	if (sd_event_now(w->event, CLOCK_MONOTONIC, &now) < 0 ||
	    sd_event_source_set_time(w->timer, now + delay) < 0 ||
	    sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT) < 0)
		log_msg(LOG_ERR, "Cannot arm the retry timer; pods are no longer followed");
}

static void log_api(int prio, const char *verb, const char *path, long status, int error, const char *msg)
{
	log_entry e;

	log_entry_init(&e, prio, MSGID_KUBE_API_CALL);
	log_entry_add(&e, FIELD_KUBE_VERB, "%s", verb);
	log_entry_add(&e, FIELD_KUBE_PATH, "%s", path);
	log_entry_add(&e, FIELD_KUBE_STATUS, "%ld", status);
	if (error)
		log_entry_add(&e, FIELD_REASON, "%s", msg && *msg ? msg : strerror(-error));
	if (error)
		log_entry_send(&e, "%s %s failed: %s", verb, path, msg && *msg ? msg : strerror(-error));
	else
		log_entry_send(&e, "%s %s: HTTP %ld%s%.300s", verb, path, status, msg && *msg ? ": " : "", msg ? msg : "");
}

static int apply_pod(podwatch *w, const kval *obj, bool deleted)
{
	char err[512], text[16384];
	kpod *p = malloc(sizeof(*p));
	int r, n;

	if (!p)
		return -ENOMEM;
	r = kpod_decode(obj, &w->arena, kstream_name(w->stream), p, err, sizeof(err));
	karena_reset(&w->arena);
	if (r == -ENOMEM) {
		free(p);
		return r;
	}
	if (r == -EMEDIUMTYPE)
		snprintf(err, sizeof(err), "kind \"%.40s\" is not Pod", kval_str(kval_get(obj, "kind")));
	if (r < 0) {
		log_msg(LOG_WARNING, "Ignoring a pod from the API server: %s", err);
		free(p);
		return 0;
	}
	if (w->state == PW_LISTING)
		(void)seen_add(w, p->uid);
	if (deleted) {
		if (descdir_remove(w->dir, p->uid) > 0) {
			log_entry e;
			log_entry_init(&e, LOG_INFO, MSGID_KUBE_POD_REMOVED);
			log_entry_add(&e, FIELD_POD, "%s/%s", p->namespace_, p->name);
			log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
			log_entry_send(&e, "Pod %s/%s deleted: descriptor removed", p->namespace_, p->name);
		}
		free(p);
		return 0;
	}
	n = kpod_descriptor(p, text, sizeof(text));
	if (n < 0) {
		log_msg(LOG_WARNING, "Pod %s/%s: descriptor too large, skipped", p->namespace_, p->name);
		free(p);
		return 0;
	}
	r = descdir_put(w->dir, p->uid, text, (size_t)n);
	if (r < 0)
		log_msg(LOG_ERR, "Pod %s/%s: cannot write its descriptor: %s", p->namespace_, p->name, strerror(-r));
	else if (r > 0) {
		log_entry e;
		log_entry_init(&e, LOG_DEBUG, MSGID_KUBE_POD_UPDATED);
		log_entry_add(&e, FIELD_POD, "%s/%s", p->namespace_, p->name);
		log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
		log_entry_add(&e, FIELD_NAMESPACE, "%s", p->namespace_);
		log_entry_add(&e, FIELD_PRIORITY, "%d", p->priority);
		log_entry_send(&e, "Pod %s/%s: descriptor written (priority %d%s)", p->namespace_, p->name, p->priority,
		               kpod_critical(p) ? ", critical" : "");
	}
	free(p);
	return 0;
}

/* --- the body decoder ---------------------------------------------------------------------- */

/* What the decoder said since the last call, as one line ("" when nothing). */
static const char *diag_text(podwatch *w)
{
	long n;
	size_t end;

	if (!w->diag_out)
		return "";
	fflush(w->diag_out);
	n = ftell(w->diag_out);
	end = n > 0 ? (size_t)n : 0;
	w->diag_buf[end < sizeof(w->diag_buf) ? end : sizeof(w->diag_buf) - 1] = '\0';
	rewind(w->diag_out);
	diag_init(&w->diag, w->diag_out);
	kpod_tidy_message(w->diag_buf);
	return w->diag_buf;
}

/* Problems the stream went on after (an object with a duplicate key is dropped): logged. */
static void log_dropped(podwatch *w)
{
	if (w->diag.nerrors || w->diag.nwarnings)
		log_msg(LOG_WARNING, "Ignoring an object from the API server: %s", diag_text(w));
}

static void stream_done(podwatch *w)
{
	w->stream = kstream_free(w->stream);
	if (w->diag_out) {
		fclose(w->diag_out);
		w->diag_out = NULL;
	}
	karena_reset(&w->arena);
}

static int stream_start(podwatch *w, const char *source, size_t total_max, size_t item_max, kstream_item_fn fn)
{
	int r;

	stream_done(w);
	w->bad_body = false;
	w->diag_buf[0] = '\0';
	if (!(w->diag_out = fmemopen(w->diag_buf, sizeof(w->diag_buf), "w")))
		return -ENOMEM;
	diag_init(&w->diag, w->diag_out);
	r = kstream_new(&w->stream, KSTREAM_JSON, source, &w->diag, fn, w);
	if (r < 0) {
		stream_done(w);
		return r;
	}
	kstream_set_limits(w->stream, total_max, item_max);
	return 0;
}

/* Body bytes as curl hands them over (a 200's only). */
static int stream_data(kube_call *call, const char *buf, size_t len, void *userdata)
{
	podwatch *w = userdata;
	int r;

	(void)call;
	if (!w->stream)
		return -EINVAL;
	r = kstream_feed(w->stream, buf, len);
	if (r < 0 && r != -ENOMEM)
		w->bad_body = true;
	return r;
}

/* --- list ---------------------------------------------------------------------------------- */

/* One item of the list page: a Pod (API list items carry no kind). */
static int list_item(void *userdata, const kval *item)
{
	podwatch *w = userdata;

	log_dropped(w);
	return apply_pod(w, item, false);
}

static void list_failed(podwatch *w)
{
	stream_done(w);
	w->cont[0] = '\0';
	seen_clear(w);
	retry_later(w);
}

static void list_done(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                      void *userdata)
{
	podwatch *w = userdata;
	char why[sizeof(w->diag_buf) + 32];
	const char *s;

	(void)call;
	(void)len;
	w->call = NULL;
	if (error == 0 && status == 200 && !w->bad_body) {
		int r = kstream_end(w->stream);
		if (r < 0 && r != -ENOMEM)
			w->bad_body = true;
		else if (r < 0)
			error = r;
	}
	if (w->bad_body) {
		snprintf(why, sizeof(why), "response is not JSON (%s)", diag_text(w));
		log_api(LOG_WARNING, "LIST", "pods", status, -EBADMSG, why);
		list_failed(w);
		return;
	}
	if (error < 0 || status != 200) {
		if (status == 403 && !w->warned_forbidden) {
			log_api(LOG_ERR, "LIST", "pods", status, 0, "forbidden: the node authorizer allows only "
			        "spec.nodeName=<this node>; is node-name right?");
			w->warned_forbidden = true;
		} else
			log_api(LOG_WARNING, "LIST", "pods", status, error, error ? msg : body);
		list_failed(w);
		return;
	}
	log_dropped(w);
	/* a PodList always has metadata.resourceVersion: without it, this was some other object */
	s = kstream_list_resource_version(w->stream);
	if (!s) {
		log_api(LOG_WARNING, "LIST", "pods", status, -EBADMSG, "not a PodList");
		list_failed(w);
		return;
	}
	if (strlen(s) < sizeof(w->list_rv))
		snprintf(w->list_rv, sizeof(w->list_rv), "%s", s);
	s = kstream_list_continue(w->stream);
	snprintf(w->cont, sizeof(w->cont), "%s", s && strlen(s) < sizeof(w->cont) ? s : "");
	stream_done(w);
	if (w->cont[0]) {
		start_list_page(w);
		return;
	}
	/* the whole list is in: what is not in it is gone */
	if (w->n_seen) /* none: seen is NULL, which qsort() may not be given */
		qsort(w->seen, w->n_seen, sizeof(*w->seen), str_cmp);
	int pruned = descdir_prune(w->dir, seen_has, w);
	log_msg(LOG_INFO, "Listed %zu pod(s) on node %s at resourceVersion %s%s", w->n_seen, w->node, w->list_rv,
	        pruned > 0 ? " (stale descriptors removed)" : "");
	seen_clear(w);
	snprintf(w->rv, sizeof(w->rv), "%s", w->list_rv);
	w->backoff_usec = 0;
	start_watch(w);
}

static void start_list_page(podwatch *w)
{
	char path[8192];
	char *esc = NULL;
	int r;

	if (w->cont[0] && !(esc = kube_escape(w->cont))) {
		retry_later(w);
		return;
	}
	if (!w->cont[0])
		seen_clear(w);
	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=%s&limit=%u%s%s", w->selector, w->page_limit,
	         esc ? "&continue=" : "", esc ? esc : "");
	free(esc);
	w->state = PW_LISTING;
	/* items are decoded one at a time as the page arrives: memory is one pod, not the page */
	r = stream_start(w, LIST_SOURCE, LIST_MAX_BYTES, 0, list_item);
	if (r >= 0) {
		kube_call_opts o = { .method = "GET", .path = path, .data = stream_data, .done = list_done,
		                     .userdata = w };
		r = kube_multi_start(w->multi, &o, &w->call);
	}
	if (r < 0) {
		log_msg(LOG_ERR, "Cannot start the pod list: %s", strerror(-r));
		stream_done(w);
		retry_later(w);
	}
}

/* --- watch --------------------------------------------------------------------------------- */

/* One watch event: {"type": ..., "object": {...}}. */
static int watch_event(void *userdata, const kval *ev)
{
	podwatch *w = userdata;
	const kval *type = kval_get(ev, "type"), *obj = kval_get(ev, "object");
	const kval *rv = kval_get(kval_get(obj, "metadata"), "resourceVersion");
	const char *t = kval_str(type);
	int r = 0;

	log_dropped(w);
	if (kval_type_of(type) != KVAL_STRING || kval_type_of(obj) != KVAL_MAP) {
		log_msg(LOG_WARNING, "Ignoring a malformed watch event from the API server (no type or object)");
		return 0;
	}
	if (strcmp(t, "ERROR") == 0) {
		const kval *code = kval_get(obj, "code"), *m = kval_get(obj, "message");
		if (kval_type_of(code) == KVAL_INT && strcmp(kval_str(code), "410") == 0) {
			log_msg(LOG_INFO, "Watch resourceVersion %s expired (410 Gone): relisting", w->rv);
			w->relist = true;
		} else
			log_msg(LOG_WARNING, "Watch error from the API server: %.300s",
			        kval_type_of(m) == KVAL_STRING ? kval_str(m) : "(no message)");
		return 0;
	}
	if (strcmp(t, "ADDED") == 0 || strcmp(t, "MODIFIED") == 0)
		r = apply_pod(w, obj, false);
	else if (strcmp(t, "DELETED") == 0)
		r = apply_pod(w, obj, true);
	/* BOOKMARK: only the resourceVersion moves */
	if (kval_type_of(rv) == KVAL_STRING && kval_len(rv) < sizeof(w->rv))
		snprintf(w->rv, sizeof(w->rv), "%s", kval_str(rv));
	return r;
}

static void watch_done(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                       void *userdata)
{
	podwatch *w = userdata;

	(void)call;
	(void)len;
	w->call = NULL;
	/* JSON cannot be resynchronised after a syntax error: the stream is given up */
	if (w->bad_body) {
		log_msg(LOG_WARNING, "Malformed watch stream from the API server (%s): watching again",
		        diag_text(w));
		stream_done(w);
		retry_later(w);
		return;
	}
	/* no kstream_end: a partial event at the end (the server cut the stream) is dropped, and the
	 * watch resumes before it */
	log_dropped(w);
	stream_done(w);
	if (status == 410 || w->relist) {
		if (!w->relist) /* the ERROR event logs it otherwise */
			log_msg(LOG_INFO, "Watch resourceVersion %s expired (410 Gone): relisting", w->rv);
		w->relist = false;
		w->rv[0] = '\0';
		w->backoff_usec = 0;
		start_list_page(w);
		return;
	}
	if (error == 0 && status == 200) {
		/* timeoutSeconds elapsed or the server closed: resume where we are */
		w->backoff_usec = 0;
		start_watch(w);
		return;
	}
	log_api(LOG_WARNING, "WATCH", "pods", status, error, error ? msg : body);
	retry_later(w);
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

static void start_watch(podwatch *w)
{
	char path[1024];
	int r;

	snprintf(path, sizeof(path),
	         "/api/v1/pods?fieldSelector=%s&watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%llu",
	         w->selector, w->rv, (unsigned long long)(w->watch_timeout_usec / 1000000));
	w->state = PW_WATCHING;
	w->relist = false;
	/* events are concatenated JSON values; a watch never ends, so no total bound */
	r = stream_start(w, WATCH_SOURCE, 0, EVENT_TREE_MAX, watch_event);
	if (r >= 0) {
		kube_call_opts o = { .method = "GET", .path = path, .timeout_ms = -1,
		                     .idle_timeout_s = watch_idle_timeout_s(w->watch_timeout_usec),
		                     .data = stream_data, .done = watch_done, .userdata = w };
		r = kube_multi_start(w->multi, &o, &w->call);
	}
	if (r < 0) {
		log_msg(LOG_ERR, "Cannot start the pod watch: %s", strerror(-r));
		stream_done(w);
		retry_later(w);
	}
}

int podwatch_new(sd_event *e, kube_multi *m, descdir *dir, const podwatch_opts *o, podwatch **ret)
{
	podwatch *w = calloc(1, sizeof(*w));
	char sel[300];
	int r;

	if (!w)
		return -ENOMEM;
	w->event = sd_event_ref(e);
	w->multi = m;
	w->dir = dir;
	w->page_limit = o->page_limit ? o->page_limit : 500;
	w->watch_timeout_usec = o->watch_timeout_usec ? o->watch_timeout_usec : 300000000ULL;
	w->retry_max_usec = o->retry_max_usec ? o->retry_max_usec : 30000000ULL;
	snprintf(sel, sizeof(sel), "spec.nodeName=%s", o->node_name);
	if (!(w->node = strdup(o->node_name)) || !(w->selector = kube_escape(sel))) {
		podwatch_free(w);
		return -ENOMEM;
	}
	r = sd_event_add_time(e, &w->timer, CLOCK_MONOTONIC, UINT64_MAX, 0, on_backoff, w);
	if (r < 0) {
		podwatch_free(w);
		return r;
	}
	(void)sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
	*ret = w;
	return 0;
}

podwatch *podwatch_free(podwatch *w)
{
	if (!w)
		return NULL;
	if (w->call)
		kube_call_cancel(w->multi, w->call);
	sd_event_source_disable_unref(w->timer);
	sd_event_unref(w->event);
	seen_clear(w);
	free(w->seen);
	stream_done(w);
	karena_free(&w->arena);
	free(w->node);
	free(w->selector);
	free(w);
	return NULL;
}

int podwatch_start(podwatch *w)
{
	start_list_page(w);
	return 0;
}

unsigned podwatch_count(const podwatch *w)
{
	return descdir_count(w->dir);
}
