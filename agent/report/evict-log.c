/* SPDX-License-Identifier: MIT */
#include "evict-log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"

static uint64_t monotonic_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

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

void evict_log(evict_event what, const evict_info *i)
{
	char pod[320], bytes[32], grace[32], line[EVICT_STDERR_TAIL];
	snprintf(pod, sizeof(pod), "%s%s%s", i->namespace_, *i->namespace_ ? "/" : "", i->name);
	snprintf(grace, sizeof(grace), "%" PRIu64 "s", (i->grace_usec + 999999) / 1000000);
	log_entry e;

	switch (what) {
	case EVICT_EVENT_STARTED:
		log_entry_init(&e, LOG_WARNING, MSGID_EVICTION_STARTED);
		common_fields(&e, i, pod);
		log_entry_add(&e, FIELD_PROCESSES, "%d", i->procs_signalled);
		log_entry_add(&e, FIELD_EXPECTED_RECLAIM, "%" PRId64, i->expected_reclaim);
		if (i->dry_run)
			log_entry_send(&e, "Dry run: would evict %s (%s, %s threshold): %s, then %s after %s",
			               pod, i->signal, i->hard ? "hard" : "soft",
			               i->exec ? "run the eviction command" : "SIGTERM to every process of its cgroup",
			               i->exec ? "track it" : "cgroup.kill", grace);
		else if (i->exec)
			log_entry_send(&e, "Evicting %s (%s, %s threshold): eviction command started, grace %s",
			               pod, i->signal, i->hard ? "hard" : "soft", grace);
		else if (i->grace_usec == 0)
			log_entry_send(&e, "Evicting %s (%s, %s threshold): no grace period, cgroup.kill at once",
			               pod, i->signal, i->hard ? "hard" : "soft");
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
		break;
	case EVICT_EVENT_RESUMED: {
		log_entry_init(&e, LOG_WARNING, MSGID_EVICTION_RESUMED);
		common_fields(&e, i, pod);
		uint64_t now = monotonic_usec();
		uint64_t left = i->deadline_mono_usec > now ? i->deadline_mono_usec - now : 0;
		log_entry_send(&e, "Resumed the eviction of %s (%s, %s threshold) begun by a previous evictd: %s%s, "
		               "%s in %" PRIu64 ".%03" PRIu64 "s", pod, i->signal, i->hard ? "hard" : "soft",
		               evict_phase_to_string(i->phase),
		               i->exec ? " (command not run again)" : i->sigkilled ? "" : " (SIGTERM not sent again)",
		               i->exec ? "timeout" : "cgroup.kill", left / 1000000, left / 1000 % 1000);
		break;
	}
	case EVICT_EVENT_ESCALATED:
		log_entry_init(&e, LOG_WARNING, NULL);
		common_fields(&e, i, pod);
		log_entry_send(&e, "Grace period of %s over (%s): %s", pod, grace,
		               i->cgroup_kill ? "cgroup.kill written" : "SIGKILL sent to every process (no cgroup.kill)");
		break;
	case EVICT_EVENT_EXEC_DONE:
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
		break;
	case EVICT_EVENT_FINISHED:
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
		if (i->outcome == EVICT_DONE && i->reclaimed_bytes >= 0)
			log_entry_add(&e, FIELD_RECLAIMED_BYTES, "%" PRId64, i->reclaimed_bytes);
		if (i->outcome == EVICT_DONE)
			log_entry_send(&e, "Evicted %s in %" PRIu64 ".%03" PRIu64 "s (%s)%s%s%s", pod,
			               i->duration_usec / 1000000, i->duration_usec / 1000 % 1000,
			               i->sigkilled ? "killed after its grace period" : "exited after SIGTERM",
			               i->reclaimed_bytes >= 0 ? "; " : "",
			               i->reclaimed_bytes >= 0 ? format_bytes(i->reclaimed_bytes, bytes, sizeof(bytes)) : "",
			               i->reclaimed_bytes >= 0 ? " reclaimed" : "");
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
		break;
	}
}
