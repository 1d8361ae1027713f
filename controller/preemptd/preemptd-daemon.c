/* SPDX-License-Identifier: MIT */
#include "preemptd-state.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "incluster.h"
#include "journal.h"
#include "clock.h"

#define CYCLE_BUDGET 256            /* cycles per turn of the loop: watch events are not starved */
#define TOKEN_REFRESH_USEC 60000000ULL
/* The Lease release may take at most the lease duration (a standby takes over by then anyway),
 * and never longer than this: systemd's TimeoutStopSec (20 s) must not kill us in the middle. */
#define STOP_GRACE_MAX_USEC 15000000ULL

/* kube-scheduler's buckets: ExponentialBuckets(0.001, 2, 15) and ExponentialBuckets(1, 2, 7). */
static const double attempt_bounds[] = { 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
	                                 0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384 };
static const double victim_bounds[] = { 1, 2, 4, 8, 16, 32, 64 };
/* scheduler_pod_scheduling_attempts: ExponentialBuckets(1, 2, 5); the extension points'
 * durations: ExponentialBuckets(0.0001, 2, 12) (pkg/scheduler/metrics/metrics.go). */
static const double pod_attempt_bounds[] = { 1, 2, 4, 8, 16 };
/* the SLI's ExponentialBuckets(0.01, 2, 20) */
static const double sli_bounds[] = { 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12,
	                             10.24, 20.48, 40.96, 81.92, 163.84, 327.68, 655.36, 1310.72, 2621.44, 5242.88 };
static const double extension_bounds[] = { 0.0001, 0.0002, 0.0004, 0.0008, 0.0016, 0.0032,
	                                   0.0064, 0.0128, 0.0256, 0.0512, 0.1024, 0.2048 };

bool preemptd_may_write(struct preemptd *d, long *ret_timeout_ms)
{
	*ret_timeout_ms = 0;
	if (d->stopping || d->shadow)
		return false; /* a shadow decides at the other scheduler's pace (shadow/), never here */
	return !d->lease || lease_may_write(d->lease, ret_timeout_ms);
}

static bool gate(void *userdata, long *ret_timeout_ms)
{
	return preemptd_may_write(userdata, ret_timeout_ms);
}

/* --- scheduling -------------------------------------------------------------------------------- */

static void poke(preemptd *d)
{
	(void)sd_event_source_set_enabled(d->sched, SD_EVENT_ONESHOT);
}

static void arm_due(preemptd *d)
{
	int64_t due = queue_next_due(d->queue), now = clock_wall_ns();
	uint64_t mono;

	if (due == INT64_MAX || sd_event_now(d->event, CLOCK_MONOTONIC, &mono) < 0) {
		(void)sd_event_source_set_enabled(d->due, SD_EVENT_OFF);
		return;
	}
	if (due <= now) {
		/* due already: a cycle, not a timer that would fire on every turn of the loop */
		(void)sd_event_source_set_enabled(d->due, SD_EVENT_OFF);
		poke(d);
		return;
	}
	uint64_t delay = (uint64_t)(due - now) / 1000;
	(void)sd_event_source_set_time(d->due, mono + delay);
	(void)sd_event_source_set_enabled(d->due, SD_EVENT_ONESHOT);
}

static void free_value(const char *key, void *value, void *userdata)
{
	(void)key;
	(void)userdata;
	free(value);
}

static void prune_first(const char *key, void *value, void *userdata)
{
	preemptd *d = userdata;
	const char *slash = strchr(key, '/');
	char ns[256];

	if (!slash || (size_t)(slash - key) >= sizeof(ns))
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - key), key);
	if (!cluster_pod_uid(d->cluster, ns, slash + 1)) /* gone before it was bound */
		free(objmap_remove(&d->first_attempt, key));
	(void)value;
}

/* The pod's first attempt, as kube's queue stamps QueuedPodInfo.InitialAttemptTimestamp at its
 * first pop: the SLI's start. */
static void note_first_attempt(preemptd *d, const decision *dc)
{
	char key[512];
	int64_t *t;

	snprintf(key, sizeof(key), "%s/%s", dc->pod.namespace_, dc->pod.name);
	if (objmap_get(&d->first_attempt, key) || !(t = malloc(sizeof(*t))))
		return;
	*t = dc->started_mono_ns;
	if (objmap_put(&d->first_attempt, key, t) < 0) {
		free(t);
		return;
	}
	if (++d->first_attempts_added % 1024 == 0)
		objmap_foreach(&d->first_attempt, prune_first, d);
}

/* A cycle's attempt is counted when it ends: an unschedulable one now, a bound one when its
 * binding is answered (binding_done), as schedule_one.go counts them (handleSchedulingFailure's
 * PodUnschedulable; the binding cycle's PodScheduled, or PodScheduleError when it fails). */
static void account(preemptd *d, const decision *dc)
{
	switch (dc->kind) {
	case DECISION_BIND:
		note_first_attempt(d, dc);
		return;
	case DECISION_PREEMPT:
		metrics_histogram_observe(&d->victims, (double)dc->n_victims);
		break;
	case DECISION_UNSCHEDULABLE:
	case DECISION_POSTPONED:
		break;
	default:
		return;
	}
	note_first_attempt(d, dc);
	d->attempts[RESULT_UNSCHEDULABLE]++;
	metrics_histogram_observe(&d->attempt_duration[RESULT_UNSCHEDULABLE], (double)dc->duration_ns / 1e9);
	/* every PostFilter run, helpful or not: DefaultPreemption.PostFilter's deferred
	 * metrics.PreemptionAttempts.Inc() */
	d->preemption_attempts++;
}

static void binding_done(void *userdata, const act_binding *b)
{
	preemptd *d = userdata;
	int64_t now = clock_mono_ns();
	int result = b->ok ? RESULT_SCHEDULED : RESULT_ERROR;

	d->attempts[result]++;
	metrics_histogram_observe(&d->attempt_duration[result], (double)(now - b->started_mono_ns) / 1e9);
	metrics_histogram_observe(&d->bind_duration[b->ok ? 0 : 1], (double)(now - b->sent_mono_ns) / 1e9);
	if (!b->ok)
		return;
	metrics_histogram_observe(&d->pod_attempts, (double)b->attempts);
	/* schedule_one.go's bindingCycle: PodSchedulingSLIDuration from the first attempt to the
	 * binding, by the attempts it took */
	char key[512];
	snprintf(key, sizeof(key), "%s/%s", b->namespace_, b->name);
	int64_t *first = objmap_remove(&d->first_attempt, key);
	if (first) {
		unsigned a = b->attempts < 1 ? 1 : b->attempts > SLI_ATTEMPTS_MAX ? SLI_ATTEMPTS_MAX : b->attempts;
		metrics_histogram_observe(&d->sli[a - 1], (double)(now - *first) / 1e9);
		free(first);
	}
}

/* What ends with time (a nomination past its deadline) is carried out like a cycle's decision. */
static void on_expired(const decision *dc, void *userdata)
{
	preemptd *d = userdata;

	act_decision(d->act, dc, clock_wall_ns());
}

/* Beyond kube-scheduler (issue 28): reservations that end, the budget, young pods spared. */
static int brakes(preemptd *d, const preemptd_config *cfg)
{
	int r = cycle_set_nomination_timeout(d->cycle, (int64_t)cfg->nomination_timeout_usec * 1000,
	                                     (int64_t)cfg->nomination_after_grace_usec * 1000);
	if (r >= 0)
		r = cycle_set_min_runtime(d->cycle, (int64_t)cfg->min_runtime_usec * 1000);
	if (r < 0 || (!cfg->max_victims_per_minute && !cfg->pool_label))
		return r;
	budget_opts bo = { .per_minute = cfg->max_victims_per_minute, .pool_label = cfg->pool_label,
		           .per_pool_per_minute = cfg->max_victims_per_pool };
	if ((r = budget_new(&bo, &d->budget)) >= 0)
		cycle_set_budget(d->cycle, d->budget);
	return r;
}

/* Cycles while activeQ has pods, a turn at a time. */
static int on_sched(sd_event_source *s, void *userdata)
{
	preemptd *d = userdata;
	pp_err err = { "" };
	long timeout;
	int r = 0;

	(void)s;
	if (d->stopping || !d->synced || !preemptd_may_write(d, &timeout))
		return 0;
	int64_t now = clock_wall_ns();
	if (!d->budget_restored) {
		/* the first turn this instance may write (a start, or a standby taking over): the last
		 * minute's victims as the cluster shows them count against the budget */
		if (cycle_restore_budget(d->cycle, now) < 0)
			journal_msg(LOG_ERR, "Preemption budget: out of memory counting the last minute's victims");
		d->budget_restored = true;
	}
	if (cycle_advance(d->cycle, now, on_expired, d, &err) < 0)
		journal_msg(LOG_ERR, "Scheduling queue: %s", err.msg);
	for (int i = 0; i < CYCLE_BUDGET; i++) {
		r = cycle_run_one(d->cycle, &d->decision, &err);
		if (r <= 0)
			break;
		if (d->decision.kind == DECISION_NONE)
			continue;
		account(d, &d->decision);
		act_decision(d->act, &d->decision, now);
	}
	if (r < 0) {
		d->attempts[RESULT_ERROR]++;
		journal_msg(LOG_ERR, "Scheduling cycle failed: %s", err.msg);
	}
	if (r > 0 && queue_has_active(d->queue))
		poke(d);
	arm_due(d);
	return 0;
}

/* After anything happened (watch events above all): is there work? */
static int on_post(sd_event_source *s, void *userdata)
{
	preemptd *d = userdata;

	(void)s;
	if (!d->synced && watch_synced(d->watch)) {
		journal_entry e;
		d->synced = true;
		journal_entry_init(&e, LOG_INFO, MSGID_WATCH);
		journal_entry_send(&e, "Caches synced: %s the pods of %s%s", d->shadow ? "shadowing" : "scheduling",
		                   d->shadow ? d->cfg->shadow_scheduler : d->cfg->scheduler_name,
		                   d->lease && !lease_is_leader(d->lease) ? " once this instance holds the Lease" : "");
		(void)sd_notify(0, "STATUS=Caches synced");
	}
	long timeout;
	if (!d->synced || !preemptd_may_write(d, &timeout))
		return 0; /* a standby keeps its model current and decides nothing */
	if (queue_has_active(d->queue))
		poke(d);
	else
		arm_due(d); /* an event may have sent a pod to backoffQ: its expiry is the next due time */
	return 0;
}

static int on_due(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	poke(userdata);
	return 0;
}

/* --- leadership -------------------------------------------------------------------------------- */

static void leadership(void *userdata, bool leader)
{
	preemptd *d = userdata;
	journal_entry e;

	journal_entry_init(&e, leader ? LOG_NOTICE : LOG_WARNING, MSGID_LEADER);
	journal_entry_add(&e, FIELD_LEASE, "%s/%s", d->cfg->lease_namespace, d->cfg->lease_name);
	journal_entry_add(&e, FIELD_IDENTITY, "%s", d->identity);
	if (leader) {
		journal_entry_send(&e, "Acquired Lease %s/%s as %s: scheduling", d->cfg->lease_namespace, d->cfg->lease_name,
		                   d->identity);
		(void)sd_notify(0, "STATUS=Leader: scheduling");
		act_leader_event(d->act, d->cfg->lease_namespace, d->cfg->lease_name, lease_uid(d->lease), d->identity,
		                 clock_wall_ns());
		writer_kick(act_writer(d->act));
		poke(d);
		return;
	}
	/* nothing of ours may land any more: drop every write, and what the model assumed of them */
	writer_abandon_all(act_writer(d->act));
	cluster_forget_assumptions(d->cluster);
	if (d->stopping) /* we gave it up: released() says how that went */
		return;
	journal_entry_send(&e, "Lost Lease %s/%s%s%s: standing by", d->cfg->lease_namespace, d->cfg->lease_name,
	                   *lease_holder(d->lease) && strcmp(lease_holder(d->lease), d->identity) ? " to " : "",
	                   *lease_holder(d->lease) && strcmp(lease_holder(d->lease), d->identity) ? lease_holder(d->lease)
	                                                                                         : "");
	(void)sd_notify(0, "STATUS=Standing by");
}

static void lease_note(void *userdata, int prio, const char *text)
{
	preemptd *d = userdata;
	journal_entry e;

	journal_entry_init(&e, prio, prio <= LOG_ERR ? MSGID_API_ERROR : MSGID_LEADER);
	journal_entry_add(&e, FIELD_LEASE, "%s/%s", d->cfg->lease_namespace, d->cfg->lease_name);
	journal_entry_send(&e, "%s", text);
}

/* --- the rest of the loop ---------------------------------------------------------------------- */

static int on_token(sd_event_source *s, uint64_t usec, void *userdata)
{
	preemptd *d = userdata;
	char *token = NULL;

	if (incluster_read_token(d->token_dir, &token) >= 0) {
		(void)kube_client_set_token(d->client, token);
		explicit_bzero(token, strlen(token));
		free(token);
	}
	(void)sd_event_source_set_time(s, usec + TOKEN_REFRESH_USEC);
	(void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

static void released(void *userdata, int result)
{
	preemptd *d = userdata;
	journal_entry e;

	journal_entry_init(&e, result < 0 ? LOG_WARNING : LOG_NOTICE, MSGID_LEADER);
	journal_entry_add(&e, FIELD_LEASE, "%s/%s", d->cfg->lease_namespace, d->cfg->lease_name);
	journal_entry_add(&e, FIELD_IDENTITY, "%s", d->identity);
	if (result == LEASE_RELEASED)
		journal_entry_send(&e, "Released Lease %s/%s", d->cfg->lease_namespace, d->cfg->lease_name);
	else if (result < 0)
		journal_entry_send(&e, "Cannot release Lease %s/%s (%s): a standby takes over once it expires",
		                   d->cfg->lease_namespace, d->cfg->lease_name,
		                   result == -ESTALE ? "it kept changing under us" : strerror(-result));
	(void)sd_event_exit(d->event, 0);
}

static int on_stop_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	preemptd *d = userdata;
	journal_entry e;

	(void)s;
	(void)usec;
	journal_entry_init(&e, LOG_WARNING, MSGID_LEADER);
	journal_entry_add(&e, FIELD_LEASE, "%s/%s", d->cfg->lease_namespace, d->cfg->lease_name);
	journal_entry_send(&e, "Lease %s/%s not released within %llu ms: a standby takes over once it expires",
	                   d->cfg->lease_namespace, d->cfg->lease_name, (unsigned long long)(d->stop_grace_usec / 1000));
	(void)sd_event_exit(d->event, 0);
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	preemptd *d = userdata;
	uint64_t now;

	(void)s;
	if (d->stopping)
		return 0;
	journal_msg(LOG_INFO, "Stopping (signal %u)", si->ssi_signo);
	(void)sd_notify(0, "STOPPING=1");
	d->stopping = true;
	/* writes in flight are dropped: the next leader decides again, and the API server refuses a
	 * second binding of a pod */
	writer_abandon_all(act_writer(d->act));
	if (!d->lease) {
		(void)sd_event_exit(d->event, 0);
		return 0;
	}
	/* client-go's ReleaseOnCancel: the release is the last write, and it is waited for */
	d->stop_grace_usec = d->cfg->lease_duration_usec && d->cfg->lease_duration_usec < STOP_GRACE_MAX_USEC
	                             ? d->cfg->lease_duration_usec
	                             : STOP_GRACE_MAX_USEC;
	if (sd_event_now(d->event, CLOCK_MONOTONIC, &now) >= 0)
		(void)sd_event_add_time(d->event, &d->stop_timer, CLOCK_MONOTONIC, now + d->stop_grace_usec, 0,
		                        on_stop_timer, d);
	lease_release(d->lease, released, d);
	return 0;
}

int preemptd_new(sd_event *e, const preemptd_config *cfg, kube_client *client, const char *token_dir,
                 preemptd **ret)
{
	preemptd *d = calloc(1, sizeof(*d));
	char err[512];
	int r;

	if (!d)
		return -ENOMEM;
	d->event = sd_event_ref(e);
	d->cfg = cfg;
	d->client = client;
	d->token_dir = token_dir;
	cycle_decision_init(&d->decision);
	for (int i = 0; i < RESULTS; i++)
		metrics_histogram_init(&d->attempt_duration[i], attempt_bounds, sizeof(attempt_bounds) / sizeof(attempt_bounds[0]));
	metrics_histogram_init(&d->victims, victim_bounds, sizeof(victim_bounds) / sizeof(victim_bounds[0]));
	metrics_histogram_init(&d->pod_attempts, pod_attempt_bounds, sizeof(pod_attempt_bounds) / sizeof(pod_attempt_bounds[0]));
	for (int i = 0; i < SLI_ATTEMPTS_MAX; i++)
		metrics_histogram_init(&d->sli[i], sli_bounds, sizeof(sli_bounds) / sizeof(sli_bounds[0]));
	for (int i = 0; i < 2; i++)
		metrics_histogram_init(&d->bind_duration[i], extension_bounds, sizeof(extension_bounds) / sizeof(extension_bounds[0]));
	/* kube-scheduler 1.33+ pops from backoffQ when activeQ is empty (SchedulerPopFromBackoffQ);
	 * a shadow decides at the other scheduler's pace and never pops here */
	queue_opts qo = { (int64_t)cfg->pod_initial_backoff_usec * 1000, (int64_t)cfg->pod_max_backoff_usec * 1000,
	                  (int64_t)cfg->max_unschedulable_usec * 1000, .pop_from_backoff = !cfg->shadow };
	/* --shadow: the other scheduler's pending pods are the ones decided for */
	cluster_opts co = { .scheduler_name = cfg->shadow ? cfg->shadow_scheduler : cfg->scheduler_name,
		            .pdb_policy = cfg->pdb_policy };
	shadow_opts so = { .scheduler_name = cfg->shadow_scheduler };
	watch_opts wo = { .page_limit = cfg->page_limit, .watch_timeout_usec = cfg->watch_timeout_usec,
	                  .retry_max_usec = cfg->retry_max_usec };
	char host[256] = "";
	(void)gethostname(host, sizeof(host) - 1);
	/* client-go's events.NewRecorder: reportingInstance = reportingController + "-" + hostname */
	if (!(d->identity = strdup(cfg->identity ? cfg->identity : "preemptd")) ||
	    asprintf(&d->reporting_instance, "%s-%s", cfg->scheduler_name, host) < 0) {
		d->reporting_instance = NULL;
		r = -ENOMEM;
		goto fail;
	}
	if ((r = kube_multi_new(e, client, &d->multi)) < 0 ||
	    (r = transport_kube_new(d->multi, &d->transport)) < 0 ||
	    (cfg->shadow && (r = transport_readonly_new(d->transport, &d->transport)) < 0) ||
	    (r = queue_new(&qo, clock_wall_ns(), &d->queue)) < 0 || (r = cluster_new(d->queue, &co, &d->cluster)) < 0 ||
	    (cfg->shadow && (r = shadow_new(d->queue, d->cluster, &so, &d->shadow)) < 0) ||
	    (r = cycle_new(d->queue, d->cluster, &d->cycle)) < 0 ||
	    (r = watch_new(e, d->multi, d->cluster, &wo, &d->watch)) < 0)
		goto fail;
	act_opts ao = { .scheduler_name = cfg->scheduler_name, .identity = d->reporting_instance,
	                .binding_done = binding_done, .userdata = d,
	                .writer = { .max_in_flight = cfg->max_in_flight, .retry_max_usec = cfg->retry_max_usec },
	                .pdb_policy = cfg->pdb_policy };
	if ((r = act_new(e, d->transport, d->cluster, &ao, &d->act)) < 0)
		goto fail;
	act_set_gate(d->act, gate, d);
	if ((r = brakes(d, cfg)) < 0)
		goto fail;
	/* at log level debug every preemption decision is explained, in preemptctl's words */
	cycle_set_explain(d->cycle, cfg->log_level >= LOG_DEBUG);
	/* a shadow writes nothing, so it takes no Lease: it runs beside the leader, standbys, other shadows */
	if (cfg->leader_elect && !cfg->shadow) {
		lease_opts lo = { .namespace_ = cfg->lease_namespace, .name = cfg->lease_name, .identity = d->identity,
		                  .lease_duration_usec = cfg->lease_duration_usec,
		                  .renew_deadline_usec = cfg->renew_deadline_usec,
		                  .retry_period_usec = cfg->retry_period_usec, .changed = leadership, .note = lease_note,
		                  .userdata = d };
		if ((r = lease_new(e, d->transport, &lo, &d->lease)) < 0)
			goto fail;
	}
	if (cfg->listen && *cfg->listen && (r = httpd_new(e, cfg->listen, scrape_handler, d, &d->httpd, err, sizeof(err))) < 0) {
		journal_msg(LOG_ERR, "%s", err);
		goto fail;
	}
	if ((r = sd_event_add_defer(e, &d->sched, on_sched, d)) < 0 || (r = sd_event_add_post(e, &d->post, on_post, d)) < 0 ||
	    (r = sd_event_add_time(e, &d->due, CLOCK_MONOTONIC, UINT64_MAX, 1000, on_due, d)) < 0 ||
	    (r = sd_event_add_signal(e, NULL, SIGTERM, on_signal, d)) < 0 ||
	    (r = sd_event_add_signal(e, NULL, SIGINT, on_signal, d)) < 0)
		goto fail;
	(void)sd_event_source_set_enabled(d->sched, SD_EVENT_OFF);
	(void)sd_event_source_set_enabled(d->due, SD_EVENT_OFF);
	/* the cycles take turns with I/O (a bounded batch each), at the same priority: a lower one
	 * would starve them behind a busy watch */
	if (token_dir) {
		uint64_t now;
		if ((r = sd_event_now(e, CLOCK_MONOTONIC, &now)) < 0 ||
		    (r = sd_event_add_time(e, &d->token_timer, CLOCK_MONOTONIC, now + TOKEN_REFRESH_USEC, 1000000, on_token, d)) < 0)
			goto fail;
	}
	*ret = d;
	return 0;
fail:
	preemptd_free(d);
	return r;
}

preemptd *preemptd_free(preemptd *d)
{
	if (!d)
		return NULL;
	sd_event_source_disable_unref(d->sched);
	sd_event_source_disable_unref(d->post);
	sd_event_source_disable_unref(d->due);
	sd_event_source_disable_unref(d->token_timer);
	sd_event_source_disable_unref(d->stop_timer);
	httpd_free(d->httpd);
	lease_free(d->lease);
	act_free(d->act);
	watch_free(d->watch);
	cycle_free(d->cycle);
	budget_free(d->budget);
	shadow_free(d->shadow);
	cluster_free(d->cluster);
	queue_free(d->queue);
	if (d->transport)
		d->transport->free(d->transport);
	kube_multi_free(d->multi);
	cycle_decision_done(&d->decision);
	sd_event_unref(d->event);
	free(d->identity);
	free(d->reporting_instance);
	objmap_foreach(&d->first_attempt, free_value, NULL);
	objmap_done(&d->first_attempt);
	free(d);
	return NULL;
}

int preemptd_run(preemptd *d)
{
	if (d->shadow)
		journal_msg(LOG_INFO, "Started in shadow mode: deciding for the pods of %s, writing nothing "
		            "(no Lease: leader-elect does not apply), API server %s", d->cfg->shadow_scheduler,
		            kube_client_server(d->client));
	else
		journal_msg(LOG_INFO, "Started: scheduling pods with schedulerName %s, API server %s, "
		            "PodDisruptionBudgets %s, %s%s%s%s%s",
	            d->cfg->scheduler_name, kube_client_server(d->client),
	            d->cfg->pdb_policy == PP_PDB_STRICT ? "strict (victims evicted)" : "preferred (victims deleted)",
	            d->lease ? "leader election on Lease " : "leader election off",
	            d->lease ? d->cfg->lease_namespace : "", d->lease ? "/" : "", d->lease ? d->cfg->lease_name : "",
	            d->httpd ? "" : ", no HTTP endpoints");
	if (d->httpd)
		journal_msg(LOG_INFO, "Serving /healthz /livez /readyz /metrics on port %u (listen = %s)",
		            (unsigned)httpd_port(d->httpd), d->cfg->listen);
	watch_start(d->watch);
	if (d->lease)
		lease_start(d->lease);
	(void)sd_event_set_watchdog(d->event, true);
	/* ready to be talked to: caches and leadership come as they may (and say so in STATUS=) */
	(void)sd_notify(0, "READY=1\nSTATUS=Listing the cluster");
	return sd_event_loop(d->event);
}
