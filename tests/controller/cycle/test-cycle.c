/* The live model and the scheduling cycle without a server: objects as the API server sends them,
 * decoded and applied one at a time, decisions read back — binding, another scheduler's pods,
 * preemption (victims equal to preemptctl's, no second preemption while they terminate), the
 * nominated pod's room, stale watch events that predate a decision, refused bindings, pods on
 * unknown or deleted nodes, scheduling gates; issue 28's: a preemption the budget postpones (a
 * decision of its own, nothing assumed deleted) and a nomination that expires into a decision
 * with kube-style words. Relists touch the model alone: model/test-cluster.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cycle.h"
#include "model.h"
#include "../live-model.h"
#include "../objects.h"

struct world {
	queue *q;
	cluster *c;
	cycle *cy;
	budget *b; /* the preemption budget, when a test sets one */
	decision d;
	char expired[512]; /* the last nomination that expired, in words */
	unsigned n_expired;
};

static void setup(struct world *w)
{
	memset(w, 0, sizeof(*w));
	live_model_new(&w->q, &w->c);
	assert_int_equal(cycle_new(w->q, w->c, &w->cy), 0);
	cycle_decision_init(&w->d);
}

static void teardown(struct world *w)
{
	cycle_decision_done(&w->d);
	cycle_free(w->cy);
	budget_free(w->b);
	live_model_free(w->q, w->c);
}

/* One cycle; 1 when a pod was tried. */
static int run(struct world *w)
{
	pp_err err = { "" };
	int r = cycle_run_one(w->cy, &w->d, &err);
	if (r < 0)
		fail_msg("cycle_run_one: %s", err.msg);
	return r;
}

static void advance(struct world *w, int64_t by)
{
	pp_err err = { "" };
	assert_int_equal(queue_advance(w->q, queue_now(w->q) + by, &err), 0);
}

#define DELETING "\"deletionTimestamp\":\"2024-05-01T10:00:05Z\""

/* What preemptctl preempt decides for ns/name on a snapshot of these objects (a List's items). */
static pp_preemption *preemptctl(const char *items, const char *name)
{
	char text[16384];
	k8s_cluster kc;
	model m = { 0 };
	diag d;
	pp_preemption *p = NULL;
	pp_preempt_options po = { .now_ns = T0 };
	pp_err err = { "" };

	snprintf(text, sizeof(text), "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[%s]}", items);
	diag_init(&d, stderr);
	k8s_cluster_init(&kc);
	assert_int_equal(k8s_load_string(&kc, "snapshot", text, strlen(text), &d), 0);
	assert_int_equal(model_build(&m, &kc, T0, &d), 0);
	if (pp_cluster_preempt(m.cluster, "default", name, &po, &p, &err) < 0)
		fail_msg("pp_cluster_preempt: %s", err.msg);
	model_done(&m);
	k8s_cluster_done(&kc);
	return p;
}

/* ---- binding ---------------------------------------------------------------------------------- */

static void test_bind_then_stale_event(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_BIND);
	assert_string_equal(w.d.node, "n1");
	assert_string_equal(w.d.pod.uid, "uid-p");
	/* an event that predates the binding (our own status patch, say) does not undo it */
	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 0, "1", "", PENDING), 0);
	assert_string_equal(node_of(w.q, "p"), "n1");
	assert_int_equal(run(&w), 0);
	cluster_counts cc;
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.assumed, 1);
	/* the API shows it bound: nothing assumed any more */
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 0, "1", BOUND("n1"), RUNNING), 0);
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.assumed, 0);
	assert_false(cluster_write_wanted(w.c, CLUSTER_WRITE_BIND, "default", "p", "uid-p"));
	teardown(&w);
}

/* Pods of other schedulers: their pending pods are not ours to schedule, their bound pods take
 * room. The FitError is preemptctl's, byte for byte. */
static void test_other_scheduler_and_fit_error(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "2")), 0);
	assert_int_equal(put_pod(w.c, "theirs", "uid-t", 10, "default-scheduler", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 0);
	assert_string_equal(node_of(w.q, "theirs"), "(absent)");
	assert_int_equal(put_pod(w.c, "busy", "uid-b", 11, "default-scheduler", 0, "2", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_UNSCHEDULABLE);
	pp_preemption *p = preemptctl(
		NODE_JSON("n1", "2") ","
		"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"busy\"},\"spec\":{\"nodeName\":\"n1\","
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},"
		"\"status\":{\"phase\":\"Running\",\"startTime\":\"2024-05-01T09:00:00Z\"}},"
		"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"p\"},\"spec\":{"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
		"p");
	assert_int_equal(pp_preemption_outcome(p), PP_OUTCOME_NONE);
	assert_string_equal(w.d.message, pp_preemption_reason(p));
	pp_preemption_free(p);
	teardown(&w);
}

/* ---- preemption --------------------------------------------------------------------------------- */

#define VICTIM_JSON(name)                                                                                     \
	"{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"" name "\"},\"spec\":{\"nodeName\":" \
	"\"n1\",\"priority\":0,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},"   \
	"\"status\":{\"phase\":\"Running\",\"startTime\":\"2024-05-01T09:00:00Z\"}}"

static void test_preempt_wait_then_bind(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v2", "uid-v2", 10, "other", 0, "2", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 11, "other", 0, "2", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "3", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_PREEMPT);
	assert_string_equal(w.d.node, "n1");
	assert_string_equal(w.d.message, "0/1 nodes are available: 1 Insufficient cpu.");
	/* the victims preemptctl names for the same cluster, in its order */
	pp_preemption *pc = preemptctl(NODE_JSON("n1", "4") "," VICTIM_JSON("v2") "," VICTIM_JSON("v1") ","
	                               "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"p\","
	                               "\"creationTimestamp\":\"2024-05-01T10:00:00Z\"},\"spec\":{\"priority\":100,\"containers\":[{\"name\":\"c\",\"resources\":"
	                               "{\"requests\":{\"cpu\":\"3\"}}}]}}",
	                               "p");
	assert_int_equal(pp_preemption_outcome(pc), PP_OUTCOME_PREEMPT);
	assert_string_equal(pp_preemption_node(pc), w.d.node);
	assert_int_equal(pp_preemption_victim_count(pc), w.d.n_victims);
	for (size_t i = 0; i < w.d.n_victims; i++)
		assert_string_equal(pp_preemption_victim(pc, i)->name, w.d.victims[i].pod.name);
	pp_preemption_free(pc);
	assert_int_equal(w.d.n_victims, 2);
	assert_string_equal(w.d.victims[0].pod.uid, "uid-v1");

	/* stale events (the victims not deleting yet, the preemptor not nominated yet) undo nothing */
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 13, "other", 0, "2", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 14, "preemptd", 100, "3", "", PENDING), 0);
	assert_string_equal(nominated_of(w.q, "p"), "n1");
	/* a new node wakes the preemptor: its victims still terminate, so no second preemption */
	advance(&w, 2 * S);
	assert_int_equal(put(w.c, NODE_JSON("n2", "1")), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_UNSCHEDULABLE);
	assert_non_null(strstr(w.d.message, "not eligible due to a terminating pod on the nominated node"));
	assert_false(w.d.clear_nomination);
	assert_string_equal(nominated_of(w.q, "p"), "n1");
	/* the API shows the deletions, then the victims are gone: the preemptor binds there */
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 15, "other", 0, "2", BOUND("n1"),
	                         RUNNING ",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
	                         "\"reason\":\"PreemptionByScheduler\"}]"),
	                 0);
	cluster_delete(w.c, CLUSTER_PODS, "default", "v1");
	cluster_delete(w.c, CLUSTER_PODS, "default", "v2");
	advance(&w, 20 * S);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_BIND);
	assert_string_equal(w.d.node, "n1");
	teardown(&w);
}

/* While a preemptor waits for its victims, a lower-priority pod does not take the room it made —
 * even when the watch has not shown the nomination yet. */
static void test_lower_priority_keeps_off_nominated_room(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v", "uid-v", 10, "other", 0, "4", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 100, "3", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_PREEMPT);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "3", "", PENDING), 0);
	cluster_delete(w.c, CLUSTER_PODS, "default", "v");
	/* p is backing off (1 s); l arrives first */
	assert_int_equal(put_pod(w.c, "l", "uid-l", 13, "preemptd", 50, "2", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_string_equal(w.d.pod.name, "l");
	assert_int_not_equal(w.d.kind, DECISION_BIND);
	advance(&w, 2 * S);
	assert_int_equal(run(&w), 1);
	assert_string_equal(w.d.pod.name, "p");
	assert_int_equal(w.d.kind, DECISION_BIND);
	teardown(&w);
}

/* ---- writes refused ----------------------------------------------------------------------------- */

static void test_bind_refused(void **state)
{
	(void)state;
	struct world w;
	queue_counts qc;
	cluster_counts cc;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	/* 409: someone else decided; the pod waits for news, it is not bound again blindly */
	cluster_write_failed(w.c, CLUSTER_WRITE_BIND, "default", "p", "uid-p", true);
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.held, 1);
	assert_int_equal(run(&w), 0);
	assert_string_equal(node_of(w.q, "p"), "(absent)");
	/* an older event is no news */
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 0);
	/* news: still pending, so it is scheduled again */
	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_BIND);
	/* any other failure: pending again, after a backoff (not a busy loop of bindings) */
	cluster_write_failed(w.c, CLUSTER_WRITE_BIND, "default", "p", "uid-p", false);
	queue_get_counts(w.q, &qc);
	assert_int_equal(qc.active, 0);
	assert_int_equal(qc.backoff, 1);
	assert_string_equal(node_of(w.q, "p"), "");
	/* a write about a pod that was replaced (same name, new uid) is obsolete */
	assert_int_equal(put_pod(w.c, "p", "uid-p2", 12, "preemptd", 0, "1", "", PENDING), 0);
	assert_false(cluster_write_wanted(w.c, CLUSTER_WRITE_STATUS, "default", "p", "uid-p"));
	assert_true(cluster_write_wanted(w.c, CLUSTER_WRITE_STATUS, "default", "p", "uid-p2"));
	teardown(&w);
}

/* ---- unknown nodes, gates -------------------------------------------------------------------- */

static void test_unknown_and_deleted_nodes(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	/* the pod list came before the node list: the pod still takes its room */
	assert_int_equal(put_pod(w.c, "a", "uid-a", 10, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	assert_string_equal(node_of(w.q, "a"), "n1");
	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_UNSCHEDULABLE); /* nothing goes onto an unknown node */
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	advance(&w, 2 * S);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_BIND);
	/* deleted under its pods: they stay counted, nothing new goes there, it goes with them */
	cluster_delete(w.c, CLUSTER_NODES, NULL, "n1");
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 1);
	assert_int_equal(put_pod(w.c, "q", "uid-q", 12, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_UNSCHEDULABLE);
	cluster_delete(w.c, CLUSTER_PODS, "default", "a");
	cluster_write_failed(w.c, CLUSTER_WRITE_BIND, "default", "p", "uid-p", false);
	cluster_delete(w.c, CLUSTER_PODS, "default", "p");
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 0);
	teardown(&w);
}

/* A node deleted while a pending pod is nominated to it (the library keeps it for the nomination)
 * goes when that pod leaves or is nominated elsewhere: no node of the past in later FitErrors. */
static void test_deleted_node_with_nomination(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put(w.c, NODE_JSON("n2", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "8", "", PENDING ",\"nominatedNodeName\":\"n1\""), 0);
	assert_int_equal(put_pod(w.c, "q", "uid-q", 11, "preemptd", 0, "8", "", PENDING ",\"nominatedNodeName\":\"n2\""), 0);
	cluster_delete(w.c, CLUSTER_NODES, NULL, "n1");
	cluster_delete(w.c, CLUSTER_NODES, NULL, "n2");
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 2); /* kept for the nominations */
	cluster_delete(w.c, CLUSTER_PODS, "default", "p");
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 1);
	/* nominated nowhere any more: its old node goes too */
	assert_int_equal(put_pod(w.c, "q", "uid-q", 12, "preemptd", 0, "8", "", PENDING), 0);
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 0);
	teardown(&w);
}

/* The same node left by the scheduler's own decision: the pod nominated to the deleted n1 (its
 * victim collected in the same batch of events) is bound to n2 in the next cycle. The binding ends
 * the nomination inside the library, with no API event naming n1, and n1 must go all the same
 * (found by the soak: a deleted node now and then stayed in the model for good). */
static void test_deleted_node_left_by_a_binding(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v", "uid-v", 10, "other", 0, "4", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 100, "3", "", PENDING ",\"nominatedNodeName\":\"n1\""), 0);
	assert_string_equal(nominated_of(w.q, "p"), "n1");
	cluster_delete(w.c, CLUSTER_NODES, NULL, "n1");
	cluster_delete(w.c, CLUSTER_PODS, "default", "v");
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 1); /* kept for p's nomination */
	assert_int_equal(put(w.c, NODE_JSON("n2", "4")), 0);
	while (run(&w) > 0 && w.d.kind != DECISION_BIND)
		;
	assert_int_equal(w.d.kind, DECISION_BIND);
	assert_string_equal(node_of(w.q, "p"), "n2");
	cluster_counts cc;
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.nodes, 1);
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 1);
	teardown(&w);
}

static void test_gated_pod_waits(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "g", "uid-g", 10, "preemptd", 0, "1", "\"schedulingGates\":[{\"name\":\"x\"}]",
	                         PENDING),
	                 0);
	assert_int_equal(run(&w), 0);
	cluster_counts cc;
	cluster_get_counts(w.c, &cc);
	assert_int_equal(cc.gated, 1);
	assert_int_equal(put_pod(w.c, "g", "uid-g", 11, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_BIND);
	teardown(&w);
}

/* A pod the model cannot take is refused with its name, once, and the rest goes on. */
static void test_refused_pod(void **state)
{
	(void)state;
	struct world w;
	char err[1024];
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	/* no spec.priority and an unknown class: admission would have refused it */
	int r = put(w.c, "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"x\",\"uid\":\"u\"},"
	                 "\"spec\":{\"schedulerName\":\"preemptd\",\"priorityClassName\":\"nope\","
	                 "\"containers\":[{\"name\":\"c\"}]}}");
	assert_int_equal(r, -EINVAL);
	assert_true(cluster_first_refusal(w.c, CLUSTER_PODS, "ns", "x"));
	assert_false(cluster_first_refusal(w.c, CLUSTER_PODS, "ns", "x"));
	(void)err;
	assert_int_equal(run(&w), 0);
	teardown(&w);
}

static void on_expired(const decision *d, void *ud)
{
	struct world *w = ud;
	assert_int_equal(d->kind, DECISION_NOMINATION_EXPIRED);
	w->n_expired++;
	snprintf(w->expired, sizeof(w->expired), "%s %s %s victims=%zu%s%s: %s", d->pod.name, d->pod.uid, d->node,
	         d->n_victims, d->n_victims ? " " : "", d->n_victims ? d->victims[0].pod.name : "", d->message);
}

static void advance_to(struct world *w, int64_t t)
{
	pp_err err = { "" };
	if (cycle_advance(w->cy, t, on_expired, w, &err) < 0)
		fail_msg("cycle_advance: %s", err.msg);
}

#define RUNNING_OLD "\"phase\":\"Running\",\"startTime\":\"2024-05-01T09:00:00Z\""

static void test_cycle_postpones(void **state)
{
	(void)state;
	struct world w;
	budget_opts o = { .per_minute = 1 };
	setup(&w);
	assert_int_equal(budget_new(&o, &w.b), 0);
	cycle_set_budget(w.cy, w.b);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put(w.c, NODE_JSON("n2", "4")), 0);
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 10, "other", 0, "3", BOUND("n1"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "v2", "uid-v2", 11, "other", 0, "3", BOUND("n2"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "3", "", "\"phase\":\"Pending\""), 0);
	assert_int_equal(put_pod(w.c, "q", "uid-q", 13, "preemptd", 90, "3", "", "\"phase\":\"Pending\""), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_PREEMPT);
	assert_string_equal(w.d.pod.name, "p");
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_POSTPONED);
	assert_string_equal(w.d.pod.name, "q");
	assert_string_equal(w.d.pod.uid, "uid-q");
	assert_string_equal(w.d.node, "n2");
	assert_string_equal(w.d.message, "0/2 nodes are available: 2 Insufficient cpu. preemption postponed: 1 victim on "
	                                 "node n2 would exceed the budget of 1 victim per minute (max-victims-per-minute).");
	assert_int_equal(w.d.n_victims, 1);
	assert_string_equal(w.d.victims[0].pod.name, "v2");
	/* nothing of it is assumed: v2 is no victim yet, q holds no node */
	assert_true(cluster_write_wanted(w.c, CLUSTER_WRITE_DELETE, "default", "v2", "uid-v2"));
	assert_string_equal(nominated_of(w.q, "q"), "");
	queue_counts qc;
	queue_get_counts(w.q, &qc);
	assert_int_equal(qc.postponed, 1);
	/* a timer for the retry, not a loop */
	assert_int_equal(queue_next_due(w.q), T0 + 60 * S);
	advance_to(&w, T0 + 60 * S);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_PREEMPT);
	assert_string_equal(w.d.pod.name, "q");
	queue_get_counts(w.q, &qc);
	assert_int_equal(qc.postponed, 0);
	teardown(&w);
}

static void test_cycle_nomination_expires(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(cycle_set_nomination_timeout(w.cy, 0, 30 * S), 0);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 10, "other", 0, "3", BOUND("n1"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "3", "", "\"phase\":\"Pending\""), 0);
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_PREEMPT);
	/* the API shows v1 terminating (grace 30 s, as v1 has no terminationGracePeriodSeconds) and p nominated */
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 14, "other", 0, "3", BOUND("n1"),
	                         RUNNING_OLD ",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\","
	                         "\"reason\":\"PreemptionByScheduler\"}]"),
	                 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 15, "preemptd", 100, "3", "",
	                         "\"phase\":\"Pending\",\"nominatedNodeName\":\"n1\""),
	                 0);
	advance_to(&w, T0 + 59 * S);
	assert_int_equal(w.n_expired, 0);
	assert_string_equal(nominated_of(w.q, "p"), "n1");
	advance_to(&w, T0 + 60 * S);
	assert_int_equal(w.n_expired, 1);
	assert_string_equal(w.expired, "p uid-p n1 victims=1 v1: Nomination to node n1 expired: 1 pod preempted there "
	                               "has not terminated within its grace period + 30s");
	/* cleared, and it stays so while the watch still shows the nomination */
	assert_string_equal(nominated_of(w.q, "p"), "");
	assert_int_equal(put_pod(w.c, "p", "uid-p", 16, "preemptd", 100, "3", "",
	                         "\"phase\":\"Pending\",\"nominatedNodeName\":\"n1\""),
	                 0);
	assert_string_equal(nominated_of(w.q, "p"), "");
	/* v1 is stuck: no victim any more, so p has nowhere to go */
	assert_int_equal(run(&w), 1);
	assert_int_equal(w.d.kind, DECISION_UNSCHEDULABLE);
	teardown(&w);
}

/* A fixed timeout is named as such. */
static void test_cycle_fixed_timeout_words(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(cycle_set_nomination_timeout(w.cy, 90 * S, 0), 0);
	assert_int_equal(cycle_set_nomination_timeout(w.cy, -1, 0), -EINVAL);
	assert_int_equal(cycle_set_min_runtime(w.cy, -1), -EINVAL);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "v1", "uid-v1", 10, "other", 0, "2", BOUND("n1"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "v2", "uid-v2", 11, "other", 0, "2", BOUND("n1"), RUNNING_OLD), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "4", "", "\"phase\":\"Pending\""), 0);
	assert_int_equal(run(&w), 1);
	advance_to(&w, T0 + 90 * S);
	assert_int_equal(w.n_expired, 1);
	assert_string_equal(w.expired, "p uid-p n1 victims=2 v1: Nomination to node n1 expired: 2 pods preempted there "
	                               "have not terminated within 1m30s");
	teardown(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_then_stale_event),
		cmocka_unit_test(test_other_scheduler_and_fit_error),
		cmocka_unit_test(test_preempt_wait_then_bind),
		cmocka_unit_test(test_lower_priority_keeps_off_nominated_room),
		cmocka_unit_test(test_bind_refused),
		cmocka_unit_test(test_unknown_and_deleted_nodes),
		cmocka_unit_test(test_deleted_node_with_nomination),
		cmocka_unit_test(test_deleted_node_left_by_a_binding),
		cmocka_unit_test(test_gated_pod_waits),
		cmocka_unit_test(test_refused_pod),
		cmocka_unit_test(test_cycle_postpones),
		cmocka_unit_test(test_cycle_nomination_expires),
		cmocka_unit_test(test_cycle_fixed_timeout_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
