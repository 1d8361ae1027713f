/* SPDX-License-Identifier: MIT */
/*
 * The live model as preemptd keeps it (the scheduling queue, controller/model's cluster over it),
 * for the unit tests that feed it watch events (objects.h) and read pods back: the clock it starts
 * at, the status fragments put_pod takes, and where the library's cluster then has a pod. Static
 * functions: include it from one test file, after <cmocka.h>.
 */
#ifndef TESTS_CONTROLLER_LIVE_MODEL_H
#define TESTS_CONTROLLER_LIVE_MODEL_H

#include "cluster.h"
#include "queue.h"

#define S 1000000000LL
#define T0 (1714557600LL * S) /* 2024-05-01T10:00:00Z, the creationTimestamp put_pod writes */

/* put_pod's spec_extra and status fragments */
#define BOUND(node) "\"nodeName\":\"" node "\""
#define RUNNING "\"phase\":\"Running\",\"startTime\":\"2024-05-01T09:00:00Z\""
#define PENDING "\"phase\":\"Pending\""

/* A queue at T0 and a cluster over it that schedules the pods of schedulerName "preemptd". */
__attribute__((unused))
static void live_model_new(queue **q, cluster **c)
{
	cluster_opts co = { .scheduler_name = "preemptd" };
	assert_int_equal(queue_new(NULL, T0, q), 0);
	assert_int_equal(cluster_new(*q, &co, c), 0);
}

__attribute__((unused))
static void live_model_free(queue *q, cluster *c)
{
	cluster_free(c);
	queue_free(q);
}

/* The node of pod default/name in the library's cluster: "" pending, "(absent)" not in it. */
__attribute__((unused))
static const char *node_of(queue *q, const char *name)
{
	pp_pod_info pi;
	if (pp_cluster_pod_info(queue_cluster(q), "default", name, &pi) < 0)
		return "(absent)";
	return pi.node_name ? pi.node_name : "";
}

/* The node pod default/name is nominated to, the same way. */
__attribute__((unused))
static const char *nominated_of(queue *q, const char *name)
{
	pp_pod_info pi;
	if (pp_cluster_pod_info(queue_cluster(q), "default", name, &pi) < 0)
		return "(absent)";
	return pi.nominated_node_name ? pi.nominated_node_name : "";
}

#endif
