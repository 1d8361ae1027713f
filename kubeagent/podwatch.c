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
#include "log.h"

#define LINE_MAX_BYTES (4u * 1024 * 1024) /* one watch event; a Pod is far smaller */

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
	/* the watch stream's partial line */
	char *line;
	size_t line_len, line_cap;
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
	return bsearch(&uid, w->seen, w->n_seen, sizeof(*w->seen), str_cmp) != NULL;
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

static void apply_pod(podwatch *w, yajl_val obj, bool deleted)
{
	char err[256], text[16384];
	kpod *p = malloc(sizeof(*p));
	int r, n;

	if (!p)
		return;
	r = kpod_decode(obj, p, err, sizeof(err));
	if (r < 0) {
		log_msg(LOG_WARNING, "Ignoring a pod from the API server: %s", err);
		free(p);
		return;
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
		return;
	}
	n = kpod_descriptor(p, text, sizeof(text));
	if (n < 0) {
		log_msg(LOG_WARNING, "Pod %s/%s: descriptor too large, skipped", p->namespace_, p->name);
		free(p);
		return;
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
}

/* --- list ---------------------------------------------------------------------------------- */

static void list_done(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                      void *userdata)
{
	podwatch *w = userdata;
	char perr[256];
	yajl_val root, items;
	const char *s;

	(void)call;
	(void)len;
	w->call = NULL;
	if (error < 0 || status != 200) {
		if (status == 403 && !w->warned_forbidden) {
			log_api(LOG_ERR, "LIST", "pods", status, 0, "forbidden: the node authorizer allows only "
			        "spec.nodeName=<this node>; is node-name right?");
			w->warned_forbidden = true;
		} else
			log_api(LOG_WARNING, "LIST", "pods", status, error, error ? msg : body);
		w->cont[0] = '\0';
		seen_clear(w);
		retry_later(w);
		return;
	}
	root = yajl_tree_parse(body, perr, sizeof(perr));
	items = ytree_get(root, "items", NULL, NULL);
	if (!root || !YAJL_IS_ARRAY(items)) {
		log_api(LOG_WARNING, "LIST", "pods", status, -EBADMSG, root ? "not a PodList" : "response is not JSON");
		yajl_tree_free(root);
		w->cont[0] = '\0';
		seen_clear(w);
		retry_later(w);
		return;
	}
	for (size_t i = 0; i < items->u.array.len; i++)
		apply_pod(w, items->u.array.values[i], false);
	s = ytree_str(root, "metadata", "continue", NULL);
	snprintf(w->cont, sizeof(w->cont), "%s", s && strlen(s) < sizeof(w->cont) ? s : "");
	s = ytree_str(root, "metadata", "resourceVersion", NULL);
	if (s && strlen(s) < sizeof(w->list_rv))
		snprintf(w->list_rv, sizeof(w->list_rv), "%s", s);
	yajl_tree_free(root);
	if (w->cont[0]) {
		start_list_page(w);
		return;
	}
	/* the whole list is in: what is not in it is gone */
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
	kube_call_opts o = { .method = "GET", .path = path, .done = list_done, .userdata = w, .max_body = 64u << 20 };
	r = kube_multi_start(w->multi, &o, &w->call);
	if (r < 0) {
		log_msg(LOG_ERR, "Cannot start the pod list: %s", strerror(-r));
		retry_later(w);
	}
}

/* --- watch --------------------------------------------------------------------------------- */

static void watch_event(podwatch *w, const char *line)
{
	char perr[256];
	yajl_val root = yajl_tree_parse(line, perr, sizeof(perr));
	const char *type = ytree_str(root, "type", NULL, NULL);
	yajl_val obj = ytree_get(root, "object", NULL, NULL);
	const char *rv = ytree_str(obj, "metadata", "resourceVersion", NULL);

	if (!root || !type || !YAJL_IS_OBJECT(obj)) {
		log_msg(LOG_WARNING, "Ignoring a malformed watch event from the API server (%s)",
		        root ? "no type or object" : "not JSON");
		yajl_tree_free(root);
		return;
	}
	if (strcmp(type, "ERROR") == 0) {
		yajl_val code = ytree_get(obj, "code", NULL, NULL);
		const char *m = ytree_str(obj, "message", NULL, NULL);
		if (YAJL_IS_INTEGER(code) && YAJL_GET_INTEGER(code) == 410) {
			log_msg(LOG_INFO, "Watch resourceVersion %s expired (410 Gone): relisting", w->rv);
			w->relist = true;
		} else
			log_msg(LOG_WARNING, "Watch error from the API server: %.300s", m ? m : "(no message)");
		yajl_tree_free(root);
		return;
	}
	if (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0)
		apply_pod(w, obj, false);
	else if (strcmp(type, "DELETED") == 0)
		apply_pod(w, obj, true);
	/* BOOKMARK: only the resourceVersion moves */
	if (rv && strlen(rv) < sizeof(w->rv))
		snprintf(w->rv, sizeof(w->rv), "%s", rv);
	yajl_tree_free(root);
}

static int watch_data(kube_call *call, const char *buf, size_t len, void *userdata)
{
	podwatch *w = userdata;

	(void)call;
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			if (w->line_len) {
				w->line[w->line_len] = '\0';
				watch_event(w, w->line);
				w->line_len = 0;
			}
			continue;
		}
		if (w->line_len + 2 > w->line_cap) {
			if (w->line_cap >= LINE_MAX_BYTES)
				return -EFBIG;
			size_t nc = w->line_cap ? w->line_cap * 2 : 16384;
			char *n = realloc(w->line, nc);
			if (!n)
				return -ENOMEM;
			w->line = n;
			w->line_cap = nc;
		}
		w->line[w->line_len++] = buf[i];
	}
	return 0;
}

static void watch_done(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                       void *userdata)
{
	podwatch *w = userdata;

	(void)call;
	(void)len;
	w->call = NULL;
	w->line_len = 0;
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

static void start_watch(podwatch *w)
{
	char path[1024];
	int r;

	snprintf(path, sizeof(path),
	         "/api/v1/pods?fieldSelector=%s&watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%llu",
	         w->selector, w->rv, (unsigned long long)(w->watch_timeout_usec / 1000000));
	w->state = PW_WATCHING;
	w->relist = false;
	w->line_len = 0;
	/* a server that goes silent (no event, no bookmark) for longer than the watch's own bound is gone */
	kube_call_opts o = { .method = "GET", .path = path, .timeout_ms = -1,
	                     .low_speed_time_s = (long)(w->watch_timeout_usec / 1000000) + 30,
	                     .data = watch_data, .done = watch_done, .userdata = w };
	r = kube_multi_start(w->multi, &o, &w->call);
	if (r < 0) {
		log_msg(LOG_ERR, "Cannot start the pod watch: %s", strerror(-r));
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
	free(w->line);
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
