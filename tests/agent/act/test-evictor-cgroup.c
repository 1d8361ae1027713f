/* SPDX-License-Identifier: MIT */
/*
 * The kill action against the real cgroup v2 hierarchy: a pod cgroup with real processes, the
 * kernel's cgroup.kill and cgroup.events (noticed through inotify). Skipped (exit 77) where no
 * writable cgroup2 mount exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgkill.h"
#include "cgtest.h"
#include "evict-log.h"
#include "evictor.h"
#include "kid.h"

static char base[256], pod[300], ctr[320], other[300], parked[300];

static pid_t spawn_in(const char *cg, bool ignore_term)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cgtest_join(cg);
		kid_wait_for_signals(ignore_term);
	}
	return pid;
}

typedef struct result {
	int started, finished, escalated;
	evict_info last;
	bool log; /* also write the daemon's log lines (evict_log) to stderr */
} result;

static void on_evict(evictor *ev, evict_event what, const evict_info *info, void *userdata)
{
	(void)ev;
	result *r = userdata;
	if (r->log)
		evict_log(what, info);
	if (what == EVICT_EVENT_STARTED)
		r->started++;
	if (what == EVICT_EVENT_ESCALATED)
		r->escalated++;
	if (what == EVICT_EVENT_FINISHED) {
		r->finished++;
		r->last = *info;
	}
}

static void cleanup(void)
{
	/* kill whatever is left, then remove the cgroups (children first) */
	cgtest_kill(pod);
	cgtest_kill(other);
	cgtest_kill(parked);
	rmdir(ctr);
	rmdir(pod);
	rmdir(other);
	rmdir(parked);
	rmdir(base);
}

static void run_eviction(bool ignore_term, uint64_t grace_usec, result *res, pid_t *kids, int *status,
                         uint64_t *t0)
{
	sd_event *e;
	evictor *ev;
	assert_int_equal(sd_event_new(&e), 0);
	kids[0] = spawn_in(pod, ignore_term);
	kids[1] = spawn_in(ctr, ignore_term);
	/* wait until both joined */
	int fd = open(pod, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < 200 && cg_signal_tree(fd, 0, getpid()) < 2; i++)
		usleep(5000);
	assert_int_equal(cg_signal_tree(fd, 0, getpid()), 2);
	assert_int_equal(cg_populated(fd), 1);
	close(fd);
	usleep(20000); /* let the signal dispositions settle */

	evict_config cfg;
	evict_config_init(&cfg);
	/* No periodic re-read within the loop's 10 s: an eviction that finishes at all was noticed
	 * through cgroup.events (inotify), which the tests below assert by outcome, not by time. */
	cfg.recheck_usec = 60000000;
	assert_int_equal(evictor_new(e, &cfg, on_evict, res, &ev), 0);
	evict_request rq = { .uid = "pod-real", .namespace_ = "default", .name = "real", .cgroup_path = pod,
	                     .signal = "pid.available", .grace_usec = grace_usec, .usage = 2 };
	*t0 = mono_usec();
	assert_int_equal(evictor_start(ev, &rq), 0);
	uint64_t end = mono_usec() + 10000000;
	while (res->finished == 0 && mono_usec() < end)
		assert_true(sd_event_run(e, 100000) >= 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(waitpid(kids[i], &status[i], 0), kids[i]);
	evictor_free(ev);
	sd_event_unref(e);
}

static void test_real_cgroup_obeys_sigterm(void **state)
{
	(void)state;
	result res = { 0 };
	pid_t kids[2];
	int st[2];
	uint64_t t0;
	/* a grace (60 s) and a recheck (60 s) longer than the loop's 10 s: finishing at all means
	 * the exits were noticed through cgroup.events */
	run_eviction(false, 60000000, &res, kids, st, &t0);
	assert_int_equal(res.finished, 1);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_int_equal(res.escalated, 0);
	assert_int_equal(res.last.procs_signalled, 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(WTERMSIG(st[i]), SIGTERM);
	assert_true(res.last.duration_usec < 10000000);
}

static void test_real_cgroup_kill_after_grace(void **state)
{
	(void)state;
	result res = { 0 };
	pid_t kids[2];
	int st[2];
	uint64_t t0;
	run_eviction(true, 200000, &res, kids, st, &t0);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_int_equal(res.escalated, 1);
	assert_true(res.last.sigkilled);
	assert_true(res.last.cgroup_kill); /* the kernel's cgroup.kill, not the per-pid fallback */
	for (int i = 0; i < 2; i++)
		assert_int_equal(WTERMSIG(st[i]), SIGKILL);
	assert_true(res.last.duration_usec >= 200000); /* the grace was waited */
	assert_int_equal(res.finished, 1);            /* and the empty cgroup noticed (recheck 60 s) */
}

/* --- a pod cgroup disappearing between the decision and the kill (issue 7) --------------------- */

static void wait_procs(const char *cg, int n)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	for (int i = 0; i < 200 && cg_signal_tree(fd, 0, getpid()) != n; i++)
		usleep(5000);
	assert_int_equal(cg_signal_tree(fd, 0, getpid()), n);
	close(fd);
}

/* The kernel refuses rmdir while the cgroup is populated; its "populated 0" can lag the exit. */
static void rmdir_cgroup(const char *cg)
{
	int r = -1;
	for (int i = 0; i < 200 && (r = rmdir(cg)) < 0 && errno == EBUSY; i++)
		usleep(5000);
	assert_int_equal(r, 0);
}

static void move_to(const char *cg, pid_t pid)
{
	char p[400], v[32];
	snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
	snprintf(v, sizeof(v), "%d", (int)pid);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, v, strlen(v)), (ssize_t)strlen(v));
	close(fd);
}

static void run_loop(sd_event *e, const result *res, int until_finished, uint64_t limit_usec)
{
	uint64_t end = mono_usec() + limit_usec;
	while (res->finished < until_finished && mono_usec() < end)
		assert_true(sd_event_run(e, 20000) >= 0);
}

static const evict_request gone_request = {
	.uid = "pod-gone", .namespace_ = "default", .name = "gone", .signal = "memory.available",
	.grace_usec = 200000, .usage = 1 << 20, .expected_reclaim = 1 << 20,
};

/*
 * The vanishing-pod tests' common start: a bystander in the other pod, two processes in the pod
 * (one in its container cgroup), all killed by SIGTERM, so alive afterwards = never signalled;
 * and an evictor that re-checks fast.
 */
static void start_gone_scenario(sd_event **ret_e, evictor **ret_ev, result *res, pid_t *ret_bystander,
                                pid_t ret_pod[2])
{
	assert_int_equal(sd_event_new(ret_e), 0);
	*ret_bystander = spawn_in(other, false);
	ret_pod[0] = spawn_in(pod, false);
	ret_pod[1] = spawn_in(ctr, false);
	wait_procs(other, 1);
	wait_procs(pod, 2);
	usleep(20000);
	evict_config cfg;
	evict_config_init(&cfg);
	cfg.recheck_usec = 20000;
	cfg.kill_timeout_usec = 200000;
	assert_int_equal(evictor_new(*ret_e, &cfg, on_evict, res, ret_ev), 0);
}

/*
 * The decision chose the pod; before the evictor acts, the pod's processes leave its cgroup (moved
 * out, as a runtime tearing the pod down may do, so they stay alive and observable) and the cgroup
 * is removed. Nothing may be signalled: not the processes that were the pod's, not another pod.
 */
static void test_real_cgroup_gone_before_kill(void **state)
{
	(void)state;
	sd_event *e;
	evictor *ev;
	result res = { .log = true };
	pid_t bystander, was_pod[2];
	start_gone_scenario(&e, &ev, &res, &bystander, was_pod);

	for (int i = 0; i < 2; i++)
		move_to(parked, was_pod[i]);
	rmdir_cgroup(ctr);
	rmdir_cgroup(pod);

	evict_request rq = gone_request;
	rq.cgroup_path = pod;
	char log[4096];
	int saved = -1, fd = log_capture_begin(&saved);
	assert_true(fd >= 0);
	int r = evictor_start(ev, &rq);
	run_loop(e, &res, 2, 500000); /* past the grace and kill timeout it would have had */
	assert_true(log_capture_end(fd, saved, log, sizeof(log)) > 0);

	assert_int_equal(r, -ENOENT);
	assert_int_equal(res.started, 0);
	assert_int_equal(res.finished, 1);
	assert_int_equal(res.escalated, 0);
	assert_int_equal(res.last.outcome, EVICT_GONE);
	assert_int_equal(res.last.procs_signalled, 0);
	assert_non_null(strstr(log, "Eviction of default/gone not started: its cgroup"));
	assert_non_null(strstr(log, "is gone"));
	assert_null(strstr(log, "SIGTERM sent"));
	assert_int_equal(evictor_count(ev), 0);
	assert_int_equal(evictor_pending_reclaim(ev, NULL), 0);
	assert_true(kid_alive(bystander));
	for (int i = 0; i < 2; i++)
		assert_true(kid_alive(was_pod[i]));

	/* The same uid in a new cgroup at that path is evicted normally, the bystander still untouched. */
	assert_int_equal(mkdir(pod, 0755), 0);
	assert_int_equal(mkdir(ctr, 0755), 0);
	pid_t again = spawn_in(ctr, false);
	wait_procs(pod, 1);
	usleep(20000);
	res.log = false;
	assert_int_equal(evictor_start(ev, &rq), 0);
	run_loop(e, &res, 2, 5000000);
	assert_int_equal(res.finished, 2);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_int_equal(res.last.procs_signalled, 1);
	int st;
	assert_int_equal(waitpid(again, &st, 0), again);
	assert_int_equal(WTERMSIG(st), SIGTERM);
	assert_true(kid_alive(bystander));
	for (int i = 0; i < 2; i++)
		assert_true(kid_alive(was_pod[i]));

	evictor_free(ev);
	sd_event_unref(e);
	pid_t all[3] = { bystander, was_pod[0], was_pod[1] };
	for (int i = 0; i < 3; i++) {
		kill(all[i], SIGKILL);
		assert_int_equal(waitpid(all[i], &st, 0), all[i]);
		assert_int_equal(WTERMSIG(st), SIGKILL); /* ours, not the evictor's */
	}
}

/*
 * The pod obeys SIGTERM and its cgroup is removed before the evictor looks again, with the end of
 * the grace period already due: the eviction ends as done without touching cgroup.kill of a
 * directory that no longer exists (no escalation), and the other pod is untouched.
 */
static void test_real_cgroup_gone_during_grace(void **state)
{
	(void)state;
	sd_event *e;
	evictor *ev;
	result res = { .log = true };
	pid_t bystander, kids[2];
	start_gone_scenario(&e, &ev, &res, &bystander, kids);
	evict_request rq = gone_request;
	rq.cgroup_path = pod;
	rq.grace_usec = 100000;
	char log[4096];
	int saved = -1, fd = log_capture_begin(&saved);
	assert_true(fd >= 0);
	assert_int_equal(evictor_start(ev, &rq), 0);
	assert_int_equal(res.started, 1);
	/* The loop does not run here: the evictor learns nothing until the cgroup is gone. */
	int st[2];
	for (int i = 0; i < 2; i++) {
		assert_int_equal(waitpid(kids[i], &st[i], 0), kids[i]);
		assert_int_equal(WTERMSIG(st[i]), SIGTERM);
	}
	rmdir_cgroup(ctr);
	rmdir_cgroup(pod);
	usleep(150000); /* the grace is over: the deadline and the cgroup.events watch are both due */
	run_loop(e, &res, 1, 2000000);
	assert_true(log_capture_end(fd, saved, log, sizeof(log)) > 0);

	assert_int_equal(res.finished, 1);
	assert_int_equal(res.escalated, 0);
	assert_false(res.last.sigkilled);
	assert_false(res.last.cgroup_kill);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_int_equal(res.last.procs_signalled, 2);
	assert_non_null(strstr(log, "Evicting default/gone"));
	assert_non_null(strstr(log, "Evicted default/gone"));
	assert_null(strstr(log, "Grace period"));
	assert_int_equal(evictor_count(ev), 0);
	assert_true(kid_alive(bystander));

	evictor_free(ev);
	sd_event_unref(e);
	kill(bystander, SIGKILL);
	assert_int_equal(waitpid(bystander, NULL, 0), bystander);
	/* the next tests use the pod cgroup again */
	assert_int_equal(mkdir(pod, 0755), 0);
	assert_int_equal(mkdir(ctr, 0755), 0);
}

int main(void)
{
	const char *root = cgtest_find_cgroup2();
	if (!root) {
		printf("skipped: no cgroup2 hierarchy mounted\n");
		return 77;
	}
	snprintf(base, sizeof(base), "%s/evictd-test-%s-%d", root, test_run_id(), (int)getpid());
	snprintf(pod, sizeof(pod), "%s/pod", base);
	snprintf(ctr, sizeof(ctr), "%s/ctr", pod);
	snprintf(other, sizeof(other), "%s/other", base);
	snprintf(parked, sizeof(parked), "%s/parked", base);
	if (mkdir(base, 0755) < 0 || mkdir(pod, 0755) < 0 || mkdir(ctr, 0755) < 0 || mkdir(other, 0755) < 0 ||
	    mkdir(parked, 0755) < 0) {
		int e = errno;
		cleanup();
		return cgtest_env_or_fail(e, "cannot create cgroups under", root);
	}
	if (cgtest_need_cgroup_kill(pod)) {
		cleanup();
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_cgroup_obeys_sigterm),
		cmocka_unit_test(test_real_cgroup_kill_after_grace),
		cmocka_unit_test(test_real_cgroup_gone_before_kill),
		cmocka_unit_test(test_real_cgroup_gone_during_grace),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	cleanup();
	return r;
}
