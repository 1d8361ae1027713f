/* SPDX-License-Identifier: MIT */
/*
 * One evaluation cycle of the service: the node signals are read (all of them between status
 * refreshes, else only those with a threshold), thresholds evaluated, and only when one is
 * actionable are pods scanned, ranked and the chosen ones handed to the evictor. Also what follows
 * an eviction's events: the memo of evicted/failing pods, metrics and the decision history.
 */
#include "engine.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cadence.h"
#include "cgfs.h"
#include "cgkill.h"
#include "evict-log.h"
#include "kube-spool.h"
#include "log.h"
#include "outcome.h"
#include "poddisk.h"
#include "spool.h"
#include "status-out.h"
#include "victims.h"
#include "clock.h"

static void schedule_tick(evictd_daemon *d, uint64_t usec)
{
	uint64_t at, accuracy;
	cadence_timer(usec, &at, &accuracy);
	d->tick_slack_usec = accuracy;
	(void)sd_event_source_set_time_accuracy(d->tick, accuracy);
	/*
	 * From now, not from the loop iteration's start (set_time_relative): the signals' due times
	 * were computed after this cycle's work, and a tick firing before them would read nothing.
	 */
	(void)sd_event_source_set_time(d->tick, clock_mono_usec() + at);
	(void)sd_event_source_set_enabled(d->tick, SD_EVENT_ONESHOT);
}

void engine_on_eviction(evictor *ev, evict_event what, const evict_info *info, void *userdata)
{
	(void)ev;
	evictd_daemon *d = userdata;
	memo_verdict v = MEMO_IGNORED;
	uint64_t retry = 0;
	bool reclaiming = false;
	if (what == EVICT_EVENT_FINISHED) {
		v = pod_memo_finished(d->memo, info, clock_mono_usec(), d->cfg->retry_backoff_usec,
		                      d->cfg->retry_backoff_max_usec, &retry);
		/* Its processes are gone (a dry run: as if): the node has its resources back only when
		 * its cgroup is gone. Anything else has nothing to wait for: a pod found with no process
		 * (EVICT_EMPTY) was not active when chosen (the kubelet ranks active pods only), so what
		 * it frees is not this eviction's doing. */
		if (info->outcome == EVICT_DONE || info->outcome == EVICT_DRY)
			reclaiming = reclaim_begin(d->reclaim, info->uid, clock_mono_usec(), d->cfg->reclaim_timeout_usec) != NULL;
		else
			reclaim_drop(d->reclaim, info->uid);
	}
	if (v != MEMO_REPEATED_FAILURE) /* a pod failing again and again is reported once */
		evict_log(what, info);
	if (what == EVICT_EVENT_FINISHED && !info->dry_run)
		runtime_forget_listing(d->rt);
	if (v == MEMO_FIRST_FAILURE)
		log_msg(LOG_NOTICE, "The eviction of %s%s%s is retried in %" PRIu64 "s at the earliest (the wait doubles "
		                  "up to %" PRIu64 "s; further failures are not logged); other pods are chosen meanwhile",
		                  info->namespace_, *info->namespace_ ? "/" : "", info->name, retry / USEC_PER_SEC,
		                  d->cfg->retry_backoff_max_usec / USEC_PER_SEC);
	if (what == EVICT_EVENT_STARTED)
		metrics_eviction_started(d->metrics);
	else if (what == EVICT_EVENT_FINISHED && (!reclaiming || info->dry_run))
		/* a reclaiming eviction is counted when it ends: reclaimed or reclaim-timeout */
		metrics_eviction_finished(d->metrics, info->signal, info->hard, evict_outcome_to_string(info->outcome));
	bool record = (what == EVICT_EVENT_FINISHED && !info->dry_run) ||
	              (what == EVICT_EVENT_STARTED && info->dry_run);
	if (record) {
		status_decision sd = {
			.realtime_usec = info->started_real_usec,
			.hard = info->hard,
			.priority = info->priority,
			.grace_sec = (info->grace_usec + 999999) / 1000000,
			.duration_usec = info->duration_usec,
			.reclaimed_bytes = -1, /* said when the pod cgroup is gone (reclaimed) */
			.exec_status = info->exec_status,
		};
		snprintf(sd.pod, sizeof(sd.pod), "%s%s%s", info->namespace_, *info->namespace_ ? "/" : "",
		         info->name);
		snprintf(sd.uid, sizeof(sd.uid), "%s", info->uid);
		snprintf(sd.signal, sizeof(sd.signal), "%s", info->signal);
		snprintf(sd.action, sizeof(sd.action), "%s", info->dry_run ? "dry-run" : info->exec ? "exec" : "kill");
		snprintf(sd.outcome, sizeof(sd.outcome), "%s",
		         info->dry_run ? "would-evict" : evict_outcome_to_string(info->outcome));
		if (reclaiming)
			snprintf(sd.reclaim, sizeof(sd.reclaim), "pending");
		status_history_add(&d->history, &sd);
		snprintf(d->last_eviction, sizeof(d->last_eviction), "%s (%s, %s)", sd.pod, sd.signal, sd.outcome);
	} else if (reclaiming && info->dry_run) {
		status_decision *sd = status_history_find(&d->history, info->uid);
		if (sd)
			snprintf(sd->reclaim, sizeof(sd->reclaim), "pending");
	}
	/* What follows the eviction replaces its record; a command's wait handed over at a stop keeps
	 * its record, so that the next evictd waits for the pod again (and counts its reclaim). */
	if (what == EVICT_EVENT_FINISHED && info->outcome != EVICT_HANDED_OVER)
		victims_sync(d, info->uid);
	d->dirty = true;
	if (d->stopping && what == EVICT_EVENT_FINISHED && evictor_count(d->ev) == 0)
		(void)sd_event_exit(d->event, 0);
}

/* A reclaiming pod's directory on nodefs: is what was counted in it still there? (reclaim.h) */
static int probe_part(reclaim_part part, const char *path, void *userdata)
{
	evictd_daemon *d = userdata;
	(void)part;
	return poddisk_files_left(path, d->cfg->pod_disk_walk_limit);
}

/* A reclaiming pod's news: logged, counted, and its decision in status.json completed. */
static void on_reclaim(reclaim_event what, const reclaim_entry *e, void *userdata)
{
	evictd_daemon *d = userdata;
	uint64_t now = clock_mono_usec();
	const signal_obs *o = &d->node.s[e->signal];
	evict_log_reclaim(what, e, o->known, o->available, now);
	d->dirty = true;
	if (what == RECLAIM_REKILLED)
		return;
	/* A part back (its cgroup gone, above all) makes the runtime's listing stale: in it the pod's
	 * containers may still run, so the next disk decision would see neither their writable layers
	 * as the dead containers' pending reclaim nor this pod's part as owed, and choose another pod. */
	runtime_forget_listing(d->rt);
	if (what == RECLAIM_PART_BACK) {
		victims_sync(d, e->uid);
		return;
	}
	victims_sync_reclaim_over(d, e->uid);
	uint64_t took = now > e->gone_usec ? now - e->gone_usec : 0;
	if (what == RECLAIM_DONE)
		d->reclaimed++;
	else
		d->reclaim_timeouts++;
	if (!e->dry_run) {
		metrics_observe_reclaim(d->metrics, took);
		metrics_eviction_finished(d->metrics, signal_name(e->signal), e->hard,
		                          what == RECLAIM_DONE ? "reclaimed" : "reclaim-timeout");
	}
	status_decision *sd = status_history_find(&d->history, e->uid);
	if (sd) {
		snprintf(sd->reclaim, sizeof(sd->reclaim), "%s", what == RECLAIM_DONE ? "reclaimed" : "timeout");
		sd->reclaim_usec = took;
		sd->has_reclaimed = reclaim_measured(e, e->signal, o->known, o->available, &sd->reclaimed) == 0;
		if (!sd->has_reclaimed)
			sd->reclaimed = 0;
		if (sd->has_reclaimed && strcmp(signal_unit(e->signal), "bytes") == 0)
			sd->reclaimed_bytes = sd->reclaimed;
	}
}

void engine_done(evictd_daemon *d)
{
	node_cache_reset(&d->node_cache);
	d->sc = scanner_free(d->sc);
	if (d->proc_fd >= 0)
		close(d->proc_fd);
	d->proc_fd = -1;
	d->kubepods = NULL;
}

int engine_init(evictd_daemon *d)
{
	d->proc_fd = -1;
	int r = cg_discover(d->cfg->cgroup_root, &d->cg);
	if (r < 0) {
		log_error_errno(r, "cgroup root %s", d->cfg->cgroup_root ? d->cfg->cgroup_root : "auto");
		return r;
	}
	if (!d->cg.root[0])
		log_msg(LOG_NOTICE, "no cgroup v2 hierarchy (%s): pod signals are unavailable", cg_mode_name(d->cg.mode));
	r = scanner_new(d->cfg, &d->cg, &d->sc);
	if (r < 0) {
		log_error_errno(r, "cannot set up the scanner");
		return r;
	}
	if (scanner_root_fd(d->sc) >= 0)
		d->kubepods = node_find_kubepods(scanner_root_fd(d->sc));
	d->proc_fd = open(d->cfg->proc_root ? d->cfg->proc_root : "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* A 64-core node allocates far faster than one core: the rate model must know the node. */
	unsigned cpus = 0;
	if ((r = node_online_cpus(d->proc_fd, &cpus)) < 0)
		log_msg(LOG_NOTICE, "cannot count the online CPUs in %s/stat (%s): memory and pid fall rates assume one CPU",
		                  d->cfg->proc_root ? d->cfg->proc_root : "/proc", strerror(-r));
	cadence_derive_rates(d->cfg, cpus);
	d->cadence = (cadence_state){ 0 };
	return 0;
}

/* The scanner holds the configuration by pointer: after a reload it must follow the new one. */
void engine_reconfigure(evictd_daemon *d)
{
	engine_done(d);
	if (engine_init(d) < 0)
		log_msg(LOG_NOTICE, "observing nothing until the next reload");
}

static void refresh_want(evictd_daemon *d)
{
	if (d->want_for == d->cfg)
		return;
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		const threshold_value *h = config_hard(d->cfg, (evictd_signal)s);
		d->want[s] = (h && h->set) || d->cfg->soft[s].set;
	}
	d->want_for = d->cfg;
}

static bool thresholded_signals_unchanged(const evictd_daemon *d)
{
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		const signal_obs *a = &d->node.s[s], *b = &d->quiet_node.s[s];
		if (d->want[s] && (a->known != b->known || a->available != b->available || a->capacity != b->capacity))
			return false;
	}
	return true;
}

static bool anything_changed(const evaluation *e)
{
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (e->t[k][s].newly_met || e->t[k][s].cleared)
				return true;
	for (int c = 0; c < _CONDITION_MAX; c++)
		if (e->condition_changed[c])
			return true;
	return false;
}

static bool anything_actionable(const evaluation *e)
{
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (e->t[k][s].actionable)
				return true;
	return false;
}

/* nodefs, and imagefs when the runtime may put the pods' volumes and logs on it (one disk) */
static bool disk_actionable(const evaluation *e, bool runtime)
{
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		if (e->t[k][SIGNAL_NODEFS_AVAILABLE].actionable || e->t[k][SIGNAL_NODEFS_INODES_FREE].actionable ||
		    (runtime && (e->t[k][SIGNAL_IMAGEFS_AVAILABLE].actionable || e->t[k][SIGNAL_IMAGEFS_INODES_FREE].actionable)))
			return true;
	return false;
}

/*
 * Nothing met, no condition on (so no grace or transition period is running), nothing changed and
 * nothing in flight: an evaluation of the same signal values would give the same result, whatever
 * the time.
 */
static bool evaluation_is_quiet(const evictd_daemon *d)
{
	if (anything_changed(&d->eval) || evictor_count(d->ev) || reclaim_count(d->reclaim))
		return false;
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (d->eval.t[k][s].met || d->ts.met[k][s])
				return false;
	for (int c = 0; c < _CONDITION_MAX; c++)
		if (d->ts.condition[c] || d->eval.conditions[c])
			return false;
	return true;
}

typedef struct uid_list {
	const char **uids;
	size_t n, cap;
} uid_list;

static void collect_uid(const evict_info *i, void *userdata)
{
	uid_list *l = userdata;
	if (l->n < l->cap)
		l->uids[l->n++] = i->uid;
}

/*
 * What the victim is expected to give back, for every signal, and each signal's value now: what
 * counts as pending while it reclaims, and what its reclaim is measured against.
 */
static void arm_reclaim(evictd_daemon *d, const snapshot *snap, const pod_info *p, const eviction_choice *c,
                        const char *path)
{
	reclaim_entry e = { .signal = c->signal, .hard = c->kind == THRESHOLD_HARD, .dry_run = d->cfg->dry_run };
	snprintf(e.uid, sizeof(e.uid), "%s", p->uid);
	snprintf(e.pod, sizeof(e.pod), "%s%s%s", p->namespace_ ? p->namespace_ : "",
	         p->namespace_ && *p->namespace_ ? "/" : "", p->name ? p->name : p->uid);
	snprintf(e.cgroup, sizeof(e.cgroup), "%s", path);
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		evictd_rank_kind rk = signal_rank_kind((evictd_signal)s);
		e.expected[s] = decide_pod_expected_reclaim((evictd_signal)s, p);
		if ((rk == RANK_DISK || rk == RANK_INODES) && p->disk_partial)
			e.expected[s] = -1; /* a lower bound: what is pending is not known */
		e.observed[s] = snap->node.s[s].available;
		e.observed_known[s] = snap->node.s[s].known;
	}
	/* its directories on nodefs, each with what was counted in it (what it will free) */
	int r = 0;
	if (d->cfg->kubelet_root_dir && d->cfg->pod_logs_dir)
		r = poddisk_locate(d->cfg->kubelet_root_dir, d->cfg->pod_logs_dir, p->uid,
		                   p->has_descriptor ? p->namespace_ : NULL, p->has_descriptor ? p->name : NULL,
		                   e.volumes, sizeof(e.volumes), e.logs, sizeof(e.logs));
	if (r < 0)
		log_error_errno(r, "the directories of %s are not tracked for its reclaim", e.pod);
	bool measured = p->has_disk && !p->disk_partial;
	for (int k = 0; k < _RECLAIM_PART_MAX; k++)
		e.part_bytes[k] = e.part_inodes[k] = -1;
	if (measured) {
		/* the rest of its nodefs usage goes with its dead containers: the logs, and the writable
		 * layers where the runtime reports them on nodefs (its container GC removes both) */
		e.part_bytes[RECLAIM_PART_VOLUMES] = p->volume_bytes;
		e.part_inodes[RECLAIM_PART_VOLUMES] = p->volume_inodes;
		e.part_bytes[RECLAIM_PART_LOGS] = p->disk_bytes - p->volume_bytes;
		e.part_inodes[RECLAIM_PART_LOGS] = p->disk_inodes - p->volume_inodes;
	}
	r = reclaim_arm(d->reclaim, &e);
	if (r < 0)
		log_error_errno(r, "the reclaim of %s will not be tracked", e.pod);
}

static void start_evictions(evictd_daemon *d, const decision *dec, const snapshot *snap)
{
	for (size_t i = 0; i < dec->n_evict; i++) {
		const eviction_choice *c = &dec->evict[i];
		const pod_info *p = &snap->pods[c->pod];
		char path[PATH_MAX];
		if (snprintf(path, sizeof(path), "%s/%s", d->cg.root, p->cgroup) >= (int)sizeof(path))
			continue;
		evictd_rank_kind rk = signal_rank_kind(c->signal);
		evict_request rq = {
			.uid = p->uid, .namespace_ = p->namespace_, .name = p->name, .cgroup_path = path,
			.signal = signal_name(c->signal), .hard = c->kind == THRESHOLD_HARD,
			.grace_usec = c->grace_usec, .priority = p->priority,
			.usage = rk == RANK_PID ? (p->has_pids ? p->pids : -1)
			       : rk == RANK_DISK ? (p->has_disk ? p->disk_bytes : -1)
			       : rk == RANK_INODES ? (p->has_disk ? p->disk_inodes : -1)
			                            : (p->has_memory ? p->working_set : -1),
			.expected_reclaim = c->expected_reclaim > 0 ? c->expected_reclaim : 0,
		};
		spool_container ctr[POD_CONTAINERS_MAX];
		kube_spool_measure(d->cfg, path, p, c, ctr);
		if (evictor_contains(d->ev, p->uid))
			continue;
		arm_reclaim(d, snap, p, c, path);
		/* recorded with the eviction from its first step: a restart finds its reclaim and back-off */
		pod_memo_state ms;
		rq.reclaim = reclaim_find(d->reclaim, p->uid);
		rq.failures = pod_memo_get(d->memo, p->uid, &ms) ? ms.failures : 0;
		int r = evictor_start(d->ev, &rq);
		if (r == 0)
			kube_spool_eviction(d->cfg, p, c, rq.usage, ctr);
		if (r < 0 && r != -EALREADY)
			reclaim_drop(d->reclaim, p->uid);
		if (r < 0 && r != -EALREADY && r != -ESHUTDOWN)
			d->dirty = true; /* the failure was logged by the evictor callback */
	}
}

/*
 * Refusals from the API server (eviction-api = eviction), told back by evictd-kube (outcome.h): the
 * pod was not evicted in Kubernetes' eyes. It is not killed again when its containers restart, its
 * reclaim no longer counts (so the next pod in the ranking is chosen while pressure lasts), and it
 * waits the retry back-off before it may be chosen again. Read only where it matters: before a
 * decision and while something reclaims.
 */
static void take_outcomes(evictd_daemon *d)
{
	if (!d->cfg->kube.enable || !d->cfg->kube.eviction_api || !d->cfg->kube.spool_dir)
		return;
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s%s", d->cfg->kube.spool_dir, OUTCOME_DIR_SUFFIX) >= (int)sizeof(dir))
		return;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	DIR *dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return;
	}
	struct dirent *de;
	unsigned seen = 0;
	while ((de = readdir(dp)) && seen++ < 256) {
		size_t n = strlen(de->d_name), sl = strlen(OUTCOME_DIR_SUFFIX);
		if (de->d_name[0] == '.' || n <= sl || strcmp(de->d_name + n - sl, OUTCOME_DIR_SUFFIX) != 0)
			continue;
		outcome_record o;
		char why[160];
		int r = outcome_take(dirfd(dp), de->d_name, &o, why, sizeof(why));
		if (r == 0 && (strlen(o.uid) + sl != n || strncmp(de->d_name, o.uid, n - sl) != 0)) {
			r = -EBADMSG;
			snprintf(why, sizeof(why), "its uid does not match the file name");
		}
		if (r < 0) {
			log_msg(LOG_NOTICE, "Eviction outcome %s/%s ignored: %s", dir, de->d_name, why);
			continue;
		}
		const reclaim_entry *e = reclaim_find(d->reclaim, o.uid);
		char pod[320], cgroup[PATH_MAX];
		snprintf(pod, sizeof(pod), "%s", e ? e->pod : o.uid);
		snprintf(cgroup, sizeof(cgroup), "%s", e ? e->cgroup : "");
		if (e && e->reclaiming)
			metrics_eviction_finished(d->metrics, signal_name(e->signal), e->hard, "refused");
		reclaim_drop(d->reclaim, o.uid);
		uint64_t retry = 0;
		/* a refusal during the eviction's grace period counts the same: the pod's back-off */
		memo_verdict v = evictor_contains(d->ev, o.uid) && cgroup[0]
		               ? pod_memo_refused_in_flight(d->memo, o.uid, cgroup, clock_mono_usec(), d->cfg->retry_backoff_usec,
		                                            d->cfg->retry_backoff_max_usec, &retry)
		               : pod_memo_refused(d->memo, o.uid, clock_mono_usec(), d->cfg->retry_backoff_usec,
		                                  d->cfg->retry_backoff_max_usec, &retry);
		if (v == MEMO_IGNORED)
			continue; /* not a pod evicted by this process or by the one before it */
		pod_memo_state ms;
		bool known = pod_memo_get(d->memo, o.uid, &ms);
		if (known && evictor_contains(d->ev, o.uid))
			(void)evictor_note_refusal(d->ev, o.uid, ms.failures, ms.retry_at);
		victims_sync(d, o.uid);
		status_decision *sd = status_history_find(&d->history, o.uid);
		if (sd)
			snprintf(sd->reclaim, sizeof(sd->reclaim), "refused");
		d->dirty = true;
		/* each refusal is its own answer from the API server: said every time, with the wait it earns */
		unsigned refusals = known ? ms.failures : 1;
		log_msg(LOG_NOTICE, "The API server refused the eviction of %s (HTTP %d%s): it is not killed again if "
		        "its containers restart, may be chosen again in %" PRIu64 "s at the earliest (refusal %u; the "
		        "wait doubles up to %" PRIu64 "s), and the next pod in the ranking is chosen while pressure lasts",
		        pod, o.status, o.status == 429 ? ", a PodDisruptionBudget" : "", retry / USEC_PER_SEC, refusals,
		        d->cfg->retry_backoff_max_usec / USEC_PER_SEC);
	}
	closedir(dp);
}

typedef struct restart_ctx {
	evictd_daemon *d;
	const snapshot *snap;
} restart_ctx;

/*
 * A victim stays a victim: processes back in an evicted pod's cgroup (the kubelet restarted its
 * containers before it saw the deletion) are killed again at once, without a new decision, and
 * reported once. While the pod reclaims, reclaim_check does the same every poll.
 */
static void on_victim_restarted(const char *uid, const char *cgroup, bool first, void *userdata)
{
	restart_ctx *rc = userdata;
	if (reclaim_contains(rc->d->reclaim, uid))
		return;
	int fd = cgfs_open_dir_beneath(AT_FDCWD, cgroup), r;
	if (fd < 0)
		return; /* gone meanwhile */
	r = cg_kill(fd);
	if (r == -ENOENT)
		r = cg_signal_tree(fd, SIGKILL, getpid());
	close(fd);
	if (first || r < 0) {
		const char *pod = uid;
		char buf[320];
		for (size_t i = 0; i < rc->snap->n_pods; i++)
			if (strcmp(rc->snap->pods[i].uid, uid) == 0 && rc->snap->pods[i].name) {
				const pod_info *p = &rc->snap->pods[i];
				snprintf(buf, sizeof(buf), "%s%s%s", p->namespace_ ? p->namespace_ : "",
				         p->namespace_ && *p->namespace_ ? "/" : "", p->name);
				pod = buf;
			}
		evict_log_restarted(pod, uid, cgroup, r < 0 ? r : 0);
	}
}

/* A pod whose cgroup is gone: its record goes too, unless its reclaim is still pending. */
static void on_victim_forgotten(const char *uid, void *userdata)
{
	restart_ctx *rc = userdata;
	victims_sync(rc->d, uid);
}

/*
 * Thresholds are evaluated on the node signals alone; only when one is actionable does the full
 * scan (every pod cgroup, descriptors) run, followed by the decision and the evictions. An idle
 * node therefore costs one cheap read per tick.
 */
static void decide_and_act(evictd_daemon *d, const char *reason)
{
	(void)reason;
	uint64_t now = clock_mono_usec();
	threshold_state trial = d->ts;
	evaluation ev;
	thresholds_evaluate(d->cfg, &d->node, &trial, now, &ev);
	events_log_signal_availability(&d->node, &d->signal_report);

	if (!anything_actionable(&ev)) {
		runtime_settle(d->rt, &ev);
		d->ts = trial;
		if (anything_changed(&ev)) {
			snapshot node_only = { .timestamp_usec = now, .node = d->node };
			events_log_evaluation(&ev, &node_only, d->cfg);
			kube_spool_thresholds(d->cfg, &ev, &node_only);
			d->dirty = true;
		}
		d->eval = ev;
		return;
	}

	const snapshot *snap = NULL;
	int r = scanner_scan(d->sc, now, &snap);
	metrics_observe_scan(d->metrics, clock_mono_usec() - now);
	if (r < 0) {
		log_error_errno(r, "scan failed");
		d->ts = trial;
		d->eval = ev;
		return;
	}
	/* Disk walks cost time per file: only when a disk threshold is to be acted on. */
	if (disk_actionable(&ev, runtime_enabled(d->rt)) && (r = scanner_measure_disk(d->sc, now)) < 0)
		log_error_errno(r, "disk usage of pods not measured");
	uid_list inflight = { NULL, 0, evictor_count(d->ev) };
	if (inflight.cap && !(inflight.uids = calloc(inflight.cap, sizeof(*inflight.uids)))) {
		log_error_errno(-ENOMEM, "decision skipped");
		return;
	}
	evictor_foreach(d->ev, collect_uid, &inflight);
	take_outcomes(d);
	restart_ctx rc = { d, snap };
	pod_memo_prune(d->memo, snap, on_victim_restarted, on_victim_forgotten, &rc);
	const char **skip_uids = NULL, **skip_why = NULL;
	size_t n_skip = 0;
	if (pod_memo_skip_list(d->memo, now, &skip_uids, &skip_why, &n_skip) < 0) {
		free(inflight.uids);
		log_error_errno(-ENOMEM, "decision skipped");
		return;
	}
	pending_reclaim pending;
	pending_reclaim_init(&pending);
	reclaim_pending(d->reclaim, &pending);
	/* node-level reclaim first (the runtime's listing, images removed): what it frees, what it holds */
	node_reclaim_input node;
	runtime_prepare(d->rt, (snapshot *)snap, &ev, &pending, now, &node, NULL);
	decide_input in = { .snap = snap, .cfg = d->cfg, .now_usec = now,
	                    .inflight_uids = inflight.uids, .n_inflight = inflight.n,
	                    .skip_uids = skip_uids, .skip_why = skip_why, .n_skip = n_skip, .pending = &pending,
	                    .node = runtime_enabled(d->rt) ? &node : NULL };
	decision dec;
	r = decide_evictions(&in, &d->ts, &dec);
	free(inflight.uids);
	free(skip_uids);
	free(skip_why);
	if (r < 0) {
		log_error_errno(r, "decision failed");
		d->ts = trial;
		d->eval = ev;
		return;
	}
	d->node = snap->node; /* fresher */
	d->eval = dec.eval;
	metrics_observe_decision(d->metrics, clock_mono_usec() - now);
	events_log_decision(&dec, snap, d->cfg);
	runtime_after_decision(d->rt, &dec, snap);
	kube_spool_thresholds(d->cfg, &dec.eval, snap);
	if (anything_changed(&dec.eval) || dec.n_evict)
		d->dirty = true;
	start_evictions(d, &dec, snap);
	decide_decision_free(&dec);
}

void evictd_evaluate(evictd_daemon *d, const char *reason)
{
	if (d->stopping)
		return;
	d->evaluations++;
	if (!d->sc)
		return;
	/*
	 * Only the node signals, and between status refreshes only those with a threshold: cheap
	 * enough for every tick (idle CPU budget). Pods are read when a threshold is actionable.
	 */
	refresh_want(d);
	uint64_t now = clock_mono_usec();
	bool full = !d->node_valid || d->dirty || now - d->status_written_usec >= STATUS_IDLE_REFRESH_USEC;
	/* On a timer tick only the signals due: another's headroom, measured at its last read, holds. */
	bool read[_SIGNAL_MAX];
	cadence_due(&d->cadence, d->want, now, d->tick_slack_usec, full || strcmp(reason, "timer") != 0, read);
	if (full || scanner_root_fd(d->sc) < 0) {
		/* By path: a filesystem mounted on nodefs-path since is seen here, and kept from now on. */
		node_cache_reset(&d->node_cache);
		scanner_scan_node(d->sc, &d->node);
		memcpy(read, d->want, sizeof(read));
	} else {
		node_sources src = {
			.cg_root_fd = scanner_root_fd(d->sc), .proc_fd = d->proc_fd, .cg = &d->cg,
			.kubepods = d->kubepods, .nodefs_path = d->cfg->nodefs_path,
			.imagefs_path = d->cfg->imagefs_path, .cache = &d->node_cache, .cfg = d->cfg,
		};
		node_signals_read_some(&src, read, &d->node);
	}
	d->node_valid = true;
	runtime_observe(d->rt, &d->node);
	/* Only while something reclaims: a look at each such pod's cgroup (gone? restarted? too long?). */
	unsigned reclaiming = reclaim_count(d->reclaim);
	if (reclaiming) {
		int64_t avail[_SIGNAL_MAX];
		bool known[_SIGNAL_MAX];
		for (int s = 0; s < _SIGNAL_MAX; s++) {
			avail[s] = d->node.s[s].available;
			known[s] = d->node.s[s].known;
		}
		if (reclaim_observe(d->reclaim, avail, known))
			victims_sync_reclaiming(d); /* the values once they were gone: what a restart must compare with */
		take_outcomes(d);
		/* what came back is credited to its pods; the others measure theirs from here on */
		if (reclaim_check(d->reclaim, clock_mono_usec(), probe_part, d, on_reclaim, d) &&
		    reclaim_rebase(d->reclaim, avail, known))
			victims_sync_reclaiming(d);
		reclaiming = reclaim_count(d->reclaim);
	}
	metrics_set_reclaiming(d->metrics, reclaiming);
	uint64_t images_removed, image_bytes;
	int64_t node_pending[_SIGNAL_MAX];
	int runtime_up;
	runtime_counters(d->rt, &images_removed, &image_bytes, node_pending, &runtime_up);
	metrics_set_node_reclaim(d->metrics, images_removed, image_bytes, node_pending, runtime_up);
	uint64_t wait;
	if (d->quiet && !full && !evictor_count(d->ev) && !reclaiming && thresholded_signals_unchanged(d)) {
		/* The idle tick: same inputs, same (empty) result; the evaluation is skipped. */
		wait = cadence_update(&d->cadence, d->cfg, &d->node, &d->eval, read, now);
	} else {
		decide_and_act(d, reason);
		/* A signal whose pressure is over: a fall after this is new pressure, not the pending reclaim's. */
		unsigned relieved = 0;
		for (int s = 0; reclaim_count(d->reclaim) && s < _SIGNAL_MAX; s++)
			if (!d->eval.t[THRESHOLD_HARD][s].met && !d->eval.t[THRESHOLD_SOFT][s].met)
				relieved += reclaim_signal_relieved(d->reclaim, (evictd_signal)s);
		if (relieved)
			victims_sync_reclaiming(d);
		/* The next read is due when a signal could reach a threshold at its fastest plausible rate. */
		wait = cadence_update(&d->cadence, d->cfg, &d->node, &d->eval, read, clock_mono_usec());
		if (reclaim_count(d->reclaim) && wait > RECLAIM_POLL_USEC)
			wait = RECLAIM_POLL_USEC;
		d->quiet = evaluation_is_quiet(d);
		if (d->quiet) {
			for (int s = 0; s < _SIGNAL_MAX; s++)
				if (d->want[s]) {
					d->quiet_node.s[s].known = d->node.s[s].known;
					d->quiet_node.s[s].available = d->node.s[s].available;
					d->quiet_node.s[s].capacity = d->node.s[s].capacity;
				}
		}
	}
	schedule_tick(d, wait);
	logging_flush_dropped();
	/* STATUS= depends on what sets d->dirty and on which signals are known: rebuilt only then. */
	uint32_t known = 0;
	for (int s = 0; s < _SIGNAL_MAX; s++)
		known |= (uint32_t)d->node.s[s].known << s;
	bool status_changed = d->dirty || known != d->status_known_mask || !d->last_status_line[0];
	status_write(d, false);
	if (status_changed) {
		d->status_known_mask = known;
		status_notify(d);
	}
	(void)metrics_update(d->metrics, d->cfg, &d->node, &d->eval, evictor_count(d->ev), clock_mono_usec());
}
