/* SPDX-License-Identifier: MIT */
/*
 * /healthz, /livez, /readyz and /metrics. Metric names are kube-scheduler's where they mean the
 * same (scheduler_*, with profile = the scheduler name), preemptd_* for the rest.
 */
#include <string.h>

#include "preemptd-state.h"

static const char *const result_names[RESULTS] = { "scheduled", "unschedulable", "error" };

static void attempts(preemptd *d, FILE *f)
{
	char l[256];

	metrics_family(f, "scheduler_schedule_attempts_total", "counter",
	               "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be "
	               "scheduled, while 'error' means an internal scheduler problem.");
	for (int i = 0; i < RESULTS; i++)
		metrics_sample(f, "scheduler_schedule_attempts_total",
		               metrics_labels(l, sizeof(l), "profile", d->cfg->scheduler_name, "result", result_names[i], (const char *)NULL),
		               (double)d->attempts[i]);
	metrics_family(f, "scheduler_scheduling_attempt_duration_seconds", "histogram",
	               "Scheduling attempt latency in seconds (scheduling algorithm + binding)");
	for (int i = 0; i < RESULTS; i++)
		metrics_histogram(f, "scheduler_scheduling_attempt_duration_seconds",
		                  metrics_labels(l, sizeof(l), "profile", d->cfg->scheduler_name, "result", result_names[i],
		                                 (const char *)NULL),
		                  &d->attempt_duration[i]);
	metrics_family(f, "scheduler_pod_scheduling_attempts", "histogram",
	               "Number of attempts to successfully schedule a pod.");
	metrics_histogram(f, "scheduler_pod_scheduling_attempts", NULL, &d->pod_attempts);
	/* libpreempt runs Filter, PostFilter and Score as one call: only Bind, a request of its own,
	 * is timed apart (docs/kube-scheduler-operators.md) */
	metrics_family(f, "scheduler_framework_extension_point_duration_seconds", "histogram",
	               "Latency for running all plugins of a specific extension point.");
	static const char *const bind_status[2] = { "Success", "Error" };
	for (int i = 0; i < 2; i++)
		metrics_histogram(f, "scheduler_framework_extension_point_duration_seconds",
		                  metrics_labels(l, sizeof(l), "extension_point", "Bind", "profile", d->cfg->scheduler_name,
		                                 "status", bind_status[i], (const char *)NULL),
		                  &d->bind_duration[i]);
	metrics_family(f, "scheduler_pod_scheduling_sli_duration_seconds", "histogram",
	               "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and "
	               "might involve multiple scheduling attempts.");
	for (int i = 0; i < SLI_ATTEMPTS_MAX; i++) {
		char n[16];
		if (!d->sli[i].count)
			continue; /* kube's vector has a series per attempts value seen */
		snprintf(n, sizeof(n), "%d", i + 1);
		metrics_histogram(f, "scheduler_pod_scheduling_sli_duration_seconds",
		                  metrics_labels(l, sizeof(l), "attempts", n, (const char *)NULL), &d->sli[i]);
	}
	metrics_family(f, "scheduler_preemption_attempts_total", "counter", "Total preemption attempts in the cluster till now");
	metrics_sample(f, "scheduler_preemption_attempts_total", NULL, (double)d->preemption_attempts);
	metrics_family(f, "scheduler_preemption_victims", "histogram", "Number of selected preemption victims");
	metrics_histogram(f, "scheduler_preemption_victims", NULL, &d->victims);
}

static void pending(preemptd *d, FILE *f)
{
	queue_counts qc;
	cluster_counts cc;
	char l[128];

	queue_get_counts(d->queue, &qc);
	cluster_get_counts(d->cluster, &cc);
	metrics_family(f, "scheduler_pending_pods", "gauge",
	               "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' "
	               "means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods; "
	               "'gated' means number of pods waiting for their scheduling gates.");
	metrics_sample(f, "scheduler_pending_pods", metrics_labels(l, sizeof(l), "queue", "active", (const char *)NULL), (double)qc.active);
	metrics_sample(f, "scheduler_pending_pods", metrics_labels(l, sizeof(l), "queue", "backoff", (const char *)NULL), (double)qc.backoff);
	metrics_sample(f, "scheduler_pending_pods", metrics_labels(l, sizeof(l), "queue", "unschedulable", (const char *)NULL),
	               (double)qc.unschedulable);
	metrics_sample(f, "scheduler_pending_pods", metrics_labels(l, sizeof(l), "queue", "gated", (const char *)NULL), (double)cc.gated);
	metrics_family(f, "scheduler_queue_incoming_pods_total", "counter",
	               "Number of pods added to scheduling queues by event and queue type.");
	for (int qi = 0; qi < PP_SCHED_QUEUE_COUNT; qi++)
		for (int e = 0; e < PP_SCHED_QE_COUNT; e++) {
			uint64_t n = queue_incoming(d->queue, (pp_sched_queue)qi, (pp_sched_queue_event)e);
			if (n) /* kube's vector has a series per pair seen */
				metrics_sample(f, "scheduler_queue_incoming_pods_total",
				               metrics_labels(l, sizeof(l), "event", pp_sched_queue_event_name((pp_sched_queue_event)e),
				                              "queue", pp_sched_queue_name((pp_sched_queue)qi), (const char *)NULL),
				               (double)n);
		}
	metrics_family(f, "preemptd_cluster_objects", "gauge", "Objects in preemptd's model of the cluster, by kind.");
	const size_t n[] = { cc.classes, cc.nodes, cc.pdbs, cc.pods };
	for (int k = 0; k < CLUSTER_KINDS; k++)
		metrics_sample(f, "preemptd_cluster_objects", metrics_labels(l, sizeof(l), "kind", cluster_kind_name(k), (const char *)NULL),
		               (double)n[k]);
	metrics_family(f, "preemptd_assumed_pods", "gauge",
	               "Pods with a decision of preemptd (binding, nomination, deletion) the watch does not show yet.");
	metrics_sample(f, "preemptd_assumed_pods", NULL, (double)cc.assumed);
}

static void watches(preemptd *d, FILE *f)
{
	watch_stats ws;
	char l[128];

	watch_get_stats(d->watch, &ws);
	metrics_family(f, "preemptd_caches_synced", "gauge", "1 once every watched kind has been listed.");
	metrics_sample(f, "preemptd_caches_synced", NULL, d->synced ? 1 : 0);
	static const struct {
		const char *name, *help;
		size_t off;
	} fam[] = {
		{ "preemptd_watch_lists_total", "Lists completed, the first and every relist, by resource.",
		  offsetof(watch_stats, lists) },
		{ "preemptd_watch_restarts_total", "Watches restarted after a failure or a 410 Gone, by resource.",
		  offsetof(watch_stats, restarts) },
		{ "preemptd_watch_events_total", "Watch events applied to the model, by resource.",
		  offsetof(watch_stats, events) },
		{ "preemptd_objects_refused_total", "Objects refused (undecodable or inadmissible) and skipped, by resource.",
		  offsetof(watch_stats, refused) },
	};
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		const uint64_t *v = (const uint64_t *)((const char *)&ws + fam[i].off);
		metrics_family(f, fam[i].name, "counter", fam[i].help);
		for (int k = 0; k < CLUSTER_KINDS; k++)
			metrics_sample(f, fam[i].name, metrics_labels(l, sizeof(l), "resource", cluster_kind_name(k), (const char *)NULL),
			               (double)v[k]);
	}
}

struct code_ctx {
	FILE *f;
	bool errors;
};

static void code(void *userdata, const char *verb, long status, uint64_t n)
{
	struct code_ctx *c = userdata;
	char l[128], s[16];

	if (c->errors && status >= 200 && status < 300)
		return;
	snprintf(s, sizeof(s), "%ld", status);
	metrics_sample(c->f, c->errors ? "preemptd_api_errors_total" : "preemptd_api_requests_total",
	               metrics_labels(l, sizeof(l), "verb", verb, "code", status ? s : "none", (const char *)NULL), (double)n);
}

static void writes(preemptd *d, FILE *f)
{
	writer_stats ws;
	act_stats as;
	char l[128];
	struct code_ctx c = { f, false };

	writer_get_stats(act_writer(d->act), &ws);
	act_get_stats(d->act, &as);
	metrics_family(f, "preemptd_api_requests_total", "counter",
	               "API writes answered, by verb and HTTP status (code=none: no answer came).");
	writer_foreach_code(act_writer(d->act), code, &c);
	metrics_family(f, "preemptd_api_errors_total", "counter", "API writes that failed, by verb and HTTP status.");
	c.errors = true;
	writer_foreach_code(act_writer(d->act), code, &c);
	metrics_family(f, "preemptd_write_retries_total", "counter", "API writes sent again after a 5xx, a 429 or no answer.");
	metrics_sample(f, "preemptd_write_retries_total", NULL, (double)ws.retries);
	metrics_family(f, "preemptd_writes_dropped_total", "counter",
	               "API writes not sent: made obsolete by the watch, abandoned (leadership lost, stopping), or "
	               "Events dropped while 1000 writes were unfinished (queue_full).");
	metrics_sample(f, "preemptd_writes_dropped_total", metrics_labels(l, sizeof(l), "reason", "obsolete", (const char *)NULL),
	               (double)ws.obsolete);
	metrics_sample(f, "preemptd_writes_dropped_total", metrics_labels(l, sizeof(l), "reason", "abandoned", (const char *)NULL),
	               (double)ws.abandoned);
	metrics_sample(f, "preemptd_writes_dropped_total", metrics_labels(l, sizeof(l), "reason", "queue_full", (const char *)NULL),
	               (double)ws.queue_full);
	metrics_family(f, "preemptd_writes_in_flight", "gauge", "API writes sent and not answered yet.");
	metrics_sample(f, "preemptd_writes_in_flight", NULL, (double)ws.in_flight);
	metrics_family(f, "preemptd_bindings_total", "counter", "Bindings answered by the API server, by result.");
	metrics_sample(f, "preemptd_bindings_total", metrics_labels(l, sizeof(l), "result", "bound", (const char *)NULL), (double)as.bound);
	metrics_sample(f, "preemptd_bindings_total", metrics_labels(l, sizeof(l), "result", "conflict", (const char *)NULL),
	               (double)as.bind_conflicts);
	metrics_family(f, "preemptd_victims_deleted_total", "counter", "Preemption victims whose DELETE was accepted.");
	metrics_sample(f, "preemptd_victims_deleted_total", NULL, (double)as.victims_deleted);
}

static void leadership(preemptd *d, FILE *f)
{
	long t;
	char l[512];

	metrics_family(f, "preemptd_leader", "gauge",
	               "1 while this instance may schedule: it holds the Lease (or leader election is off).");
	metrics_sample(f, "preemptd_leader",
	               metrics_labels(l, sizeof(l), "lease",
	                              d->lease ? d->cfg->lease_name : "", "identity", d->identity, (const char *)NULL),
	               preemptd_may_write(d, &t) ? 1 : 0);
	if (d->lease) {
		lease_stats ls;
		/* client-go's tools/leaderelection/metrics.go, as kube-scheduler registers it */
		metrics_family(f, "leader_election_master_status", "gauge",
		               "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
		               "indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.");
		metrics_sample(f, "leader_election_master_status", metrics_labels(l, sizeof(l), "name", d->cfg->lease_name, (const char *)NULL),
		               lease_is_leader(d->lease) ? 1 : 0);
		lease_get_stats(d->lease, &ls);
		metrics_family(f, "preemptd_leader_transitions_total", "counter",
		               "Times this instance acquired (became leader) or lost the Lease.");
		metrics_sample(f, "preemptd_leader_transitions_total", metrics_labels(l, sizeof(l), "to", "leader", (const char *)NULL),
		               (double)ls.acquired);
		metrics_sample(f, "preemptd_leader_transitions_total", metrics_labels(l, sizeof(l), "to", "standby", (const char *)NULL),
		               (double)ls.lost);
		metrics_family(f, "preemptd_lease_failures_total", "counter", "Lease reads and writes that failed.");
		metrics_sample(f, "preemptd_lease_failures_total", NULL, (double)ls.failures);
	}
}

/* k8s.io/apiserver's healthz handleRootHealth: "[+]name ok" / "[-]name failed: reason withheld"
 * lines, verbose on request and always on failure, then "readyz check passed|failed". Checks:
 * kube-scheduler's readyz (shutdown, sched-handler-sync) and preemptd's own leaderElection (kube
 * has it on /healthz; preemptd stands by instead of exiting, so a stale Lease is "not ready"). */
static int readyz(preemptd *d, FILE *out, bool verbose)
{
	long t;
	const struct {
		const char *name;
		bool ok;
	} checks[] = {
		{ "shutdown", !d->stopping },
		{ "sched-handler-sync", d->synced },
		{ "leaderElection", !d->lease || !lease_is_leader(d->lease) || preemptd_may_write(d, &t) || d->stopping },
	};
	bool failed = false;

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		failed |= !checks[i].ok;
	if (!failed && !verbose) {
		fputs("ok", out);
		return 200;
	}
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		fprintf(out, checks[i].ok ? "[+]%s ok\n" : "[-]%s failed: reason withheld\n", checks[i].name);
	fprintf(out, "readyz check %s\n", failed ? "failed" : "passed");
	/* kube answers 500; 503 is what a probe and a load balancer read as "not now" */
	return failed ? 503 : 200;
}

int scrape_handler(void *userdata, const char *path, FILE *out, const char **content_type)
{
	preemptd *d = userdata;

	if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
		/* the loop answered: it is alive */
		fputs("ok\n", out);
		return 200;
	}
	if (!strcmp(path, "/readyz") || !strcmp(path, "/readyz?verbose"))
		return readyz(d, out, path[7] == '?');
	if (!strcmp(path, "/metrics")) {
		*content_type = "text/plain; version=0.0.4; charset=utf-8";
		attempts(d, out);
		pending(d, out);
		watches(d, out);
		writes(d, out);
		scrape_evictions(d, out);
		leadership(d, out);
		scrape_brakes(d, out);
		if (d->shadow)
			shadow_write_metrics(d->shadow, out, transport_readonly_refused(d->transport));
		return 200;
	}
	if (!strncmp(path, "/healthz?", 9) || !strncmp(path, "/livez?", 7)) {
		fputs("[+]ping ok\n", out);
		fprintf(out, "%.*s check passed\n", (int)(strchr(path, '?') - path - 1), path + 1);
		return 200;
	}
	fprintf(out, "not found: %s (/healthz, /livez, /readyz, /metrics)\n", path);
	return 404;
}
