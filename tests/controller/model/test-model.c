/* A snapshot's model (controller/model/model.c), what preemptctl decides on: bound, pending and
 * finished pods counted (finished ones left out, as the scheduler leaves them); a pod read back from
 * the API server keeps its admitted priority when its class is gone, a new one is refused naming
 * the pod; a nomination to a node not in the input is ignored with a warning; a pod bound to such a
 * node is an error. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model.h"

#define S 1000000000LL
#define T0 (1714557600LL * S) /* 2024-05-01T10:00:00Z */

#define NODE(name)                                                                                              \
	"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name "\"},\"status\":{\"allocatable\":" \
	"{\"cpu\":\"4\",\"memory\":\"32Gi\",\"pods\":\"110\"}}}"
/* A pod: name, then the rest of metadata, spec and status as JSON members. */
#define POD(name, meta, spec, status)                                                                     \
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"default\",\"name\":\"" name "\"" \
	meta "},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]" spec \
	"},\"status\":{" status "}}"
#define RUNNING "\"phase\":\"Running\",\"startTime\":\"2024-05-01T09:00:00Z\""

struct built {
	k8s_cluster kc;
	model m;
	int r;
	unsigned nerrors, nwarnings;
	char *messages;
};

static void build(struct built *b, const char *items)
{
	char text[8192];
	size_t size = 0;
	FILE *f;
	diag d;

	memset(b, 0, sizeof(*b));
	f = open_memstream(&b->messages, &size);
	assert_non_null(f);
	diag_init(&d, f);
	snprintf(text, sizeof(text), "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[%s]}", items);
	k8s_cluster_init(&b->kc);
	assert_int_equal(k8s_load_string(&b->kc, "snap.json", text, strlen(text), &d), 0);
	b->r = model_build(&b->m, &b->kc, T0, &d);
	b->nerrors = d.nerrors;
	b->nwarnings = d.nwarnings;
	fclose(f);
}

static void unbuild(struct built *b)
{
	model_done(&b->m);
	k8s_cluster_done(&b->kc);
	free(b->messages);
}

static void test_counts_and_finished_pods(void **state)
{
	(void)state;
	struct built b;
	pp_pod_info pi;

	build(&b, NODE("n1") "," POD("run", "", ",\"nodeName\":\"n1\"", RUNNING) "," POD("wait", "", "", "\"phase\":\"Pending\"")
	          "," POD("done", "", ",\"nodeName\":\"n1\"", "\"phase\":\"Succeeded\""));
	assert_int_equal(b.r, 0);
	assert_string_equal(b.messages, "");
	assert_int_equal(b.m.nbound, 1);
	assert_int_equal(b.m.npending, 1);
	assert_int_equal(b.m.nterminal, 1);
	assert_int_equal(pp_cluster_pod_info(b.m.cluster, "default", "run", &pi), 0);
	assert_string_equal(pi.node_name, "n1");
	assert_int_equal(pp_cluster_pod_info(b.m.cluster, "default", "wait", &pi), 0);
	assert_null(pi.node_name);
	assert_int_equal(pp_cluster_pod_info(b.m.cluster, "default", "done", &pi), -ENOENT);
	unbuild(&b);
}

/* Priority admission runs at creation: a pod the API server has (creationTimestamp, spec.priority)
 * keeps its priority when its class is gone; a new pod with an unknown class is refused. */
static void test_admitted_priority_kept(void **state)
{
	(void)state;
	struct built b;
	pp_pod_info pi;

	build(&b, NODE("n1") "," POD("old", ",\"creationTimestamp\":\"2024-05-01T08:00:00Z\"",
	                             ",\"priorityClassName\":\"gone\",\"priority\":7,\"nodeName\":\"n1\"", RUNNING));
	assert_int_equal(b.r, 0);
	assert_int_equal(b.nerrors, 0);
	assert_int_equal(b.nwarnings, 1);
	assert_non_null(strstr(b.messages, "pods/default/old"));
	assert_non_null(strstr(b.messages, "keeping spec.priority 7"));
	assert_int_equal(pp_cluster_pod_info(b.m.cluster, "default", "old", &pi), 0);
	assert_int_equal(pi.priority, 7);
	unbuild(&b);

	build(&b, NODE("n1") "," POD("new", "", ",\"priorityClassName\":\"gone\"", "\"phase\":\"Pending\""));
	assert_int_equal(b.r, -EINVAL);
	assert_int_equal(b.nerrors, 1);
	assert_non_null(strstr(b.messages, "snap.json:"));
	assert_non_null(strstr(b.messages, "pods/default/new"));
	assert_int_equal(pp_cluster_pod_info(b.m.cluster, "default", "new", &pi), -ENOENT);
	unbuild(&b);
}

/* A snapshot may name a node it does not hold: a nomination there is dropped (kube-scheduler would
 * retry), a binding there is an error naming the node. */
static void test_nodes_not_in_the_input(void **state)
{
	(void)state;
	struct built b;
	pp_pod_info pi;

	build(&b, NODE("n1") "," POD("p", "", "", "\"phase\":\"Pending\",\"nominatedNodeName\":\"n9\""));
	assert_int_equal(b.r, 0);
	assert_int_equal(b.nwarnings, 1);
	assert_non_null(strstr(b.messages, "status.nominatedNodeName: node n9 is not in the input, ignored"));
	assert_int_equal(pp_cluster_pod_info(b.m.cluster, "default", "p", &pi), 0);
	assert_null(pi.nominated_node_name);
	unbuild(&b);

	build(&b, NODE("n1") "," POD("q", "", ",\"nodeName\":\"n9\"", RUNNING));
	assert_int_equal(b.r, -EINVAL);
	assert_non_null(strstr(b.messages, "pods/default/q: spec.nodeName: node n9 is not in the input"));
	unbuild(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_and_finished_pods),
		cmocka_unit_test(test_admitted_priority_kept),
		cmocka_unit_test(test_nodes_not_in_the_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
