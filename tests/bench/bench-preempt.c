/* Preemption latency in the scheduler_perf "PreemptionBasic" shape (reference §8.1): nodes with
 * 4 cpu / 32Gi / 110 pods, each running 4 priority-0 pods of 900m / 500Mi; preemptors of
 * priority 10 asking 3000m / 500Mi, one after the other, each decision applied (victims deleted,
 * preemptor bound) before the next. libpreempt's decision is timed on every preemptor; a full
 * simulation (kube's algorithm: per-node pod lists, remove all lower-priority pods, re-run every
 * filter per reprieve step, sort, PDB split, pick) is timed on a sample in the same run, and
 * both must agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/preempt-sim.h"

#define PODS_PER_NODE 4
#define MI (1024LL * 1024)

struct bench_node {
	char name[24];
	pp_label label;
	pp_node_spec spec;
	pp_pod_spec pods[PODS_PER_NODE + 4];
	char pod_names[PODS_PER_NODE + 4][32];
	size_t n_pods;
};

static const pp_resource node_alloc[] = { { "cpu", 4000 }, { "memory", 32 * 1024 * MI }, { "pods", 110 } };
static const pp_resource low_req[] = { { "cpu", 900 }, { "memory", 500 * MI } };
static const pp_resource high_req[] = { { "cpu", 3000 }, { "memory", 500 * MI } };

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* The full simulation over per-node pod lists, as NodeInfo holds them. */
static const char *full_simulation(struct bench_node *nodes, size_t n, const pp_pod_spec *pre, struct sim_cand *cand,
                                   size_t *ret_victims)
{
	size_t nc = 0;
	bool present[PODS_PER_NODE + 4];
	for (size_t i = 0; i < n; i++) {
		struct sim_cluster sc = { &nodes[i].spec, 1, nodes[i].pods, nodes[i].n_pods, NULL, 0 };
		for (size_t k = 0; k < nodes[i].n_pods; k++)
			present[k] = true;
		if (sim_filter(&sc, 0, pre, present) == SIM_FIT)
			return nodes[i].name; /* fits without preemption (nodes are in name order) */
	}
	for (size_t i = 0; i < n; i++) {
		struct sim_cluster sc = { &nodes[i].spec, 1, nodes[i].pods, nodes[i].n_pods, NULL, 0 };
		for (size_t k = 0; k < nodes[i].n_pods; k++)
			present[k] = true;
		if (sim_filter(&sc, 0, pre, present) != SIM_RESOLVABLE)
			continue;
		if (sim_select_victims(&sc, 0, pre, present, &cand[nc])) {
			cand[nc].node = i; /* index into nodes[], resolved below */
			nc++;
		}
	}
	if (nc == 0)
		return NULL;
	/* sim_pick compares node names through the cluster's node array: give it all nodes. */
	static pp_node_spec *all;
	static size_t all_n;
	if (all_n < n) {
		free(all);
		all = malloc(n * sizeof(*all));
		all_n = n;
	}
	for (size_t i = 0; i < n; i++)
		all[i] = nodes[i].spec;
	struct sim_cluster whole = { all, n, NULL, 0, NULL, 0 };
	size_t w = sim_pick(&whole, cand, nc);
	*ret_victims = cand[w].n_victims;
	return nodes[cand[w].node].name;
}

static void run(size_t n_nodes, size_t n_decisions, size_t sim_every)
{
	struct bench_node *nodes = calloc(n_nodes, sizeof(*nodes));
	struct sim_cand *cand = malloc(n_nodes * sizeof(*cand));
	pp_cluster *c = NULL;
	pp_err err = { "" };
	double *fast = malloc(n_decisions * sizeof(double)), *full = malloc(n_decisions * sizeof(double));
	size_t n_fast = 0, n_full = 0, mismatches = 0;
	double build_start = now_us();

	if (!nodes || !cand || !fast || !full || pp_cluster_new(&c) < 0)
		abort();
	for (size_t i = 0; i < n_nodes; i++) {
		struct bench_node *b = &nodes[i];
		snprintf(b->name, sizeof(b->name), "node-%06zu", i);
		b->label = (pp_label){ "kubernetes.io/hostname", b->name };
		b->spec = (pp_node_spec){ .name = b->name, .labels = &b->label, .n_labels = 1, .allocatable = node_alloc,
			                  .n_allocatable = 3 };
		if (pp_cluster_add_node(c, &b->spec, &err) < 0)
			abort();
		for (size_t j = 0; j < PODS_PER_NODE; j++) {
			snprintf(b->pod_names[j], sizeof(b->pod_names[j]), "low-%zu-%zu", i, j);
			b->pods[j] = (pp_pod_spec){ .namespace_ = "default", .name = b->pod_names[j], .priority = 0,
				                    .requests = low_req, .n_requests = 2, .node_name = b->name,
				                    .has_start_time = true, .start_time_ns = (int64_t)(1000 + j),
				                    .termination_grace_period_s = 0 };
			if (pp_cluster_add_pod(c, &b->pods[j], &err) < 0)
				abort();
		}
		b->n_pods = PODS_PER_NODE;
	}
	double build_ms = (now_us() - build_start) / 1000;

	for (size_t d = 0; d < n_decisions; d++) {
		char name[32];
		snprintf(name, sizeof(name), "high-%zu", d);
		pp_pod_spec pre = { .namespace_ = "default", .name = name, .priority = 10, .requests = high_req,
			            .n_requests = 2, .has_start_time = false, .termination_grace_period_s = 0 };
		if (pp_cluster_add_pod(c, &pre, &err) < 0)
			abort();
		pp_preempt_options opts = { .now_ns = 1000000 };
		pp_preemption *res = NULL;
		double t0 = now_us();
		int r = pp_cluster_preempt(c, "default", name, &opts, &res, &err);
		double t1 = now_us();
		if (r < 0 || pp_preemption_outcome(res) != PP_OUTCOME_PREEMPT) {
			fprintf(stderr, "decision %zu: unexpected result: %s\n", d, r < 0 ? err.msg : pp_preemption_reason(res));
			abort();
		}
		fast[n_fast++] = t1 - t0;
		const char *node = pp_preemption_node(res);
		size_t idx = (size_t)atol(node + 5);

		if (d % sim_every == 0) {
			size_t sv = 0;
			sim_now = opts.now_ns;
			double s0 = now_us();
			const char *snode = full_simulation(nodes, n_nodes, &pre, cand, &sv);
			double s1 = now_us();
			full[n_full++] = s1 - s0;
			if (!snode || strcmp(snode, node) != 0 || sv != pp_preemption_victim_count(res))
				mismatches++;
		}

		/* Apply: delete the victims, bind the preemptor. */
		struct bench_node *b = &nodes[idx];
		for (size_t v = 0; v < pp_preemption_victim_count(res); v++) {
			const pp_victim *vi = pp_preemption_victim(res, v);
			for (size_t k = 0; k < b->n_pods; k++)
				if (strcmp(b->pods[k].name, vi->name) == 0) {
					b->pods[k] = b->pods[--b->n_pods];
					memcpy(b->pod_names[k], b->pod_names[b->n_pods], sizeof(b->pod_names[k]));
					b->pods[k].name = b->pod_names[k];
					break;
				}
			if (pp_cluster_remove_pod(c, vi->namespace_, vi->name, &err) < 0)
				abort();
		}
		if (pp_cluster_bind_pod(c, "default", name, node, &err) < 0)
			abort();
		snprintf(b->pod_names[b->n_pods], sizeof(b->pod_names[0]), "%s", name);
		b->pods[b->n_pods] = pre;
		b->pods[b->n_pods].name = b->pod_names[b->n_pods];
		b->pods[b->n_pods].node_name = b->name;
		b->pods[b->n_pods].has_start_time = true;
		b->pods[b->n_pods].start_time_ns = opts.now_ns;
		b->n_pods++;
		pp_preemption_free(res);
	}

	double fmed = pct(fast, n_fast, 0.5), fp99 = pct(fast, n_fast, 0.99);
	double smed = pct(full, n_full, 0.5), sp99 = pct(full, n_full, 0.99);
	printf("| %5zu | %6zu | %8.1f | %8.1f | %6zu | %10.1f | %10.1f | %7.0fx | %s |\n", n_nodes, n_nodes * PODS_PER_NODE,
	       fmed, fp99, n_full, smed, sp99, smed / fmed, mismatches ? "MISMATCH" : "identical");
	fprintf(stderr, "  (%zu nodes: cluster built in %.1f ms; %zu fast decisions, %zu simulated)\n", n_nodes, build_ms,
	        n_fast, n_full);
	free(nodes);
	free(cand);
	free(fast);
	free(full);
	pp_cluster_free(c);
	if (mismatches)
		exit(1);
}

int main(void)
{
	printf("PreemptionBasic: nodes 4 cpu/32Gi/110 pods, 4 x (900m, 500Mi, prio 0) each; preemptor prio 10 (3000m, 500Mi)\n");
	printf("times per preemption decision in microseconds; each decision applied before the next\n\n");
	printf("| nodes |  pods  | fast med | fast p99 | sim. n | full med   | full p99   | speedup  | decisions |\n");
	printf("|------:|-------:|---------:|---------:|-------:|-----------:|-----------:|---------:|-----------|\n");
	run(500, 500, 5);
	run(5000, 2000, 40);
	return 0;
}
