/* SPDX-License-Identifier: MIT */
/* What the service tells its readers: status.json (atomic, for controllers and `evictd --status`)
 * and systemd's STATUS= line (for `systemctl status`). */
#include "status-out.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "log.h"
#include "clock.h"

static void status_json_observations(evictd_daemon *d, jsonbuf *j);
static void status_conditions_text(evictd_daemon *d, char *buf, size_t size);

static void json_eviction(const evict_info *i, void *userdata)
{
	jsonbuf *j = userdata;
	char pod[320];
	snprintf(pod, sizeof(pod), "%s%s%s", i->namespace_, *i->namespace_ ? "/" : "", i->name);
	jb_begin_object(j);
	jb_key(j, "pod"), jb_string(j, pod);
	jb_key(j, "uid"), jb_string(j, i->uid);
	jb_key(j, "cgroup"), jb_string(j, i->cgroup_path);
	jb_key(j, "signal"), jb_string(j, i->signal);
	jb_key(j, "action"), jb_string(j, i->dry_run ? "dry-run" : i->exec ? "exec" : "kill");
	jb_key(j, "phase"), jb_string(j, evict_phase_to_string(i->phase));
	jb_key(j, "hard"), jb_bool(j, i->hard);
	jb_key(j, "priority"), jb_int(j, i->priority);
	jb_key(j, "grace_sec"), jb_uint(j, (i->grace_usec + 999999) / 1000000);
	jb_key(j, "started_usec"), jb_uint(j, i->started_real_usec);
	jb_key(j, "expected_reclaim"), jb_int(j, i->expected_reclaim);
	jb_key(j, "processes_signalled"), jb_int(j, i->procs_signalled);
	jb_key(j, "resumed"), jb_bool(j, i->resumed);
	jb_end_object(j);
}

static void json_reclaiming(const reclaim_entry *e, void *userdata)
{
	jsonbuf *j = userdata;
	jb_begin_object(j);
	jb_key(j, "pod"), jb_string(j, e->pod);
	jb_key(j, "uid"), jb_string(j, e->uid);
	jb_key(j, "cgroup"), jb_string(j, e->cgroup);
	jb_key(j, "signal"), jb_string(j, signal_name(e->signal));
	jb_key(j, "dry_run"), jb_bool(j, e->dry_run);
	jb_key(j, "expected_reclaim"), jb_int(j, e->expected[e->signal]);
	uint64_t now = clock_mono_usec();
	jb_key(j, "since_usec"), jb_uint(j, now > e->gone_usec ? now - e->gone_usec : 0);
	jb_key(j, "timeout_in_usec"), jb_uint(j, e->deadline_usec > now ? e->deadline_usec - now : 0);
	jb_key(j, "restarts_killed"), jb_uint(j, e->rekills);
	/* the parts still holding what was counted (reclaim.h), by name, with their paths */
	jb_key(j, "outstanding");
	jb_begin_array(j);
	for (int p = 0; p < _RECLAIM_PART_MAX; p++)
		if (!e->part_back[p] && reclaim_part_tracked(e, (reclaim_part)p)) {
			jb_begin_object(j);
			jb_key(j, "part"), jb_string(j, reclaim_part_name((reclaim_part)p));
			jb_key(j, "path"), jb_string(j, reclaim_part_path(e, (reclaim_part)p));
			jb_end_object(j);
		}
	jb_end_array(j);
	jb_end_object(j);
}

static void json_decision(jsonbuf *j, const status_decision *d)
{
	jb_begin_object(j);
	jb_key(j, "time_usec"), jb_uint(j, d->realtime_usec);
	jb_key(j, "pod"), jb_string(j, d->pod);
	jb_key(j, "uid"), jb_string(j, d->uid);
	jb_key(j, "signal"), jb_string(j, d->signal);
	jb_key(j, "action"), jb_string(j, d->action);
	jb_key(j, "outcome"), jb_string(j, d->outcome);
	jb_key(j, "hard"), jb_bool(j, d->hard);
	jb_key(j, "priority"), jb_int(j, d->priority);
	jb_key(j, "grace_sec"), jb_uint(j, d->grace_sec);
	jb_key(j, "duration_usec"), jb_uint(j, d->duration_usec);
	jb_key(j, "reclaimed_bytes");
	if (d->reclaimed_bytes >= 0)
		jb_int(j, d->reclaimed_bytes);
	else
		jb_null(j);
	if (d->exec_status >= 0)
		jb_key(j, "exec_status"), jb_int(j, d->exec_status);
	if (d->reclaim[0]) {
		jb_key(j, "reclaim"), jb_string(j, d->reclaim);
		if (strcmp(d->reclaim, "pending") != 0)
			jb_key(j, "reclaim_usec"), jb_uint(j, d->reclaim_usec);
		if (d->has_reclaimed)
			jb_key(j, "reclaimed"), jb_int(j, d->reclaimed);
	}
	jb_end_object(j);
}

/*
 * The status file's directory (/run/evictd) is created when missing: systemd's RuntimeDirectory=
 * does it for the service, but not for `make run`, a container or a test. Only the last
 * component: a missing /run means something else is wrong.
 */
static int make_status_dir(const char *path)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -ENOENT;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Rewrites status.json when something a reader cares about changed (conditions, evictions,
 * decisions, configuration: d->dirty), and otherwise at most every STATUS_IDLE_REFRESH_USEC so
 * that the signal figures stay fresh without costing idle CPU.
 */
void status_write(evictd_daemon *d, bool force)
{
	uint64_t now = clock_mono_usec();
	if (!force && !d->dirty && d->status_written_usec && now - d->status_written_usec < STATUS_IDLE_REFRESH_USEC)
		return;
	jsonbuf j;
	jb_init(&j, STATUS_MAX_BYTES);
	jb_begin_object(&j);
	jb_key(&j, "pid"), jb_int(&j, getpid());
	jb_key(&j, "state"), jb_string(&j, d->stopping ? "stopping" : "running");
	jb_key(&j, "dry_run"), jb_bool(&j, d->cfg->dry_run);
	jb_key(&j, "action"), jb_string(&j, d->cfg->action == ACTION_EXEC ? "exec" : "kill");
	jb_key(&j, "config"), jb_string(&j, d->cfg->sources);
	jb_key(&j, "updated_usec");
	jb_uint(&j, clock_wall_usec());
	/* The longest this file goes without a rewrite while evictd runs: an updated_usec older than
	 * that says evictd is stuck or gone (evictd-kube's liveness check of evictd). */
	jb_key(&j, "heartbeat_usec");
	jb_uint(&j, STATUS_IDLE_REFRESH_USEC + (d->cfg->interval_usec > CADENCE_RATE_MAX_USEC ? d->cfg->interval_usec
	                                                                                   : CADENCE_RATE_MAX_USEC));
	status_json_observations(d, &j);
	jb_key(&j, "evictions");
	jb_begin_array(&j);
	evictor_foreach(d->ev, json_eviction, &j);
	jb_end_array(&j);
	jb_key(&j, "reclaiming");
	jb_begin_array(&j);
	reclaim_foreach(d->reclaim, json_reclaiming, &j);
	jb_end_array(&j);
	jb_key(&j, "decisions");
	jb_begin_array(&j);
	for (size_t i = 0; status_history_get(&d->history, i); i++)
		json_decision(&j, status_history_get(&d->history, i));
	jb_end_array(&j);
	jb_end_object(&j);
	int r = jb_error(&j);
	if (r == 0) {
		r = atomic_write_file(d->status_path, j.buf, j.len);
		if (r == -ENOENT && make_status_dir(d->status_path) == 0)
			r = atomic_write_file(d->status_path, j.buf, j.len);
		if (r == 0) {
			d->status_written_usec = now;
			d->dirty = false;
		}
	}
	if (r < 0 && !d->status_error_logged) {
		log_error_errno(r, "cannot write %s", d->status_path);
		d->status_error_logged = true; /* once, not every tick */
	} else if (r == 0)
		d->status_error_logged = false;
	jb_free(&j);
}

/* "monitoring memory.available pid.available; unavailable nodefs.available": what systemctl
 * status should tell an operator first is which thresholds can actually fire on this node. */
static void status_signals_text(evictd_daemon *d, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		bool first = true;
		for (int s = 0; s < _SIGNAL_MAX && l < size; s++) {
			const threshold_value *h = config_hard(d->cfg, (evictd_signal)s);
			if (!((h && h->set) || d->cfg->soft[s].set))
				continue;
			if (d->node_valid && d->node.s[s].known != (pass == 0))
				continue;
			if (!d->node_valid && pass == 1)
				continue;
			l += (size_t)snprintf(buf + l, size - l, "%s%s%s", first ? (l ? "; " : "") : " ",
			                      first ? (pass == 0 ? "monitoring " : "unavailable ") : "",
			                      signal_name((evictd_signal)s));
			first = false;
		}
	}
	if (!buf[0])
		snprintf(buf, size, "monitoring nothing");
}

void status_notify(evictd_daemon *d)
{
	char line[1024], cond[128], signals[640];
	status_conditions_text(d, cond, sizeof(cond));
	status_signals_text(d, signals, sizeof(signals));
	snprintf(line, sizeof(line), "STATUS=%s%s; %u eviction(s) in progress; last eviction: %s; %s",
	         d->cfg->dry_run ? "dry-run; " : "", cond, evictor_count(d->ev),
	         d->last_eviction[0] ? d->last_eviction : "none", signals);
	if (strcmp(line, d->last_status_line) == 0)
		return; /* a datagram per tick would be idle CPU for nothing */
	snprintf(d->last_status_line, sizeof(d->last_status_line), "%s", line);
	(void)sd_notify(0, line);
}

static void status_json_observations(evictd_daemon *d, jsonbuf *j)
{
	jb_key(j, "signals");
	jb_begin_array(j);
	for (int s = 0; d->node_valid && s < _SIGNAL_MAX; s++) {
		const signal_obs *o = &d->node.s[s];
		jb_begin_object(j);
		jb_key(j, "signal"), jb_string(j, signal_name((evictd_signal)s));
		jb_key(j, "unit"), jb_string(j, signal_unit((evictd_signal)s));
		if (!o->known) {
			jb_key(j, "available"), jb_null(j);
			jb_key(j, "reason"), jb_string(j, o->reason);
		} else {
			jb_key(j, "available"), jb_int(j, o->available);
			jb_key(j, "capacity"), jb_int(j, o->capacity);
		}
		const threshold_value *h = config_hard(d->cfg, (evictd_signal)s);
		jb_key(j, "hard_threshold");
		if (h && h->set && o->known)
			jb_int(j, config_threshold_resolve(h, o->capacity));
		else
			jb_null(j);
		jb_key(j, "soft_threshold");
		if (d->cfg->soft[s].set && o->known)
			jb_int(j, config_threshold_resolve(&d->cfg->soft[s], o->capacity));
		else
			jb_null(j);
		jb_key(j, "met"), jb_bool(j, d->eval.t[THRESHOLD_HARD][s].met || d->eval.t[THRESHOLD_SOFT][s].met);
		jb_end_object(j);
	}
	jb_end_array(j);
	jb_key(j, "conditions");
	jb_begin_array(j);
	for (int c = 0; c < _CONDITION_MAX; c++)
		if (d->eval.conditions[c])
			jb_string(j, signal_condition_name((evictd_condition)c));
	jb_end_array(j);
}

static void status_conditions_text(evictd_daemon *d, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = '\0';
	for (int c = 0; c < _CONDITION_MAX; c++)
		if (d->eval.conditions[c] && l < size)
			l += (size_t)snprintf(buf + l, size - l, "%s%s", l ? ", " : "", signal_condition_name((evictd_condition)c));
	if (!buf[0])
		snprintf(buf, size, "no pressure");
}
