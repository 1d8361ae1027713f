/* SPDX-License-Identifier: MIT */
#include "evict-log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "decide.h"
#include "log.h"
#include "clock.h"

static const char *action_name(const evict_info *i)
{
	return i->dry_run ? "dry-run" : i->exec ? "exec" : "kill";
}

static void common_fields(log_entry *e, const evict_info *i, const char *pod)
{
	log_entry_add(e, FIELD_POD, "%s", pod);
	log_entry_add(e, FIELD_POD_UID, "%s", i->uid);
	log_entry_add(e, FIELD_NAMESPACE, "%s", i->namespace_);
	log_entry_add(e, FIELD_PRIORITY, "%" PRId32, i->priority);
	log_entry_add(e, FIELD_CGROUP, "%s", i->cgroup_path);
	log_entry_add(e, FIELD_SIGNAL, "%s", i->signal);
	log_entry_add(e, FIELD_THRESHOLD_KIND, "%s", i->hard ? "hard" : "soft");
	log_entry_add(e, FIELD_GRACE_SEC, "%" PRIu64, (i->grace_usec + 999999) / 1000000);
	log_entry_add(e, FIELD_DRY_RUN, "%d", i->dry_run ? 1 : 0);
	log_entry_add(e, FIELD_ACTION, "%s", action_name(i));
}

/* The last line of a command's stderr is usually the reason it failed. */
static void stderr_line(const char *tail, char *buf, size_t size)
{
	size_t n = strlen(tail);
	while (n && (tail[n - 1] == '\n' || tail[n - 1] == ' '))
		n--;
	size_t start = n;
	while (start && tail[start - 1] != '\n')
		start--;
	snprintf(buf, size, "%.*s", (int)(n - start), tail + start);
}

static void say_started(const evict_info *i, const char *pod, const char *grace)
{
	log_entry e;

	log_entry_init(&e, LOG_WARNING, MSGID_EVICTION_STARTED);
	common_fields(&e, i, pod);
	log_entry_add(&e, FIELD_PROCESSES, "%d", i->procs_signalled);
	log_entry_add(&e, FIELD_EXPECTED_RECLAIM, "%" PRId64, i->expected_reclaim);
	/* the real run's action, word for word: a hard threshold (no grace) sends no SIGTERM */
	if (i->dry_run && i->exec)
		log_entry_send(&e, "Dry run: would evict %s (%s, %s threshold): run the eviction command, grace %s",
		               pod, i->signal, i->hard ? "hard" : "soft", grace);
	else if (i->dry_run && i->grace_usec == 0)
		log_entry_send(&e, "Dry run: would evict %s (%s, %s threshold): no grace period, cgroup.kill at once",
		               pod, i->signal, i->hard ? "hard" : "soft");
	else if (i->dry_run)
		log_entry_send(&e, "Dry run: would evict %s (%s, %s threshold): SIGTERM to every process of its "
		               "cgroup, cgroup.kill in %s", pod, i->signal, i->hard ? "hard" : "soft", grace);
	else if (i->exec)
		log_entry_send(&e, "Evicting %s (%s, %s threshold): eviction command started, grace %s",
		               pod, i->signal, i->hard ? "hard" : "soft", grace);
	else if (i->grace_usec == 0)
		log_entry_send(&e, "Evicting %s (%s, %s threshold): no grace period, %s at once", pod, i->signal,
		               i->hard ? "hard" : "soft",
		               !i->sigkilled || i->cgroup_kill ? "cgroup.kill" : "SIGKILL to every process (no cgroup.kill)");
	else {
		/* What the walk could not read is said, but it changes nothing: cgroup.kill ends it. */
		char walk[160] = "";
		if (i->walk_error) {
			log_entry_add(&e, FIELD_REASON, "%s", strerror(-i->walk_error));
			snprintf(walk, sizeof(walk), " (%u sub-cgroup(s) not reached: %s)", i->walk_skipped,
			         strerror(-i->walk_error));
		}
		log_entry_send(&e, "Evicting %s (%s, %s threshold): SIGTERM sent to %d process(es)%s, cgroup.kill in %s",
		               pod, i->signal, i->hard ? "hard" : "soft", i->procs_signalled, walk, grace);
	}
}

static void say_resumed(const evict_info *i, const char *pod)
{
	log_entry e;

	log_entry_init(&e, LOG_WARNING, MSGID_EVICTION_RESUMED);
	common_fields(&e, i, pod);
	uint64_t now = clock_mono_usec();
	uint64_t left = i->deadline_mono_usec > now ? i->deadline_mono_usec - now : 0;
	if (i->sigkilled && !i->exec)
		log_entry_send(&e, "Resumed the eviction of %s (%s, %s threshold) begun by a previous evictd: killing "
		               "(its kill is carried on)", pod, i->signal, i->hard ? "hard" : "soft");
	else
		log_entry_send(&e, "Resumed the eviction of %s (%s, %s threshold) begun by a previous evictd: %s%s, "
		               "%s in %" PRIu64 ".%03" PRIu64 "s", pod, i->signal, i->hard ? "hard" : "soft",
		               evict_phase_to_string(i->phase),
		               i->exec ? " (command not run again)" : " (SIGTERM not sent again)",
		               i->exec ? "timeout" : "cgroup.kill", left / 1000000, left / 1000 % 1000);
}

static void say_escalated(const evict_info *i, const char *pod, const char *grace)
{
	log_entry e;

	/* one cause, one sentence: a kill the eviction's first line announced is not told again */
	if (i->kill_announced)
		return;
	const char *kill = i->cgroup_kill ? "cgroup.kill written" : "SIGKILL sent to every process (no cgroup.kill)";
	log_entry_init(&e, LOG_WARNING, NULL);
	common_fields(&e, i, pod);
	switch (i->kill_cause) {
	case EVICT_KILL_NO_GRACE:
		log_entry_send(&e, "No grace period for %s: %s", pod, kill);
		break;
	case EVICT_KILL_STOPPING:
		log_entry_send(&e, "Stopping: %s killed before the end of its grace period (%s): %s", pod, grace, kill);
		break;
	case EVICT_KILL_LATE:
		log_entry_send(&e, "Grace period of %s ended while no evictd ran (%s): %s", pod, grace, kill);
		break;
	case EVICT_KILL_AGAIN:
		log_entry_send(&e, "Kill of %s carried on from the previous evictd: %s again", pod, kill);
		break;
	default:
		log_entry_send(&e, "Grace period of %s over (%s): %s", pod, grace, kill);
		break;
	}
}

static void say_exec_done(const evict_info *i, const char *pod)
{
	char line[EVICT_STDERR_TAIL];
	log_entry e;

	stderr_line(i->exec_stderr, line, sizeof(line));
	log_entry_init(&e, i->exec_status == 0 ? LOG_INFO : LOG_ERR, NULL);
	common_fields(&e, i, pod);
	log_entry_add(&e, FIELD_EXEC_STATUS, "%d", i->exec_status);
	if (i->exec_stderr[0])
		log_entry_add(&e, FIELD_EXEC_STDERR, "%s", i->exec_stderr);
	if (i->exec_status > 128)
		log_entry_send(&e, "Eviction command for %s killed by signal %d%s%s", pod, i->exec_status - 128,
		               line[0] ? ": " : "", line);
	else
		log_entry_send(&e, "Eviction command for %s exited with status %d%s%s", pod, i->exec_status,
		               line[0] ? ": " : "", line);
}

static void say_finished(const evict_info *i, const char *pod)
{
	log_entry e;

	if (i->outcome == EVICT_DRY)
		return; /* said at the start */
	bool ok = i->outcome == EVICT_DONE || i->outcome == EVICT_HANDED_OVER || i->outcome == EVICT_GONE ||
	          i->outcome == EVICT_EMPTY;
	log_entry_init(&e, i->outcome == EVICT_GONE || i->outcome == EVICT_EMPTY ? LOG_WARNING : ok ? LOG_NOTICE : LOG_ERR,
	               ok ? MSGID_EVICTION_FINISHED : MSGID_EVICTION_FAILED);
	common_fields(&e, i, pod);
	log_entry_add(&e, FIELD_OUTCOME, "%s", evict_outcome_to_string(i->outcome));
	log_entry_add(&e, FIELD_DURATION_MSEC, "%" PRIu64, i->duration_usec / 1000);
	if (i->exec_status >= 0)
		log_entry_add(&e, FIELD_EXEC_STATUS, "%d", i->exec_status);
	/* Not "reclaimed": the node has the pod's resources back only when its cgroup is gone. */
	if (i->outcome == EVICT_DONE)
		log_entry_send(&e, "Evicted %s in %" PRIu64 ".%03" PRIu64 "s (%s): its processes are gone; "
		               "its resources are not back until its pod cgroup is removed", pod,
		               i->duration_usec / 1000000, i->duration_usec / 1000 % 1000,
		               i->exec ? "eviction command succeeded"
		               : i->sigkilled ? (i->grace_usec ? "killed after its grace period" : "killed")
		                              : "exited after SIGTERM");
	else if (i->outcome == EVICT_GONE) {
		log_entry_add(&e, FIELD_REASON, "pod cgroup gone");
		log_entry_send(&e, "Eviction of %s not started: its cgroup %s is gone (the pod ended after it "
		               "was chosen); nothing was signalled", pod, i->cgroup_path);
	} else if (i->outcome == EVICT_EMPTY) {
		log_entry_add(&e, FIELD_REASON, "no process left");
		log_entry_send(&e, "Eviction of %s not started: its cgroup %s has no process left "
		               "(populated 0); nothing was signalled, it is not chosen again", pod, i->cgroup_path);
	} else if (i->outcome == EVICT_HANDED_OVER)
		log_entry_send(&e, "Stopping: the eviction of %s is left to the command's orchestrator", pod);
	else {
		log_entry_add(&e, FIELD_REASON, "%s", i->error ? strerror(-i->error) : "command failed");
		log_entry_send(&e, "Eviction of %s %s after %" PRIu64 ".%03" PRIu64 "s: %s", pod,
		               i->outcome == EVICT_TIMEOUT ? "timed out" : "failed",
		               i->duration_usec / 1000000, i->duration_usec / 1000 % 1000,
		               i->error ? strerror(-i->error)
		                        : i->exec_status >= 0 ? "the eviction command failed" : "unknown error");
	}
}

/* One function per event: each says its own sentences, with the fields every entry carries. */
void evict_log(evict_event what, const evict_info *i)
{
	char pod[320], grace[32];

	snprintf(pod, sizeof(pod), "%s%s%s", i->namespace_, *i->namespace_ ? "/" : "", i->name);
	snprintf(grace, sizeof(grace), "%" PRIu64 "s", (i->grace_usec + 999999) / 1000000);
	switch (what) {
	case EVICT_EVENT_STARTED:
		say_started(i, pod, grace);
		break;
	case EVICT_EVENT_RESUMED:
		say_resumed(i, pod);
		break;
	case EVICT_EVENT_ESCALATED:
		say_escalated(i, pod, grace);
		break;
	case EVICT_EVENT_EXEC_DONE:
		say_exec_done(i, pod);
		break;
	case EVICT_EVENT_FINISHED:
		say_finished(i, pod);
		break;
	}
}

void evict_log_restarted(const char *pod, const char *uid, const char *cgroup, int error)
{
	log_entry l;
	log_entry_init(&l, error ? LOG_ERR : LOG_WARNING, MSGID_VICTIM_RESTARTED);
	log_entry_add(&l, FIELD_POD, "%s", pod);
	log_entry_add(&l, FIELD_POD_UID, "%s", uid);
	log_entry_add(&l, FIELD_CGROUP, "%s", cgroup);
	if (error) {
		log_entry_add(&l, FIELD_REASON, "%s", strerror(-error));
		log_entry_send(&l, "Processes reappeared in evicted pod %s (containers restarted): killing them again "
		               "failed: %s", pod, strerror(-error));
	} else
		log_entry_send(&l, "Processes reappeared in evicted pod %s (containers restarted before its deletion): "
		               "killed again with cgroup.kill; not a new eviction (said once)", pod);
}

/* The parts still outstanding: "container logs /var/log/pods/ns_a_uid (1Mi for nodefs.available), ...". */
static void outstanding(const reclaim_entry *e, char *list, size_t list_size, char *names, size_t names_size)
{
	size_t l = 0, n = 0;
	list[0] = names[0] = '\0';
	for (int p = 0; p < _RECLAIM_PART_MAX; p++) {
		reclaim_part part = (reclaim_part)p;
		if (e->part_back[p] || !reclaim_part_tracked(e, part))
			continue;
		char amount[96] = "";
		evictd_signal s = e->signal;
		int64_t a = s == SIGNAL_NODEFS_INODES_FREE ? e->part_inodes[p] : e->part_bytes[p];
		if (part != RECLAIM_PART_CGROUP && (reclaim_signal_parts(e, s) & (1u << p)) && a >= 0) {
			char v[32];
			snprintf(amount, sizeof(amount), " (%s for %s)", decide_format_signal_value(s, a, v, sizeof(v)), signal_name(s));
		}
		if (l < list_size)
			l += (size_t)snprintf(list + l, list_size - l, "%s%s%s%s%s", l ? ", " : "", reclaim_part_name(part),
			                      part == RECLAIM_PART_CGROUP ? "" : " ",
			                      part == RECLAIM_PART_CGROUP ? "" : reclaim_part_path(e, part), amount);
		if (n < names_size)
			n += (size_t)snprintf(names + n, names_size - n, "%s%s", n ? ", " : "", reclaim_part_name(part));
	}
}

/* "pod cgroup, emptyDir volumes, container logs": the parts in mask (a bit each). */
static void part_list(unsigned mask, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = '\0';
	for (int p = 0; p < _RECLAIM_PART_MAX && l < size; p++)
		if (mask & (1u << p))
			l += (size_t)snprintf(buf + l, size - l, "%s%s", l ? ", " : "", reclaim_part_name((reclaim_part)p));
}

/* The parts the entry tracked. */
static void tracked(const reclaim_entry *e, char *buf, size_t size)
{
	unsigned mask = 0;
	for (int p = 0; p < _RECLAIM_PART_MAX; p++)
		if (reclaim_part_tracked(e, (reclaim_part)p))
			mask |= 1u << p;
	part_list(mask, buf, size);
}

static void reclaim_fields(log_entry *l, const reclaim_entry *e, uint64_t took, const char *names)
{
	evictd_signal s = e->signal;
	log_entry_add(l, FIELD_POD, "%s", e->pod);
	log_entry_add(l, FIELD_POD_UID, "%s", e->uid);
	log_entry_add(l, FIELD_CGROUP, "%s", e->cgroup);
	log_entry_add(l, FIELD_SIGNAL, "%s", s >= 0 && s < _SIGNAL_MAX ? signal_name(s) : "?");
	log_entry_add(l, FIELD_UNIT, "%s", signal_unit(s));
	log_entry_add(l, FIELD_DRY_RUN, "%d", e->dry_run ? 1 : 0);
	log_entry_add(l, FIELD_RECLAIM_MSEC, "%" PRIu64, took / 1000);
	log_entry_add(l, FIELD_EXPECTED_RECLAIM, "%" PRId64, e->expected[s]);
	if (names[0])
		log_entry_add(l, FIELD_RECLAIM_OUTSTANDING, "%s", names);
}

void evict_log_reclaim(reclaim_event what, const reclaim_entry *e, bool now_known, int64_t now_value, uint64_t now_usec)
{
	log_entry l;
	char was[32], is[32], delta[40], exp[32], left[1024], names[128], parts[96];
	evictd_signal s = e->signal;
	uint64_t took = now_usec > e->gone_usec ? now_usec - e->gone_usec : 0;
	const char *sig = s >= 0 && s < _SIGNAL_MAX ? signal_name(s) : "?";

	if (what == RECLAIM_REKILLED) {
		evict_log_restarted(e->pod, e->uid, e->cgroup, e->rekill_error);
		return;
	}
	outstanding(e, left, sizeof(left), names, sizeof(names));
	if (what == RECLAIM_PART_BACK) {
		char back[96];
		part_list(e->just_back, back, sizeof(back));
		log_entry_init(&l, LOG_INFO, MSGID_RECLAIM_PROGRESS);
		reclaim_fields(&l, e, took, names);
		log_entry_add(&l, FIELD_RECLAIM_BACK, "%s", back);
		log_entry_send(&l, "%sReclaim of evicted %s: %s back %" PRIu64 ".%03" PRIu64 "s after its processes; "
		               "still outstanding: %s", e->dry_run ? "Dry run: " : "", e->pod, back,
		               took / 1000000, took / 1000 % 1000, left);
		return;
	}

	int64_t moved = 0;
	bool known = reclaim_measured(e, s, now_known, now_value, &moved) == 0;
	int64_t base = now_value - moved;
	if (known) {
		decide_format_signal_value(s, base, was, sizeof(was));
		decide_format_signal_value(s, now_value, is, sizeof(is));
		int64_t d = now_value - base;
		delta[0] = d >= 0 ? '+' : '-';
		decide_format_signal_value(s, d >= 0 ? d : -d, delta + 1, sizeof(delta) - 1);
	}
	if (e->expected[s] >= 0)
		decide_format_signal_value(s, e->expected[s], exp, sizeof(exp));
	else
		snprintf(exp, sizeof(exp), "unknown");

	log_entry_init(&l, what == RECLAIM_DONE ? LOG_NOTICE : LOG_WARNING,
	               what == RECLAIM_DONE ? MSGID_EVICTION_RECLAIMED : MSGID_RECLAIM_TIMEOUT);
	reclaim_fields(&l, e, took, names);
	if (known) {
		log_entry_add(&l, FIELD_RECLAIMED, "%" PRId64, now_value - base);
		log_entry_add(&l, FIELD_OBSERVED, "%" PRId64, now_value);
	}
	char change[160];
	if (known)
		snprintf(change, sizeof(change), "%s %s -> %s (%s, expected %s)", sig, was, is, delta, exp);
	else
		snprintf(change, sizeof(change), "%s not readable (expected %s)", sig, exp);
	tracked(e, parts, sizeof(parts));
	if (what == RECLAIM_DONE)
		log_entry_send(&l, "%sReclaimed: what evicted %s held is back (%s), %" PRIu64 ".%03" PRIu64 "s after "
		               "its processes; %s", e->dry_run ? "Dry run: " : "", e->pod, parts, took / 1000000,
		               took / 1000 % 1000, change);
	else if (e->dry_run)
		log_entry_send(&l, "Dry run: the reclaim of %s would have timed out after %" PRIu64 "s (its processes "
		               "run on: nothing was killed); %s; other pods may be chosen now", e->pod, took / 1000000,
		               change);
	else
		log_entry_send(&l, "Reclaim of evicted %s timed out after %" PRIu64 "s, still outstanding: %s; %s; "
		               "other pods may be chosen now", e->pod, took / 1000000, left, change);
}

void evict_log_reclaim_resumed(const reclaim_entry *e, uint64_t now_usec)
{
	log_entry l;
	char left[1024], names[128], pend[256] = "";
	uint64_t took = now_usec > e->gone_usec ? now_usec - e->gone_usec : 0;
	uint64_t rest = e->deadline_usec > now_usec ? e->deadline_usec - now_usec : 0;
	size_t n = 0;

	outstanding(e, left, sizeof(left), names, sizeof(names));
	for (int s = 0; s < _SIGNAL_MAX && n < sizeof(pend); s++) {
		unsigned m = reclaim_signal_parts(e, (evictd_signal)s), out = 0;
		for (int p = 0; p < _RECLAIM_PART_MAX; p++)
			out |= (unsigned)!e->part_back[p] << p;
		if (e->relieved[s] || e->expected[s] <= 0 || signal_is_psi((evictd_signal)s) || !(m & out))
			continue;
		char v[32];
		n += (size_t)snprintf(pend + n, sizeof(pend) - n, "%s%s %s", n ? ", " : "", signal_name((evictd_signal)s),
		                      decide_format_signal_value((evictd_signal)s, e->expected[s], v, sizeof(v)));
	}
	log_entry_init(&l, LOG_NOTICE, MSGID_RECLAIM_RESUMED);
	reclaim_fields(&l, e, took, names);
	log_entry_send(&l, "Resumed the reclaim of evicted %s begun by a previous evictd (its processes gone %" PRIu64
	               ".%03" PRIu64 "s ago): pending %s; outstanding: %s; reclaim timeout in %" PRIu64 ".%03" PRIu64 "s",
	               e->pod, took / 1000000, took / 1000 % 1000,
	               pend[0] ? pend : "nothing known (no pressure left on its signals, or its reclaim is unknown)",
	               left[0] ? left : "nothing", rest / 1000000, rest / 1000 % 1000);
}
