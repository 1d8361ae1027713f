/* The shadow's comparisons on the live model, without a server: objects fed as the watch would
 * feed them (kube-scheduler's writes appearing in them), the counts read back —
 *   a bind among equally good nodes agrees, elsewhere not;
 *   a preemption is compared at the preemptor's binding, with the victims the other scheduler
 *   deleted: marked PreemptionByScheduler, or, without the mark, deleted while it was nominated
 *   there; a twin victim (same priority and start) agrees; more important pods and pods that went
 *   before the preemptor was pending are not its victims;
 *   among more equally good nodes or candidates than the journal names, any of them agrees;
 *   an unschedulable report agrees once per message;
 *   a preemptor deleted before it binds, or first seen already nominated, is not compared. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "journal.h"
#include "shadow.h"
#include "../objects.h"

#define S 1000000000LL
#define T0 (1714557600LL * S) /* 2024-05-01T10:00:00Z */

#define DS "default-scheduler"
#define BOUND(node) "\"nodeName\":\"" node "\""
#define RUNNING(start) "\"phase\":\"Running\",\"startTime\":\"2024-05-01T09:00:" start "Z\""
#define PENDING "\"phase\":\"Pending\""
#define NOMINATED(node) PENDING ",\"nominatedNodeName\":\"" node "\""
#define PREEMPTED                                                                                          \
	",\"conditions\":[{\"type\":\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"PreemptionByScheduler\"}]"
#define UNSCHEDULABLE(msg)                                                                                \
	PENDING ",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\"," \
	"\"message\":\"" msg "\"}]"

static int64_t fixed_clock(void)
{
	return T0;
}

struct world {
	queue *q;
	cluster *c;
	shadow *s;
	unsigned rv;
};

static void setup(struct world *w)
{
	memset(w, 0, sizeof(*w));
	cluster_opts co = { .scheduler_name = DS };
	shadow_opts so = { .scheduler_name = DS, .clock = fixed_clock };
	journal_setup(LOGGING_STDERR, "test-shadow");
	assert_int_equal(queue_new(NULL, T0, &w->q), 0);
	assert_int_equal(cluster_new(w->q, &co, &w->c), 0);
	assert_int_equal(shadow_new(w->q, w->c, &so, &w->s), 0);
	w->rv = 10;
}

static void teardown(struct world *w)
{
	shadow_free(w->s);
	cluster_free(w->c);
	queue_free(w->q);
}

/* A pod event (the next resourceVersion); deleting: metadata.deletionTimestamp set. */
static void podd(struct world *w, const char *name, int prio, const char *cpu, const char *spec, const char *status,
                 bool deleting)
{
	assert_int_equal(put(w->c,
	                     "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"default\",\"name\":"
	                     "\"%s\",\"uid\":\"uid-%s\",\"resourceVersion\":\"%u\"%s},\"spec\":{\"schedulerName\":\"" DS
	                     "\",\"priority\":%d,\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
	                     "\"%s\"}}}]%s%s},\"status\":{%s}}",
	                     name, name, ++w->rv, deleting ? ",\"deletionTimestamp\":\"2024-05-01T10:00:05Z\"" : "",
	                     prio, cpu, *spec ? "," : "", spec, status),
	                 0);
}

static void pod(struct world *w, const char *name, int prio, const char *cpu, const char *spec, const char *status)
{
	podd(w, name, prio, cpu, spec, status, false);
}

static uint64_t count(struct world *w, shadow_kind k, bool agree)
{
	shadow_stats st;
	shadow_get_stats(w->s, &st);
	return st.decisions[k][agree];
}

/* n1 half full; n2, n3 a quarter: a 1-cpu pod is as well off on n2 as on n3 */
static void nodes(struct world *w)
{
	assert_int_equal(put(w->c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put(w->c, NODE_JSON("n2", "4")), 0);
	assert_int_equal(put(w->c, NODE_JSON("n3", "4")), 0);
	pod(w, "r1", 0, "2", BOUND("n1"), RUNNING("02"));
	pod(w, "r2", 0, "1", BOUND("n2"), RUNNING("01"));
	pod(w, "r3", 0, "1", BOUND("n3"), RUNNING("00"));
}

static void test_bind(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	nodes(&w);
	pod(&w, "a", 0, "1", "", PENDING);
	pod(&w, "a", 0, "1", BOUND("n3"), PENDING); /* n3: as good as n2 */
	assert_int_equal(count(&w, SHADOW_BIND, true), 1);
	pod(&w, "b", 0, "1", "", PENDING);
	pod(&w, "b", 0, "1", BOUND("n1"), PENDING); /* n1: fuller than n2 */
	assert_int_equal(count(&w, SHADOW_BIND, false), 1);
	/* a pod first seen bound: nothing to compare */
	pod(&w, "c", 0, "1", BOUND("n2"), RUNNING("03"));
	assert_int_equal(count(&w, SHADOW_BIND, true) + count(&w, SHADOW_BIND, false), 2);
	teardown(&w);
}

/* kube-scheduler's preemption as the watch shows it: the victims' condition and deletion first,
 * then the preemptor's nomination, the victims gone, the binding. */
static void test_preempt(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	nodes(&w);
	pod(&w, "old-victim", 0, "1", BOUND("n2"), RUNNING("04"));
	/* preempted before big was pending: not big's */
	podd(&w, "old-victim", 0, "1", BOUND("n2"), RUNNING("04") PREEMPTED, true);
	pod(&w, "big", 1000, "4", "", PENDING);
	/* n1 loses one pod, n2 and n3 two (r2/old-victim, r3): n1 is preemptd's choice */
	pod(&w, "r1", 0, "2", BOUND("n1"), RUNNING("02") PREEMPTED);
	podd(&w, "r1", 0, "2", BOUND("n1"), RUNNING("02") PREEMPTED, true);
	pod(&w, "big", 1000, "4", "", NOMINATED("n1"));
	shadow_stats st;
	shadow_get_stats(w.s, &st);
	assert_int_equal(st.open, 1);
	cluster_delete(w.c, CLUSTER_PODS, "default", "r1");
	pod(&w, "big", 1000, "4", BOUND("n1"), NOMINATED("n1"));
	assert_int_equal(count(&w, SHADOW_PREEMPT, true), 1);
	shadow_get_stats(w.s, &st);
	assert_int_equal(st.open, 0);
	assert_int_equal(st.victims, 1); /* old-victim: nobody's here */
	teardown(&w);
}

/* kube-scheduler preempts victim (priority 0, started at :00) on node for the pending preemptor, as
 * the watch shows it: the victim's condition and deletion, the nomination, the victim gone, the
 * binding. */
static void their_preemption(struct world *w, const char *preemptor, int prio, const char *cpu, const char *node,
                             const char *victim, const char *victim_cpu)
{
	char bound[64], nominated[96];

	snprintf(bound, sizeof(bound), "\"nodeName\":\"%s\"", node);
	snprintf(nominated, sizeof(nominated), PENDING ",\"nominatedNodeName\":\"%s\"", node);
	podd(w, victim, 0, victim_cpu, bound, RUNNING("00") PREEMPTED, true);
	pod(w, preemptor, prio, cpu, "", nominated);
	cluster_delete(w->c, CLUSTER_PODS, "default", victim);
	pod(w, preemptor, prio, cpu, bound, nominated);
}

/* Without the condition (an older kube-scheduler), a pod deleted on the node its preemptor is
 * nominated to is a victim; a more important one going there is not. */
static void test_victim_without_condition(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	nodes(&w);
	pod(&w, "big", 1000, "4", "", PENDING);
	pod(&w, "big", 1000, "4", "", NOMINATED("n1"));
	podd(&w, "r1", 0, "2", BOUND("n1"), RUNNING("02"), true);
	pod(&w, "vip", 5000, "1", BOUND("n1"), RUNNING("05"));
	podd(&w, "vip", 5000, "1", BOUND("n1"), RUNNING("05"), true);
	cluster_delete(w.c, CLUSTER_PODS, "default", "r1");
	cluster_delete(w.c, CLUSTER_PODS, "default", "vip");
	pod(&w, "big", 1000, "4", BOUND("n1"), NOMINATED("n1"));
	assert_int_equal(count(&w, SHADOW_PREEMPT, true), 1);
	teardown(&w);
}

/* kube's unstable sort may take a pod's twin (same priority, same start): the same victims. */
static void test_twin_victims(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	pod(&w, "t1", 0, "2", BOUND("n1"), RUNNING("00"));
	pod(&w, "t2", 0, "2", BOUND("n1"), RUNNING("00"));
	pod(&w, "p", 10, "2", "", PENDING); /* one of the two must go: libpreempt takes t2 */
	their_preemption(&w, "p", 10, "2", "n1", "t1", "2");
	assert_int_equal(count(&w, SHADOW_PREEMPT, true), 1);
	teardown(&w);

	/* both where one was enough: not the same */
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	pod(&w, "t1", 0, "2", BOUND("n1"), RUNNING("00"));
	pod(&w, "t2", 0, "2", BOUND("n1"), RUNNING("00"));
	pod(&w, "q", 10, "2", "", PENDING);
	podd(&w, "t1", 0, "2", BOUND("n1"), RUNNING("00") PREEMPTED, true);
	podd(&w, "t2", 0, "2", BOUND("n1"), RUNNING("00") PREEMPTED, true);
	pod(&w, "q", 10, "2", "", NOMINATED("n1"));
	cluster_delete(w.c, CLUSTER_PODS, "default", "t1");
	cluster_delete(w.c, CLUSTER_PODS, "default", "t2");
	pod(&w, "q", 10, "2", BOUND("n1"), NOMINATED("n1"));
	assert_int_equal(count(&w, SHADOW_PREEMPT, false), 1);
	teardown(&w);
}

/* A pool of identical nodes: more tie than the shadow names in its journal (the other
 * scheduler's node is still found among them, and a node not among them still is not). */
static void pool(struct world *w, int n, bool full)
{
	char name[16];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		assert_int_equal(put(w->c, NODE_JSON("%s", "4"), name, name), 0);
		if (!full)
			continue;
		char v[16], bound[64];
		snprintf(v, sizeof(v), "v%d", i);
		snprintf(bound, sizeof(bound), "\"nodeName\":\"%s\"", name);
		pod(w, v, 0, "4", bound, RUNNING("00"));
	}
}

static void test_many_ties(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	pool(&w, 10, false);
	pod(&w, "a", 0, "1", "", PENDING);
	pod(&w, "a", 0, "1", BOUND("p9"), PENDING); /* the last of ten equally good nodes */
	assert_int_equal(count(&w, SHADOW_BIND, true), 1);
	pod(&w, "b", 0, "1", "", PENDING);
	pod(&w, "b", 0, "1", BOUND("p9"), PENDING); /* now fuller than the nine others */
	assert_int_equal(count(&w, SHADOW_BIND, false), 1);
	teardown(&w);

	/* ten candidates equal on every criterion: kube may take any, here the ninth */
	setup(&w);
	pool(&w, 10, true);
	pod(&w, "big", 1000, "4", "", PENDING);
	their_preemption(&w, "big", 1000, "4", "p8", "v8", "4");
	assert_int_equal(count(&w, SHADOW_PREEMPT, true), 1);
	teardown(&w);
}

static void test_unschedulable(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	nodes(&w);
	pod(&w, "huge", 0, "100", "", PENDING);
	pod(&w, "huge", 0, "100", "", UNSCHEDULABLE("0/3 nodes are available: 3 Insufficient cpu."));
	assert_int_equal(count(&w, SHADOW_UNSCHEDULABLE, true), 1);
	/* the same report again (a status update that changes something else): not a new decision */
	pod(&w, "huge", 0, "100", "", UNSCHEDULABLE("0/3 nodes are available: 3 Insufficient cpu."));
	assert_int_equal(count(&w, SHADOW_UNSCHEDULABLE, true), 1);
	/* kube says unschedulable where preemptd would bind */
	pod(&w, "small", 0, "1", "", PENDING);
	pod(&w, "small", 0, "1", "", UNSCHEDULABLE("0/3 nodes are available: 3 node(s) had volume node affinity conflict."));
	assert_int_equal(count(&w, SHADOW_BIND, false), 1);
	/* ... and binds it later, once the volume is there: a decision again, compared again */
	pod(&w, "small", 0, "1", BOUND("n2"), PENDING);
	assert_int_equal(count(&w, SHADOW_BIND, true), 1);
	teardown(&w);
}

static void test_not_compared(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	nodes(&w);
	pod(&w, "big", 1000, "4", "", PENDING);
	pod(&w, "big", 1000, "4", "", NOMINATED("n1"));
	cluster_delete(w.c, CLUSTER_PODS, "default", "big");
	shadow_stats st;
	shadow_get_stats(w.s, &st);
	assert_int_equal(st.uncompared, 1);
	assert_int_equal(st.open, 0);
	/* first seen nominated already (a restart in the middle of a preemption) */
	pod(&w, "late", 1000, "4", "", NOMINATED("n1"));
	pod(&w, "late", 1000, "4", BOUND("n1"), NOMINATED("n1"));
	shadow_get_stats(w.s, &st);
	assert_int_equal(st.uncompared, 2);
	for (int k = 0; k < SHADOW_KINDS; k++)
		assert_int_equal(count(&w, (shadow_kind)k, true) + count(&w, (shadow_kind)k, false), 0);
	teardown(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind),
		cmocka_unit_test(test_preempt),
		cmocka_unit_test(test_victim_without_condition),
		cmocka_unit_test(test_twin_victims),
		cmocka_unit_test(test_many_ties),
		cmocka_unit_test(test_unschedulable),
		cmocka_unit_test(test_not_compared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
