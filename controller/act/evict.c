/* SPDX-License-Identifier: MIT */
#include "evict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "pod-write.h"
#include "k8s_body.h"

#define JSON "application/json"
#define SMP "application/strategic-merge-patch+json"

/* One preemption under way: a copy of its decision (the cycle's is gone at the next cycle). */
struct seq {
	struct seq *prev, *next;
	evictor *ev;
	karena arena;
	decision d;           /* pod, node, message, cleared; victims: those to evict, in eviction order */
	size_t next_victim;   /* the one being evicted */
	size_t evicted;
	int64_t now;
};

struct evictor {
	evict_ops ops;
	cluster *c;
	writer *w;
	struct seq *seqs;
	evict_stats stats;
	bool rbac_told;
};

int evict_new(const evict_ops *ops, cluster *c, writer *w, evictor **ret)
{
	evictor *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return -ENOMEM;
	*ev = (evictor){ .ops = *ops, .c = c, .w = w };
	*ret = ev;
	return 0;
}

static void seq_free(struct seq *s)
{
	evictor *ev = s->ev;

	if (s->prev)
		s->prev->next = s->next;
	else
		ev->seqs = s->next;
	if (s->next)
		s->next->prev = s->prev;
	ev->stats.in_progress--;
	karena_free(&s->arena);
	free(s);
}

evictor *evict_free(evictor *ev)
{
	if (!ev)
		return NULL;
	while (ev->seqs)
		seq_free(ev->seqs);
	free(ev);
	return NULL;
}

void evict_get_stats(const evictor *ev, evict_stats *ret)
{
	if (ev)
		*ret = ev->stats;
	else
		*ret = (evict_stats){ 0 };
}

/* --- the decision, kept --------------------------------------------------------------------------- */

static bool keep_pod(karena *ar, decision_pod *dst, const decision_pod *src)
{
	*dst = (decision_pod){ .priority = src->priority };
	dst->namespace_ = karena_strdup(ar, src->namespace_);
	dst->name = karena_strdup(ar, src->name);
	dst->uid = src->uid ? karena_strdup(ar, src->uid) : NULL;
	return dst->namespace_ && dst->name && (!src->uid || dst->uid);
}

struct order_key {
	size_t idx;       /* in the decision: kube-scheduler's order */
	bool covered;     /* by a budget */
	int32_t allowed;  /* the tightest budget's disruptionsAllowed */
};

static int order_cmp(const void *x, const void *y)
{
	const struct order_key *a = x, *b = y;

	if (a->covered != b->covered)
		return a->covered ? -1 : 1;
	if (a->covered && a->allowed != b->allowed)
		return a->allowed < b->allowed ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The decision's copy, its victims those not terminating already, in eviction order. */
static struct seq *seq_new(evictor *ev, const decision *d, int64_t now)
{
	struct seq *s = calloc(1, sizeof(*s));
	struct order_key *keys = calloc(d->n_victims ? d->n_victims : 1, sizeof(*keys));
	size_t n = 0;
	bool ok = s && keys;

	for (size_t i = 0; ok && i < d->n_victims; i++) {
		if (d->victims[i].terminating)
			continue; /* its deletion is under way: nothing to evict */
		const decision_pod *v = &d->victims[i].pod;
		keys[n] = (struct order_key){ .idx = i };
		keys[n].covered = cluster_pod_budget(ev->c, v->namespace_, v->name, &keys[n].allowed, NULL) > 0;
		n++;
	}
	qsort(keys, n, sizeof(*keys), order_cmp);
	if (ok) {
		s->ev = ev;
		s->now = now;
		s->d = (decision){ .kind = DECISION_PREEMPT, .n_victims = n, .n_cleared = d->n_cleared };
		ok = keep_pod(&s->arena, &s->d.pod, &d->pod) && (s->d.node = karena_strdup(&s->arena, d->node)) &&
		     (s->d.message = karena_strdup(&s->arena, d->message ? d->message : "")) &&
		     (s->d.victims = karena_calloc(&s->arena, n ? n : 1, sizeof(*s->d.victims))) &&
		     (s->d.cleared = karena_calloc(&s->arena, d->n_cleared ? d->n_cleared : 1, sizeof(*s->d.cleared)));
	}
	for (size_t i = 0; ok && i < n; i++) {
		const char *why = d->victims[keys[i].idx].reason; /* for its Preempted Event */
		ok = keep_pod(&s->arena, &s->d.victims[i].pod, &d->victims[keys[i].idx].pod) &&
		     (!why || (s->d.victims[i].reason = karena_strdup(&s->arena, why)));
	}
	for (size_t i = 0; ok && i < d->n_cleared; i++)
		ok = keep_pod(&s->arena, &s->d.cleared[i], &d->cleared[i]);
	free(keys);
	if (!ok) {
		if (s)
			karena_free(&s->arena);
		free(s);
		return NULL;
	}
	s->next = ev->seqs;
	if (ev->seqs)
		ev->seqs->prev = s;
	ev->seqs = s;
	ev->stats.in_progress++;
	return s;
}

/* "ns/a,ns/b" of victims [from, to) into buf. */
static void victim_list(const struct seq *s, size_t from, size_t to, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = from; i < to && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s/%s", i > from ? "," : "",
		                        s->d.victims[i].pod.namespace_, s->d.victims[i].pod.name);
}

/* --- the end of a preemption ------------------------------------------------------------------------ */

/* The model forgets what the cycle assumed for the victims not evicted (from on) and for the
 * preemptor's nomination; the preemptor goes back to activeQ. */
static void unassume(struct seq *s, size_t from, bool clear_in_api)
{
	evictor *ev = s->ev;

	for (size_t i = from; i < s->d.n_victims; i++) {
		const decision_pod *v = &s->d.victims[i].pod;
		cluster_write_failed(ev->c, CLUSTER_WRITE_EVICT, v->namespace_, v->name, v->uid ? v->uid : "", false);
	}
	if (!cluster_withdraw_nomination(ev->c, s->d.pod.namespace_, s->d.pod.name) || !clear_in_api)
		return;
	/* an earlier nomination the API server shows goes too: the pod is pending without one */
	write_chain *ch = pod_write_chain(&s->d.pod);
	if (ch)
		ev->ops.submit(ev->ops.userdata, ch,
		               write_chain_add(ch, CLUSTER_WRITE_STATUS, "PATCH",
		                               pod_write_path(s->d.pod.namespace_, s->d.pod.name, "status"), SMP,
		                               k8s_body_pod_status_patch(s->d.pod.uid, NULL, true, NULL)));
}

static void completed(struct seq *s)
{
	evictor *ev = s->ev;
	journal_entry e;
	char victims[1024];

	ev->stats.completed++;
	victim_list(s, 0, s->d.n_victims, victims, sizeof(victims));
	journal_entry_init(&e, LOG_DEBUG, MSGID_PREEMPTION);
	journal_entry_add(&e, FIELD_POD, "%s/%s", s->d.pod.namespace_, s->d.pod.name);
	journal_entry_add(&e, FIELD_NODE, "%s", s->d.node);
	journal_entry_add(&e, FIELD_VICTIMS, "%s", victims);
	journal_entry_send(&e, "Every victim of pod %s/%s on node %s evicted (%s): nominated there", s->d.pod.namespace_,
	                   s->d.pod.name, s->d.node, *victims ? victims : "none left to evict");
	ev->ops.publish_nomination(ev->ops.userdata, &s->d, s->now);
	seq_free(s);
}

static void withdrawn(struct seq *s, const decision_pod *v, long status, const eviction_answer *ans)
{
	evictor *ev = s->ev;
	cluster_refusal learnt = CLUSTER_POD_PROTECTED;
	journal_entry e;
	char evicted[1024], pdb[600] = "", what[700];
	int r;

	ev->stats.refused[ans->refusal]++;
	if (s->evicted)
		ev->stats.withdrawn_partial++;
	else
		ev->stats.withdrawn++;
	r = cluster_eviction_refused(ev->c, v->namespace_, v->name, ans->pdb[0] ? ans->pdb : NULL, &learnt);
	if (ans->pdb[0])
		snprintf(pdb, sizeof(pdb), "%s/%s", v->namespace_, ans->pdb);
	if (r < 0)
		snprintf(what, sizeof(what), "the model could not take it in (%s)", strerror(-r));
	else if (learnt == CLUSTER_BUDGET_SPENT)
		snprintf(what, sizeof(what), "PodDisruptionBudget %s counted as allowing no disruption until it changes",
		         pdb);
	else
		snprintf(what, sizeof(what), "%s/%s is no victim until a PodDisruptionBudget of %s changes", v->namespace_,
		         v->name, v->namespace_);
	unassume(s, s->next_victim + 1, true);

	victim_list(s, 0, s->evicted, evicted, sizeof(evicted));
	journal_entry_init(&e, LOG_NOTICE, MSGID_PREEMPTION_WITHDRAWN);
	journal_entry_add(&e, FIELD_POD, "%s/%s", s->d.pod.namespace_, s->d.pod.name);
	journal_entry_add(&e, FIELD_POD_UID, "%s", s->d.pod.uid ? s->d.pod.uid : "");
	journal_entry_add(&e, FIELD_NODE, "%s", s->d.node);
	journal_entry_add(&e, FIELD_VICTIM, "%s/%s", v->namespace_, v->name);
	journal_entry_add(&e, FIELD_PDB, "%s", pdb);
	journal_entry_add(&e, FIELD_EVICTED, "%s", evicted);
	journal_entry_add(&e, FIELD_STATUS, "%ld", status);
	journal_entry_add(&e, FIELD_REASON, "%s", ans->message);
	journal_entry_send(&e,
	                   "Preemption for pod %s/%s on node %s withdrawn: the eviction of %s/%s was refused (HTTP %ld%s%s: %s); "
	                   "%s%s; the pod is tried again, %s",
	                   s->d.pod.namespace_, s->d.pod.name, s->d.node, v->namespace_, v->name, status,
	                   *pdb ? ", PodDisruptionBudget " : "", pdb, *ans->message ? ans->message : "no message",
	                   s->evicted ? "evicted before it, gone for good (their room is free once they have terminated): "
	                              : "no victim was evicted",
	                   evicted, what);
	if (ans->refusal == EVICTION_OTHER && status == 403 && !ev->rbac_told) {
		ev->rbac_told = true;
		journal_msg(LOG_ERR, "Evictions are forbidden (HTTP 403): preemptd's ClusterRole lacks %s "
		            "(deploy/preemptd.yaml), which --pdb strict needs", pod_write_permission(CLUSTER_WRITE_EVICT));
	}
	seq_free(s);
}

/* --- one eviction after the other ----------------------------------------------------------------- */

static void evict_next(struct seq *s);

static void evicted_event(struct seq *s, const decision_victim *dv)
{
	const decision_pod *v = &dv->pod;
	char note[1200];
	const evict_ops *ops = &s->ev->ops;
	write_chain *ch = pod_write_chain(v);

	if (!ch)
		return;
	/* kube's words first, as they are; why this pod, after (cycle/explain.c), as act.c's */
	snprintf(note, sizeof(note), "Preempted by pod %s on node %s%s%s%s", s->d.pod.uid ? s->d.pod.uid : "", s->d.node,
	         dv->reason ? " (" : "", dv->reason ? dv->reason : "", dv->reason ? ")" : "");
	ops->submit(ops->userdata, ch,
	            ops->add_event(ops->userdata, ch, v, &s->d.pod, "Normal", "Preempted", "Preempting", note, s->now));
}

static void on_eviction_end(void *userdata, write_result r, long status, const char *body, size_t len)
{
	struct seq *s = userdata;
	const decision_pod *v = &s->d.victims[s->next_victim].pod;
	eviction_answer ans;

	switch (r) {
	case WRITE_OK:
		s->ev->stats.evicted++;
		s->evicted++;
		evicted_event(s, &s->d.victims[s->next_victim]);
		break;
	case WRITE_OBSOLETE: /* terminating or gone as the watch shows it: its room frees anyway */
	case WRITE_GONE:
	case WRITE_CONFLICT: /* the uid precondition: replaced, the victim chosen is gone */
		break;
	case WRITE_REFUSED:
		eviction_answer_read(status, body, len, &ans);
		if (ans.refusal == EVICTION_NOT_REFUSED) /* retries given up (no event loop): refused all the same */
			ans.refusal = EVICTION_OTHER;
		withdrawn(s, v, status, &ans);
		return;
	case WRITE_ABANDONED:
	default:
		/* not the leader any more, or stopping: no write of ours may land, the model forgets */
		unassume(s, s->next_victim + 1, false);
		seq_free(s);
		return;
	}
	s->next_victim++;
	evict_next(s);
}

static void evict_next(struct seq *s)
{
	evictor *ev = s->ev;

	if (s->next_victim == s->d.n_victims) {
		completed(s);
		return;
	}
	/* the preemptor deleted, replaced or bound meanwhile: the victims left are spared */
	if (!cluster_write_wanted(ev->c, CLUSTER_WRITE_STATUS, s->d.pod.namespace_, s->d.pod.name,
	                          s->d.pod.uid ? s->d.pod.uid : "")) {
		journal_msg(LOG_INFO, "Preemption for pod %s/%s on node %s stopped: the pod is gone or bound; %zu victim%s "
		            "not evicted", s->d.pod.namespace_, s->d.pod.name, s->d.node, s->d.n_victims - s->next_victim,
		            s->d.n_victims - s->next_victim == 1 ? "" : "s");
		unassume(s, s->next_victim, false);
		seq_free(s);
		return;
	}
	const decision_pod *v = &s->d.victims[s->next_victim].pod;
	write_chain *ch = pod_write_chain(v);
	int r = -ENOMEM;
	if (!ch) {
		unassume(s, s->next_victim, false);
		seq_free(s);
		return;
	}
	write_chain_on_end(ch, on_eviction_end, s);
	r = write_chain_set_node(ch, s->d.node);
	if (r >= 0)
		r = write_chain_add(ch, CLUSTER_WRITE_EVICT, "POST", pod_write_path(v->namespace_, v->name, "eviction"), JSON,
		                    k8s_body_eviction(v->namespace_, v->name, v->uid, -1));
	ev->ops.submit(ev->ops.userdata, ch, r); /* a failure ends the chain: on_eviction_end sees it abandoned */
}

void evict_preempt(evictor *ev, const decision *d, int64_t now_ns)
{
	struct seq *s = seq_new(ev, d, now_ns);

	if (!s) {
		journal_msg(LOG_ERR, "Cannot carry out the preemption for pod %s/%s: out of memory", d->pod.namespace_,
		            d->pod.name);
		for (size_t i = 0; i < d->n_victims; i++)
			cluster_write_failed(ev->c, CLUSTER_WRITE_EVICT, d->victims[i].pod.namespace_, d->victims[i].pod.name,
			                     d->victims[i].pod.uid ? d->victims[i].pod.uid : "", false);
		(void)cluster_withdraw_nomination(ev->c, d->pod.namespace_, d->pod.name);
		return;
	}
	if (s->d.n_victims > 1 && logging_max_priority() >= LOG_DEBUG) {
		char order[1024];
		victim_list(s, 0, s->d.n_victims, order, sizeof(order));
		journal_msg(LOG_DEBUG, "Evicting the victims of pod %s/%s one at a time, the tightest budget first: %s",
		            d->pod.namespace_, d->pod.name, order);
	}
	evict_next(s);
}
