/* SPDX-License-Identifier: MIT */
#include "nodecond.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_tree.h>

#include "backoff.h"
#include "k8s_body.h"
#include "k8s.h"
#include "kagent-log.h"
#include "ktime.h"
#include "liveness.h"
#include "spool.h"
#include "clock.h"

#define NODE_MAX_BYTES (4u << 20) /* a Node object (images lists make it large) */
/* evictd-kube's own reasons: what it infers from evictd's liveness, never evictd's word */
#define REASON_NOT_RUNNING "EvictdNotRunning"
#define REASON_NOT_RESPONDING "EvictdNotResponding"

#define N_TYPES NODECOND_TYPES

/* time: lastTransitionTime on the Node; the record's time for a word */
typedef nodecond_value cond;

/* Where a condition's next value comes from. */
typedef enum source { SRC_NONE, SRC_WORD, SRC_STATUS_FILE, SRC_INFERRED, SRC_NODE } source;

typedef struct slot {
	bool has_word; /* evictd's own word (a record, or the Node's value with one of evictd's reasons) */
	cond word;
	bool on_node;  /* the Node has it (read at start, then as posted) */
	cond node;
} slot;

struct nodecond {
	sd_event *event;
	kube_multi *multi;
	liveness *live;
	char *node_name;
	uint64_t heartbeat_usec, retry_max_usec, backoff_usec;
	slot s[N_TYPES];
	bool read;               /* the Node was read (or cannot be: 403, 404) */
	kube_call *call;
	sd_event_source *timer;  /* retry, heartbeat */
	bool backing_off;
	uint64_t posted_mono;    /* the last successful post */
	uint64_t hold_until;     /* after a final refusal: no post before, but for a word */
	bool no_status_logged;
	/* the word in progress */
	nodecond_done_fn done;
	void *done_userdata;
	/* what the call in flight posts */
	source posting_src[N_TYPES];
	cond posting[N_TYPES];
	bool (*words_pending)(void *);
	void *words_pending_userdata;
};

static void sync_conditions(nodecond *n);

static void set(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s ? s : "");
}

/* The kubelet's condition the type mirrors ("MemoryPressure"), as evictd's status file names it. */
static const char *plain(int i)
{
	return condparse_type_name(i) + strlen("Evictd");
}

static bool inferred_reason(const char *reason)
{
	return strcmp(reason, REASON_NOT_RUNNING) == 0 || strcmp(reason, REASON_NOT_RESPONDING) == 0;
}

static void arm(nodecond *n, uint64_t at)
{
	(void)sd_event_source_set_time(n->timer, at);
	(void)sd_event_source_set_enabled(n->timer, SD_EVENT_ONESHOT);
}

static void back_off(nodecond *n)
{
	n->backing_off = true;
	arm(n, clock_mono_usec() + backoff_next(&n->backoff_usec, n->retry_max_usec));
}

static void finish_word(nodecond *n, long refused)
{
	nodecond_done_fn done = n->done;
	n->done = NULL;
	if (done)
		done(refused, n->done_userdata);
}

/* "HTTP 403: <the Status message>", or curl's words for a call that got no answer. */
static void outcome_text(int error, long status, const char *body, const char *msg, char *buf, size_t size)
{
	if (error < 0 && !status) {
		snprintf(buf, size, "%s", msg && *msg ? msg : strerror(-error));
		return;
	}
	char perr[64];
	yajl_val st = status >= 300 && body ? yajl_tree_parse(body, perr, sizeof(perr)) : NULL;
	const char *path[] = { "message", NULL };
	const char *m = YAJL_GET_STRING(yajl_tree_get(st, path, yajl_t_string));
	snprintf(buf, size, "HTTP %ld%s%.300s", status, m ? ": " : "", m ? m : "");
	yajl_tree_free(st);
}

/* A call ended: none is in flight any more; what[] says how it ended. */
static void call_ended(nodecond *n, kube_call *call, int error, long status, const char *body, const char *msg,
                       char *what, size_t size)
{
	(void)call;
	n->call = NULL;
	outcome_text(error, status, body, msg, what, size);
}

/* --- reading the Node ----------------------------------------------------------------------- */

static void take_node_conditions(nodecond *n, const char *body)
{
	nodecond_value v[NODECOND_TYPES];
	if (condparse_node(body, v) < 0)
		return;
	for (int i = 0; i < N_TYPES; i++) {
		slot *s = &n->s[i];
		if (!v[i].present)
			continue;
		s->on_node = true;
		s->node = v[i];
		/* evictd's last word as relayed before, unless it is evictd-kube's own inference; a word
		 * that arrived meanwhile is newer */
		if (!s->has_word && !inferred_reason(s->node.reason)) {
			s->word = s->node;
			s->has_word = true;
		}
	}
}

static void node_read(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                      void *userdata)
{
	nodecond *n = userdata;
	char what[400];
	(void)len;
	call_ended(n, call, error, status, body, msg, what, sizeof(what));
	if (status == 200) {
		take_node_conditions(n, body);
		n->read = true;
	} else if (status == 404 || status == 403 || status == 400) {
		/* nothing to learn: posts will tell (a Node registered later, a 403 logged per post) */
		log_msg(LOG_NOTICE, "Node %s: %s: its conditions are posted without the Node's transition times",
		        n->node_name, what);
		n->read = true;
	} else {
		log_msg(LOG_WARNING, "Node %s: %s; will retry", n->node_name, what);
		back_off(n);
		return;
	}
	n->backoff_usec = 0;
	sync_conditions(n);
}

static void read_node(nodecond *n)
{
	char path[512], *name = kube_escape(n->node_name);
	if (!name) {
		back_off(n);
		return;
	}
	snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
	free(name);
	kube_call_opts o = { .method = "GET", .path = path, .max_body = NODE_MAX_BYTES, .done = node_read, .userdata = n };
	if (kube_multi_start(n->multi, &o, &n->call) < 0)
		back_off(n);
}

/* --- what each condition says now ------------------------------------------------------------ */

static void inferred(nodecond *n, int i, const liveness_view *v, cond *out)
{
	char when[40] = "";
	if (v->updated_real_usec)
		ktime_rfc3339((time_t)(v->updated_real_usec / 1000000), when, sizeof(when));
	set(out->status, sizeof(out->status), "Unknown");
	switch (v->state) {
	case EVICTD_STOPPED:
		set(out->reason, sizeof(out->reason), SPOOL_REASON_STOPPED);
		snprintf(out->message, sizeof(out->message), "evictd (pid %d) stopped without a word on %s: nothing "
		         "relieves it until evictd runs again", (int)v->pid, plain(i));
		break;
	case EVICTD_OVERDUE:
		set(out->reason, sizeof(out->reason), REASON_NOT_RESPONDING);
		snprintf(out->message, sizeof(out->message), "evictd (pid %d) has not rewritten %s since %s (it does at "
		         "least every %llus while it runs): stuck, or gone; nothing is known to relieve %s",
		         (int)v->pid, liveness_path(n->live), when, (unsigned long long)(v->overdue_usec / 3 * 2 / 1000000),
		         plain(i));
		break;
	case EVICTD_EXITED:
		set(out->reason, sizeof(out->reason), REASON_NOT_RUNNING);
		snprintf(out->message, sizeof(out->message), "evictd (pid %d) ended without an orderly stop (killed or "
		         "crashed): nothing relieves %s on this node until it runs again", (int)v->pid, plain(i));
		break;
	default:
		set(out->reason, sizeof(out->reason), REASON_NOT_RUNNING);
		snprintf(out->message, sizeof(out->message), "evictd is not running (no status file %s): nothing "
		         "relieves %s on this node until it runs", liveness_path(n->live), plain(i));
		break;
	}
}

static source desired(nodecond *n, int i, const liveness_view *v, bool words_waiting, cond *out)
{
	const slot *s = &n->s[i];
	if (v->state == EVICTD_RUNNING) {
		if (s->has_word) {
			*out = s->word;
			return SRC_WORD;
		}
		if (!v->dry_run && (s->on_node || liveness_lists(v, plain(i)))) {
			bool on = liveness_lists(v, plain(i));
			set(out->status, sizeof(out->status), on ? "True" : "False");
			set(out->reason, sizeof(out->reason), spool_condition_reason(plain(i), on));
			snprintf(out->message, sizeof(out->message), "%s (from evictd's status file)",
			         on ? "evictd is evicting pods to relieve this pressure" : "no evictd threshold for this condition is met");
			return SRC_STATUS_FILE;
		}
	} else if (s->has_word && strcmp(s->word.reason, SPOOL_REASON_STOPPED) == 0) {
		*out = s->word; /* evictd's own last word as it stopped */
		return SRC_WORD;
	} else if ((s->has_word || s->on_node) && !words_waiting) {
		inferred(n, i, v, out);
		return SRC_INFERRED;
	}
	if (!s->on_node)
		return SRC_NONE;
	*out = s->node;
	return SRC_NODE;
}

static bool same(const cond *a, const cond *b)
{
	return !strcmp(a->status, b->status) && !strcmp(a->reason, b->reason) && !strcmp(a->message, b->message);
}

static int64_t parse_sec(const char *t)
{
	int64_t ns;
	return t && *t && k8s_parse_time(t, &ns) == 0 ? ns / 1000000000 : -1;
}

/*
 * lastTransitionTime: the Node's as long as the status is the Node's; on a change, the time of
 * evictd's record when the change is its word (and not older than the Node's), else now.
 */
static void transition_time(const slot *s, source src, const cond *c, char *buf, size_t size)
{
	if (s->on_node && !strcmp(s->node.status, c->status) && s->node.time[0]) {
		set(buf, size, s->node.time);
		return;
	}
	int64_t word = src == SRC_WORD ? parse_sec(c->time) : -1, prev = s->on_node ? parse_sec(s->node.time) : -1;
	ktime_rfc3339(word >= 0 && word >= prev && word <= (int64_t)time(NULL) ? (time_t)word : time(NULL), buf, size);
}

/* --- posting ------------------------------------------------------------------------------- */

static void log_post(nodecond *n, int i, int error, long status, const char *what, bool retry)
{
	const cond *c = &n->posting[i];
	log_entry e;
	log_entry_init(&e, error < 0 || status >= 300 ? (retry ? LOG_WARNING : LOG_NOTICE) : LOG_INFO,
	               MSGID_KUBE_API_CALL);
	log_entry_add(&e, FIELD_KUBE_STEP, "node-condition");
	log_entry_add(&e, FIELD_KUBE_STATUS, "%ld", error < 0 ? 0L : status);
	log_entry_add(&e, FIELD_CONDITION, "%s", condparse_type_name(i));
	log_entry_add(&e, FIELD_CONDITION_STATUS, "%s", c->status);
	log_entry_add(&e, FIELD_REASON, "%s", c->reason);
	log_entry_send(&e, "Node condition %s=%s: %s (%s)%s", condparse_type_name(i), c->status, what, c->reason,
	               retry ? "; will retry" : "");
}

static void posted(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                   void *userdata)
{
	nodecond *n = userdata;
	char what[400];
	(void)len;
	call_ended(n, call, error, status, body, msg, what, sizeof(what));
	bool ok = error >= 0 && status >= 200 && status < 300;
	bool retry = !ok && (error < 0 || status == 0 || status == 401 || status == 409 || status == 429 || status >= 500);
	for (int i = 0; i < N_TYPES; i++) {
		slot *s = &n->s[i];
		if (n->posting_src[i] == SRC_NONE)
			continue;
		/* a change, or any failure, is told; a heartbeat that went through is not */
		bool change = !s->on_node || strcmp(s->node.status, n->posting[i].status) ||
		              strcmp(s->node.reason, n->posting[i].reason);
		if (change || !ok)
			log_post(n, i, error, status, what, retry);
		if (ok) {
			s->node = n->posting[i];
			s->on_node = true;
		}
	}
	if (ok) {
		n->posted_mono = clock_mono_usec();
		n->backoff_usec = 0;
		finish_word(n, 0);
	} else if (retry) {
		back_off(n);
		return;
	} else {
		/* 404 (no such Node yet), 403, 422: not before the next heartbeat, but for a word */
		n->hold_until = clock_mono_usec() + n->heartbeat_usec;
		finish_word(n, status);
	}
	sync_conditions(n);
}

/*
 * A strategic merge patch of the Node's status: conditions merge by type, so only evictd's are
 * touched (node-problem-detector's way; the kubelet's types are the kubelet's). Every kept
 * condition goes in each post, with lastHeartbeatTime now.
 */
static void post(nodecond *n)
{
	char path[512], now[40], *body, *name = kube_escape(n->node_name);
	k8s_body_node_condition conds[N_TYPES];
	size_t nc = 0;

	if (!name) {
		back_off(n);
		return;
	}
	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", name);
	free(name);
	ktime_rfc3339(time(NULL), now, sizeof(now));
	for (int i = 0; i < N_TYPES; i++)
		if (n->posting_src[i] != SRC_NONE) {
			const cond *c = &n->posting[i];
			conds[nc++] = (k8s_body_node_condition){ condparse_type_name(i), c->status, c->reason, c->message,
			                                         now, c->time };
		}
	body = k8s_body_node_conditions_patch(conds, nc);
	kube_call_opts o = { .method = "PATCH", .path = path, .body = body,
	                     .content_type = "application/strategic-merge-patch+json", .done = posted, .userdata = n };
	if (!body || kube_multi_start(n->multi, &o, &n->call) < 0)
		back_off(n);
	free(body);
}

/* Posts what changed, the word waiting, or the heartbeat when due; else sleeps until it is due. */
static void sync_conditions(nodecond *n)
{
	if (!n->read || n->call || n->backing_off)
		return;
	const liveness_view *v = liveness_check(n->live);
	uint64_t now = clock_mono_usec();
	bool waiting = v->state != EVICTD_RUNNING && n->words_pending && n->words_pending(n->words_pending_userdata);
	bool kept = false, change = false;
	for (int i = 0; i < N_TYPES; i++) {
		cond *c = &n->posting[i];
		source src = desired(n, i, v, waiting, c);
		n->posting_src[i] = src;
		if (src == SRC_NONE)
			continue;
		kept = true;
		change |= !n->s[i].on_node || !same(c, &n->s[i].node);
		char t[40];
		transition_time(&n->s[i], src, c, t, sizeof(t));
		set(c->time, sizeof(c->time), t);
	}
	if (!kept) {
		finish_word(n, 0); /* cannot happen: a word always keeps its condition */
		return;
	}
	bool due = !n->posted_mono || now - n->posted_mono >= n->heartbeat_usec;
	if (!n->done && (now < n->hold_until || (!change && !due))) {
		uint64_t at = n->posted_mono ? n->posted_mono + n->heartbeat_usec : now;
		arm(n, at > n->hold_until ? at : n->hold_until);
		return;
	}
	post(n);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	nodecond *n = userdata;
	(void)s;
	(void)usec;
	n->backing_off = false;
	if (!n->read)
		read_node(n);
	else
		sync_conditions(n);
	return 0;
}

static void on_liveness(void *userdata)
{
	sync_conditions(userdata);
}

/* --- API ----------------------------------------------------------------------------------- */

int nodecond_new(sd_event *e, kube_multi *m, const nodecond_opts *o, nodecond **ret)
{
	nodecond *n = calloc(1, sizeof(*n));
	int r;

	if (!n)
		return -ENOMEM;
	n->event = sd_event_ref(e);
	n->multi = m;
	n->heartbeat_usec = o->heartbeat_usec ? o->heartbeat_usec : 300000000ULL;
	n->retry_max_usec = o->retry_max_usec ? o->retry_max_usec : 30000000ULL;
	if (!(n->node_name = strdup(o->node_name))) {
		nodecond_free(n);
		return -ENOMEM;
	}
	r = sd_event_add_time(e, &n->timer, CLOCK_MONOTONIC, UINT64_MAX, 0, on_timer, n);
	if (r >= 0)
		r = liveness_new(e, o->status_path, on_liveness, n, &n->live);
	if (r < 0) {
		nodecond_free(n);
		return r;
	}
	(void)sd_event_source_set_enabled(n->timer, SD_EVENT_OFF);
	*ret = n;
	return 0;
}

nodecond *nodecond_free(nodecond *n)
{
	if (!n)
		return NULL;
	if (n->call)
		kube_call_cancel(n->multi, n->call);
	sd_event_source_disable_unref(n->timer);
	liveness_free(n->live);
	sd_event_unref(n->event);
	free(n->node_name);
	free(n);
	return NULL;
}

void nodecond_start(nodecond *n)
{
	read_node(n);
}

void nodecond_set_words_pending(nodecond *n, bool (*fn)(void *userdata), void *userdata)
{
	n->words_pending = fn;
	n->words_pending_userdata = userdata;
}

int nodecond_take_word(nodecond *n, const nodecond_word *w, nodecond_done_fn done, void *userdata)
{
	int i = condparse_type_index(w->type);
	if (i < 0 || !w->status ||
	    (strcmp(w->status, "True") && strcmp(w->status, "False") && strcmp(w->status, "Unknown")))
		return -EINVAL;
	if (n->done)
		return -EBUSY;
	slot *s = &n->s[i];
	set(s->word.status, sizeof(s->word.status), w->status);
	set(s->word.reason, sizeof(s->word.reason), w->reason);
	set(s->word.message, sizeof(s->word.message), w->message);
	set(s->word.time, sizeof(s->word.time), w->at);
	s->has_word = true;
	if (liveness_check(n->live)->state == EVICTD_NEVER_SEEN && !n->no_status_logged) {
		/* evictd writes records, so it runs: it writes its status file elsewhere */
		log_msg(LOG_WARNING, "evictd's condition records arrive, but its status file %s does not exist (or is "
		        "not root's): is [agent] status-file the same for evictd and evictd-kube? Until it is, evictd's "
		        "conditions say Unknown", liveness_path(n->live));
		n->no_status_logged = true;
	}
	n->done = done;
	n->done_userdata = userdata;
	n->hold_until = 0;
	sync_conditions(n);
	return 0;
}
