/*
 * Scheduler throughput in the shapes of kube-scheduler's scheduler_perf:
 *   PreemptionBasic   nodes of 4 cpu / 32Gi / 110 pods, each running 4 priority-0 pods of
 *                     900m / 500Mi (terminationGracePeriodSeconds 0, as pod-low-priority.yaml),
 *                     then one preemptor per node (500 / 5000) of priority 10 asking 3000m / 500Mi,
 *                     scheduled to completion (preempt, victims gone, bind) in simulated time;
 *   SchedulingBasic   5000 nodes, 1000 initial pods then 10000 pods of 100m / 500Mi that fit.
 * Reports wall time, preemptions/s, pods/s, and heap bytes per node and per pod (mallinfo2).
 * Usage: bench-schedule [--quick]   (--quick: 500 nodes only)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preempt.h"

#define MI (1024LL * 1024)
#define GI (1024LL * MI)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

static void die(const char *what, const pp_err *err)
{
	fprintf(stderr, "bench-schedule: %s: %s\n", what, err->msg);
	exit(1);
}

static void add_nodes(pp_cluster *c, int n)
{
	pp_resource alloc[] = { { "cpu", 4000 }, { "memory", 32 * GI }, { "pods", 110 } };
	pp_err err;
	for (int i = 0; i < n; i++) {
		char name[32], host[32];
		snprintf(name, sizeof(name), "node-%05d", i);
		snprintf(host, sizeof(host), "%s", name);
		pp_label labels[] = { { "kubernetes.io/hostname", host } };
		pp_node_spec s = { .name = name, .labels = labels, .n_labels = 1, .allocatable = alloc, .n_allocatable = 3 };
		if (pp_cluster_add_node(c, &s, &err) < 0)
			die("add node", &err);
	}
}

static void make_pod(pp_pod_spec *s, char *name, size_t size, const char *prefix, int i, int32_t prio,
                     const pp_resource *req, const char *node)
{
	snprintf(name, size, "%s-%06d", prefix, i);
	*s = (pp_pod_spec){ .namespace_ = "default", .name = name, .priority = prio, .requests = req, .n_requests = 2,
	                    .node_name = node, .has_start_time = node != NULL, .start_time_ns = (int64_t)i * 1000000000,
	                    .termination_grace_period_s = 0 };
}

struct counts {
	size_t binds, nominations;
};

static void count(const pp_sched_event *ev, void *ud)
{
	struct counts *k = ud;
	if (ev->kind == PP_SCHED_BIND)
		k->binds++;
	else if (ev->kind == PP_SCHED_NOMINATE)
		k->nominations++;
}

static void preemption_basic(int nodes)
{
	pp_cluster *c = NULL;
	pp_sched *s = NULL;
	pp_err err;
	struct counts k = { 0, 0 };
	pp_resource low[] = { { "cpu", 900 }, { "memory", 500 * MI } };
	pp_resource high[] = { { "cpu", 3000 }, { "memory", 500 * MI } };
	char name[64], node[32];

	size_t h0 = heap_used();
	if (pp_cluster_new(&c) < 0)
		exit(1);
	add_nodes(c, nodes);
	size_t h1 = heap_used();
	for (int i = 0; i < nodes * 4; i++) {
		pp_pod_spec p;
		snprintf(node, sizeof(node), "node-%05d", i / 4);
		make_pod(&p, name, sizeof(name), "low", i, 0, low, node);
		if (pp_cluster_add_pod(c, &p, &err) < 0)
			die("add pod", &err);
	}
	size_t h2 = heap_used();
	if (pp_sched_new(c, NULL, 0, count, &k, &s, &err) < 0)
		die("pp_sched_new", &err);
	for (int i = 0; i < nodes; i++) {
		pp_pod_spec p;
		make_pod(&p, name, sizeof(name), "high", i, 10, high, NULL);
		if (pp_sched_add_pod(s, &p, &err) < 0)
			die("add preemptor", &err);
	}
	double t0 = now_s();
	int r = pp_sched_run(s, INT64_MAX, &err);
	double t = now_s() - t0;
	if (r < 0)
		die("pp_sched_run", &err);
	pp_sched_stats st;
	pp_sched_get_stats(s, &st);
	printf("PreemptionBasic/%dNodes: %d low pods, %d preemptors: %zu nominations, %zu bound, %zu pending, "
	       "%llu cycles; wall %.3f s, %.0f preemptions/s, %.0f preemptors scheduled/s, %.1f us/cycle; "
	       "simulated %.0f s\n",
	       nodes, nodes * 4, nodes, k.nominations, k.binds, st.active + st.backoff + st.unschedulable,
	       (unsigned long long)st.cycles, t, (double)k.nominations / t, (double)k.binds / t,
	       t * 1e6 / (double)st.cycles, (double)pp_sched_now(s) / 1e9);
	printf("  memory: %.0f bytes/node (empty), %.0f bytes/bound pod\n", (double)(h1 - h0) / nodes,
	       (double)(h2 - h1) / (nodes * 4));
	if (k.binds != (size_t)nodes) {
		fprintf(stderr, "bench-schedule: expected %d binds, got %zu\n", nodes, k.binds);
		exit(1);
	}
	pp_sched_free(s);
}

static void scheduling_basic(int nodes, int init, int measured)
{
	pp_cluster *c = NULL;
	pp_sched *s = NULL;
	pp_err err;
	struct counts k = { 0, 0 };
	pp_resource req[] = { { "cpu", 100 }, { "memory", 500 * MI } };
	char name[64], node[32];

	if (pp_cluster_new(&c) < 0)
		exit(1);
	add_nodes(c, nodes);
	for (int i = 0; i < init; i++) {
		pp_pod_spec p;
		snprintf(node, sizeof(node), "node-%05d", i % nodes);
		make_pod(&p, name, sizeof(name), "init", i, 0, req, node);
		if (pp_cluster_add_pod(c, &p, &err) < 0)
			die("add pod", &err);
	}
	if (pp_sched_new(c, NULL, 0, count, &k, &s, &err) < 0)
		die("pp_sched_new", &err);
	size_t h0 = heap_used();
	for (int i = 0; i < measured; i++) {
		pp_pod_spec p;
		make_pod(&p, name, sizeof(name), "pod", i, 0, req, NULL);
		if (pp_sched_add_pod(s, &p, &err) < 0)
			die("add pod", &err);
	}
	size_t h1 = heap_used();
	double t0 = now_s();
	int r = pp_sched_run(s, INT64_MAX, &err);
	double t = now_s() - t0;
	if (r < 0)
		die("pp_sched_run", &err);
	printf("SchedulingBasic/%dNodes_%dPods: %zu bound; wall %.3f s, %.0f pods/s\n", nodes, measured, k.binds, t,
	       (double)k.binds / t);
	printf("  memory: %.0f bytes/pending pod (cluster + queue)\n", (double)(h1 - h0) / measured);
	pp_sched_free(s);
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	preemption_basic(500);
	if (!quick)
		preemption_basic(5000);
	scheduling_basic(quick ? 500 : 5000, 1000, quick ? 2000 : 10000);
	return 0;
}
