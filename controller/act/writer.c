/* SPDX-License-Identifier: MIT */
#include "writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "backoff.h"

#define CODES_MAX 64

typedef enum chain_state { CH_WAITING, CH_IN_FLIGHT, CH_RETRY } chain_state;

struct write_chain {
	write_chain *prev, *next;  /* all chains of the writer */
	write_chain *queue_next;   /* waiting for a slot */
	writer *w;
	char *ns, *name, *uid, *node;
	write_step steps[WRITER_STEPS_MAX];
	size_t n, i; /* steps, the current one */
	chain_state state;
	void *handle;            /* the call in flight */
	sd_event_source *timer;  /* waiting to retry */
	uint64_t backoff_usec;
	write_end_fn on_end;
	void *end_userdata;
};

struct code_count {
	const char *verb;
	long status;
	uint64_t n;
};

struct writer {
	sd_event *event;
	transport *t;
	cluster *c;
	writer_hooks hooks;
	unsigned max_in_flight, max_waiting_events;
	uint64_t retry_max_usec;
	write_chain *chains;
	size_t n_chains; /* unfinished: waiting for a slot, for a retry or for an answer */
	write_chain *queue_head, *queue_tail;
	unsigned in_flight;
	size_t waiting;
	writer_stats stats;
	struct code_count codes[CODES_MAX];
	size_t n_codes;
};

static void advance(writer *w, write_chain *ch);
static void start_waiting(writer *w);

const char *write_result_name(write_result r)
{
	static const char *const names[] = { "ok", "obsolete", "conflict", "gone", "refused", "abandoned" };
	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

/* --- chains ------------------------------------------------------------------------------------ */

write_chain *write_chain_new(const char *ns, const char *name, const char *uid)
{
	write_chain *ch = calloc(1, sizeof(*ch));

	if (!ch || !(ch->ns = strdup(ns)) || !(ch->name = strdup(name)) || !(ch->uid = strdup(uid ? uid : "")))
		return write_chain_free(ch);
	return ch;
}

int write_chain_add(write_chain *ch, cluster_write kind, const char *verb, char *path, const char *content_type,
                    char *body)
{
	/* every write here has a body: one that could not be built (NULL, errno set by kube/k8s_body)
	 * ends the chain, rather than go out as an empty request */
	int error = !body && errno == E2BIG ? -E2BIG : -ENOMEM;

	if (!path || !body || ch->n == WRITER_STEPS_MAX) {
		free(path);
		free(body);
		return path && body ? -E2BIG : error;
	}
	ch->steps[ch->n++] = (write_step){ kind, verb, path, content_type, body };
	return 0;
}

write_chain *write_chain_free(write_chain *ch)
{
	if (!ch)
		return NULL;
	for (size_t i = 0; i < ch->n; i++) {
		free(ch->steps[i].path);
		free(ch->steps[i].body);
	}
	sd_event_source_disable_unref(ch->timer);
	free(ch->ns);
	free(ch->name);
	free(ch->uid);
	free(ch->node);
	free(ch);
	return NULL;
}

void write_chain_on_end(write_chain *ch, write_end_fn fn, void *userdata)
{
	ch->on_end = fn;
	ch->end_userdata = userdata;
}

int write_chain_set_node(write_chain *ch, const char *node)
{
	char *n = strdup(node);
	if (!n)
		return -ENOMEM;
	free(ch->node);
	ch->node = n;
	return 0;
}

static void link_chain(writer *w, write_chain *ch)
{
	ch->w = w;
	ch->prev = NULL;
	ch->next = w->chains;
	if (w->chains)
		w->chains->prev = ch;
	w->chains = ch;
	w->n_chains++;
}

static void unlink_chain(writer *w, write_chain *ch)
{
	w->n_chains--;
	if (ch->prev)
		ch->prev->next = ch->next;
	else
		w->chains = ch->next;
	if (ch->next)
		ch->next->prev = ch->prev;
}

static void count_code(writer *w, const char *verb, long status)
{
	for (size_t i = 0; i < w->n_codes; i++)
		if (w->codes[i].status == status && strcmp(w->codes[i].verb, verb) == 0) {
			w->codes[i].n++;
			return;
		}
	if (w->n_codes < CODES_MAX)
		w->codes[w->n_codes++] = (struct code_count){ verb, status, 1 };
}

/* The chain is over (done, or a step ended it): the steps left will not happen. a: the answer
 * that ended it, or NULL. */
static void finish(writer *w, write_chain *ch, write_result r, long status, const char *msg, const transport_answer *a)
{
	const write_step *st = ch->i < ch->n ? &ch->steps[ch->i] : NULL;

	if (st && w->hooks.step_done)
		w->hooks.step_done(w->hooks.userdata, ch->ns, ch->name, ch->node, st, r, status, msg);
	if (r != WRITE_OK)
		for (size_t i = ch->i; i < ch->n; i++)
			cluster_write_failed(w->c, ch->steps[i].kind, ch->ns, ch->name, ch->uid, r == WRITE_CONFLICT);
	unlink_chain(w, ch);
	if (ch->on_end)
		ch->on_end(ch->end_userdata, r, status, a && !a->error ? a->body : NULL, a && !a->error ? a->len : 0);
	write_chain_free(ch);
}

/* --- one step ---------------------------------------------------------------------------------- */

/* The Status message of an error answer, for the log. */
static void answer_message(const transport_answer *a, char *buf, size_t size)
{
	if (a->error)
		snprintf(buf, size, "%s", a->msg && *a->msg ? a->msg : strerror(-a->error));
	else
		(void)answer_read(a->body, a->len, NULL, 0, buf, size);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	write_chain *ch = userdata;
	writer *w = ch->w;

	(void)usec;
	(void)s;
	ch->timer = sd_event_source_disable_unref(ch->timer);
	advance(w, ch);
	return 0;
}

static void retry_later(writer *w, write_chain *ch, const transport_answer *a)
{
	uint64_t delay = backoff_next(&ch->backoff_usec, w->retry_max_usec), now;

	if (a->retry_after_s > 0 && (uint64_t)a->retry_after_s * 1000000 > delay)
		delay = (uint64_t)a->retry_after_s * 1000000;
	if (!w->event || sd_event_now(w->event, CLOCK_MONOTONIC, &now) < 0 ||
	    sd_event_add_time(w->event, &ch->timer, CLOCK_MONOTONIC, now + delay, 1000, on_retry, ch) < 0) {
		char msg[256];
		answer_message(a, msg, sizeof(msg));
		finish(w, ch, WRITE_REFUSED, a->status, msg, a);
		return;
	}
	w->stats.retries++;
	ch->state = CH_RETRY;
}

static void step_answered(void *userdata, const transport_answer *a)
{
	write_chain *ch = userdata;
	writer *w = ch->w;
	const write_step *st = &ch->steps[ch->i];
	char msg[512];

	ch->handle = NULL;
	w->in_flight--;
	count_code(w, st->verb, a->error ? 0 : a->status);
	if (!a->error && a->status >= 200 && a->status < 300) {
		char rv[64] = "";
		/* only a status write's answer is worth reading: its resourceVersion says when the watch
		 * shows it (a binding's answer is a Status, an Event's is not about the pod) */
		if (st->kind == CLUSTER_WRITE_STATUS)
			(void)answer_read(a->body, a->len, rv, sizeof(rv), NULL, 0);
		cluster_write_landed(w->c, st->kind, ch->ns, ch->name, ch->uid, rv[0] ? rv : NULL);
		if (w->hooks.step_done)
			w->hooks.step_done(w->hooks.userdata, ch->ns, ch->name, ch->node, st, WRITE_OK, a->status, "");
		ch->i++;
		ch->backoff_usec = 0;
		advance(w, ch);
	} else if (a->error ||
	           ((a->status == 429 || a->status >= 500) &&
	            !(w->hooks.refusal && w->hooks.refusal(w->hooks.userdata, st, a)))) {
		retry_later(w, ch, a);
	} else {
		answer_message(a, msg, sizeof(msg));
		finish(w, ch,
		       a->status == 409 ? WRITE_CONFLICT : a->status == 404 || a->status == 422 ? WRITE_GONE : WRITE_REFUSED,
		       a->status, msg, a);
	}
	start_waiting(w);
}

/* Sends the current step, or ends the chain. The caller holds no slot for it. */
static void advance(writer *w, write_chain *ch)
{
	long timeout_ms = 0;
	int r;

	if (ch->i >= ch->n) {
		finish(w, ch, WRITE_OK, 0, NULL, NULL);
		return;
	}
	const write_step *st = &ch->steps[ch->i];
	if (!cluster_write_wanted(w->c, st->kind, ch->ns, ch->name, ch->uid)) {
		w->stats.obsolete++;
		finish(w, ch, WRITE_OBSOLETE, 0, "made obsolete by the watch", NULL);
		return;
	}
	if (w->hooks.may_write && !w->hooks.may_write(w->hooks.userdata, &timeout_ms)) {
		w->stats.abandoned++;
		finish(w, ch, WRITE_ABANDONED, 0, "not the leader", NULL);
		return;
	}
	transport_request rq = { .method = st->verb, .path = st->path, .content_type = st->content_type,
	                         .body = st->body, .timeout_ms = timeout_ms };
	ch->state = CH_IN_FLIGHT;
	w->in_flight++;
	w->stats.sent++;
	r = w->t->start(w->t, &rq, step_answered, ch, &ch->handle);
	if (r < 0) {
		w->in_flight--;
		transport_answer a = { .error = r, .retry_after_s = -1, .msg = strerror(-r) };
		retry_later(w, ch, &a);
	}
}

static void start_waiting(writer *w)
{
	while (w->queue_head && w->in_flight < w->max_in_flight) {
		write_chain *ch = w->queue_head;
		w->queue_head = ch->queue_next;
		if (!w->queue_head)
			w->queue_tail = NULL;
		w->waiting--;
		advance(w, ch);
	}
}

/* --- the writer -------------------------------------------------------------------------------- */

int writer_new(sd_event *e, transport *t, cluster *c, const writer_opts *o, const writer_hooks *h, writer **ret)
{
	writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->event = e ? sd_event_ref(e) : NULL;
	w->t = t;
	w->c = c;
	if (h)
		w->hooks = *h;
	w->max_in_flight = o && o->max_in_flight ? o->max_in_flight : 32;
	w->max_waiting_events = o && o->max_waiting_events ? o->max_waiting_events : 1000;
	w->retry_max_usec = o && o->retry_max_usec ? o->retry_max_usec : 30000000ULL;
	*ret = w;
	return 0;
}

writer *writer_free(writer *w)
{
	if (!w)
		return NULL;
	writer_abandon_all(w);
	sd_event_unref(w->event);
	free(w);
	return NULL;
}

static bool only_events(const write_chain *ch)
{
	for (size_t i = 0; i < ch->n; i++)
		if (ch->steps[i].kind != CLUSTER_WRITE_EVENT)
			return false;
	return ch->n > 0;
}

void writer_submit(writer *w, write_chain *ch)
{
	link_chain(w, ch);
	/* bindings, status patches and deletions wait however long (there is one per pod at most, and
	 * the model makes the stale ones obsolete); an Event is a report, dropped as client-go's
	 * broadcaster drops one when its queue is full. Retried writes count: an API server that is
	 * down holds every write in its backoff. */
	if (w->n_chains > w->max_waiting_events && only_events(ch)) {
		w->stats.queue_full++;
		finish(w, ch, WRITE_ABANDONED, 0, "dropped: too many writes waiting", NULL);
		return;
	}
	ch->state = CH_WAITING;
	if (w->queue_tail)
		w->queue_tail->queue_next = ch;
	else
		w->queue_head = ch;
	w->queue_tail = ch;
	w->waiting++;
	start_waiting(w);
}

int writer_send(writer *w, const char *ns, const char *name, const char *uid, const char *node, write_step *steps,
                size_t n, write_end_fn on_end, void *userdata)
{
	write_chain *ch = write_chain_new(ns, name, uid);
	int r = ch ? 0 : -ENOMEM;

	if (ch && on_end)
		write_chain_on_end(ch, on_end, userdata);
	if (ch && node)
		r = write_chain_set_node(ch, node);
	for (size_t i = 0; i < n; i++) {
		if (r >= 0)
			r = write_chain_add(ch, steps[i].kind, steps[i].verb, steps[i].path, steps[i].content_type,
			                    steps[i].body);
		else {
			free(steps[i].path);
			free(steps[i].body);
		}
		steps[i].path = steps[i].body = NULL;
	}
	if (r < 0) {
		if (ch)
			writer_drop(w, ch);
		return r;
	}
	writer_submit(w, ch);
	return 0;
}

void writer_drop(writer *w, write_chain *ch)
{
	link_chain(w, ch);
	w->stats.abandoned++;
	finish(w, ch, WRITE_ABANDONED, 0, "not prepared", NULL);
}

void writer_abandon_all(writer *w)
{
	while (w->chains) {
		write_chain *ch = w->chains;
		if (ch->state == CH_IN_FLIGHT && ch->handle) {
			w->t->cancel(w->t, ch->handle);
			ch->handle = NULL;
			w->in_flight--;
		}
		w->stats.abandoned++;
		finish(w, ch, WRITE_ABANDONED, 0, "abandoned", NULL);
	}
	w->queue_head = w->queue_tail = NULL;
	w->waiting = 0;
}

void writer_kick(writer *w)
{
	start_waiting(w);
}

void writer_get_stats(const writer *w, writer_stats *ret)
{
	*ret = w->stats;
	ret->in_flight = w->in_flight;
	ret->waiting = w->waiting;
}

void writer_foreach_code(const writer *w, void (*fn)(void *userdata, const char *verb, long status, uint64_t n),
                         void *userdata)
{
	for (size_t i = 0; i < w->n_codes; i++)
		fn(userdata, w->codes[i].verb, w->codes[i].status, w->codes[i].n);
}
