/* The live model (controller/model/model-cluster.c) applying watch events one at a time, without the
 * scheduling cycle: pods and nodes added, updated and deleted, as the queue and the library's
 * cluster then show them; a deleted node leaving the model (at once, or with its last pod); a pod
 * on an unknown node; a pod replaced under its name; resourceVersions deciding which event
 * supersedes a write of ours; refused objects told once; relists. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model-cluster.h"
#include "queue.h"
#include "controller/live-model.h"
#include "controller/objects.h"

#define SUCCEEDED "\"phase\":\"Succeeded\""
#define NOMINATED(node) "\"phase\":\"Pending\",\"nominatedNodeName\":\"" node "\""

struct world {
	queue *q;
	cluster *c;
	char left[4][64]; /* uids the observer saw leave */
	unsigned nleft;
};

static void setup(struct world *w)
{
	memset(w, 0, sizeof(*w));
	live_model_new(&w->q, &w->c);
}

static void teardown(struct world *w)
{
	live_model_free(w->q, w->c);
}

static size_t nodes(struct world *w)
{
	return pp_cluster_node_count(queue_cluster(w->q));
}

static size_t active(struct world *w)
{
	queue_counts qc;
	queue_get_counts(w->q, &qc);
	return qc.active;
}

static cluster_counts counts(struct world *w)
{
	cluster_counts cc;
	cluster_get_counts(w->c, &cc);
	return cc;
}

static void leaving(void *userdata, const char *ns, const char *name, const cluster_pod_before *before)
{
	struct world *w = userdata;
	(void)ns;
	(void)name;
	if (w->nleft < 4)
		snprintf(w->left[w->nleft++], sizeof(w->left[0]), "%s", before->uid ? before->uid : "");
}

/* ---- pods ---------------------------------------------------------------------------------------- */

/* Added pending (ours: queued), updated to bound (out of the queue, on its node), deleted (gone). */
static void test_pod_add_update_delete(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	assert_string_equal(node_of(w.q, "p"), "");
	assert_int_equal(active(&w), 1);
	assert_int_equal(counts(&w).pods, 1);
	assert_string_equal(cluster_pod_uid(w.c, "default", "p"), "uid-p");

	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 0, "1", BOUND("n1"), RUNNING), 0);
	assert_string_equal(node_of(w.q, "p"), "n1");
	assert_int_equal(active(&w), 0);
	assert_int_equal(counts(&w).pods, 1);

	cluster_delete(w.c, CLUSTER_PODS, "default", "p");
	assert_string_equal(node_of(w.q, "p"), "(absent)");
	assert_int_equal(counts(&w).pods, 0);
	assert_null(cluster_pod_uid(w.c, "default", "p"));
	/* a delete of what the model does not have is no error */
	cluster_delete(w.c, CLUSTER_PODS, "default", "p");
	teardown(&w);
}

/* Another scheduler's pending pod is followed but not queued (its scheduler places it); once
 * bound it counts on its node. A gated pod of ours waits outside the queue. */
static void test_pods_not_ours_and_gated(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "o", "uid-o", 10, "default-scheduler", 0, "1", "", PENDING), 0);
	assert_string_equal(node_of(w.q, "o"), "(absent)");
	assert_int_equal(active(&w), 0);
	assert_int_equal(counts(&w).pods, 1);
	assert_int_equal(put_pod(w.c, "o", "uid-o", 11, "default-scheduler", 0, "1", BOUND("n1"), RUNNING), 0);
	assert_string_equal(node_of(w.q, "o"), "n1");

	assert_int_equal(put_pod(w.c, "g", "uid-g", 12, "preemptd", 0, "1",
	                         "\"schedulingGates\":[{\"name\":\"example.com/wait\"}]", PENDING), 0);
	assert_string_equal(node_of(w.q, "g"), "(absent)");
	assert_int_equal(counts(&w).gated, 1);
	assert_int_equal(active(&w), 0);
	assert_int_equal(put_pod(w.c, "g", "uid-g", 13, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(counts(&w).gated, 0);
	assert_int_equal(active(&w), 1);
	teardown(&w);
}

/* A finished pod leaves; a pod replaced under its name (a new uid: the old one was deleted while
 * the watch was away) is a new pod, and the old one is told leaving. */
static void test_finished_and_replaced_pods(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	cluster_set_observer(w.c, &(cluster_observer){ .pod_leaving = leaving, .userdata = &w });
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "a", "uid-a", 10, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "a", "uid-a", 11, "other", 0, "1", BOUND("n1"), SUCCEEDED), 0);
	assert_string_equal(node_of(w.q, "a"), "(absent)");
	assert_int_equal(counts(&w).pods, 0);
	assert_int_equal(w.nleft, 1);
	assert_string_equal(w.left[0], "uid-a");

	assert_int_equal(put_pod(w.c, "b", "uid-b1", 12, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "b", "uid-b2", 13, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(w.nleft, 2);
	assert_string_equal(w.left[1], "uid-b1");
	assert_string_equal(cluster_pod_uid(w.c, "default", "b"), "uid-b2");
	assert_string_equal(node_of(w.q, "b"), "");
	/* writes meant for the old pod are dropped */
	assert_false(cluster_write_wanted(w.c, CLUSTER_WRITE_EVENT, "default", "b", "uid-b1"));
	assert_true(cluster_write_wanted(w.c, CLUSTER_WRITE_EVENT, "default", "b", "uid-b2"));
	teardown(&w);
}

/* ---- nodes --------------------------------------------------------------------------------------- */

/* A node without pods leaves at its delete. One with pods bound stays for their resources, takes
 * no new pod, and leaves with its last pod — unless the Node comes back first. */
static void test_deleted_node_leaves(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put(w.c, NODE_JSON("n2", "4")), 0);
	assert_int_equal(nodes(&w), 2);
	assert_int_equal(counts(&w).nodes, 2);
	cluster_delete(w.c, CLUSTER_NODES, NULL, "n2");
	assert_int_equal(nodes(&w), 1);
	assert_int_equal(counts(&w).nodes, 1);
	assert_string_equal(pp_cluster_node_name(queue_cluster(w.q), 0), "n1");

	assert_int_equal(put_pod(w.c, "a", "uid-a", 10, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	cluster_delete(w.c, CLUSTER_NODES, NULL, "n1");
	assert_int_equal(nodes(&w), 1);
	assert_string_equal(node_of(w.q, "a"), "n1");
	cluster_delete(w.c, CLUSTER_PODS, "default", "a");
	assert_int_equal(nodes(&w), 0);
	assert_int_equal(counts(&w).nodes, 0);

	/* deleted under a pod, then back: it is a node again and stays after the pod */
	assert_int_equal(put(w.c, NODE_JSON("n3", "4")), 0);
	assert_int_equal(put_pod(w.c, "b", "uid-b", 11, "other", 0, "1", BOUND("n3"), RUNNING), 0);
	cluster_delete(w.c, CLUSTER_NODES, NULL, "n3");
	assert_int_equal(put(w.c, NODE_JSON("n3", "4")), 0);
	cluster_delete(w.c, CLUSTER_PODS, "default", "b");
	assert_int_equal(nodes(&w), 1);
	teardown(&w);
}

/* A pod bound to a node the model has not seen (the pod list came first) gets a placeholder that
 * a relist of nodes does not prune (it stands for the pod) and that goes with the pod. */
static void test_placeholder_node(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put_pod(w.c, "a", "uid-a", 10, "other", 0, "1", BOUND("n9"), RUNNING), 0);
	assert_string_equal(node_of(w.q, "a"), "n9");
	assert_int_equal(nodes(&w), 1);
	cluster_relist_begin(w.c, CLUSTER_NODES);
	assert_int_equal(cluster_relist_end(w.c, CLUSTER_NODES), 0);
	assert_int_equal(nodes(&w), 1);
	cluster_delete(w.c, CLUSTER_PODS, "default", "a");
	assert_int_equal(nodes(&w), 0);
	teardown(&w);
}

/* A relist removes what was not listed again, pods and nodes, and says how many. */
static void test_relist_removes_unlisted(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put(w.c, NODE_JSON("n2", "4")), 0);
	assert_int_equal(put_pod(w.c, "a", "uid-a", 10, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	assert_int_equal(put_pod(w.c, "b", "uid-b", 11, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	cluster_relist_begin(w.c, CLUSTER_PODS);
	assert_int_equal(put_pod(w.c, "b", "uid-b", 11, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	assert_int_equal(cluster_relist_end(w.c, CLUSTER_PODS), 1);
	assert_string_equal(node_of(w.q, "a"), "(absent)");
	assert_string_equal(node_of(w.q, "b"), "n1");
	cluster_relist_begin(w.c, CLUSTER_NODES);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(cluster_relist_end(w.c, CLUSTER_NODES), 1);
	assert_int_equal(nodes(&w), 1);
	/* a node not listed again goes even with a pod bound to it (it stays for the pod, as after its delete) */
	cluster_relist_begin(w.c, CLUSTER_NODES);
	assert_int_equal(cluster_relist_end(w.c, CLUSTER_NODES), 1);
	assert_string_equal(node_of(w.q, "b"), "n1");
	assert_int_equal(nodes(&w), 1);
	teardown(&w);
}

/* ---- resourceVersions ---------------------------------------------------------------------------- */

/* Our nomination stands over watch events older than the resourceVersion its status write
 * returned; an event at or after it is the API's word again. */
static void test_nomination_until_its_resource_version(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 100, "1", "", PENDING), 0);
	cluster_assume_nominated(w.c, "default", "p", "n1");
	cluster_write_landed(w.c, CLUSTER_WRITE_STATUS, "default", "p", "uid-p", "12");
	assert_int_equal(counts(&w).assumed, 1);
	/* an event from before the write (rv 11): it does not show the nomination, ours stands */
	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 100, "1", "", PENDING), 0);
	assert_string_equal(nominated_of(w.q, "p"), "n1");
	assert_int_equal(counts(&w).assumed, 1);
	/* the write's own version, or later: what the API says now (nominated nowhere) wins */
	assert_int_equal(put_pod(w.c, "p", "uid-p", 12, "preemptd", 100, "1", "", PENDING), 0);
	assert_string_equal(nominated_of(w.q, "p"), "");
	assert_int_equal(counts(&w).assumed, 0);
	/* and a nomination the API shows is taken as it is */
	assert_int_equal(put_pod(w.c, "p", "uid-p", 13, "preemptd", 100, "1", "", NOMINATED("n1")), 0);
	assert_string_equal(nominated_of(w.q, "p"), "n1");
	teardown(&w);
}

/* A binding refused with a conflict holds the pod out of the queue until the API server says
 * something new about it: the same resourceVersion again is no news, a newer one is. */
static void test_refused_binding_held_until_newer_version(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	cluster_assume_bound(w.c, "default", "p", "n1");
	assert_true(cluster_write_wanted(w.c, CLUSTER_WRITE_BIND, "default", "p", "uid-p"));
	cluster_write_failed(w.c, CLUSTER_WRITE_BIND, "default", "p", "uid-p", true);
	assert_int_equal(counts(&w).held, 1);
	assert_string_equal(node_of(w.q, "p"), "(absent)");
	assert_int_equal(active(&w), 0);
	assert_int_equal(put_pod(w.c, "p", "uid-p", 10, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(counts(&w).held, 1);
	assert_string_equal(node_of(w.q, "p"), "(absent)");
	assert_int_equal(put_pod(w.c, "p", "uid-p", 11, "preemptd", 0, "1", "", PENDING), 0);
	assert_int_equal(counts(&w).held, 0);
	assert_string_equal(node_of(w.q, "p"), "");
	assert_int_equal(active(&w), 1);
	teardown(&w);
}

/* ---- refusals ------------------------------------------------------------------------------------ */

/* A pod the admission refuses is reported as pods/NS/NAME, the model keeps the last version it
 * accepted, and the refusal is worth one log line until the object is accepted again. */
static void test_refused_pod_keeps_last_version(void **state)
{
	(void)state;
	struct world w;
	setup(&w);
	assert_int_equal(put(w.c, NODE_JSON("n1", "4")), 0);
	assert_int_equal(put_pod(w.c, "a", "uid-a", 10, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	int r = put(w.c, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"default\",\"name\":\"a\","
	                 "\"uid\":\"uid-a\",\"resourceVersion\":\"11\"},\"spec\":{\"priorityClassName\":\"nope\","
	                 "\"nodeName\":\"n2\",\"containers\":[{\"name\":\"c\"}]},\"status\":{" RUNNING "}}");
	assert_int_equal(r, -EINVAL);
	assert_string_equal(node_of(w.q, "a"), "n1");
	assert_true(cluster_first_refusal(w.c, CLUSTER_PODS, "default", "a"));
	assert_false(cluster_first_refusal(w.c, CLUSTER_PODS, "default", "a"));
	assert_int_equal(counts(&w).refused, 2);
	assert_int_equal(put_pod(w.c, "a", "uid-a", 12, "other", 0, "1", BOUND("n1"), RUNNING), 0);
	assert_true(cluster_first_refusal(w.c, CLUSTER_PODS, "default", "a"));
	teardown(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_add_update_delete),
		cmocka_unit_test(test_pods_not_ours_and_gated),
		cmocka_unit_test(test_finished_and_replaced_pods),
		cmocka_unit_test(test_deleted_node_leaves),
		cmocka_unit_test(test_placeholder_node),
		cmocka_unit_test(test_relist_removes_unlisted),
		cmocka_unit_test(test_nomination_until_its_resource_version),
		cmocka_unit_test(test_refused_binding_held_until_newer_version),
		cmocka_unit_test(test_refused_pod_keeps_last_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
