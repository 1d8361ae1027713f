/* SPDX-License-Identifier: MIT */
/*
 * The scheduler: queue + scheduling cycle + simulated graceful termination of victims, over a
 * pp_cluster it owns (public API: "Scheduling queue and cycle" in preempt.h).
 *
 * Which cluster events move which unschedulable pods (kube's QueueingHints, one bit per plugin):
 *   node added or updated              every failure (an update is not diffed: conservative)
 *   assigned pod removed (victim gone) resources, anti-affinity
 *   pod bound / assigned pod added     affinity (+ resources, anti-affinity when the pod held a
 *                                      nomination elsewhere: its reservation is released)
 *   assigned pod updated               resources, affinity, anti-affinity
 *   nomination cleared, nominated pod removed   resources, anti-affinity
 *   node removed                       nothing (no filter can start passing)
 *   PDB added, changed, removed or     prefer: nothing; strict: the pods whose preemption failed
 *   observed, a protection lifted      (a budget may decide whether preemption can help; a
 *                                      preemptor waiting for its victims has nothing to gain)
 *
 * Why one file of over 700 lines: pp_sched is one object whose state (tracked pods, nominations
 * with deadlines, victims' countdowns, the queue's moves above) changes together on every
 * cluster event and cycle, and the table above holds only while each event handler and the cycle
 * see the same private state. The parts that need none of it are apart: the queue
 * (sched_queue.c), the filters and scoring (sched_fit.c), reservations (sched_reserve.c) and the
 * timer heap (theap.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "change.h"
#include "cluster.h"
#include "filter.h"
#include "internal.h"
#include "preemption.h"
#include "sched_fit.h"
#include "sched_queue.h"
#include "sched_reserve.h"
#include "select.h"
#include "strmap.h"
#include "theap.h"

#define NSEC_PER_SEC 1000000000LL
#define DEFAULT_GRACE_S 30

#define EV_POD_GONE (SCHED_REJ_RESOURCES | SCHED_REJ_POD_ANTI)
#define EV_POD_BOUND SCHED_REJ_POD_AFFINITY
#define EV_POD_CHANGED (SCHED_REJ_RESOURCES | SCHED_REJ_POD_AFFINITY | SCHED_REJ_POD_ANTI)
#define EV_NOMINATION_GONE (SCHED_REJ_RESOURCES | SCHED_REJ_POD_ANTI)

/* A pod the scheduler tracks: a pending pod (queued) or a victim waiting for its grace period. */
struct spod {
	char *key;  /* "ns/name" (neither part can contain a slash) */
	int32_t priority;
	bool queued;
	/* victim being terminated: removed at gone.at (s->dying) */
	struct theap_entry gone;
	char *node;    /* where the victim runs */
	char *by_key;  /* its preemptor "ns/name", NULL when none */
	/* a pending pod's nomination that expires at nom.at (s->noms, pp_sched_set_nomination_timeout) */
	struct theap_entry nom;
	char *nom_node;    /* the node it holds */
	bool nom_adopted;  /* not made here (a restart): its deadline is settled when first due */
	int64_t nom_since; /* when it was made or adopted */
	/* a preemption the gate postponed: the pod is tried again at wait.at (s->waits) */
	struct theap_entry wait;
};

#define SPOD_OF(entry, member) ((struct spod *)((char *)(entry) - offsetof(struct spod, member)))

struct pp_sched {
	pp_cluster *c;
	pp_sq_queue *q;
	pp_sched_options opts;
	pp_sched_event_fn fn;
	void *userdata;
	int64_t now;
	unsigned cur_attempts; /* the popped pod's, during pp_sched_schedule_one(); 0 otherwise */
	struct strmap pods; /* key -> struct spod */
	struct theap dying; /* victims by the end of their grace period */
	struct theap noms;  /* nominations by their deadline */
	struct theap waits; /* postponed preemptions by their retry */
	int64_t nom_timeout, nom_after_grace; /* pp_sched_set_nomination_timeout */
	int64_t min_runtime;                  /* pp_sched_set_min_runtime */
	pp_sched_gate_fn gate;
	void *gate_userdata;
	struct sfit_reasons reasons;
	pp_sched_reason *ev_reasons;
	size_t cap_ev_reasons;
	pp_sched_stats stats;
	bool explain; /* preemption decisions with their per-node records, handed to the events */
};

const char *pp_sched_event_name(pp_sched_event_kind k)
{
	static const char *const names[] = {
		[PP_SCHED_BIND] = "bind",
		[PP_SCHED_NOMINATE] = "nominate",
		[PP_SCHED_VICTIM_GONE] = "victim-gone",
		[PP_SCHED_CLEAR_NOMINATION] = "clear-nomination",
		[PP_SCHED_UNSCHEDULABLE] = "unschedulable",
		[PP_SCHED_NOMINATION_EXPIRED] = "nomination-expired",
		[PP_SCHED_POSTPONED] = "postponed",
	};
	return (unsigned)k < PP_ELEMENTSOF(names) ? names[k] : NULL;
}

/* ---- tracked pods ------------------------------------------------------------------------- */

static struct spod *spod_free(struct spod *p)
{
	if (p) {
		free(p->key);
		free(p->node);
		free(p->by_key);
		free(p->nom_node);
		free(p);
	}
	return NULL;
}

static int make_key(const char *ns, const char *name, char **ret)
{
	size_t a = strlen(ns), b = strlen(name);
	char *k = malloc(a + b + 2);
	if (!k)
		return -ENOMEM;
	memcpy(k, ns, a);
	k[a] = '/';
	memcpy(k + a + 1, name, b + 1);
	*ret = k;
	return 0;
}

/* Looks a pod up by namespace and name without allocating. */
static struct spod *spod_get(const pp_sched *s, const char *ns, const char *name)
{
	char buf[512];
	size_t a = strlen(ns), b = strlen(name);
	if (a + b + 2 > sizeof(buf))
		return NULL; /* longer than any valid namespace/name pair (63 + 253) */
	memcpy(buf, ns, a);
	buf[a] = '/';
	memcpy(buf + a + 1, name, b + 1);
	return pp__strmap_get(&s->pods, buf);
}

static int spod_new(pp_sched *s, const char *ns, const char *name, int32_t priority, struct spod **ret)
{
	struct spod *p = calloc(1, sizeof(*p));
	int r;
	if (!p)
		return -ENOMEM;
	r = make_key(ns, name, &p->key);
	if (r < 0) {
		free(p);
		return r;
	}
	p->priority = priority;
	r = pp__strmap_put(&s->pods, p->key, p);
	if (r < 0) {
		spod_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

static void spod_names(const struct spod *p, char *ns, size_t ns_size, const char **name)
{
	const char *slash = strchr(p->key, '/');
	size_t n = (size_t)(slash - p->key);
	if (n >= ns_size)
		n = ns_size - 1;
	memcpy(ns, p->key, n);
	ns[n] = '\0';
	*name = slash + 1;
}

static void spod_forget(pp_sched *s, struct spod *p);

static void spod_forget(pp_sched *s, struct spod *p)
{
	if (p->queued)
		(void)pp__sq_remove(s->q, p);
	pp__theap_remove(&s->dying, &p->gone);
	pp__theap_remove(&s->noms, &p->nom);
	pp__theap_remove(&s->waits, &p->wait);
	pp__strmap_remove(&s->pods, p->key);
	spod_free(p);
}

/* ---- events ------------------------------------------------------------------------------- */

static void emit(pp_sched *s, pp_sched_event *ev)
{
	ev->time_ns = s->now;
	ev->attempts = s->cur_attempts;
	if (s->fn)
		s->fn(ev, s->userdata);
}

static void emit_simple(pp_sched *s, pp_sched_event_kind kind, const char *ns, const char *name,
                        const char *node, const char *by_key)
{
	pp_sched_event ev = { .kind = kind, .namespace_ = ns, .name = name, .node = node };
	char by_ns[256];
	const char *by_name = NULL;
	if (by_key) {
		const char *slash = strchr(by_key, '/');
		size_t n = (size_t)(slash - by_key);
		if (n < sizeof(by_ns)) {
			memcpy(by_ns, by_key, n);
			by_ns[n] = '\0';
			ev.by_namespace = by_ns;
			ev.by_name = by_name = slash + 1;
		}
	}
	emit(s, &ev);
}

/* ---- creation ----------------------------------------------------------------------------- */

struct scan {
	pp_sched *s;
	struct pending { const char *ns, *name; int32_t prio; } *v;
	size_t n, cap;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	int r;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	r = strcmp(x->ns, y->ns);
	return r ? r : strcmp(x->name, y->name);
}

static int track_victim(pp_sched *s, const char *ns, const char *name, int32_t priority,
                        const char *node, int64_t grace_s, const char *by_key);

static int scan_pod(const pp_pod_info *pi, void *ud)
{
	struct scan *sc = ud;
	if (!pi->node_name) {
		if (sc->n == sc->cap) {
			size_t cap = sc->cap ? sc->cap * 2 : 64;
			struct pending *v = realloc(sc->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			sc->v = v;
			sc->cap = cap;
		}
		sc->v[sc->n++] = (struct pending){ pi->namespace_, pi->name, pi->priority };
		return 0;
	}
	if (pi->terminating)
		return track_victim(sc->s, pi->namespace_, pi->name, pi->priority, pi->node_name,
		                    pi->termination_grace_period_s, NULL);
	return 0;
}

static int enqueue_as(pp_sched *s, const char *ns, const char *name, int32_t priority, bool backing_off)
{
	struct spod *p = spod_get(s, ns, name);
	int r;
	if (!p) {
		r = spod_new(s, ns, name, priority, &p);
		if (r < 0)
			return r;
	}
	r = backing_off ? pp__sq_add_backing_off(s->q, p, priority, s->now) : pp__sq_add(s->q, p, priority, s->now);
	if (r < 0) {
		if (!p->gone.in)
			spod_forget(s, p);
		return r;
	}
	p->queued = true;
	return 0;
}

static int enqueue(pp_sched *s, const char *ns, const char *name, int32_t priority)
{
	return enqueue_as(s, ns, name, priority, false);
}

int pp_sched_new(pp_cluster *c, const pp_sched_options *opts, int64_t now_ns, pp_sched_event_fn fn,
                 void *userdata, pp_sched **ret, pp_err *err)
{
	pp_sched *s;
	struct scan sc = { 0 };
	pp_sq_opts qo = { 0 };
	int r;

	if (!c || !ret)
		return pp_fail(err, -EINVAL, "pp_sched_new: no cluster");
	s = calloc(1, sizeof(*s));
	if (!s)
		return pp_fail(err, -ENOMEM, "out of memory");
	if (opts)
		s->opts = *opts;
	{
		static const char *const names[] = { "initial_backoff_ns", "max_backoff_ns", "max_unschedulable_ns" };
		const int64_t v[] = { s->opts.initial_backoff_ns, s->opts.max_backoff_ns, s->opts.max_unschedulable_ns };
		for (size_t i = 0; i < PP_ELEMENTSOF(v); i++)
			if (v[i] < 0) {
				free(s);
				return pp_fail(err, -EINVAL, "pp_sched_options.%s: negative duration %lld", names[i],
				               (long long)v[i]);
			}
	}
	qo.initial_backoff = s->opts.initial_backoff_ns;
	qo.max_backoff = s->opts.max_backoff_ns;
	qo.max_unschedulable = s->opts.max_unschedulable_ns;
	s->now = now_ns;
	s->fn = fn;
	s->userdata = userdata;
	r = pp__sq_new(&qo, &s->q);
	if (r < 0) {
		free(s);
		return pp_fail(err, r, "out of memory");
	}
	sc.s = s;
	r = pp__sfit_foreach_pod(c, scan_pod, &sc);
	if (r >= 0) {
		/* Equal priorities and queue times: namespace/name order, so the result does not depend
		 * on the order of the input. */
		if (sc.n > 1)
			qsort(sc.v, sc.n, sizeof(*sc.v), cmp_pending);
		for (size_t i = 0; i < sc.n && r >= 0; i++)
			r = enqueue(s, sc.v[i].ns, sc.v[i].name, sc.v[i].prio);
	}
	free(sc.v);
	if (r < 0) {
		pp_sched_free(s); /* the cluster stays the caller's */
		return pp_fail(err, r, "cannot queue the pending pods: %s", strerror(-r));
	}
	s->c = c;
	*ret = s;
	return 0;
}

pp_sched *pp_sched_free(pp_sched *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->pods.cap; i++) {
		/* removed entries keep a NULL value */
		spod_free(s->pods.slots[i].value);
	}
	pp__strmap_done(&s->pods);
	pp__theap_done(&s->dying);
	pp__theap_done(&s->noms);
	pp__theap_done(&s->waits);
	pp__sq_free(s->q);
	pp__sfit_reasons_done(&s->reasons);
	free(s->ev_reasons);
	pp_cluster_free(s->c);
	free(s);
	return NULL;
}

void pp_sched_set_explain(pp_sched *s, bool explain)
{
	s->explain = explain;
}

void pp_sched_set_pop_from_backoff(pp_sched *s, bool on)
{
	pp__sq_set_pop_from_backoff(s->q, on);
}

int pp_sched_set_node_absent(pp_sched *s, const char *name, bool absent)
{
	return pp__cluster_set_node_absent(s->c, name, absent);
}

bool pp_sched_has_poppable(const pp_sched *s)
{
	return pp__sq_poppable(s->q);
}

/* ---- nominations with a deadline ---------------------------------------------------------- */

static bool nominations_expire(const pp_sched *s)
{
	return s->nom_timeout > 0 || s->nom_after_grace > 0;
}

static void nom_drop(pp_sched *s, struct spod *p)
{
	pp__theap_remove(&s->noms, &p->nom);
	free(p->nom_node);
	p->nom_node = NULL;
}

static int nom_set(pp_sched *s, struct spod *p, const char *node, bool adopted, int64_t at)
{
	char *copy = strdup(node);
	if (!copy)
		return -ENOMEM;
	free(p->nom_node);
	p->nom_node = copy;
	p->nom_adopted = adopted;
	p->nom_since = s->now;
	int r = pp__theap_set(&s->noms, &p->nom, at);
	if (r < 0)
		nom_drop(s, p);
	return r;
}

/* A nomination this scheduler did not make (a restart, another instance's): its victims may not
 * be known yet (the pods of a list come in any order), so the deadline after their grace periods
 * is only settled once first due (expire_nominations). */
static int64_t adopted_deadline(const pp_sched *s)
{
	return pp__sat_add(s->now, s->nom_timeout > 0 ? s->nom_timeout : s->nom_after_grace);
}

/* After the pod's nomination may have changed outside a cycle: its deadline follows. */
static int nom_sync(pp_sched *s, struct spod *p, const pp_pod_info *pi)
{
	if (!p)
		return 0;
	if (!pi->nominated_node_name || pi->node_name) {
		nom_drop(s, p);
		return 0;
	}
	if (!nominations_expire(s) || (p->nom.in && !strcmp(p->nom_node, pi->nominated_node_name)))
		return 0;
	return nom_set(s, p, pi->nominated_node_name, true, adopted_deadline(s));
}

struct adopt {
	pp_sched *s;
	int r;
};

static int adopt_pod(const pp_pod_info *pi, void *ud)
{
	struct adopt *a = ud;
	struct spod *p = pi->node_name ? NULL : spod_get(a->s, pi->namespace_, pi->name);
	int r = p ? nom_sync(a->s, p, pi) : 0;
	return r < 0 ? r : 0;
}

int pp_sched_set_nomination_timeout(pp_sched *s, int64_t timeout_ns, int64_t after_grace_ns, pp_err *err)
{
	if (timeout_ns < 0 || after_grace_ns < 0)
		return pp_fail(err, -EINVAL, "nomination timeout: negative duration %lld",
		               (long long)(timeout_ns < 0 ? timeout_ns : after_grace_ns));
	s->nom_timeout = timeout_ns;
	s->nom_after_grace = after_grace_ns;
	while (pp__theap_top(&s->noms))
		nom_drop(s, SPOD_OF(pp__theap_top(&s->noms), nom));
	if (!nominations_expire(s))
		return 0;
	/* the nominations already there count from now, as after a restart */
	struct adopt a = { s, 0 };
	int r = pp__sfit_foreach_pod(s->c, adopt_pod, &a);
	return r < 0 ? pp_fail(err, r, "out of memory") : 0;
}

/* A nomination made by this scheduler's preemption: after its victims are due to be gone. */
static int64_t own_deadline(const pp_sched *s, const pp_victim *victims, size_t n)
{
	if (s->nom_timeout > 0)
		return pp__sat_add(s->now, s->nom_timeout);
	int64_t due = s->now;
	for (size_t i = 0; i < n; i++) {
		int64_t d = pp__resv_due(s->c, victims[i].namespace_, victims[i].name, s->now);
		if (d > due)
			due = d;
	}
	return pp__sat_add(due, s->nom_after_grace);
}

/* The pod's nomination is over: its victims still terminating are stuck; it tries again. When
 * none is left (they are gone, and the pod only waits for its backoff), there is nothing to give
 * up: the pod is tried at once, where it binds or preempts anew. */
static int expire(pp_sched *s, struct spod *p, const pp_pod_info *pi, pp_err *err)
{
	char ns[256];
	const char *name;
	pp_victim *stuck = NULL;
	size_t n_stuck = 0;
	char *node = p->nom_node;

	spod_names(p, ns, sizeof(ns), &name);
	int r = pp__resv_mark_stuck(s->c, node, pi->priority, &stuck, &n_stuck);
	if (r >= 0 && n_stuck == 0) {
		free(stuck);
		nom_drop(s, p);
		if (p->queued)
			(void)pp__sq_activate(s->q, p, PP_SCHED_QE_NOMINATION_CLEARED, s->now);
		return 0;
	}
	if (r >= 0)
		r = pp_cluster_set_nominated_node(s->c, ns, name, NULL, err);
	if (r < 0) {
		free(stuck);
		return r == -ENOMEM ? pp_fail(err, r, "out of memory") : r;
	}
	p->nom_node = NULL;
	pp__theap_remove(&s->noms, &p->nom);
	pp_sched_event ev = { .kind = PP_SCHED_NOMINATION_EXPIRED, .namespace_ = ns, .name = name, .node = node,
		              .victims = stuck, .n_victims = n_stuck };
	emit(s, &ev);
	free(stuck);
	free(node);
	if (p->queued)
		(void)pp__sq_activate(s->q, p, PP_SCHED_QE_NOMINATION_CLEARED, s->now);
	/* its room is everyone's again */
	pp__sq_move_on_event(s->q, EV_NOMINATION_GONE, p, PP_SCHED_QE_NOMINATION_CLEARED, s->now);
	return 0;
}

static int expire_nominations(pp_sched *s, pp_err *err)
{
	struct theap_entry *e;
	while ((e = pp__theap_due(&s->noms, s->now))) {
		struct spod *p = SPOD_OF(e, nom);
		char ns[256];
		const char *name;
		pp_pod_info pi;

		spod_names(p, ns, sizeof(ns), &name);
		if (pp_cluster_pod_info(s->c, ns, name, &pi) < 0 || pi.node_name || !pi.nominated_node_name ||
		    strcmp(pi.nominated_node_name, p->nom_node) != 0) {
			nom_drop(s, p); /* not that nomination any more */
			continue;
		}
		if (p->nom_adopted && s->nom_timeout == 0) {
			int64_t due = pp__resv_node_due(s->c, p->nom_node, pi.priority);
			int64_t at = pp__sat_add(due > p->nom_since ? due : p->nom_since, s->nom_after_grace);
			p->nom_adopted = false;
			if (at > s->now) {
				if (pp__theap_set(&s->noms, &p->nom, at) < 0)
					return pp_fail(err, -ENOMEM, "out of memory");
				continue;
			}
		}
		int r = expire(s, p, &pi, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- young pods and the preemption gate ---------------------------------------------------- */

int pp_sched_set_min_runtime(pp_sched *s, int64_t min_runtime_ns, pp_err *err)
{
	if (min_runtime_ns < 0)
		return pp_fail(err, -EINVAL, "minimum runtime: negative duration %lld", (long long)min_runtime_ns);
	s->min_runtime = min_runtime_ns;
	return 0;
}

void pp_sched_set_preemption_gate(pp_sched *s, pp_sched_gate_fn fn, void *userdata)
{
	s->gate = fn;
	s->gate_userdata = userdata;
}

size_t pp_sched_postponed_count(const pp_sched *s)
{
	return s->waits.n;
}

/* Postponed pods whose time has come go to activeQ. */
static void end_waits(pp_sched *s)
{
	struct theap_entry *e;
	while ((e = pp__theap_due(&s->waits, s->now))) {
		struct spod *p = SPOD_OF(e, wait);
		pp__theap_remove(&s->waits, &p->wait);
		if (p->queued)
			(void)pp__sq_activate(s->q, p, PP_SCHED_QE_FORCE_ACTIVATE, s->now);
	}
}

const pp_cluster *pp_sched_cluster(const pp_sched *s)
{
	return s->c;
}

int64_t pp_sched_now(const pp_sched *s)
{
	return s->now;
}

/* ---- victims ------------------------------------------------------------------------------ */

static int track_victim(pp_sched *s, const char *ns, const char *name, int32_t priority,
                        const char *node, int64_t grace_s, const char *by_key)
{
	struct spod *p = spod_get(s, ns, name);
	int r;

	if (s->opts.external_termination)
		return 0;
	if (p && p->gone.in)
		return 0; /* already counting down: a second deletion does not restart it */
	if (!p) {
		r = spod_new(s, ns, name, priority, &p);
		if (r < 0)
			return r;
	}
	p->node = strdup(node);
	p->by_key = by_key ? strdup(by_key) : NULL;
	if (!p->node || (by_key && !p->by_key)) {
		spod_forget(s, p);
		return -ENOMEM;
	}
	if (grace_s < 0)
		grace_s = DEFAULT_GRACE_S;
	/* Exact in 128 bits (grace_s >= 0, so only the upper end needs the clamp): saturating each
	 * step would let an early clock pull an overflowed grace period back into range. */
	__int128 gone = (__int128)s->now + (__int128)grace_s * NSEC_PER_SEC;
	r = pp__theap_set(&s->dying, &p->gone, gone > INT64_MAX ? INT64_MAX : (int64_t)gone);
	if (r < 0)
		spod_forget(s, p);
	return r;
}

/* Removes the victims whose grace period is over, oldest first. */
static int reap(pp_sched *s, pp_err *err)
{
	struct theap_entry *e;
	while ((e = pp__theap_due(&s->dying, s->now))) {
		struct spod *p = SPOD_OF(e, gone);
		char ns[256];
		const char *name;
		int r;

		spod_names(p, ns, sizeof(ns), &name);
		r = pp_cluster_remove_pod(s->c, ns, name, err);
		if (r < 0 && r != -ENOENT)
			return r;
		pp__theap_remove(&s->dying, &p->gone);
		if (r >= 0) {
			emit_simple(s, PP_SCHED_VICTIM_GONE, ns, name, p->node, p->by_key);
			pp__sq_move_on_event(s->q, EV_POD_GONE, NULL, PP_SCHED_QE_ASSIGNED_POD_DELETE, s->now);
		}
		spod_forget(s, p);
	}
	return 0;
}

int pp_sched_advance(pp_sched *s, int64_t now_ns, pp_err *err)
{
	if (now_ns < s->now)
		return pp_fail(err, -EINVAL, "time goes backwards (%lld < %lld)", (long long)now_ns,
		               (long long)s->now);
	s->now = now_ns;
	int r = reap(s, err);
	if (r >= 0)
		r = expire_nominations(s, err);
	if (r < 0)
		return r;
	end_waits(s);
	pp__sq_flush(s->q, s->now);
	return 0;
}

int64_t pp_sched_next_flush(const pp_sched *s)
{
	return pp__sq_next_leftover_flush(s->q);
}

int64_t pp_sched_next_wakeup(const pp_sched *s)
{
	int64_t t = pp__sq_next_backoff_expiry(s->q);
	const struct theap *timers[] = { &s->dying, &s->noms, &s->waits };
	for (size_t i = 0; i < PP_ELEMENTSOF(timers); i++)
		if (pp__theap_next(timers[i]) < t)
			t = pp__theap_next(timers[i]);
	return t;
}

/* ---- cluster events ----------------------------------------------------------------------- */

/*
 * kube's QueueingHints for a Node added or updated, plugin by plugin, approximately:
 * NodeResourcesFit.isSchedulableAfterNodeChange (the pod fits the node's allocatable alone —
 * isFit() over an empty NodeInfo — and, for an update, a resource it requests grew:
 * haveAnyRequestedResourcesIncreased), NodeUnschedulable, TaintToleration and NodeAffinity
 * (the node passes the plugin now, and, for an update, did not before). InterPodAffinity's hint
 * (topology labels) is not modelled: a node event may always help it, as an empty cluster's pod.
 */
enum { OFFERS_SCHEDULABLE = 1, OFFERS_TOLERATED = 2, OFFERS_AFFINITY = 4, OFFERS_ROOM = 8 };

struct node_event {
	pp_sched *s;
	const struct node *n; /* as it is now */
	bool update;
	/* before an update: what NodeResourcesFit compares */
	int64_t alloc[N_CORE_RES], max_pods;
	struct sres *scalar;
	size_t n_scalar;
	bool oom; /* the snapshot could not be taken */
};

static const struct pod *spod_pod(const pp_sched *s, const struct spod *p)
{
	char ns[256];
	const char *name;

	spod_names(p, ns, sizeof(ns), &name);
	return pp__cluster_find_pod(s->c, ns, name);
}

static uint32_t node_offers(const struct pod *p, const struct node *n)
{
	static const pp_taint cordon = { .key = "node.kubernetes.io/unschedulable", .value = "",
		                         .effect = PP_EFFECT_NO_SCHEDULE };
	uint32_t m = OFFERS_TOLERATED | OFFERS_ROOM;

	if (n->absent)
		return 0;
	if (!n->unschedulable || pp__pod_tolerates(p, &cordon))
		m |= OFFERS_SCHEDULABLE;
	for (size_t i = 0; i < n->n_taints; i++)
		if (n->taints[i].effect != PP_EFFECT_PREFER_NO_SCHEDULE && !pp__pod_tolerates(p, &n->taints[i]))
			m &= ~(uint32_t)OFFERS_TOLERATED;
	if ((!p->n_node_selector && !p->has_node_affinity) || pp__pod_matches_node_affinity(p, n))
		m |= OFFERS_AFFINITY;
	if (n->max_pods < 1)
		m &= ~(uint32_t)OFFERS_ROOM;
	for (int k = 0; k < N_CORE_RES && !p->zero_request; k++)
		if (p->req[k] > n->alloc[k])
			m &= ~(uint32_t)OFFERS_ROOM;
	for (size_t i = 0; i < p->n_scalar && !p->zero_request; i++)
		if (p->scalar[i].value > pp__node_alloc_scalar(n, p->scalar[i].id))
			m &= ~(uint32_t)OFFERS_ROOM;
	return m;
}

static int64_t old_scalar(const struct node_event *ev, uint32_t id)
{
	for (size_t i = 0; i < ev->n_scalar; i++)
		if (ev->scalar[i].id == id)
			return ev->scalar[i].value;
	return 0;
}

/* haveAnyRequestedResourcesIncreased */
static bool requested_grew(const struct pod *p, const struct node_event *ev)
{
	if (ev->n->max_pods > ev->max_pods)
		return true;
	for (int k = 0; k < N_CORE_RES; k++)
		if (p->req[k] > 0 && ev->n->alloc[k] > ev->alloc[k])
			return true;
	for (size_t i = 0; i < p->n_scalar; i++)
		if (p->scalar[i].value > 0 && pp__node_alloc_scalar(ev->n, p->scalar[i].id) > old_scalar(ev, p->scalar[i].id))
			return true;
	return false;
}

static uint32_t node_offers_before(void *pod, uint32_t before, void *ud)
{
	struct node_event *ev = ud;
	const struct pod *p = spod_pod(ev->s, pod);

	(void)before;
	return p ? node_offers(p, ev->n) : 0;
}

static uint32_t node_hint(void *pod, uint32_t before, void *ud)
{
	struct node_event *ev = ud;
	const struct pod *p = spod_pod(ev->s, pod);
	uint32_t q = SCHED_REJ_POD_AFFINITY | SCHED_REJ_POD_ANTI | SCHED_REJ_NODES;

	if (!p)
		return SCHED_REJ_ALL;
	uint32_t now = node_offers(p, ev->n), gained = ev->update ? now & ~before : now;
	if (gained & OFFERS_SCHEDULABLE)
		q |= SCHED_REJ_UNSCHEDULABLE;
	if (gained & OFFERS_TOLERATED)
		q |= SCHED_REJ_TAINT;
	if (gained & OFFERS_AFFINITY)
		q |= SCHED_REJ_NODE_AFFINITY;
	if ((now & OFFERS_ROOM) && (!ev->update || requested_grew(p, ev)))
		q |= SCHED_REJ_RESOURCES;
	return q;
}

int pp_sched_add_node(pp_sched *s, const pp_node_spec *node, pp_err *err)
{
	int r = pp_cluster_add_node(s->c, node, err);
	struct node_event ev = { .s = s };

	if (r >= 0 && (ev.n = pp__cluster_find_node(s->c, node->name)))
		pp__sq_move_on_hint(s->q, node_hint, &ev, PP_SCHED_QE_NODE_ADD, s->now);
	return r;
}

int pp_sched_update_node(pp_sched *s, const pp_node_spec *node, pp_err *err)
{
	bool changed = false;
	struct node_event ev = { .s = s, .update = true };
	const struct node *n = pp__cluster_find_node(s->c, node ? node->name : NULL);
	int r;

	if (n) {
		memcpy(ev.alloc, n->alloc, sizeof(ev.alloc));
		ev.max_pods = n->max_pods;
		if (n->n_alloc_scalar && (ev.scalar = malloc(n->n_alloc_scalar * sizeof(*ev.scalar)))) {
			memcpy(ev.scalar, n->alloc_scalar, n->n_alloc_scalar * sizeof(*ev.scalar));
			ev.n_scalar = n->n_alloc_scalar;
		}
		ev.oom = n->n_alloc_scalar && !ev.scalar;
		ev.n = n;
		pp__sq_hint_prepare(s->q, node_offers_before, &ev);
	}
	r = pp__cluster_update_node(s->c, node, err, &changed);
	if (r >= 0 && changed) {
		ev.n = pp__cluster_find_node(s->c, node->name);
		if (!ev.n || ev.oom)
			pp__sq_move_on_event(s->q, SCHED_REJ_ALL, NULL, PP_SCHED_QE_NODE_UPDATE, s->now); /* out of memory: as without hints */
		else
			pp__sq_move_on_hint(s->q, node_hint, &ev, PP_SCHED_QE_NODE_UPDATE, s->now);
	}
	free(ev.scalar);
	return r;
}

int pp_sched_remove_node(pp_sched *s, const char *name, pp_err *err)
{
	return pp_cluster_remove_node(s->c, name, err);
}

int pp_sched_add_pod(pp_sched *s, const pp_pod_spec *pod, pp_err *err)
{
	pp_pod_info pi;
	int r = pp_cluster_add_pod(s->c, pod, err);
	if (r < 0)
		return r;
	r = pp_cluster_pod_info(s->c, pod->namespace_, pod->name, &pi);
	if (r < 0)
		return pp_fail(err, r, "pods/%s/%s: added but not found", pod->namespace_, pod->name);
	if (!pi.node_name) {
		r = enqueue(s, pi.namespace_, pi.name, pi.priority);
		if (r >= 0)
			r = nom_sync(s, spod_get(s, pi.namespace_, pi.name), &pi);
		if (r < 0) {
			struct spod *p = spod_get(s, pi.namespace_, pi.name);
			if (p)
				spod_forget(s, p);
			(void)pp_cluster_remove_pod(s->c, pod->namespace_, pod->name, NULL);
			return pp_fail(err, r, "pods/%s/%s: cannot queue: %s", pod->namespace_, pod->name, strerror(-r));
		}
		return 0;
	}
	if (pi.terminating) {
		r = track_victim(s, pi.namespace_, pi.name, pi.priority, pi.node_name,
		                 pi.termination_grace_period_s, NULL);
		if (r < 0)
			return pp_fail(err, r, "out of memory");
	}
	pp__sq_move_on_event(s->q, EV_POD_BOUND, NULL, PP_SCHED_QE_ASSIGNED_POD_ADD, s->now);
	return 0;
}

/* After an update of ns/name (old: its info before): the queue moves it calls for. */
static int after_update(pp_sched *s, const char *ns, const char *name, const pp_pod_info *old,
                        enum pp__change change, pp_err *err)
{
	pp_pod_info pi;
	struct spod *p;
	int r;

	if (change == PP_CHANGE_NONE)
		return 0;
	r = pp_cluster_pod_info(s->c, ns, name, &pi);
	if (r < 0)
		return pp_fail(err, r, "pods/%s/%s: updated but not found", ns, name);
	p = spod_get(s, pi.namespace_, pi.name);
	if (!pi.node_name) {
		/* A changed pending pod is worth another attempt (kube's isPodUpdated); a state change
		 * alone (its start, its deletion) is not. */
		if (p && p->queued) {
			p->priority = pi.priority;
			(void)pp__sq_update_priority(s->q, p, pi.priority);
			if (change == PP_CHANGE_SPEC)
				(void)pp__sq_activate(s->q, p, PP_SCHED_QE_UNSCHEDULABLE_POD_UPDATE, s->now);
			r = nom_sync(s, p, &pi);
			return r < 0 ? pp_fail(err, r, "out of memory") : 0;
		}
		/* unbound again: the binding was refused, and like any failed attempt it backs off
		 * (kube-scheduler's handleBindingCycleError) */
		r = enqueue_as(s, pi.namespace_, pi.name, pi.priority, old->node_name != NULL);
		if (r >= 0)
			r = nom_sync(s, spod_get(s, pi.namespace_, pi.name), &pi);
		return r < 0 ? pp_fail(err, r, "out of memory") : 0;
	}
	if (p && p->queued) {
		/* Bound by someone else (another scheduler, or the controller itself). */
		(void)pp__sq_remove(s->q, p);
		p->queued = false;
		if (!p->gone.in)
			spod_forget(s, p);
	}
	if (pi.terminating) {
		r = track_victim(s, pi.namespace_, pi.name, pi.priority, pi.node_name,
		                 pi.termination_grace_period_s, NULL);
		if (r < 0)
			return pp_fail(err, r, "out of memory");
	}
	if (change == PP_CHANGE_SPEC) {
		bool was_placed = old->node_name || old->nominated_node_name;
		pp__sq_move_on_event(s->q, was_placed ? EV_POD_CHANGED : EV_POD_BOUND, NULL,
		                     was_placed ? PP_SCHED_QE_ASSIGNED_POD_UPDATE : PP_SCHED_QE_ASSIGNED_POD_ADD, s->now);
	}
	return 0;
}

int pp_sched_update_pod(pp_sched *s, const pp_pod_spec *pod, pp_err *err)
{
	enum pp__change change = PP_CHANGE_NONE;
	pp_pod_info old;
	int r = pp_cluster_pod_info(s->c, pod->namespace_, pod->name, &old);
	if (r < 0)
		return pp_fail(err, r, "pods/%s/%s: no such pod", pod->namespace_, pod->name);
	r = pp__cluster_update_pod(s->c, pod, err, &change);
	if (r < 0)
		return r;
	return after_update(s, pod->namespace_, pod->name, &old, change, err);
}

int pp_sched_set_pod_state(pp_sched *s, const char *namespace_, const char *name, const pp_pod_state *state,
                           pp_err *err)
{
	enum pp__change change = PP_CHANGE_NONE;
	pp_pod_info old;
	int r = pp_cluster_pod_info(s->c, namespace_, name, &old);
	if (r < 0)
		return pp_fail(err, r, "pods/%s/%s: no such pod", namespace_, name);
	r = pp__cluster_set_pod_state(s->c, namespace_, name, state, err, &change);
	if (r < 0)
		return r;
	return after_update(s, namespace_, name, &old, change, err);
}

int pp_sched_remove_pod(pp_sched *s, const char *namespace_, const char *name, pp_err *err)
{
	pp_pod_info pi;
	struct spod *p;
	int r = pp_cluster_pod_info(s->c, namespace_, name, &pi);
	if (r < 0)
		return pp_fail(err, r, "pods/%s/%s: no such pod", namespace_, name);
	bool bound = pi.node_name != NULL, nominated = pi.nominated_node_name != NULL;
	r = pp_cluster_remove_pod(s->c, namespace_, name, err);
	if (r < 0)
		return r;
	p = spod_get(s, namespace_, name);
	if (p)
		spod_forget(s, p);
	if (bound || nominated)
		pp__sq_move_on_event(s->q, EV_POD_GONE, NULL,
		                     bound ? PP_SCHED_QE_ASSIGNED_POD_DELETE : PP_SCHED_QE_UNSCHEDULABLE_POD_DELETE, s->now);
	return 0;
}

/* Under the strict policy a budget decides whether preemption can help: a pod whose preemption
 * failed may preempt now (prefer: a budget only steers the choice). */
static void budget_event(pp_sched *s)
{
	if (pp_cluster_pdb_policy(s->c) == PP_PDB_STRICT)
		pp__sq_move_on_event(s->q, SCHED_REJ_BUDGET, NULL, PP_SCHED_QE_DISRUPTION_BUDGET_CHANGE, s->now);
}

int pp_sched_add_pdb(pp_sched *s, const pp_pdb_spec *pdb, pp_err *err)
{
	int r = pp_cluster_add_pdb(s->c, pdb, err);
	if (r >= 0)
		budget_event(s);
	return r;
}

int pp_sched_update_pdb(pp_sched *s, const pp_pdb_spec *pdb, pp_err *err)
{
	int r = pp_cluster_update_pdb(s->c, pdb, err);
	if (r >= 0)
		budget_event(s);
	return r;
}

int pp_sched_remove_pdb(pp_sched *s, const char *namespace_, const char *name, pp_err *err)
{
	int r = pp_cluster_remove_pdb(s->c, namespace_, name, err);
	if (r >= 0)
		budget_event(s);
	return r;
}

int pp_sched_set_pdb_disruptions_allowed(pp_sched *s, const char *namespace_, const char *name,
                                         int32_t disruptions_allowed, pp_err *err)
{
	int r = pp_cluster_set_pdb_disruptions_allowed(s->c, namespace_, name, disruptions_allowed, err);
	if (r >= 0)
		budget_event(s);
	return r;
}

int pp_sched_set_pod_protected(pp_sched *s, const char *namespace_, const char *name, bool protected_, pp_err *err)
{
	bool was = pp_cluster_pod_protected(s->c, namespace_, name);
	int r = pp_cluster_set_pod_protected(s->c, namespace_, name, protected_, err);
	/* a victim more to choose from may help a pod whose preemption failed */
	if (r >= 0 && was && !protected_)
		pp__sq_move_on_event(s->q, SCHED_REJ_BUDGET, NULL, PP_SCHED_QE_DISRUPTION_BUDGET_CHANGE, s->now);
	return r;
}

int pp_sched_set_pdb_policy(pp_sched *s, pp_pdb_policy policy)
{
	pp_pdb_policy was = pp_cluster_pdb_policy(s->c);
	int r = pp_cluster_set_pdb_policy(s->c, policy);
	if (r >= 0 && was == PP_PDB_STRICT && policy != PP_PDB_STRICT)
		pp__sq_move_on_event(s->q, SCHED_REJ_BUDGET, NULL, PP_SCHED_QE_DISRUPTION_BUDGET_CHANGE, s->now);
	return r;
}

/* ---- the cycle ---------------------------------------------------------------------------- */

static int bind(pp_sched *s, struct spod *p, const pp_pod_info *pi, const char *node, pp_err *err)
{
	bool released = pi->nominated_node_name && strcmp(pi->nominated_node_name, node) != 0;
	char ns[256];
	const char *name;
	int r;

	spod_names(p, ns, sizeof(ns), &name);
	r = pp_cluster_bind_pod(s->c, ns, name, node, err);
	if (r < 0)
		return r;
	(void)pp__sq_done(s->q, p);
	p->queued = false;
	s->stats.binds++;
	emit_simple(s, PP_SCHED_BIND, ns, name, node, NULL);
	spod_forget(s, p);
	pp__sq_move_on_event(s->q, EV_POD_BOUND | (released ? EV_NOMINATION_GONE : 0), NULL, PP_SCHED_QE_ASSIGNED_POD_ADD, s->now);
	return 0;
}

static int ensure_ev_reasons(pp_sched *s, size_t n)
{
	if (n <= s->cap_ev_reasons)
		return 0;
	pp_sched_reason *v = realloc(s->ev_reasons, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->ev_reasons = v;
	s->cap_ev_reasons = n;
	return 0;
}

/* The pod stays pending: parks it in the queue and reports why. more: rejector bits of its
 * preemption beside those of the filter pass. */
static int fail_attempt(pp_sched *s, struct spod *p, const char *post, bool report, const pp_preemption *pr,
                        uint32_t more)
{
	char ns[256], *msg = NULL;
	const char *name;
	int r = 0;

	spod_names(p, ns, sizeof(ns), &name);
	s->stats.unschedulable_attempts++;
	/* The filter pass of the cycle ran without reasons (the common outcomes need none). */
	const char *node = NULL;
	r = pp__sfit_select_node(s->c, ns, name, &node, &s->reasons);
	if (r >= 0 && report) {
		r = pp__sfit_reasons_format(&s->reasons, post, &msg);
		if (r >= 0)
			r = ensure_ev_reasons(s, s->reasons.n);
		if (r >= 0) {
			pp_sched_event ev = {
				.kind = PP_SCHED_UNSCHEDULABLE, .namespace_ = ns, .name = name,
				.message = msg, .reasons = s->ev_reasons, .n_reasons = s->reasons.n, .preemption = pr,
			};
			for (size_t i = 0; i < s->reasons.n; i++)
				s->ev_reasons[i] = (pp_sched_reason){ s->reasons.v[i].reason, s->reasons.v[i].nodes };
			emit(s, &ev);
		}
		free(msg);
	}
	(void)pp__sq_add_unschedulable(s->q, p, s->reasons.rejectors ? s->reasons.rejectors | more : SCHED_REJ_ALL,
	                               s->now);
	return r;
}

/* except: the pod whose cycle this is (the event is no news to it). */
static int clear_nomination(pp_sched *s, const char *ns, const char *name, const char *node,
                            const char *by_key, const struct spod *except, pp_err *err)
{
	struct spod *q;
	int r = pp_cluster_set_nominated_node(s->c, ns, name, NULL, err);
	if (r < 0)
		return r;
	emit_simple(s, PP_SCHED_CLEAR_NOMINATION, ns, name, node, by_key);
	/* kube: clearing the nomination sends the pod back to activeQ. */
	q = spod_get(s, ns, name);
	if (q)
		nom_drop(s, q);
	if (q && q->queued)
		(void)pp__sq_activate(s->q, q, PP_SCHED_QE_NOMINATION_CLEARED, s->now);
	pp__sq_move_on_event(s->q, EV_NOMINATION_GONE, except, PP_SCHED_QE_NOMINATION_CLEARED, s->now);
	return 0;
}

/* The postponed preemption is told, the pod waits until `until` (or an event that may help). */
static int postpone(pp_sched *s, struct spod *p, const pp_sched_event *plan, const char *why, int64_t until)
{
	char *msg = NULL;
	if (asprintf(&msg, "%s preemption postponed: %s", plan->message, why) < 0)
		return -ENOMEM;
	pp_sched_event ev = *plan;
	ev.kind = PP_SCHED_POSTPONED;
	ev.message = msg;
	s->stats.unschedulable_attempts++;
	emit(s, &ev);
	free(msg);
	if (until <= s->now)
		until = pp__sat_add(s->now, s->opts.initial_backoff_ns ? s->opts.initial_backoff_ns : NSEC_PER_SEC);
	int r = pp__theap_set(&s->waits, &p->wait, until);
	(void)pp__sq_add_unschedulable(s->q, p, s->reasons.rejectors ? s->reasons.rejectors : SCHED_REJ_ALL, s->now);
	return r;
}

/* DefaultPreemption's decision; with a minimum runtime, first without the young pods. */
static int decide_preemption(pp_sched *s, const pp_pod_info *pi, pp_preemption **ret, pp_err *err)
{
	pp_preempt_options po = { .now_ns = s->now, .explain = s->explain };
	if (s->min_runtime > 0) {
		int64_t after = pp__sat_add(s->now, -s->min_runtime);
		pp_preemption *pr = NULL;
		int r = pp__cluster_preempt(s->c, pi->namespace_, pi->name, &po, &after, &pr, err);
		if (r < 0)
			return r;
		/* eligibility does not depend on the victims: the second search would say it again */
		if (pp_preemption_outcome(pr) != PP_OUTCOME_NONE || pp_preemption_eligibility(pr) != PP_ELIGIBLE) {
			*ret = pr;
			return 0;
		}
		pp_preemption_free(pr);
	}
	return pp_cluster_preempt(s->c, pi->namespace_, pi->name, &po, ret, err);
}

/* PP_OUTCOME_NONE: no victims help, or the pod may not preempt. pr stays the caller's. */
static int preemption_failed(pp_sched *s, struct spod *p, const pp_pod_info *pi, const pp_preemption *pr,
                             pp_err *err)
{
	/* Not eligible keeps the nomination (the earlier preemption is still under way); any other
	 * failure clears it, as a PostFilter result with an empty node does. */
	bool eligible = pp_preemption_eligibility(pr) == PP_ELIGIBLE;
	int r;

	if (pi->nominated_node_name && eligible) {
		char *node_copy = strdup(pi->nominated_node_name);
		if (!node_copy)
			return -ENOMEM;
		r = clear_nomination(s, pi->namespace_, pi->name, node_copy, NULL, p, err);
		free(node_copy);
		if (r < 0)
			return r;
	}
	/* pp_preemption_reason holds the whole FitError; keep only what follows the filter part,
	 * which sfit already counted (none when there was no node). */
	const char *post = strstr(pp_preemption_reason(pr), "preemption:");
	/* strict: budgets, or pods protected, may be why no victims were found: a budget's change
	 * tries again */
	return fail_attempt(s, p, post ? post : "", true, pr,
	                    eligible && pp_cluster_pdb_policy(s->c) == PP_PDB_STRICT ? SCHED_REJ_BUDGET : 0);
}

/* Lower-priority pods nominated to node keep their nomination only while they still fit beside
 * the preemptor p once the terminating pods are gone (kube clears them unchecked). */
static int recheck_lower_nominations(pp_sched *s, struct spod *p, const pp_preemption *pr, const char *node,
                                     pp_err *err)
{
	size_t nc = pp_preemption_cleared_nomination_count(pr);
	int r = 0;
	char **lower = nc ? calloc(nc, sizeof(*lower)) : NULL;
	if (nc && !lower)
		r = -ENOMEM;
	for (size_t i = 0; i < nc && r >= 0; i++) {
		const pp_pod_info *ci = pp_preemption_cleared_nomination(pr, i);
		r = make_key(ci->namespace_, ci->name, &lower[i]);
	}
	for (size_t i = 0; i < nc && r >= 0; i++) {
		char *slash = strchr(lower[i], '/');
		bool fits = false;
		*slash = '\0';
		r = pp__sfit_fits_on(s->c, lower[i], slash + 1, node, true, &fits);
		if (r >= 0 && !fits)
			r = clear_nomination(s, lower[i], slash + 1, node, p->key, p, err);
	}
	for (size_t i = 0; i < nc; i++)
		free(lower ? lower[i] : NULL);
	free(lower);
	return r;
}

/* PP_OUTCOME_PREEMPT: unless the gate postpones it, the preemptor is nominated to the chosen
 * node and its victims start terminating. pr stays the caller's. */
static int nominate(pp_sched *s, struct spod *p, const pp_pod_info *pi, const pp_preemption *pr, pp_err *err)
{
	int r;

	/* The preemptor stays unschedulable in this cycle: its condition carries the FitError of
	 * the filter pass, before its victims start terminating ("0/3 nodes are available: 3
	 * Insufficient cpu." — kube's PostFilter message is empty on success). */
	char *fit_msg = NULL;
	const char *ignored;
	r = pp__sfit_select_node(s->c, pi->namespace_, pi->name, &ignored, &s->reasons);
	if (r >= 0)
		r = pp__sfit_reasons_format(&s->reasons, "", &fit_msg);
	if (r < 0)
		return r;
	const char *node = pp_preemption_node(pr);
	size_t nv = pp_preemption_victim_count(pr);
	pp_victim *victims = calloc(nv ? nv : 1, sizeof(*victims));
	if (!victims) {
		free(fit_msg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nv; i++)
		victims[i] = *pp_preemption_victim(pr, i);

	pp_sched_event plan = { .kind = PP_SCHED_NOMINATE, .time_ns = s->now, .namespace_ = pi->namespace_,
		                .name = pi->name, .node = node, .victims = victims, .n_victims = nv, .message = fit_msg,
		                .preemption = pr };
	char why[512] = "";
	int64_t until = INT64_MAX;
	if (s->gate && s->gate(&plan, s->gate_userdata, &until, why, sizeof(why)) > 0) {
		why[sizeof(why) - 1] = '\0';
		r = postpone(s, p, &plan, why, until);
		free(victims);
		free(fit_msg);
		return r;
	}

	r = pp_cluster_set_nominated_node(s->c, pi->namespace_, pi->name, node, err);
	for (size_t i = 0; i < nv && r >= 0; i++) {
		pp_pod_info vi = { 0 };
		if (victims[i].terminating)
			continue; /* no second delete: its countdown is already running */
		/* its deletion time, as the API server sets it: when it is due to be gone */
		int64_t due = pp__resv_due(s->c, victims[i].namespace_, victims[i].name, s->now);
		r = pp_cluster_mark_terminating(s->c, victims[i].namespace_, victims[i].name, due, true, err);
		if (r >= 0)
			r = pp_cluster_pod_info(s->c, victims[i].namespace_, victims[i].name, &vi);
		if (r >= 0)
			r = track_victim(s, vi.namespace_, vi.name, vi.priority, node, vi.termination_grace_period_s, p->key);
	}
	if (r >= 0) {
		char ns[256];
		const char *name;
		spod_names(p, ns, sizeof(ns), &name);
		pp_sched_event ev = { .kind = PP_SCHED_NOMINATE, .namespace_ = ns, .name = name, .node = node,
		                      .victims = victims, .n_victims = nv, .message = fit_msg, .preemption = pr };
		s->stats.preemptions++;
		emit(s, &ev);
		if (nominations_expire(s))
			r = nom_set(s, p, node, false, own_deadline(s, victims, nv));
	}
	if (r >= 0)
		r = recheck_lower_nominations(s, p, pr, node, err);
	free(victims);
	free(fit_msg);
	if (r < 0)
		return r;
	/* The preemptor itself is unschedulable in this cycle; its victims' deletion requeues it. */
	s->stats.unschedulable_attempts++;
	(void)pp__sq_add_unschedulable(s->q, p, SCHED_REJ_RESOURCES | SCHED_REJ_POD_ANTI, s->now);
	return 0;
}

/* kube's PostFilter for a pod that fits nowhere as things are: DefaultPreemption's decision,
 * acted on (bind, fail the attempt, or nominate and start the victims' termination). */
static int post_filter(pp_sched *s, struct spod *p, const pp_pod_info *pi, pp_err *err)
{
	pp_preemption *pr = NULL;
	const char *node;
	int r;

	r = decide_preemption(s, pi, &pr, err);
	if (r < 0)
		return r;
	switch (pp_preemption_outcome(pr)) {
	case PP_OUTCOME_PREEMPT:
		r = nominate(s, p, pi, pr, err);
		break;
	case PP_OUTCOME_FITS:
		pp_preemption_free(pr);
		r = pp__sfit_select_node(s->c, pi->namespace_, pi->name, &node, NULL);
		if (r < 0)
			return pp_fail(err, r, "pods/%s/%s: filters failed: %s", pi->namespace_, pi->name, strerror(-r));
		if (node)
			return bind(s, p, pi, node, err);
		/* Feasible in the first pass only: an affinity met by a nominated pod alone (pass 2). */
		return fail_attempt(s, p, "", true, NULL, 0);
	case PP_OUTCOME_NONE:
	default:
		r = preemption_failed(s, p, pi, pr, err);
		break;
	}
	pp_preemption_free(pr);
	return r;
}

static int schedule_one(pp_sched *s, pp_err *err)
{
	void *v;
	struct spod *p;
	pp_pod_info pi;
	char ns[256];
	const char *name;
	int r;

	r = reap(s, err);
	if (r < 0)
		return r;
	if (pp__sq_pop(s->q, s->now, &v, &s->cur_attempts) < 0)
		return 0;
	p = v;
	s->stats.cycles++;
	spod_names(p, ns, sizeof(ns), &name);
	r = pp_cluster_pod_info(s->c, ns, name, &pi);
	if (r < 0 || pi.node_name) {
		/* Gone or bound behind our back: nothing to schedule. */
		p->queued = false;
		(void)pp__sq_done(s->q, p);
		if (!p->gone.in)
			spod_forget(s, p);
		return 1;
	}

	/* The nominated node first: if it passes, no other node is evaluated. */
	if (pi.nominated_node_name) {
		bool fits = false;
		r = pp__sfit_fits_on(s->c, ns, name, pi.nominated_node_name, false, &fits);
		if (r < 0 && r != -ENOENT)
			return pp_fail(err, r, "pods/%s/%s: filters failed: %s", ns, name, strerror(-r));
		if (r >= 0 && fits) {
			r = bind(s, p, &pi, pi.nominated_node_name, err);
			return r < 0 ? r : 1;
		}
	}
	/* pp_cluster_preempt's scan ends at the first feasible node, so it answers "fits
	 * somewhere?" cheaply; only then are all nodes filtered and scored. Its first pass counts
	 * the same nominated pods, so "fits nowhere" there means the same here. */
	r = post_filter(s, p, &pi, err);
	if (r < 0)
		return r == -ENOMEM ? pp_fail(err, r, "out of memory") : r;
	return 1;
}

int pp_sched_schedule_one(pp_sched *s, pp_err *err)
{
	int r = schedule_one(s, err);

	s->cur_attempts = 0; /* the events of pp_sched_advance() are about no cycle */
	return r;
}

int pp_sched_run(pp_sched *s, int64_t until_ns, pp_err *err)
{
	for (;;) {
		int r;
		while ((r = pp_sched_schedule_one(s, err)) > 0)
			;
		if (r < 0)
			return r;
		int64_t t = pp_sched_next_wakeup(s);
		if (t == INT64_MAX)
			return 1;
		if (t > until_ns)
			return 0;
		r = pp_sched_advance(s, t, err);
		if (r < 0)
			return r;
	}
}

void pp_sched_get_stats(const pp_sched *s, pp_sched_stats *ret)
{
	pp_sq_stats qs;
	pp__sq_get_stats(s->q, &qs);
	*ret = s->stats;
	ret->active = qs.active;
	ret->backoff = qs.backoff;
	ret->unschedulable = qs.unschedulable + qs.in_flight;
	ret->terminating = s->dying.n;
}

static const char *const queue_names[PP_SCHED_QUEUE_COUNT] = {
	[PP_SCHED_QUEUE_ACTIVE] = "active",
	[PP_SCHED_QUEUE_BACKOFF] = "backoff",
	[PP_SCHED_QUEUE_UNSCHEDULABLE] = "unschedulable",
};

/* kube-scheduler's labels (pkg/scheduler/framework/events.go) where it has the event */
static const char *const queue_event_names[PP_SCHED_QE_COUNT] = {
	[PP_SCHED_QE_POD_ADD] = "PodAdd",
	[PP_SCHED_QE_SCHEDULE_ATTEMPT_FAILURE] = "ScheduleAttemptFailure",
	[PP_SCHED_QE_BACKOFF_COMPLETE] = "BackoffComplete",
	[PP_SCHED_QE_UNSCHEDULABLE_TIMEOUT] = "UnschedulableTimeout",
	[PP_SCHED_QE_FORCE_ACTIVATE] = "ForceActivate",
	[PP_SCHED_QE_UNSCHEDULABLE_POD_UPDATE] = "UnschedulablePodUpdate",
	[PP_SCHED_QE_UNSCHEDULABLE_POD_DELETE] = "UnschedulablePodDelete",
	[PP_SCHED_QE_ASSIGNED_POD_ADD] = "AssignedPodAdd",
	[PP_SCHED_QE_ASSIGNED_POD_UPDATE] = "AssignedPodUpdate",
	[PP_SCHED_QE_ASSIGNED_POD_DELETE] = "AssignedPodDelete",
	[PP_SCHED_QE_NODE_ADD] = "NodeAdd",
	[PP_SCHED_QE_NODE_UPDATE] = "NodeUpdate",
	[PP_SCHED_QE_NOMINATION_CLEARED] = "NominationCleared",
	[PP_SCHED_QE_DISRUPTION_BUDGET_CHANGE] = "DisruptionBudgetChange",
};

const char *pp_sched_queue_name(pp_sched_queue queue)
{
	return (unsigned)queue < PP_SCHED_QUEUE_COUNT ? queue_names[queue] : NULL;
}

const char *pp_sched_queue_event_name(pp_sched_queue_event event)
{
	return (unsigned)event < PP_SCHED_QE_COUNT ? queue_event_names[event] : NULL;
}

uint64_t pp_sched_incoming_pods(const pp_sched *s, pp_sched_queue queue, pp_sched_queue_event event)
{
	return pp__sq_incoming(s->q, queue, event);
}
