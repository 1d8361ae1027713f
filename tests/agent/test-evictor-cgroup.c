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
#include "evictor.h"
#include "kid.h"

static char base[256], pod[300], ctr[320];

static const char *find_cgroup2(void)
{
	static const char *const cands[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	for (size_t i = 0; i < 2; i++) {
		struct statfs sf;
		if (statfs(cands[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
			return cands[i];
	}
	return NULL;
}

static pid_t spawn_in(const char *cg, bool ignore_term)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char p[400];
		snprintf(p, sizeof(p), "%s/cgroup.procs", cg);
		int fd = open(p, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(99);
		close(fd);
		kid_wait_for_signals(ignore_term);
	}
	return pid;
}

typedef struct result {
	int finished, escalated;
	evict_info last;
} result;

static void on_evict(evictor *ev, evict_event what, const evict_info *info, void *userdata)
{
	(void)ev;
	result *r = userdata;
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
	int fd = open(pod, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		(void)cg_kill(fd);
		for (int i = 0; i < 100 && cg_populated(fd) == 1; i++)
			usleep(10000);
		close(fd);
	}
	rmdir(ctr);
	rmdir(pod);
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
	run_eviction(false, 5000000, &res, kids, st, &t0);
	assert_int_equal(res.finished, 1);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_int_equal(res.escalated, 0);
	assert_int_equal(res.last.procs_signalled, 2);
	for (int i = 0; i < 2; i++)
		assert_int_equal(WTERMSIG(st[i]), SIGTERM);
	/* noticed through cgroup.events long before the 500 ms recheck would have */
	assert_true(res.last.duration_usec < 400000);
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
	assert_true(res.last.duration_usec >= 200000);
	assert_true(res.last.duration_usec < 200000 + 400000);
}

int main(void)
{
	const char *root = find_cgroup2();
	if (!root) {
		printf("skipped: no cgroup2 hierarchy mounted\n");
		return 77;
	}
	snprintf(base, sizeof(base), "%s/evictd-test-%d", root, (int)getpid());
	snprintf(pod, sizeof(pod), "%s/pod", base);
	snprintf(ctr, sizeof(ctr), "%s/ctr", pod);
	if (mkdir(base, 0755) < 0 || mkdir(pod, 0755) < 0 || mkdir(ctr, 0755) < 0) {
		printf("skipped: cannot create cgroups under %s: %s\n", root, strerror(errno));
		cleanup();
		return 77;
	}
	char kp[400];
	snprintf(kp, sizeof(kp), "%s/cgroup.kill", pod);
	if (access(kp, W_OK) < 0) {
		printf("skipped: %s: %s (kernel < 5.14?)\n", kp, strerror(errno));
		cleanup();
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_cgroup_obeys_sigterm),
		cmocka_unit_test(test_real_cgroup_kill_after_grace),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	cleanup();
	return r;
}
