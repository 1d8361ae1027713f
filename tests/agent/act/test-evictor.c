/* SPDX-License-Identifier: MIT */
/*
 * The eviction actions on fixture cgroup trees: real child processes are listed in fixture
 * cgroup.procs files, so SIGTERM/SIGKILL reach real processes while the tree stays a plain
 * directory (no cgroup.kill there: this also exercises the per-process SIGKILL fallback).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgkill.h"
#include "evict-log.h"
#include "evictor.h"
#include "exec-argv.h"
#include "kid.h"
#include "scratch.h"

#define MAX_KIDS 8

typedef struct fixture {
	char root[64];      /* the pod cgroup directory */
	pid_t kids[MAX_KIDS];
	int status[MAX_KIDS];
	bool reaped[MAX_KIDS];
	size_t n;
	uint64_t died_usec[MAX_KIDS];
	/* evictor events */
	int started, escalated, exec_done, finished, resumed;
	evict_info last;    /* copy of the FINISHED info (strings not kept) */
	char stderr_tail[EVICT_STDERR_TAIL];
	sd_event *e;
	evictor *ev;
	bool fixture_tracks_populated;
	bool log; /* also write the daemon's log lines (evict_log) to stderr */
} fixture;

static void write_file(const char *dir, const char *name, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A child that waits for signals; ignore_term makes it survive SIGTERM (a pod ignoring it). */
static pid_t spawn_kid(bool ignore_term)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		kid_wait_for_signals(ignore_term);
	}
	return pid;
}

static void add_procs(fixture *f, const char *dir, size_t from, size_t to)
{
	char buf[256] = "";
	for (size_t i = from; i < to; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, sizeof(buf) - l, "%d\n", (int)f->kids[i]);
	}
	write_file(dir, "cgroup.procs", buf);
}

/* Pod with kids[0..n_top) at the top and kids[n_top..n) in a "ctr" child cgroup. */
static fixture *fixture_new(size_t n_top, size_t n_sub, bool ignore_term)
{
	fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	scratch_template(f->root, sizeof(f->root), "evictd-test");
	assert_non_null(mkdtemp(f->root));
	/* Children must not inherit a blocked SIGCHLD issue: fork before the evictor blocks it. */
	for (size_t i = 0; i < n_top + n_sub; i++)
		f->kids[f->n++] = spawn_kid(ignore_term);
	usleep(20000); /* let the kids install their dispositions */
	add_procs(f, f->root, 0, n_top);
	write_file(f->root, "cgroup.events", "populated 1\nfrozen 0\n");
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/ctr", f->root);
	assert_int_equal(mkdir(sub, 0755), 0);
	add_procs(f, sub, n_top, n_top + n_sub);
	write_file(sub, "cgroup.events", "populated 1\nfrozen 0\n");
	assert_int_equal(sd_event_new(&f->e), 0);
	return f;
}

static size_t reap(fixture *f)
{
	size_t alive = 0;
	for (size_t i = 0; i < f->n; i++) {
		if (f->reaped[i])
			continue;
		if (waitpid(f->kids[i], &f->status[i], WNOHANG) == f->kids[i]) {
			f->reaped[i] = true;
			f->died_usec[i] = mono_usec();
		} else
			alive++;
	}
	return alive;
}

static void fixture_free(fixture *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (!f->reaped[i]) {
			kill(f->kids[i], SIGKILL);
			waitpid(f->kids[i], NULL, 0);
		}
	evictor_free(f->ev);
	sd_event_unref(f->e);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
}

static void on_evict(evictor *ev, evict_event what, const evict_info *info, void *userdata)
{
	(void)ev;
	fixture *f = userdata;
	if (f->log)
		evict_log(what, info);
	switch (what) {
	case EVICT_EVENT_STARTED:   f->started++; break;
	case EVICT_EVENT_ESCALATED: f->escalated++; break;
	case EVICT_EVENT_EXEC_DONE: f->exec_done++; break;
	case EVICT_EVENT_RESUMED:   f->resumed++; break;
	case EVICT_EVENT_FINISHED:
		f->finished++;
		f->last = *info;
		memcpy(f->stderr_tail, info->exec_stderr, sizeof(f->stderr_tail));
		break;
	}
}

/* Plays the kernel's part on the fixture: once every kid is dead, cgroup.events says so. */
static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)usec;
	fixture *f = userdata;
	if (reap(f) == 0 && f->fixture_tracks_populated)
		write_file(f->root, "cgroup.events", "populated 0\nfrozen 0\n");
	sd_event_source_set_time_relative(s, 10000);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

/* Runs the loop until the eviction finished or limit_usec passed. */
static void run_until_finished(fixture *f, uint64_t limit_usec)
{
	sd_event_source *tick;
	assert_int_equal(sd_event_add_time_relative(f->e, &tick, CLOCK_MONOTONIC, 10000, 1000, on_tick, f), 0);
	uint64_t end = mono_usec() + limit_usec;
	while (f->finished == 0 && mono_usec() < end)
		assert_true(sd_event_run(f->e, 50000) >= 0);
	sd_event_source_disable_unref(tick);
}

static void make_evictor(fixture *f, const evict_config *cfg)
{
	assert_int_equal(evictor_new(f->e, cfg, on_evict, f, &f->ev), 0);
}

static void make_default_evictor(fixture *f)
{
	evict_config cfg;
	evict_config_init(&cfg);
	make_evictor(f, &cfg);
}

static evict_request request(fixture *f, const char *uid, uint64_t grace_usec)
{
	return (evict_request){
		.uid = uid, .namespace_ = "default", .name = "web-1", .cgroup_path = f->root,
		.signal = "memory.available", .grace_usec = grace_usec, .usage = 1000, .expected_reclaim = 1000,
	};
}

/* --- cgkill on fixture trees ------------------------------------------------------------------ */

static void test_signal_tree_reaches_nested_cgroups_but_not_self(void **state)
{
	(void)state;
	fixture *f = fixture_new(2, 1, false);
	/* our own pid in the list must be skipped: the agent never kills itself */
	char buf[128];
	snprintf(buf, sizeof(buf), "%d\n%d\n%d\n", (int)f->kids[0], (int)getpid(), (int)f->kids[1]);
	write_file(f->root, "cgroup.procs", buf);
	int dfd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(cg_signal_tree(dfd, SIGTERM, getpid()), 3);
	for (size_t i = 0; i < f->n; i++) {
		assert_int_equal(waitpid(f->kids[i], &f->status[i], 0), f->kids[i]);
		f->reaped[i] = true;
		assert_true(WIFSIGNALED(f->status[i]));
		assert_int_equal(WTERMSIG(f->status[i]), SIGTERM);
	}
	/* exited processes are not errors */
	assert_int_equal(cg_signal_tree(dfd, SIGTERM, getpid()), 0);
	assert_int_equal(cg_populated(dfd), 1);
	write_file(f->root, "cgroup.events", "populated 0\n");
	assert_int_equal(cg_populated(dfd), 0);
	write_file(f->root, "cgroup.events", "frozen 0\n");
	assert_int_equal(cg_populated(dfd), -EBADMSG);
	/* a value that is neither 0 nor 1 is not "empty": a misread must not end a grace period */
	write_file(f->root, "cgroup.events", "populated x\nfrozen 0\n");
	assert_int_equal(cg_populated(dfd), -EBADMSG);
	assert_int_equal(cg_kill(dfd), -ENOENT); /* fixture: no cgroup.kill */
	close(dfd);
	fixture_free(f);
}

static void test_signal_tree_rejects_garbage_procs(void **state)
{
	(void)state;
	fixture *f = fixture_new(0, 0, false);
	write_file(f->root, "cgroup.procs", "12x\n");
	int dfd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(cg_signal_tree(dfd, 0, getpid()), -EBADMSG);
	close(dfd);
	fixture_free(f);
}

/* --- kill action ------------------------------------------------------------------------------ */

static void test_kill_sigterm_then_sigkill_after_grace(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 1, true); /* both ignore SIGTERM */
	f->fixture_tracks_populated = true;
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.recheck_usec = 20000;
	make_evictor(f, &cfg);
	evict_request rq = request(f, "uid-1", 300000);
	uint64_t t0 = mono_usec();
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	assert_int_equal(f->started, 1);
	assert_true(evictor_contains(f->ev, "uid-1"));
	assert_int_equal(evictor_pending_reclaim(f->ev, "memory.available"), 1000);
	assert_int_equal(evictor_pending_reclaim(f->ev, "pid.available"), 0);
	run_until_finished(f, 5000000);
	assert_int_equal(f->finished, 1);
	assert_int_equal(f->escalated, 1);
	assert_int_equal(f->last.outcome, EVICT_DONE);
	assert_int_equal(f->last.procs_signalled, 2);
	assert_true(f->last.sigkilled);
	assert_int_equal(f->last.kill_cause, EVICT_KILL_GRACE_OVER);
	assert_false(f->last.kill_announced);
	assert_false(f->last.cgroup_kill); /* fixture: per-process SIGKILL fallback */
	for (size_t i = 0; i < f->n; i++) {
		assert_true(f->reaped[i]);
		assert_int_equal(WTERMSIG(f->status[i]), SIGKILL);
		/* the grace period was honoured */
		assert_true(f->died_usec[i] - t0 >= 300000);
	}
	assert_true(f->last.duration_usec >= 300000);
	assert_false(evictor_contains(f->ev, "uid-1"));
	assert_int_equal(evictor_pending_reclaim(f->ev, NULL), 0);
	fixture_free(f);
}

static void test_kill_done_before_grace_when_pod_obeys_sigterm(void **state)
{
	(void)state;
	fixture *f = fixture_new(2, 0, false);
	f->fixture_tracks_populated = true;
	make_default_evictor(f);
	evict_request rq = request(f, "uid-2", 30000000);
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	run_until_finished(f, 5000000);
	assert_int_equal(f->last.outcome, EVICT_DONE);
	assert_int_equal(f->escalated, 0);
	assert_false(f->last.sigkilled);
	for (size_t i = 0; i < f->n; i++)
		assert_int_equal(WTERMSIG(f->status[i]), SIGTERM);
	assert_true(f->last.duration_usec < 5000000);
	fixture_free(f);
}

static void test_hard_eviction_kills_without_grace(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, true);
	f->fixture_tracks_populated = true;
	make_default_evictor(f);
	evict_request rq = request(f, "uid-3", 30000000);
	rq.hard = true;
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	assert_int_equal(f->escalated, 1); /* escalated within evictor_start */
	run_until_finished(f, 5000000);
	assert_int_equal(f->last.outcome, EVICT_DONE);
	assert_int_equal(f->last.grace_usec, 0);
	/* its first line says the kill; the kill's own event must not say it again (issue 29) */
	assert_int_equal(f->last.kill_cause, EVICT_KILL_NO_GRACE);
	assert_true(f->last.kill_announced);
	assert_int_equal(WTERMSIG(f->status[0]), SIGKILL);
	fixture_free(f);
}

static void test_tracker_never_starts_a_pod_twice(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, true);
	make_default_evictor(f);
	evict_request rq = request(f, "uid-4", 10000000);
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	assert_int_equal(evictor_start(f->ev, &rq), -EALREADY);
	evict_request other = request(f, "uid-5", 10000000);
	other.signal = "pid.available";
	other.expected_reclaim = 3;
	assert_int_equal(evictor_start(f->ev, &other), 0);
	assert_int_equal(evictor_count(f->ev), 2);
	assert_int_equal(evictor_pending_reclaim(f->ev, "memory.available"), 1000);
	assert_int_equal(evictor_pending_reclaim(f->ev, "pid.available"), 3);
	assert_int_equal(evictor_pending_reclaim(f->ev, NULL), 1003);
	assert_int_equal(f->started, 2);
	fixture_free(f);
}

static void test_kill_timeout_when_cgroup_stays_populated(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, true);
	/* fixture_tracks_populated stays false: cgroup.events keeps saying populated 1 */
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.kill_timeout_usec = 100000;
	cfg.recheck_usec = 20000;
	make_evictor(f, &cfg);
	evict_request rq = request(f, "uid-6", 50000);
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	run_until_finished(f, 5000000);
	assert_int_equal(f->last.outcome, EVICT_TIMEOUT);
	assert_int_equal(f->last.error, -ETIMEDOUT);
	assert_false(evictor_contains(f->ev, "uid-6")); /* may be chosen again by the next decision */
	fixture_free(f);
}

static void test_missing_cgroup_fails_and_is_not_tracked(void **state)
{
	(void)state;
	fixture *f = fixture_new(0, 0, false);
	make_default_evictor(f);
	evict_request rq = request(f, "uid-7", 1000000);
	rq.cgroup_path = "/nonexistent/evictd/pod";
	assert_int_equal(evictor_start(f->ev, &rq), -ENOENT);
	assert_int_equal(f->finished, 1);
	assert_int_equal(f->last.outcome, EVICT_GONE); /* a missing cgroup is a pod that ended */
	assert_int_equal(evictor_count(f->ev), 0);
	rq.cgroup_path = "relative/path";
	assert_int_equal(evictor_start(f->ev, &rq), -EINVAL);
	fixture_free(f);
}

static void test_dry_run_touches_nothing(void **state)
{
	(void)state;
	fixture *f = fixture_new(2, 0, false);
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.dry_run = true;
	make_evictor(f, &cfg);
	evict_request rq = request(f, "uid-8", 0);
	rq.hard = true;
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	assert_true(evictor_contains(f->ev, "uid-8"));
	run_until_finished(f, 3000000);
	assert_int_equal(f->last.outcome, EVICT_DRY);
	assert_true(f->last.dry_run);
	assert_int_equal(f->last.procs_signalled, 0);
	assert_int_equal(reap(f), 2); /* both alive */
	fixture_free(f);
}

static void test_shutdown_escalates_pods_in_grace(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, true);
	f->fixture_tracks_populated = true;
	make_default_evictor(f);
	evict_request rq = request(f, "uid-9", 60000000);
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	assert_int_equal(evictor_shutdown(f->ev), 1);
	assert_int_equal(f->escalated, 1);
	assert_int_equal(evictor_start(f->ev, &(evict_request){ .uid = "x", .cgroup_path = "/x" }), -ESHUTDOWN);
	run_until_finished(f, 5000000);
	assert_int_equal(f->last.outcome, EVICT_DONE);
	assert_int_equal(WTERMSIG(f->status[0]), SIGKILL);
	assert_int_equal(evictor_count(f->ev), 0);
	fixture_free(f);
}

/* --- exec action ------------------------------------------------------------------------------ */

static void test_argv_placeholders_stay_single_arguments(void **state)
{
	(void)state;
	char *conf[] = { "/usr/libexec/evictd/k8s-evict", "--pod={namespace}/{name}", "{uid}",
	                 "{grace}", "{{literal}}", NULL };
	exec_vars v = { "default", "web 1; rm -rf /", "0123-abc", "30" };
	char **out = NULL;
	assert_int_equal(exec_argv_expand(conf, &v, &out), 0);
	assert_string_equal(out[0], "/usr/libexec/evictd/k8s-evict");
	assert_string_equal(out[1], "--pod=default/web 1; rm -rf /");
	assert_string_equal(out[2], "0123-abc");
	assert_string_equal(out[3], "30");
	assert_string_equal(out[4], "{literal}");
	assert_null(out[5]);
	exec_argv_free(out);

	const char *bad = NULL;
	char *unknown[] = { "/bin/x", "{pod}", NULL };
	assert_int_equal(exec_argv_validate(unknown, &bad), -EINVAL);
	assert_string_equal(bad, "{pod}");
	char *unclosed[] = { "/bin/x", "{name", NULL };
	assert_int_equal(exec_argv_validate(unclosed, &bad), -EINVAL);
	char *relative[] = { "kubectl", "{name}", NULL };
	assert_int_equal(exec_argv_validate(relative, &bad), -EINVAL);
	assert_string_equal(bad, "kubectl");
	assert_int_equal(exec_argv_validate(conf, NULL), 0);
	assert_int_equal(exec_argv_expand(unknown, &v, &out), -EINVAL);

	char big[EXEC_ARG_MAX];
	memset(big, 'a', sizeof(big) - 10);
	big[sizeof(big) - 10] = '\0';
	char *toolong[] = { "/bin/x", big, NULL };
	exec_vars lv = { "default", "0123456789abc", "u", "1" };
	strcat(big, "{name}");
	assert_int_equal(exec_argv_expand(toolong, &lv, &out), -E2BIG);
}

static void test_exec_failure_logs_status_and_stderr_tail(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, false);
	char *argv[] = { "/bin/sh", "-c", "printf '%s|' \"$@\" >&2; exit 3", "sh", "{namespace}", "{name}",
	                 "{uid}", "{grace}", NULL };
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.use_exec = true;
	cfg.exec_argv = argv;
	make_evictor(f, &cfg);
	evict_request rq = request(f, "uid-10", 2500000);
	rq.name = "web 1";
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	run_until_finished(f, 5000000);
	assert_int_equal(f->exec_done, 1);
	assert_int_equal(f->last.outcome, EVICT_FAILED);
	assert_int_equal(f->last.exec_status, 3);
	assert_string_equal(f->stderr_tail, "default|web 1|uid-10|3|");
	assert_int_equal(reap(f), 1); /* no fallback configured: the pod is untouched */
	fixture_free(f);
}

static void test_exec_failure_falls_back_to_kill_when_configured(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, false);
	f->fixture_tracks_populated = true;
	char *argv[] = { "/bin/false", NULL };
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.use_exec = true;
	cfg.exec_argv = argv;
	cfg.exec_fallback_kill = true;
	make_evictor(f, &cfg);
	evict_request rq = request(f, "uid-11", 1000000);
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	run_until_finished(f, 5000000);
	assert_int_equal(f->last.outcome, EVICT_DONE);
	assert_int_equal(f->last.exec_status, 1);
	assert_true(f->reaped[0]);
	assert_int_equal(WTERMSIG(f->status[0]), SIGTERM);
	fixture_free(f);
}

static void test_exec_timeout_kills_the_command(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, false);
	char *argv[] = { "/bin/sleep", "30", NULL };
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.use_exec = true;
	cfg.exec_argv = argv;
	cfg.exec_timeout_usec = 100000;
	make_evictor(f, &cfg);
	evict_request rq = request(f, "uid-12", 1000000);
	uint64_t t0 = mono_usec();
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	run_until_finished(f, 5000000);
	assert_int_equal(f->last.outcome, EVICT_FAILED);
	assert_int_equal(f->last.exec_status, 128 + SIGKILL);
	assert_true(mono_usec() - t0 < 3000000);
	fixture_free(f);
}

static void test_exec_success_tracks_pod_until_gone(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, false);
	char *argv[] = { "/bin/true", NULL };
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.use_exec = true;
	cfg.exec_argv = argv;
	make_evictor(f, &cfg);
	evict_request rq = request(f, "uid-13", 1000000);
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	/* the command returned 0 but the pod still runs: it stays tracked */
	uint64_t end = mono_usec() + 300000;
	while (mono_usec() < end)
		assert_true(sd_event_run(f->e, 50000) >= 0);
	assert_int_equal(f->exec_done, 1);
	assert_true(evictor_contains(f->ev, "uid-13"));
	/* the orchestrator deletes it */
	kill(f->kids[0], SIGKILL);
	f->fixture_tracks_populated = true;
	run_until_finished(f, 5000000);
	assert_int_equal(f->last.outcome, EVICT_DONE);
	assert_int_equal(f->last.exec_status, 0);
	fixture_free(f);
}

/* --- a pod cgroup disappearing between the decision and the kill (issue 7) --------------------- */

static void run_for(fixture *f, uint64_t usec)
{
	uint64_t end = mono_usec() + usec;
	while (mono_usec() < end)
		assert_true(sd_event_run(f->e, 20000) >= 0);
}

static void test_pod_gone_between_choice_and_kill(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, false); /* the victim: kids[0] */
	/* A bystander in another pod cgroup; SIGTERM and SIGKILL are fatal to it, so alive = untouched. */
	char other[64];
	scratch_template(other, sizeof(other), "evictd-other");
	assert_non_null(mkdtemp(other));
	f->kids[f->n++] = spawn_kid(false);
	usleep(20000);
	add_procs(f, other, 1, 2);
	write_file(other, "cgroup.events", "populated 1\nfrozen 0\n");
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.recheck_usec = 20000;
	cfg.kill_timeout_usec = 200000;
	make_evictor(f, &cfg);
	f->log = true;

	/* The decision chose the pod; before the evictor acts, the pod ends and its cgroup is removed. */
	assert_int_equal(kill(f->kids[0], SIGKILL), 0);
	assert_int_equal(waitpid(f->kids[0], &f->status[0], 0), f->kids[0]);
	f->reaped[0] = true;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->root);
	assert_int_equal(system(cmd), 0);

	char log[4096];
	int saved = -1, fd = log_capture_begin(&saved);
	assert_true(fd >= 0);
	evict_request rq = request(f, "uid-gone", 200000);
	int r = evictor_start(f->ev, &rq);
	run_for(f, 300000); /* past the grace and the kill timeout it would have had */
	assert_true(log_capture_end(fd, saved, log, sizeof(log)) > 0);

	assert_int_equal(r, -ENOENT);
	assert_int_equal(f->started, 0); /* nothing was started, so no "SIGTERM sent" line either */
	assert_int_equal(f->finished, 1);
	assert_int_equal(f->last.outcome, EVICT_GONE);
	assert_string_equal(evict_outcome_to_string(f->last.outcome), "gone");
	assert_int_equal(f->last.error, -ENOENT);
	assert_int_equal(f->last.procs_signalled, 0);
	assert_int_equal(f->escalated, 0);
	assert_false(f->last.sigkilled);
	/* one line, naming the pod and saying what happened; no claim that anything was signalled */
	assert_non_null(strstr(log, "Eviction of default/web-1 not started: its cgroup"));
	assert_non_null(strstr(log, "is gone"));
	assert_non_null(strstr(log, f->root));
	assert_null(strstr(log, "SIGTERM sent"));
	assert_null(strchr(strchr(log, '\n') + 1, '\n'));
	/* not tracked: no pending reclaim holds back the next decision */
	assert_int_equal(evictor_count(f->ev), 0);
	assert_false(evictor_contains(f->ev, "uid-gone"));
	assert_int_equal(evictor_pending_reclaim(f->ev, NULL), 0);
	assert_true(kid_alive(f->kids[1]));

	/* The same uid, chosen again once its cgroup exists again, is evicted normally. */
	assert_int_equal(mkdir(f->root, 0755), 0);
	f->kids[f->n++] = spawn_kid(false);
	usleep(20000);
	add_procs(f, f->root, 2, 3);
	write_file(f->root, "cgroup.events", "populated 1\nfrozen 0\n");
	f->log = false;
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	uint64_t end = mono_usec() + 5000000;
	while (f->finished < 2 && mono_usec() < end) {
		if (!f->reaped[2] && waitpid(f->kids[2], &f->status[2], WNOHANG) == f->kids[2]) {
			f->reaped[2] = true;
			write_file(f->root, "cgroup.events", "populated 0\nfrozen 0\n");
		}
		assert_true(sd_event_run(f->e, 20000) >= 0);
	}
	assert_int_equal(f->finished, 2);
	assert_int_equal(f->last.outcome, EVICT_DONE);
	assert_int_equal(WTERMSIG(f->status[2]), SIGTERM);
	assert_true(kid_alive(f->kids[1]));
	assert_int_equal(evictor_count(f->ev), 0);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", other);
	assert_int_equal(system(cmd), 0);
	fixture_free(f);
}

/*
 * The pod cgroup removed during the grace period while a process it listed lingers elsewhere (on
 * cgroupfs: moved out, then rmdir): the eviction ends, and that process, no longer the pod's, is
 * not SIGKILLed by the escalation.
 */
static void test_pod_cgroup_gone_during_grace(void **state)
{
	(void)state;
	fixture *f = fixture_new(1, 0, true); /* ignores SIGTERM: would be SIGKILLed at the grace's end */
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.recheck_usec = 20000;
	cfg.kill_timeout_usec = 200000;
	make_evictor(f, &cfg);
	f->log = true;
	char log[4096];
	int saved = -1, fd = log_capture_begin(&saved);
	assert_true(fd >= 0);
	evict_request rq = request(f, "uid-grace", 150000);
	assert_int_equal(evictor_start(f->ev, &rq), 0);
	assert_int_equal(f->last.procs_signalled, 0); /* FINISHED not seen yet */
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->root);
	assert_int_equal(system(cmd), 0);
	run_for(f, 400000);
	assert_true(log_capture_end(fd, saved, log, sizeof(log)) > 0);
	assert_int_equal(f->finished, 1);
	assert_int_equal(f->escalated, 0);
	assert_int_equal(f->last.outcome, EVICT_DONE);
	assert_false(f->last.sigkilled);
	assert_int_equal(f->last.procs_signalled, 1);
	assert_true(kid_alive(f->kids[0]));
	assert_non_null(strstr(log, "Evicting default/web-1"));
	assert_non_null(strstr(log, "Evicted default/web-1"));
	assert_int_equal(evictor_count(f->ev), 0);
	fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_tree_reaches_nested_cgroups_but_not_self),
		cmocka_unit_test(test_signal_tree_rejects_garbage_procs),
		cmocka_unit_test(test_kill_sigterm_then_sigkill_after_grace),
		cmocka_unit_test(test_kill_done_before_grace_when_pod_obeys_sigterm),
		cmocka_unit_test(test_hard_eviction_kills_without_grace),
		cmocka_unit_test(test_tracker_never_starts_a_pod_twice),
		cmocka_unit_test(test_kill_timeout_when_cgroup_stays_populated),
		cmocka_unit_test(test_missing_cgroup_fails_and_is_not_tracked),
		cmocka_unit_test(test_dry_run_touches_nothing),
		cmocka_unit_test(test_shutdown_escalates_pods_in_grace),
		cmocka_unit_test(test_argv_placeholders_stay_single_arguments),
		cmocka_unit_test(test_exec_failure_logs_status_and_stderr_tail),
		cmocka_unit_test(test_exec_failure_falls_back_to_kill_when_configured),
		cmocka_unit_test(test_exec_timeout_kills_the_command),
		cmocka_unit_test(test_exec_success_tracks_pod_until_gone),
		cmocka_unit_test(test_pod_gone_between_choice_and_kill),
		cmocka_unit_test(test_pod_cgroup_gone_during_grace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
