/* SPDX-License-Identifier: MIT */
#include "act.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evict.h"
#include "journal.h"
#include "objmap.h"
#include "pod-write.h"
#include "repeat.h"
#include "k8s_body.h"
#include "clock.h"

#define EVENT_REPEAT_NS (600LL * 1000000000LL) /* a FailedScheduling repeated at most every 10 min */
#define JSON "application/json"
#define SMP "application/strategic-merge-patch+json"

#define SERIES_PATCH_NS (60LL * 1000000000LL) /* a series' count sent again at most every minute */

/* The last FailedScheduling of a pod, and its series (client-go's events broadcaster,
 * recordToSink: an isomorphic Event within the window becomes a series, sent as a patch). */
struct event_memo {
	uint64_t hash;
	int64_t at;        /* last observed */
	int64_t patched;   /* when the series was last sent (0: never) */
	int32_t count;     /* occurrences, the first included */
	char *event_path;  /* the first Event's, its series patched there; NULL until it is sent */
};

#define EVENT_MEMO_MAX 4096 /* client-go's events cache (maxLruCacheEntries) */

/* A binding handed to the writer: what its answer needs (metrics, the FailedScheduling Event). */
struct bind_memo {
	int64_t started_mono_ns, sent_mono_ns;
	unsigned attempts;
	char uid[];
};

struct act {
	cluster *c;
	transport *t;
	writer *w;
	char *scheduler, *identity;
	bool (*may_write)(void *userdata, long *ret_timeout_ms);
	void *gate_userdata;
	objmap events; /* pod uid -> the last FailedScheduling sent */
	objmap bindings; /* "ns/name" -> struct bind_memo, while its binding is under way */
	void (*binding_done)(void *userdata, const act_binding *b);
	void *userdata;
	unsigned events_added, event_memo_max;
	/* an Event's name is the pod's and its time (kube's makeEvent): a turn's decisions share one
	 * time, and a pod can get two Events in it (NominationCleared, then its own FailedScheduling) */
	int64_t last_event_ns;
	act_stats stats;
	bool forbidden_told[CLUSTER_WRITE_LEASE_EVENT + 1];
	/* the same failure for every pod alike (a 5xx, a webhook refusing): one line, then one a minute */
	repeat write_failing[CLUSTER_WRITE_LEASE_EVENT + 1];
	evictor *ev; /* --pdb strict: victims evicted one at a time (evict.c); NULL: deleted */
};

static char *events_path(const char *ns)
{
	char *p = NULL;
	if (asprintf(&p, "/apis/events.k8s.io/v1/namespaces/%s/events", ns) < 0)
		return NULL;
	return p;
}

/* --- what the writer tells ---------------------------------------------------------------------- */

static k8s_body_event event_of(act *a, const decision_pod *pod, const decision_pod *related, const char *type,
                               const char *reason, const char *action, const char *note, int64_t now);
static int add_event(act *a, write_chain *ch, const decision_pod *pod, const decision_pod *related, const char *type,
                     const char *reason, const char *action, const char *note, int64_t now);
static void submit(act *a, write_chain *ch, int r);

/* The binding's end: the attempt is counted now, with its binding (kube's attempt duration
 * includes it); a refusal is told to the pod's Events in the API server's words, as
 * handleSchedulingFailure records a failed binding cycle's status (Warning FailedScheduling). */
static void binding_ended(act *a, const char *ns, const char *name, write_result r, long status, const char *msg)
{
	char key[512];
	struct bind_memo *m;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (!(m = objmap_remove(&a->bindings, key)))
		return;
	if (r != WRITE_OK)
		a->stats.bind_failures++;
	if (a->binding_done) {
		act_binding b = { .namespace_ = ns, .name = name, .ok = r == WRITE_OK, .started_mono_ns = m->started_mono_ns,
			          .sent_mono_ns = m->sent_mono_ns, .attempts = m->attempts };
		a->binding_done(a->userdata, &b);
	}
	/* answered with a refusal: not one that never went out (obsolete, abandoned) */
	if (status >= 400 && (r == WRITE_CONFLICT || r == WRITE_GONE || r == WRITE_REFUSED) && status != 403) {
		decision_pod p = { .namespace_ = ns, .name = name, .uid = m->uid };
		k8s_body_event ev = event_of(a, &p, NULL, "Warning", "FailedScheduling", "Scheduling",
		                             msg && *msg ? msg : "binding refused", clock_wall_ns());
		pod_write w = { .kind = CLUSTER_WRITE_EVENT, .event = &ev };
		(void)pod_write_send(a->w, &p, NULL, &w, 1, NULL, NULL);
	}
	free(m);
}

static void step_done(void *userdata, const char *ns, const char *name, const char *node, const write_step *st,
                      write_result r, long status, const char *msg)
{
	act *a = userdata;
	journal_entry e;

	if (st->kind == CLUSTER_WRITE_BIND)
		binding_ended(a, ns, name, r, status, msg);
	if (st->kind == CLUSTER_WRITE_EVENT && status == 404 && !strcmp(st->verb, "PATCH")) {
		/* the series' Event is gone (Events live an hour on the API server): the next
		 * occurrence is a new Event, as client-go's recordEvent creates one when the patch
		 * finds none */
		const char *uid = cluster_pod_uid(a->c, ns, name);
		struct event_memo *m = uid ? objmap_get(&a->events, uid) : NULL;
		if (m)
			m->hash = 0;
		return;
	}
	if (r == WRITE_OK) {
		unsigned untold = repeat_end(&a->write_failing[st->kind]);
		if (untold)
			journal_msg(LOG_NOTICE, "%s %s: answering again (%u more failures like the last line since it)",
			            st->verb, st->path, untold);
		if (st->kind == CLUSTER_WRITE_BIND) {
			a->stats.bound++;
			journal_entry_init(&e, LOG_INFO, MSGID_POD_BOUND);
			journal_entry_add(&e, FIELD_POD, "%s/%s", ns, name);
			journal_entry_add(&e, FIELD_NODE, "%s", node ? node : "");
			journal_entry_send(&e, "Bound pod %s/%s to node %s", ns, name, node ? node : "?");
		} else if (st->kind == CLUSTER_WRITE_DELETE)
			a->stats.victims_deleted++;
		return;
	}
	/* an eviction a budget refuses is no API error: evict.c tells what it means */
	if (st->kind == CLUSTER_WRITE_EVICT && r == WRITE_REFUSED && (status == 429 || status >= 500))
		return;
	if (r == WRITE_OBSOLETE || r == WRITE_ABANDONED) {
		journal_msg(LOG_DEBUG, "%s %s for pod %s/%s dropped: %s", st->verb, st->path, ns, name, msg);
		return;
	}
	if (r == WRITE_CONFLICT && st->kind == CLUSTER_WRITE_BIND)
		a->stats.bind_conflicts++;
	journal_entry_init(&e, r == WRITE_REFUSED ? LOG_ERR : LOG_NOTICE, MSGID_API_ERROR);
	journal_entry_add(&e, FIELD_POD, "%s/%s", ns, name);
	journal_entry_add(&e, FIELD_VERB, "%s", st->verb);
	journal_entry_add(&e, FIELD_PATH, "%s", st->path);
	journal_entry_add(&e, FIELD_STATUS, "%ld", status);
	journal_entry_add(&e, FIELD_REASON, "%s", msg);
	if (status == 403) {
		a->stats.forbidden++;
		/* told in full once per permission: a missing RBAC rule fails every write of its kind */
		if (!a->forbidden_told[st->kind]) {
			a->forbidden_told[st->kind] = true;
			journal_entry_send(&e, "%s %s forbidden (HTTP 403): preemptd's ClusterRole lacks %s "
			                   "(deploy/preemptd.yaml): %s", st->verb, st->path, pod_write_permission(st->kind), msg);
		}
		return;
	}
	if (r == WRITE_CONFLICT && st->kind == CLUSTER_WRITE_BIND)
		journal_entry_send(&e, "Binding of pod %s/%s refused (HTTP 409): someone else decided; not sent again: %s",
		                   ns, name, msg);
	else {
		char key[160], suffix[96];
		/* the same whatever the pod: its name is in the path and often in the message */
		snprintf(key, sizeof(key), "%s %ld %d", st->verb, status, (int)r);
		if (!repeat_tell(&a->write_failing[st->kind], key, (uint64_t)clock_mono_ns() / 1000, suffix, sizeof(suffix)))
			return;
		journal_entry_send(&e, "%s %s: HTTP %ld (%s)%s%s%s", st->verb, st->path, status, write_result_name(r),
		                   *msg ? ": " : "", msg, suffix);
	}
}

static bool gate(void *userdata, long *ret_timeout_ms)
{
	act *a = userdata;
	return !a->may_write || a->may_write(a->gate_userdata, ret_timeout_ms);
}

/* An eviction's 429 or 500 that is a budget's refusal ends the chain: no back-off waits it out. */
static bool refusal(void *userdata, const write_step *st, const transport_answer *ans)
{
	(void)userdata;
	return st->kind == CLUSTER_WRITE_EVICT && !ans->error &&
	       eviction_answer_refuses(ans->status, ans->body, ans->len);
}

/* --- what the evictor asks (evict.h) ------------------------------------------------------------ */
static void publish_nomination(act *a, const decision *d, int64_t now);

static int evict_add_event(void *userdata, write_chain *ch, const decision_pod *pod, const decision_pod *related,
                           const char *type, const char *reason, const char *action, const char *note, int64_t now)
{
	return add_event(userdata, ch, pod, related, type, reason, action, note, now);
}

static void evict_submit(void *userdata, write_chain *ch, int r)
{
	submit(userdata, ch, r);
}

static void evict_publish_nomination(void *userdata, const decision *d, int64_t now)
{
	publish_nomination(userdata, d, now);
}

/* --- the object -------------------------------------------------------------------------------- */

int act_new(sd_event *e, transport *t, cluster *c, const act_opts *o, act **ret)
{
	act *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->c = c;
	a->t = t;
	a->event_memo_max = o && o->event_memo_max ? o->event_memo_max : EVENT_MEMO_MAX;
	if (o) {
		a->binding_done = o->binding_done;
		a->userdata = o->userdata;
	}
	if (!(a->scheduler = strdup(o && o->scheduler_name ? o->scheduler_name : "preemptd")) ||
	    !(a->identity = strdup(o && o->identity ? o->identity : a->scheduler))) {
		act_free(a);
		return -ENOMEM;
	}
	writer_hooks h = { .may_write = gate, .step_done = step_done, .refusal = refusal, .userdata = a };
	r = writer_new(e, t, c, o ? &o->writer : NULL, &h, &a->w);
	if (r >= 0 && o && o->pdb_policy == PP_PDB_STRICT) {
		evict_ops ops = { .add_event = evict_add_event, .submit = evict_submit,
		                  .publish_nomination = evict_publish_nomination, .userdata = a };
		r = evict_new(&ops, c, a->w, &a->ev);
	}
	if (r < 0) {
		act_free(a);
		return r;
	}
	*ret = a;
	return 0;
}

static void free_memo(const char *key, void *value, void *userdata)
{
	(void)key;
	(void)userdata;
	free(value);
}

static struct event_memo *event_memo_free(struct event_memo *m)
{
	if (m)
		free(m->event_path);
	free(m);
	return NULL;
}

static void free_event_memo(const char *key, void *value, void *userdata)
{
	(void)key;
	(void)userdata;
	event_memo_free(value);
}

act *act_free(act *a)
{
	if (!a)
		return NULL;
	/* the writer first: what it abandons ends the preemptions under way (evict.c) */
	writer_free(a->w);
	evict_free(a->ev);
	objmap_foreach(&a->events, free_event_memo, NULL);
	objmap_done(&a->events);
	objmap_foreach(&a->bindings, free_memo, NULL);
	objmap_done(&a->bindings);
	free(a->scheduler);
	free(a->identity);
	free(a);
	return NULL;
}

void act_set_gate(act *a, bool (*may_write)(void *userdata, long *ret_timeout_ms), void *userdata)
{
	a->may_write = may_write;
	a->gate_userdata = userdata;
}

writer *act_writer(act *a)
{
	return a->w;
}

void act_get_stats(const act *a, act_stats *ret)
{
	*ret = a->stats;
}

/* --- Events ------------------------------------------------------------------------------------ */

static uint64_t hash_text(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

struct prune_ctx {
	objmap *m;
	int64_t before; /* memos last observed before it go */
	int64_t *at;    /* collecting: every memo's time, for the cut */
	size_t n;
};

static void prune_memo(const char *key, void *value, void *userdata)
{
	struct prune_ctx *p = userdata;
	struct event_memo *m = value;

	if (p->at)
		p->at[p->n++] = m->at;
	else if (m->at < p->before)
		event_memo_free(objmap_remove(p->m, key));
}

static int cmp_time(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

/* Memos out of their window go; at the bound, the least recent half too (as an LRU cache would
 * drop them one by one; a half at a time keeps this rare), so that the memory stays bounded
 * whatever the churn. */
static void prune_events(act *a, int64_t now, bool full)
{
	struct prune_ctx p = { .m = &a->events, .before = now - EVENT_REPEAT_NS + 1 };

	objmap_foreach(&a->events, prune_memo, &p);
	size_t n = objmap_count(&a->events);
	if (!full || n < a->event_memo_max || !(p.at = malloc(n * sizeof(*p.at))))
		return;
	objmap_foreach(&a->events, prune_memo, &p);
	qsort(p.at, p.n, sizeof(*p.at), cmp_time);
	p.before = p.at[(p.n - 1) / 2] + 1; /* the older half, ties with its last included */
	free(p.at);
	p.at = NULL;
	objmap_foreach(&a->events, prune_memo, &p);
}

/* Whether this FailedScheduling is news: not the same message for the same pod within 10 minutes.
 * A repeat is not a new Event: *ret_series gets the first one's memo, whose series grows
 * (client-go's recorder folds isomorphic Events into one with series.count; a scheduler retrying
 * an unschedulable pod would otherwise post one Event per attempt). */
static bool event_is_news(act *a, const char *uid, const char *message, int64_t now, struct event_memo **ret_series)
{
	uint64_t h = hash_text(message);
	struct event_memo *m = objmap_get(&a->events, uid);

	*ret_series = NULL;
	if (m && m->hash == h && now - m->at < EVENT_REPEAT_NS) {
		m->count++;
		m->at = now;
		*ret_series = m;
		return false;
	}
	if (!m) {
		if (++a->events_added % 1024 == 0 || objmap_count(&a->events) >= a->event_memo_max)
			prune_events(a, now, objmap_count(&a->events) >= a->event_memo_max);
		if ((m = calloc(1, sizeof(*m))) && objmap_put(&a->events, uid, m) < 0)
			m = event_memo_free(m);
	}
	if (m) {
		free(m->event_path);
		*m = (struct event_memo){ .hash = h, .at = now, .count = 1 };
	}
	*ret_series = m;
	return true;
}

/* The series' count and last observation, as client-go's recordEvent patches an Event whose
 * series it extends (createPatchBytesForSeries: a strategic merge patch of series only). Sent at
 * the second occurrence and then at most once a minute: a pod retried every few seconds costs the
 * API server one write a minute, and kubectl get events shows how often it happened. */
static void send_series(act *a, const decision_pod *pod, struct event_memo *m, int64_t now)
{
	char *path = NULL, *body = NULL;

	if (!m->event_path || (m->count > 2 && m->patched && now - m->patched < SERIES_PATCH_NS)) {
		a->stats.events_skipped++;
		return;
	}
	m->patched = now;
	write_chain *ch = pod_write_chain(pod);
	if (!ch)
		return;
	path = strdup(m->event_path);
	body = k8s_body_event_series_patch((int32_t)m->count, now);
	if (!body) {
		free(path);
		submit(a, ch, -errno);
		return;
	}
	submit(a, ch, write_chain_add(ch, CLUSTER_WRITE_EVENT, "PATCH", path, SMP, body));
}

/* An events.k8s.io Event about pod, as this scheduler reports it. Its now_ns is the Event's time,
 * which its name is made of (k8s_body_event_name): later than every Event before it. */
static k8s_body_event event_of(act *a, const decision_pod *pod, const decision_pod *related, const char *type,
                               const char *reason, const char *action, const char *note, int64_t now)
{
	if (now <= a->last_event_ns)
		now = a->last_event_ns + 1;
	a->last_event_ns = now;
	k8s_body_event ev = { .ns = pod->namespace_, .name = pod->name, .uid = pod->uid, .type = type, .reason = reason,
	                 .action = action, .note = note, .controller = a->scheduler, .instance = a->identity,
	                 .now_ns = now };
	if (related) {
		ev.related_ns = related->namespace_;
		ev.related_name = related->name;
		ev.related_uid = related->uid;
	}
	return ev;
}

static int add_event(act *a, write_chain *ch, const decision_pod *pod, const decision_pod *related, const char *type,
                     const char *reason, const char *action, const char *note, int64_t now)
{
	k8s_body_event ev = event_of(a, pod, related, type, reason, action, note, now);
	return write_chain_add(ch, CLUSTER_WRITE_EVENT, "POST", events_path(pod->namespace_), JSON, k8s_body_event_v1(&ev));
}

void act_leader_event(act *a, const char *lease_ns, const char *lease_name, const char *lease_uid,
                      const char *identity, int64_t now_ns)
{
	char note[400];
	write_chain *ch = write_chain_new(lease_ns, lease_name, lease_uid);

	if (!ch)
		return;
	if (now_ns <= a->last_event_ns)
		now_ns = a->last_event_ns + 1;
	a->last_event_ns = now_ns;
	snprintf(note, sizeof(note), "%s became leader", identity);
	k8s_body_event ev = { .ns = lease_ns, .name = lease_name, .uid = lease_uid,
		         .regarding_api_version = "coordination.k8s.io/v1", .regarding_kind = "Lease",
		         .type = "Normal", .reason = "LeaderElection", .action = "LeaderElection", .note = note,
		         .controller = a->scheduler, .instance = a->identity, .now_ns = now_ns };
	submit(a, ch, write_chain_add(ch, CLUSTER_WRITE_LEASE_EVENT, "POST", events_path(lease_ns), JSON, k8s_body_event_v1(&ev)));
}

/* --- decisions --------------------------------------------------------------------------------- */

static void submit(act *a, write_chain *ch, int r)
{
	if (r < 0) {
		/* out of memory: what the chain's steps assumed is dropped with it */
		journal_msg(LOG_ERR, "Cannot prepare a write: %s", strerror(-r));
		writer_drop(a->w, ch);
		return;
	}
	writer_submit(a->w, ch);
}

static void bind_pod(act *a, const decision *d, int64_t now)
{
	char note[700], key[512];

	snprintf(note, sizeof(note), "Successfully assigned %s/%s to %s", d->pod.namespace_, d->pod.name, d->node);
	snprintf(key, sizeof(key), "%s/%s", d->pod.namespace_, d->pod.name);
	k8s_body_event ev = event_of(a, &d->pod, NULL, "Normal", "Scheduled", "Binding", note, now);
	const pod_write w[] = { { .kind = CLUSTER_WRITE_BIND }, { .kind = CLUSTER_WRITE_EVENT, .event = &ev } };
	/* remembered before it is handed over: a writer without an event loop may answer at once (a
	 * binding that could not be prepared, out of memory, is told as abandoned) */
	if (d->pod.uid) {
		size_t ul = strlen(d->pod.uid) + 1;
		struct bind_memo *m = malloc(sizeof(*m) + ul);
		if (m) {
			*m = (struct bind_memo){ .started_mono_ns = d->started_mono_ns, .sent_mono_ns = clock_mono_ns(),
				                 .attempts = d->attempts };
			memcpy(m->uid, d->pod.uid, ul);
			free(objmap_remove(&a->bindings, key));
			if (objmap_put(&a->bindings, key, m) < 0)
				free(m);
		}
	}
	if (pod_write_send(a->w, &d->pod, d->node, w, sizeof(w) / sizeof(w[0]), NULL, NULL) < 0)
		free(objmap_remove(&a->bindings, key)); /* when no chain was made to tell it */
}

/* The pod's PodScheduled condition (and nomination) when it changes; the FailedScheduling Event. */
static void failed(act *a, const decision *d, int64_t now, bool set_nomination, const char *node)
{
	const char *current = cluster_pod_condition_message(a->c, d->pod.namespace_, d->pod.name);
	bool changed = !current || strcmp(current, d->message) != 0;

	if (changed || set_nomination) {
		/* lastTransitionTime only when the condition turns: a new message keeps the old time */
		k8s_body_condition unschedulable = { "PodScheduled", "False", "Unschedulable", d->message, current ? 0 : now };
		pod_write st = { .kind = CLUSTER_WRITE_STATUS, .condition = &unschedulable, .set_nomination = set_nomination,
			         .nominate = node };
		cluster_assume_condition(a->c, d->pod.namespace_, d->pod.name, d->message);
		(void)pod_write_send(a->w, &d->pod, NULL, &st, 1, NULL, NULL);
	} else {
		a->stats.status_skipped++;
	}
	/* the Event: kube's message, then what decided (cycle/explain.c) */
	const char *note = d->note ? d->note : d->message;
	struct event_memo *series = NULL;
	if (!d->pod.uid) {
		a->stats.events_skipped++;
		return;
	}
	if (!event_is_news(a, d->pod.uid, note, now, &series)) {
		if (series)
			send_series(a, &d->pod, series, now);
		return;
	}
	k8s_body_event ev = event_of(a, &d->pod, NULL, "Warning", "FailedScheduling", "Scheduling", note, now);
	pod_write w = { .kind = CLUSTER_WRITE_EVENT, .event = &ev };
	if (series) {
		char name[320];
		k8s_body_event_name(d->pod.name, ev.now_ns, name, sizeof(name));
		if (asprintf(&series->event_path, "/apis/events.k8s.io/v1/namespaces/%s/events/%s", d->pod.namespace_, name) < 0)
			series->event_path = NULL; /* out of memory: the repeats are not counted, nothing worse */
	}
	(void)pod_write_send(a->w, &d->pod, NULL, &w, 1, NULL, NULL);
}

static void log_preemption(const decision *d)
{
	char victims[1024];
	size_t off = 0;
	journal_entry e;

	victims[0] = '\0';
	for (size_t i = 0; i < d->n_victims && off < sizeof(victims); i++)
		off += (size_t)snprintf(victims + off, sizeof(victims) - off, "%s%s/%s", i ? "," : "",
		                        d->victims[i].pod.namespace_, d->victims[i].pod.name);
	journal_entry_init(&e, LOG_INFO, MSGID_PREEMPTION);
	journal_entry_add(&e, FIELD_POD, "%s/%s", d->pod.namespace_, d->pod.name);
	journal_entry_add(&e, FIELD_POD_UID, "%s", d->pod.uid ? d->pod.uid : "");
	journal_entry_add(&e, FIELD_PRIORITY, "%d", (int)d->pod.priority);
	journal_entry_add(&e, FIELD_NODE, "%s", d->node);
	journal_entry_add(&e, FIELD_VICTIMS, "%s", victims);
	journal_entry_add(&e, FIELD_CRITERION, "%s", d->criterion ? d->criterion : "");
	journal_entry_add(&e, FIELD_RUNNER_UP, "%s", d->runner_up ? d->runner_up : "");
	journal_entry_add(&e, FIELD_EXPLANATION, "%s", d->summary ? d->summary : "");
	journal_entry_send(&e, "Preempting %zu pod%s on node %s for pod %s/%s (priority %d): %s%s%s", d->n_victims,
	                   d->n_victims == 1 ? "" : "s", d->node, d->pod.namespace_, d->pod.name, (int)d->pod.priority,
	                   victims, d->summary ? ". " : "", d->summary ? d->summary : "");
}

/* The decision in preemptctl preempt --explain's words (the cycle explains at log level debug). */
static void log_explanation(const decision *d)
{
	if (d->explanation)
		journal_msg(LOG_DEBUG, "Why pod %s/%s %s (as preemptctl preempt --explain words it):\n%s", d->pod.namespace_,
		            d->pod.name, d->kind == DECISION_PREEMPT ? "preempts there" : "stays pending", d->explanation);
}

/* status.nominatedNodeName cleared (kube's clearNominatedNodeName, uid-guarded), and an Event
 * that says why (kube-scheduler sends none: a pod that lost its room is not told). */
static void withdraw(act *a, const decision_pod *p, const decision_pod *related, const char *type, const char *reason,
                     const char *why, int64_t now)
{
	k8s_body_event ev = event_of(a, p, related, type, reason, "Scheduling", why, now);
	const pod_write w[] = { { .kind = CLUSTER_WRITE_STATUS, .set_nomination = true },
		                { .kind = CLUSTER_WRITE_EVENT, .event = &ev } };
	(void)pod_write_send(a->w, p, NULL, w, sizeof(w) / sizeof(w[0]), NULL, NULL);
}

static void preempt(act *a, const decision *d, int64_t now)
{
	char note[1200], why[512];
	k8s_body_condition disruption = { "DisruptionTarget", "True", "PreemptionByScheduler", why, now };

	log_preemption(d);
	log_explanation(d);
	if (a->ev) {
		evict_preempt(a->ev, d, now);
		return;
	}
	snprintf(why, sizeof(why), "%s: preempting to accommodate a higher priority pod", a->scheduler);
	for (size_t i = 0; i < d->n_victims; i++) {
		const decision_pod *v = &d->victims[i].pod;
		if (d->victims[i].terminating)
			continue; /* its deletion is under way: nothing is sent twice */
		/* kube's words first, as they are; why this pod, after (cycle/explain.c) */
		snprintf(note, sizeof(note), "Preempted by pod %s on node %s%s%s%s", d->pod.uid ? d->pod.uid : "", d->node,
		         d->victims[i].reason ? " (" : "", d->victims[i].reason ? d->victims[i].reason : "",
		         d->victims[i].reason ? ")" : "");
		k8s_body_event ev = event_of(a, v, &d->pod, "Normal", "Preempted", "Preempting", note, now);
		const pod_write w[] = { { .kind = CLUSTER_WRITE_CONDITION, .condition = &disruption },
			                { .kind = CLUSTER_WRITE_DELETE }, /* the pod's own grace period */
			                { .kind = CLUSTER_WRITE_EVENT, .event = &ev } };
		(void)pod_write_send(a->w, v, d->node, w, sizeof(w) / sizeof(w[0]), NULL, NULL);
	}
	publish_nomination(a, d, now);
}

/* The preemption's last writes: lower-priority nominations to the node cleared, the preemptor's. */
static void publish_nomination(act *a, const decision *d, int64_t now)
{
	for (size_t i = 0; i < d->n_cleared; i++) {
		char why[400];
		snprintf(why, sizeof(why), "Nomination to node %s cleared: pod %s of higher priority was nominated there",
		         d->node, d->pod.uid ? d->pod.uid : "");
		withdraw(a, &d->cleared[i], &d->pod, "Normal", "NominationCleared", why, now);
	}
	failed(a, d, now, true, d->node);
}

static void unschedulable(act *a, const decision *d, int64_t now)
{
	const char *current = cluster_pod_condition_message(a->c, d->pod.namespace_, d->pod.name);

	if (!current || strcmp(current, d->message) != 0) {
		journal_entry e;
		journal_entry_init(&e, LOG_INFO, MSGID_POD_UNSCHEDULABLE);
		journal_entry_add(&e, FIELD_POD, "%s/%s", d->pod.namespace_, d->pod.name);
		journal_entry_add(&e, FIELD_PRIORITY, "%d", (int)d->pod.priority);
		journal_entry_add(&e, FIELD_REASON, "%s", d->message);
		journal_entry_add(&e, FIELD_EXPLANATION, "%s", d->summary ? d->summary : "");
		journal_entry_send(&e, "Pod %s/%s is unschedulable: %s%s%s", d->pod.namespace_, d->pod.name, d->message,
		                   d->summary ? " " : "", d->summary ? d->summary : "");
		log_explanation(d);
	}
	failed(a, d, now, d->clear_nomination, NULL);
}

/* A preemption the budget holds: the pod's condition and FailedScheduling say so. */
static void postponed(act *a, const decision *d, int64_t now)
{
	const char *current = cluster_pod_condition_message(a->c, d->pod.namespace_, d->pod.name);

	if (!current || strcmp(current, d->message) != 0) {
		journal_entry e;
		journal_entry_init(&e, LOG_INFO, MSGID_PREEMPTION_POSTPONED);
		journal_entry_add(&e, FIELD_POD, "%s/%s", d->pod.namespace_, d->pod.name);
		journal_entry_add(&e, FIELD_NODE, "%s", d->node);
		journal_entry_add(&e, FIELD_REASON, "%s", d->message);
		journal_entry_send(&e, "Preemption for pod %s/%s on node %s postponed: %s", d->pod.namespace_, d->pod.name,
		                   d->node, d->message);
	}
	a->stats.postponed++;
	failed(a, d, now, false, NULL);
}

/* The nomination outlived its deadline: withdrawn, on the API server and in an Event. */
static void nomination_expired(act *a, const decision *d, int64_t now)
{
	journal_entry e;

	journal_entry_init(&e, LOG_NOTICE, MSGID_NOMINATION_EXPIRED);
	journal_entry_add(&e, FIELD_POD, "%s/%s", d->pod.namespace_, d->pod.name);
	journal_entry_add(&e, FIELD_NODE, "%s", d->node);
	journal_entry_send(&e, "Pod %s/%s: %s", d->pod.namespace_, d->pod.name, d->message);
	a->stats.nominations_expired++;
	withdraw(a, &d->pod, NULL, "Warning", "NominationExpired", d->message, now);
}

void act_decision(act *a, const decision *d, int64_t now_ns)
{
	switch (d->kind) {
	case DECISION_BIND:
		bind_pod(a, d, now_ns);
		break;
	case DECISION_PREEMPT:
		preempt(a, d, now_ns);
		break;
	case DECISION_UNSCHEDULABLE:
		unschedulable(a, d, now_ns);
		break;
	case DECISION_POSTPONED:
		postponed(a, d, now_ns);
		break;
	case DECISION_NOMINATION_EXPIRED:
		nomination_expired(a, d, now_ns);
		break;
	case DECISION_NONE:
	default:
		break;
	}
}

evictor *act_evictor(const act *a)
{
	return a->ev;
}
