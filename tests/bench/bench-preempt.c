/* Preemption latency in the scheduler_perf "PreemptionBasic" shape (reference §8.1): nodes with
 * 4 cpu / 32Gi / 110 pods, each running 4 priority-0 pods of 900m / 500Mi; preemptors one after
 * the other, each decision applied (victims deleted, preemptor bound) before the next.
 *  - basic:  every preemptor has priority 10 and asks 3000m / 500Mi (scheduler_perf's shape);
 *  - varied: every preemptor has its own shape (priority 10 + d, 1000..3500m, 100..1100Mi), so
 *            results of earlier decisions (pcache.h) cannot be reused.
 * Each decision is timed three ways on the same cluster state:
 *  - warm: as a caller sees it, the per-node result cache filled by the previous decision;
 *  - cold: the same decision again right after pp__pcache_reset() (as if every node had changed);
 *  - full: the straightforward simulation of preempt-sim.h (kube's algorithm: per-node pod lists,
 *          remove all lower-priority pods, re-run every filter per reprieve step, sort, PDB split,
 *          pick), on a sample of the decisions.
 * All three must agree on node and victims. Usage: bench-preempt [--quick] (500 nodes only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcache.h" /* pp__pcache_reset: the cold measurement */
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
	size_t w = sim_pick(&whole, cand, nc, NULL);
	*ret_victims = cand[w].n_victims;
	return nodes[cand[w].node].name;
}

static bool same_decision(const pp_preemption *a, const pp_preemption *b)
{
	if (pp_preemption_outcome(a) != pp_preemption_outcome(b) || strcmp(pp_preemption_node(a), pp_preemption_node(b)) ||
	    pp_preemption_victim_count(a) != pp_preemption_victim_count(b))
		return false;
	for (size_t v = 0; v < pp_preemption_victim_count(a); v++)
		if (strcmp(pp_preemption_victim(a, v)->name, pp_preemption_victim(b, v)->name))
			return false;
	return true;
}

static pp_preemption *timed_preempt(pp_cluster *c, const char *name, const pp_preempt_options *opts, double *us)
{
	pp_preemption *res = NULL;
	pp_err err = { "" };
	double t0 = now_us();
	int r = pp_cluster_preempt(c, "default", name, opts, &res, &err);
	*us = now_us() - t0;
	if (r < 0 || pp_preemption_outcome(res) != PP_OUTCOME_PREEMPT) {
		fprintf(stderr, "%s: unexpected result: %s\n", name, r < 0 ? err.msg : pp_preemption_reason(res));
		abort();
	}
	return res;
}

enum workload { BASIC, VARIED };

static void run(enum workload w, size_t n_nodes, size_t n_decisions, size_t sim_every)
{
	struct bench_node *nodes = calloc(n_nodes, sizeof(*nodes));
	struct sim_cand *cand = malloc(n_nodes * sizeof(*cand));
	pp_cluster *c = NULL;
	pp_err err = { "" };
	double *warm = malloc(n_decisions * sizeof(double)), *cold = malloc(n_decisions * sizeof(double)),
	       *full = malloc(n_decisions * sizeof(double));
	size_t n_full = 0, mismatches = 0;
	double build_start = now_us();

	if (!nodes || !cand || !warm || !cold || !full || pp_cluster_new(&c) < 0)
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
	/* Each varied preemptor's requests live as long as its pod spec (bound pods keep pointing
	 * to them in nodes[]). */
	pp_resource(*varied_req)[2] = calloc(n_decisions, sizeof(*varied_req));
	if (!varied_req)
		abort();

	for (size_t d = 0; d < n_decisions; d++) {
		char name[32];
		snprintf(name, sizeof(name), "high-%zu", d);
		pp_pod_spec pre = { .namespace_ = "default", .name = name, .priority = 10, .requests = high_req,
			            .n_requests = 2, .has_start_time = false, .termination_grace_period_s = 0 };
		if (w == VARIED) {
			/* distinct priority and requests each time; never fits without preemption */
			varied_req[d][0] = (pp_resource){ "cpu", 1000 + (int64_t)((d * 7919) % 2501) };
			varied_req[d][1] = (pp_resource){ "memory", (100 + (int64_t)((d * 104729) % 1001)) * MI };
			pre.requests = varied_req[d];
			pre.priority = 10 + (int32_t)d;
		}
		if (pp_cluster_add_pod(c, &pre, &err) < 0)
			abort();
		pp_preempt_options opts = { .now_ns = 1000000 + (int64_t)d };

		pp_preemption *res = timed_preempt(c, name, &opts, &warm[d]);
		pp__pcache_reset(c);
		pp_preemption *cres = timed_preempt(c, name, &opts, &cold[d]);
		if (!same_decision(res, cres))
			mismatches++;
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
		pp_preemption_free(cres);
	}

	double wmed = pct(warm, n_decisions, 0.5), wp99 = pct(warm, n_decisions, 0.99);
	double cmed = pct(cold, n_decisions, 0.5), cp99 = pct(cold, n_decisions, 0.99);
	double smed = pct(full, n_full, 0.5), sp99 = pct(full, n_full, 0.99);
	printf("| %-6s | %5zu | %6zu | %7.1f | %7.1f | %7.1f | %7.1f | %4zu | %8.1f | %8.1f | %6.0fx | %6.0fx | %s |\n",
	       w == BASIC ? "basic" : "varied", n_nodes, n_nodes * PODS_PER_NODE, wmed, wp99, cmed, cp99, n_full, smed, sp99,
	       smed / cmed, smed / wmed, mismatches ? "MISMATCH" : "identical");
	fflush(stdout);
	fprintf(stderr, "  (%s, %zu nodes: cluster built in %.1f ms; %zu decisions timed warm and cold, %zu simulated)\n",
	        w == BASIC ? "basic" : "varied", n_nodes, build_ms, n_decisions, n_full);
	free(nodes);
	free(cand);
	free(warm);
	free(cold);
	free(full);
	free(varied_req);
	pp_cluster_free(c);
	if (mismatches)
		exit(1);
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	printf("PreemptionBasic: nodes 4 cpu/32Gi/110 pods, 4 x (900m, 500Mi, prio 0) each; preemptors: basic = prio 10\n"
	       "(3000m, 500Mi) each; varied = each its own priority and requests (1000..3500m, 100..1100Mi).\n"
	       "Microseconds per preemption decision, each decision applied before the next. warm: per-node result\n"
	       "cache as left by the previous decision; cold: same decision after invalidating it; full: simulation.\n\n");
	printf("| load   | nodes |  pods  | warm med | warm p99 | cold med | cold p99 | sim n | full med | full p99 | full/cold | full/warm | decisions |\n");
	printf("|--------|------:|-------:|--------:|--------:|--------:|--------:|-----:|---------:|---------:|-------:|-------:|-----------|\n");
	run(BASIC, 500, 500, 5);
	run(VARIED, 500, 500, 5);
	if (!quick) {
		run(BASIC, 5000, 2000, 40);
		run(VARIED, 5000, 2000, 40);
	}
	return 0;
}
