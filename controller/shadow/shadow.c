/* SPDX-License-Identifier: MIT */
/*
 * --shadow mode (shadow.h): decide for another scheduler's pods at the moment it decides, and
 * compare. Over ~700 lines on purpose: the pending pods, the victims seen preempted and the
 * decisions waiting for the other scheduler's answer are one state, keyed and expired together;
 * each comparison (bind, preempt, unschedulable) reads all three. Deciding itself is libpreempt's,
 * the explanation cycle/explain.c's, the journal line report/journal.c's.
 */
#include "shadow.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explain.h"
#include "journal.h"
#include "metrics.h"
#include "objmap.h"
#include "clock.h"
#include "grow.h"

#define DEFAULT_SCHEDULER "default-scheduler"
/* A victim not attributed to a preemptor within this long never will be (its preemptor was not
 * the shadowed scheduler's, or went away). */
#define VICTIM_TTL_NS (600LL * 1000000000LL)
#define VICTIMS_MAX 100000
#define TIES_SHOWN 5

/* A pod preempted (by whom is found later), or one of the victims a decision names. */
struct victim {
	char *key; /* namespace/name */
	char *node;
	int32_t prio;
	int64_t start_ns;
	bool terminating; /* already terminating when preemptd decided: nothing was sent for it */
	uint64_t seq;     /* when it was seen preempted (shadow.seq) */
	int64_t at_ns;
};

/* A candidate node and its victims. */
struct cand {
	char *node;
	struct victim *v;
	size_t n;
};

/* What preemptd would have done. */
struct ours {
	shadow_kind kind;
	/* bind: the equally best nodes, the cycle's choice first; only the first TIES_SHOWN + 1 are
	 * kept (in a pool of identical nodes thousands tie: naming each would cost more than deciding) */
	char **ties;
	size_t n_ties, n_kept;
	bool theirs_tied; /* the other scheduler's node is one of them */
	/* preempt: the chosen node, then the candidates equal to it on every criterion: the other
	 * scheduler's node and TIES_SHOWN more at most, more_cands the others */
	struct cand *cands;
	size_t n_cands, cap_cands, more_cands;
	char *text; /* unschedulable: the FitError; preempt: the facts that decided (explain.c) */
	char *why;  /* why not the other scheduler's node, found when it was known at the decision */
};

/* A pending pod of the shadowed scheduler. */
struct spod {
	char *uid;
	uint64_t since;  /* shadow.seq when first seen pending: the victims window starts there */
	char *their_nom; /* the other scheduler's nomination */
	char *cond;      /* the last PodScheduled=False message seen */
	bool open;       /* ours decided at the other scheduler's nomination, compared at its binding */
	bool late;       /* first seen nominated already: that preemption was not seen as it happened */
	struct ours ours;
};

struct shadow {
	queue *q;
	cluster *c;
	char *scheduler;
	int64_t (*clock)(void);
	objmap pods; /* namespace/name -> struct spod */
	struct victim *victims;
	size_t n_victims, cap_victims;
	uint64_t seq;
	shadow_stats st;
};

const char *shadow_kind_name(shadow_kind k)
{
	static const char *const names[] = { "bind", "preempt", "unschedulable" };
	return (unsigned)k < SHADOW_KINDS ? names[k] : "?";
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* --- records ------------------------------------------------------------------------------------ */

static void victims_done(struct victim *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].node);
	}
	free(v);
}

static void ours_done(struct ours *o)
{
	for (size_t i = 0; i < o->n_kept; i++)
		free(o->ties[i]);
	free(o->ties);
	for (size_t i = 0; i < o->n_cands; i++) {
		free(o->cands[i].node);
		victims_done(o->cands[i].v, o->cands[i].n);
	}
	free(o->cands);
	free(o->text);
	free(o->why);
	*o = (struct ours){ 0 };
}

static void spod_free(struct spod *sp)
{
	if (!sp)
		return;
	ours_done(&sp->ours);
	free(sp->uid);
	free(sp->their_nom);
	free(sp->cond);
	free(sp);
}

static void set_str(char **dst, const char *s)
{
	char *n = dup_or_null(s);
	if (s && !n)
		return; /* out of memory: the old value stays, a comparison may be off by it */
	free(*dst);
	*dst = n;
}

/* --- what preemptd decides ---------------------------------------------------------------------- */

struct tie_ctx {
	struct ours *o;
	const char *theirs;
	int err;
};

static void add_tie(const char *node, void *userdata)
{
	struct tie_ctx *t = userdata;
	struct ours *o = t->o;

	o->n_ties++;
	o->theirs_tied |= str_eq(node, t->theirs);
	if (o->n_kept > TIES_SHOWN || t->err)
		return;
	if (!o->ties && !(o->ties = calloc(TIES_SHOWN + 1, sizeof(*o->ties))))
		t->err = -ENOMEM;
	else if (!(o->ties[o->n_kept] = strdup(node)))
		t->err = -ENOMEM;
	else
		o->n_kept++;
}

static int add_cand(struct ours *o, const char *node, const pp_victim *v, size_t n)
{
	struct cand *c;

	if (GROW_ARRAY(&o->cands, &o->cap_cands, o->n_cands + 1) < 0)
		return -ENOMEM;
	c = &o->cands[o->n_cands];
	*c = (struct cand){ .node = strdup(node), .v = calloc(n ? n : 1, sizeof(*c->v)) };
	if (!c->node || !c->v) {
		free(c->node);
		free(c->v);
		return -ENOMEM;
	}
	o->n_cands++;
	for (size_t i = 0; i < n; i++) {
		char key[512];
		snprintf(key, sizeof(key), "%s/%s", v[i].namespace_, v[i].name);
		c->v[i] = (struct victim){ .key = strdup(key), .prio = v[i].priority, .start_ns = v[i].start_time_ns,
			                   .terminating = v[i].terminating };
		if (!c->v[i].key)
			return -ENOMEM;
		c->n++;
	}
	return 0;
}

/* The candidates a preemption could have gone to as well: equal to the winner on every criterion
 * (theirs among them, whatever their number). */
static int tied_candidates(shadow *s, const char *ns, const char *name, const char *theirs, struct ours *o)
{
	pp_preempt_options po = { .now_ns = s->clock(), .explain = true };
	pp_preemption *p = NULL;
	int r = pp_cluster_preempt(queue_cluster(s->q), ns, name, &po, &p, NULL);

	for (size_t i = 0; r >= 0 && i < pp_preemption_node_count(p); i++) {
		const pp_node_explain *e = pp_preemption_node_explain(p, i);
		if (e->verdict != PP_NODE_CANDIDATE || e->lost_at != PP_CRIT_NODE_NAME)
			continue;
		if (o->n_cands <= TIES_SHOWN || str_eq(e->node, theirs))
			r = add_cand(o, e->node, e->victims, e->n_victims);
		else
			o->more_cands++;
	}
	pp_preemption_free(p);
	return r;
}

/* The scheduling cycle's choice for the pending pod, on the model as it stands. theirs: the node
 * the other scheduler took (bound or nominated), NULL: none. Every candidate as good as ours is
 * looked for only when it took another node: that costs a preemption run with per-node records. */
static int decide_ours(shadow *s, const char *ns, const char *name, const char *theirs, struct ours *o)
{
	const pp_cluster *c = queue_cluster(s->q);
	pp_preempt_options po = { .now_ns = s->clock() };
	pp_preemption *p = NULL;
	pp_pod_info pi;
	char text[4096];
	int r;

	ours_done(o);
	struct tie_ctx tc = { o, theirs, 0 };
	r = pp_cluster_bind_nodes(c, ns, name, add_tie, &tc, NULL);
	if (r < 0 || tc.err < 0)
		return r < 0 ? r : tc.err;
	if (o->n_ties) {
		o->kind = SHADOW_BIND;
		return 0;
	}
	if ((r = pp_cluster_preempt(c, ns, name, &po, &p, NULL)) < 0 || (r = pp_cluster_pod_info(c, ns, name, &pi)) < 0) {
		pp_preemption_free(p);
		return r;
	}
	switch (pp_preemption_outcome(p)) {
	case PP_OUTCOME_PREEMPT: {
		size_t n = pp_preemption_victim_count(p);
		pp_victim *v = calloc(n ? n : 1, sizeof(*v));
		o->kind = SHADOW_PREEMPT;
		r = v ? 0 : -ENOMEM;
		for (size_t i = 0; r >= 0 && i < n; i++)
			v[i] = *pp_preemption_victim(p, i);
		if (r >= 0)
			r = add_cand(o, pp_preemption_node(p), v, n);
		free(v);
		if (r >= 0 && pp_preemption_criterion(p) == PP_CRIT_NODE_NAME && !str_eq(theirs, pp_preemption_node(p)))
			r = tied_candidates(s, ns, name, theirs, o);
		explain_summary(text, sizeof(text), p, &pi);
		o->text = strdup(text);
		break;
	}
	case PP_OUTCOME_NONE:
	case PP_OUTCOME_FITS: /* the first pass only: an affinity a nominated pod alone meets (the cycle fails it) */
	default:
		o->kind = SHADOW_UNSCHEDULABLE;
		o->text = strdup(pp_preemption_reason(p));
		break;
	}
	pp_preemption_free(p);
	return r;
}

/* Why preemptd did not take node, in its own model: the node's verdict there. NULL: cannot tell. */
static char *why_not(shadow *s, const char *ns, const char *name, const char *node, const struct ours *o)
{
	pp_preempt_options po = { .now_ns = s->clock(), .explain = true };
	pp_preemption *p = NULL;
	const pp_node_explain *e = NULL, *best = NULL;
	const char *chosen = o->kind == SHADOW_BIND ? o->ties[0] : o->n_cands ? o->cands[0].node : NULL;
	char *w = NULL;

	if (!node || pp_cluster_preempt(queue_cluster(s->q), ns, name, &po, &p, NULL) < 0)
		return NULL;
	for (size_t i = 0; i < pp_preemption_node_count(p); i++) {
		const pp_node_explain *x = pp_preemption_node_explain(p, i);
		if (!strcmp(x->node, node))
			e = x;
		if (chosen && !strcmp(x->node, chosen))
			best = x;
	}
	int r = 0;
	if (!e)
		r = asprintf(&w, "node %s is not in preemptd's model", node);
	else if (e->verdict == PP_NODE_FITS)
		r = asprintf(&w, "%s fits in preemptd's model too, with a LeastAllocated score of %" PRId64 " against %" PRId64
		             " on %s (kube-scheduler scores with more plugins)", node, e->score, best ? best->score : -1,
		             chosen ? chosen : "?");
	else if (e->verdict == PP_NODE_CANDIDATE)
		r = asprintf(&w, "preemption would help on %s too (%zu victim%s), but it lost at %s", node, e->n_victims,
		             e->n_victims == 1 ? "" : "s", pp_criterion_name(e->lost_at));
	else
		r = asprintf(&w, "%s does not fit in preemptd's model (%s), and %s: %s", node,
		             e->verdict == PP_NODE_UNRESOLVABLE ? "preemption cannot resolve that" : "preempting every lower-priority pod there would not do",
		             e->verdict == PP_NODE_UNRESOLVABLE ? "the filters" : "what still fails", e->reason);
	pp_preemption_free(p);
	return r < 0 ? NULL : w;
}

/* --- victims ------------------------------------------------------------------------------------ */

static void victim_drop(shadow *s, size_t i)
{
	free(s->victims[i].key);
	free(s->victims[i].node);
	s->victims[i] = s->victims[--s->n_victims];
}

static bool victim_known(const shadow *s, const char *key)
{
	for (size_t i = 0; i < s->n_victims; i++)
		if (!strcmp(s->victims[i].key, key))
			return true;
	return false;
}

static void note_victim(shadow *s, const char *ns, const char *name)
{
	char key[512];
	pp_pod_info pi;
	int64_t now = s->clock();

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	if (pp_cluster_pod_info(queue_cluster(s->q), ns, name, &pi) < 0 || !pi.node_name || victim_known(s, key))
		return;
	for (size_t i = s->n_victims; i-- > 0;)
		if (now - s->victims[i].at_ns > VICTIM_TTL_NS)
			victim_drop(s, i);
	if (s->n_victims == VICTIMS_MAX)
		victim_drop(s, 0);
	if (GROW_ARRAY(&s->victims, &s->cap_victims, s->n_victims + 1) < 0)
		return;
	struct victim *v = &s->victims[s->n_victims];
	*v = (struct victim){ .key = strdup(key), .node = strdup(pi.node_name), .prio = pi.priority,
		              .start_ns = pi.has_start_time ? pi.start_time_ns : now, .seq = s->seq, .at_ns = now };
	if (!v->key || !v->node) {
		free(v->key);
		free(v->node);
		return;
	}
	s->n_victims++;
}

struct nominated_ctx {
	const char *node;
	int32_t prio;
	const shadow *s;
	bool found;
};

static void nominated_above(const char *key, void *value, void *userdata)
{
	struct nominated_ctx *n = userdata;
	const struct spod *sp = value;
	const char *slash = strchr(key, '/');
	pp_pod_info pi;
	char ns[256];

	if (n->found || !sp->open || !str_eq(sp->their_nom, n->node) || !slash)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
	n->found = pp_cluster_pod_info(queue_cluster(n->s->q), ns, slash + 1, &pi) >= 0 && pi.priority > n->prio;
}

/* A bound pod begins to go: a preemption victim when it says so (DisruptionTarget,
 * PreemptionByScheduler), or when a more important pod is nominated to its node meanwhile. */
static void maybe_victim(shadow *s, const char *ns, const char *name, const char *node, bool preempted)
{
	pp_pod_info pi;

	if (!preempted && s->st.open) {
		struct nominated_ctx n = { node, 0, s, false };
		if (pp_cluster_pod_info(queue_cluster(s->q), ns, name, &pi) < 0)
			return;
		n.prio = pi.priority;
		objmap_foreach(&s->pods, nominated_above, &n);
		preempted = n.found;
	}
	if (preempted)
		note_victim(s, ns, name);
}

/* The victims on node, seen since the preemptor was pending and less important than it. */
static int claim(shadow *s, const char *node, uint64_t since, int32_t prio, struct cand *theirs)
{
	for (size_t i = s->n_victims; i-- > 0;) {
		struct victim *v = &s->victims[i];
		if (strcmp(v->node, node) || v->seq < since || v->prio >= prio)
			continue;
		struct victim *t = realloc(theirs->v, (theirs->n + 1) * sizeof(*t));
		if (!t)
			return -ENOMEM;
		theirs->v = t;
		t[theirs->n++] = *v;
		s->victims[i] = s->victims[--s->n_victims];
	}
	return 0;
}

/* --- the comparison ----------------------------------------------------------------------------- */

static int cmp_victim(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct victim *)a)->key, ((const struct victim *)b)->key);
}

static bool has_victim(const struct cand *c, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].key, key))
			return true;
	return false;
}

/* The same victims: the same count of each (priority, start time) — kube's unstable sort may take
 * one pod where libpreempt takes its twin. Victims of ours already terminating when we decided
 * count only when the other scheduler's are seen with them (it sends nothing for those either). */
static bool same_victims(const struct cand *ours, const struct cand *theirs)
{
	struct victim *a = calloc(ours->n + 1, sizeof(*a)), *b = calloc(theirs->n + 1, sizeof(*b));
	size_t na = 0, nb = theirs->n;
	bool same = a && b;

	for (size_t i = 0; same && i < ours->n; i++)
		if (!ours->v[i].terminating || has_victim(theirs, ours->v[i].key))
			a[na++] = ours->v[i];
	same = same && na == nb;
	if (same) {
		memcpy(b, theirs->v, nb * sizeof(*b));
		qsort(a, na, sizeof(*a), cmp_victim);
		qsort(b, nb, sizeof(*b), cmp_victim);
	}
	for (size_t i = 0; same && i < na; i++)
		same = cmp_victim(&a[i], &b[i]) == 0;
	free(a);
	free(b);
	return same;
}

/* c: NULL when none were seen */
static void put_victims(FILE *f, const struct cand *c)
{
	size_t n = c ? c->n : 0;

	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", c->v[i].key);
	if (!n)
		fputs("no victim seen", f);
}

static char *ours_text(const struct ours *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	switch (o->kind) {
	case SHADOW_BIND:
		fprintf(f, "bind to %s", o->ties[0]);
		for (size_t i = 1; i < o->n_kept; i++)
			fprintf(f, "%s%s", i == 1 ? " (or, as good: " : ", ", o->ties[i]);
		if (o->n_ties > o->n_kept)
			fprintf(f, " and %zu more", o->n_ties - o->n_kept);
		if (o->n_ties > 1)
			fputc(')', f);
		break;
	case SHADOW_PREEMPT:
		fprintf(f, "preempt on %s: ", o->cands[0].node);
		put_victims(f, &o->cands[0]);
		for (size_t i = 1; i < o->n_cands; i++)
			fprintf(f, "%s%s", i == 1 ? " (or, as good, on " : ", ", o->cands[i].node);
		if (o->more_cands)
			fprintf(f, " and %zu more", o->more_cands);
		if (o->n_cands > 1)
			fputc(')', f);
		break;
	default:
		fprintf(f, "leave it unschedulable: %s", o->text ? o->text : "");
		break;
	}
	return fclose(f) == 0 ? buf : (free(buf), NULL);
}

static char *theirs_text(shadow_kind kind, const char *node, const char *bound, const struct cand *victims,
                         const char *message)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	switch (kind) {
	case SHADOW_BIND:
		fprintf(f, "bound it to %s", node);
		break;
	case SHADOW_PREEMPT:
		fprintf(f, "preempted on %s: ", node);
		put_victims(f, victims);
		if (bound)
			fprintf(f, "; bound it to %s", bound);
		break;
	default:
		fprintf(f, "left it unschedulable: %s", message ? message : "");
		break;
	}
	return fclose(f) == 0 ? buf : (free(buf), NULL);
}

/* Counts the comparison and journals it (a disagreement at notice, an agreement at debug). */
static void report(shadow *s, const char *key, const struct ours *o, bool agree, const char *theirs, const char *why)
{
	char *ours = ours_text(o);
	journal_entry e;

	s->st.decisions[o->kind][agree]++;
	journal_entry_init(&e, agree ? LOG_DEBUG : LOG_NOTICE, MSGID_SHADOW);
	journal_entry_add(&e, FIELD_POD, "%s", key);
	journal_entry_add(&e, FIELD_SCHEDULER, "%s", s->scheduler);
	journal_entry_add(&e, FIELD_KIND, "%s", shadow_kind_name(o->kind));
	journal_entry_add(&e, FIELD_AGREE, "%s", agree ? "true" : "false");
	journal_entry_add(&e, FIELD_OURS, "%s", ours ? ours : "");
	journal_entry_add(&e, FIELD_THEIRS, "%s", theirs ? theirs : "");
	journal_entry_add(&e, FIELD_REASON, "%s", why ? why : "");
	journal_entry_add(&e, FIELD_EXPLANATION, "%s", o->kind == SHADOW_PREEMPT && o->text ? o->text : "");
	journal_entry_send(&e, "Shadow of %s, pod %s: %s: preemptd would %s; %s %s%s%s", s->scheduler, key,
	                   agree ? "agree" : "disagree", ours ? ours : "?", s->scheduler, theirs ? theirs : "?",
	                   why ? ": " : "", why ? why : "");
	free(ours);
}

/* The other scheduler bound the pod to node (compared now, or a preemption it made completed). */
static void on_bound(shadow *s, const char *key, const char *ns, const char *name, struct spod *sp, const char *node)
{
	struct cand theirs = { 0 };
	int32_t prio = 0;
	pp_pod_info pi;
	char *why = NULL;

	if (pp_cluster_pod_info(queue_cluster(s->q), ns, name, &pi) >= 0)
		prio = pi.priority;
	const char *where = sp->their_nom ? sp->their_nom : node;
	if (!sp->open && decide_ours(s, ns, name, where, &sp->ours) < 0)
		return;
	(void)claim(s, where, sp->since, prio, &theirs);
	if (theirs.n)
		qsort(theirs.v, theirs.n, sizeof(*theirs.v), cmp_key);
	shadow_kind kind = sp->their_nom || theirs.n ? SHADOW_PREEMPT : SHADOW_BIND;
	const struct ours *o = &sp->ours;
	bool agree = false;
	if (o->kind == SHADOW_BIND && kind == SHADOW_BIND) {
		agree = o->theirs_tied;
	} else if (o->kind == SHADOW_PREEMPT && kind == SHADOW_PREEMPT) {
		for (size_t i = 0; i < o->n_cands && !agree; i++)
			agree = !strcmp(o->cands[i].node, where) && same_victims(&o->cands[i], &theirs);
	}
	if (!agree) {
		if (o->why)
			why = strdup(o->why);
		else if (o->kind == SHADOW_PREEMPT && kind == SHADOW_PREEMPT && !strcmp(o->cands[0].node, where))
			why = strdup("the same node, other victims");
		else if (!sp->open)
			why = why_not(s, ns, name, where, o);
	}
	char *theirs_s = theirs_text(kind, where, kind == SHADOW_PREEMPT ? node : NULL, &theirs, NULL);
	report(s, key, o, agree, theirs_s, why);
	free(theirs_s);
	free(why);
	for (size_t i = 0; i < theirs.n; i++) {
		free(theirs.v[i].key);
		free(theirs.v[i].node);
	}
	free(theirs.v);
}

/* The other scheduler found no node and nominated none: compared now. */
static void on_unschedulable(shadow *s, const char *key, const char *ns, const char *name, struct spod *sp,
                             const char *message)
{
	if (decide_ours(s, ns, name, NULL, &sp->ours) < 0)
		return;
	bool agree = sp->ours.kind == SHADOW_UNSCHEDULABLE;
	char *theirs = theirs_text(SHADOW_UNSCHEDULABLE, NULL, NULL, NULL, message);
	report(s, key, &sp->ours, agree, theirs, NULL);
	free(theirs);
	ours_done(&sp->ours);
}

/* --- the model's events ------------------------------------------------------------------------- */

static bool shadowed(const shadow *s, const struct k8s_pod *p)
{
	return str_eq(p->scheduler_name ? p->scheduler_name : DEFAULT_SCHEDULER, s->scheduler);
}

static struct spod *track(shadow *s, const char *key, const struct k8s_pod *p)
{
	struct spod *sp = calloc(1, sizeof(*sp));

	if (!sp || (p->uid && !(sp->uid = strdup(p->uid))) || objmap_put(&s->pods, key, sp) < 0) {
		spod_free(sp);
		return NULL;
	}
	sp->since = s->seq;
	sp->late = p->nominated_node_name != NULL;
	set_str(&sp->their_nom, p->nominated_node_name);
	if (p->scheduled_status && !strcmp(p->scheduled_status, "False"))
		set_str(&sp->cond, p->scheduled_message);
	return sp;
}

static void pod_changing(void *userdata, const struct k8s_pod *p, const cluster_pod_before *before)
{
	shadow *s = userdata;
	char key[512];

	s->seq++;
	if (p->node_name && p->has_deletion && before && before->node && !before->terminating)
		maybe_victim(s, p->namespace_, p->name, p->node_name, p->preempted_by_scheduler);
	if (!shadowed(s, p) || (before && before->node))
		return;
	snprintf(key, sizeof(key), "%s/%s", p->namespace_, p->name);
	struct spod *sp = objmap_get(&s->pods, key);
	if (!sp) {
		/* first sight: what was decided before is not ours to judge */
		if (!p->node_name)
			(void)track(s, key, p);
		return;
	}
	if (p->node_name) {
		if (sp->late && !sp->open)
			s->st.uncompared++;
		else
			on_bound(s, key, p->namespace_, p->name, sp, p->node_name);
		if (sp->open)
			s->st.open--;
		spod_free(objmap_remove(&s->pods, key));
		return;
	}
	if (p->nominated_node_name && !str_eq(p->nominated_node_name, before ? before->nominated : NULL)) {
		/* a preemption: decided now, on the cluster the other scheduler preempted on */
		if (!sp->open && decide_ours(s, p->namespace_, p->name, p->nominated_node_name, &sp->ours) >= 0) {
			bool ours_node = false;
			for (size_t i = 0; i < sp->ours.n_cands; i++)
				ours_node |= !strcmp(sp->ours.cands[i].node, p->nominated_node_name);
			if (!ours_node)
				sp->ours.why = why_not(s, p->namespace_, p->name, p->nominated_node_name, &sp->ours);
			sp->open = true;
			s->st.open++;
		}
		set_str(&sp->their_nom, p->nominated_node_name);
		return;
	}
	if (!p->nominated_node_name && !sp->open && p->scheduled_status && !strcmp(p->scheduled_status, "False") &&
	    str_eq(p->scheduled_reason, "Unschedulable") && p->scheduled_message &&
	    !str_eq(p->scheduled_message, sp->cond)) {
		set_str(&sp->cond, p->scheduled_message);
		on_unschedulable(s, key, p->namespace_, p->name, sp, p->scheduled_message);
	}
}

static void pod_leaving(void *userdata, const char *ns, const char *name, const cluster_pod_before *before)
{
	shadow *s = userdata;
	char key[512];

	s->seq++;
	/* deleted at once (no grace period): never seen terminating */
	if (before->node && before->preempted && !before->terminating)
		note_victim(s, ns, name);
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	struct spod *sp = objmap_remove(&s->pods, key);
	if (sp && sp->open) {
		s->st.open--;
		s->st.uncompared++;
		journal_msg(LOG_DEBUG, "Shadow of %s, pod %s: gone before it was bound; its preemption is not compared",
		            s->scheduler, key);
	}
	spod_free(sp);
}

/* --- the object --------------------------------------------------------------------------------- */

int shadow_new(queue *q, cluster *c, const shadow_opts *o, shadow **ret)
{
	shadow *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->q = q;
	s->c = c;
	s->clock = o && o->clock ? o->clock : clock_wall_ns;
	if (!(s->scheduler = strdup(o && o->scheduler_name ? o->scheduler_name : DEFAULT_SCHEDULER))) {
		free(s);
		return -ENOMEM;
	}
	cluster_observer ob = { .pod_changing = pod_changing, .pod_leaving = pod_leaving, .userdata = s };
	cluster_set_observer(c, &ob);
	*ret = s;
	return 0;
}

static void free_spod(const char *key, void *value, void *userdata)
{
	(void)key;
	(void)userdata;
	spod_free(value);
}

shadow *shadow_free(shadow *s)
{
	if (!s)
		return NULL;
	cluster_set_observer(s->c, NULL);
	objmap_foreach(&s->pods, free_spod, NULL);
	objmap_done(&s->pods);
	victims_done(s->victims, s->n_victims);
	free(s->scheduler);
	free(s);
	return NULL;
}

void shadow_get_stats(const shadow *s, shadow_stats *ret)
{
	*ret = s->st;
	ret->victims = s->n_victims;
}

void shadow_write_metrics(const shadow *s, FILE *f, uint64_t refused_writes)
{
	char l[256];

	metrics_family(f, "preemptd_shadow_decisions_total", "counter",
	               "--shadow: preemptd's decisions for the shadowed scheduler's pods, by kind (what preemptd would "
	               "have done: bind, preempt, unschedulable) and whether that scheduler did the same (agree).");
	for (int k = 0; k < SHADOW_KINDS; k++)
		for (int a = 1; a >= 0; a--)
			metrics_sample(f, "preemptd_shadow_decisions_total",
			               metrics_labels(l, sizeof(l), "kind", shadow_kind_name((shadow_kind)k), "agree",
			                              a ? "true" : "false", (const char *)NULL),
			               (double)s->st.decisions[k][a]);
	metrics_family(f, "preemptd_shadow_open_comparisons", "gauge",
	               "--shadow: preemptions of the shadowed scheduler whose preemptor is not bound yet.");
	metrics_sample(f, "preemptd_shadow_open_comparisons", NULL, (double)s->st.open);
	metrics_family(f, "preemptd_shadow_uncompared_total", "counter",
	               "--shadow: preemptors deleted before they were bound: their preemption is not compared.");
	metrics_sample(f, "preemptd_shadow_uncompared_total", NULL, (double)s->st.uncompared);
	metrics_family(f, "preemptd_shadow_writes_refused_total", "counter",
	               "--shadow: API writes refused by the read-only transport (always 0: anything else is a bug).");
	metrics_sample(f, "preemptd_shadow_writes_refused_total", NULL, (double)refused_writes);
}
