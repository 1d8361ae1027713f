/* SPDX-License-Identifier: MIT */
/*
 * Hostile tenants on the real cgroup v2 hierarchy (issue 12): a pod whose container cgroup holds a
 * threaded sub-cgroup, frozen sub-cgroups, sub-cgroups named ".x", nesting deeper than 16, a kernel
 * without cgroup.kill (forced through the evictor's test hook), an empty pod, and an eviction
 * taken over after a crash. Every pod must end empty; nothing may be signalled twice. Skipped
 * (exit 77) where no writable cgroup2 mount exists or this is not root.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgkill.h"
#include "cgtest.h"
#include "evict-log.h"
#include "evictor.h"
#include "inflight.h"
#include "kid.h"

#define DEEP 24 /* deeper than the 16 levels the old walk followed */

static char base[256], pod[300], statedir[300];
static char paths[64][1024]; /* every cgroup a test made, removed deepest first */
static int n_paths;

static void write_str(const char *dir, const char *file, const char *v)
{
	char p[1200];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, v, strlen(v)), (ssize_t)strlen(v));
	close(fd);
}

/* mkdir below pod; rel may name several levels. Returns the absolute path. */
static const char *mkcg(const char *rel)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s", pod);
	const char *s = rel;
	while (*s) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		size_t l = strlen(p);
		snprintf(p + l, sizeof(p) - l, "/%.*s", (int)n, s);
		if (mkdir(p, 0755) == 0) {
			assert_true(n_paths < 64);
			snprintf(paths[n_paths++], sizeof(paths[0]), "%s", p);
		} else
			assert_int_equal(errno, EEXIST);
		s += n + (e ? 1 : 0);
	}
	static char out[1024];
	snprintf(out, sizeof(out), "%s", p);
	return out;
}

/* "d0/d1/.../d23": DEEP levels named with prefix c */
static void deep_path(char c, char *buf, size_t size)
{
	buf[0] = '\0';
	for (int i = 0; i < DEEP; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, "%s%c%d", i ? "/" : "", c, i);
	}
}

static void kill_and_rmdir(const char *cg)
{
	cgtest_kill(cg);
	rmdir(cg);
}

static void remove_paths(void)
{
	while (n_paths > 0)
		kill_and_rmdir(paths[--n_paths]);
}

static void cleanup(void)
{
	kill_and_rmdir(pod);
	remove_paths();
	rmdir(pod);
	rmdir(base);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", statedir);
	if (statedir[0] && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", statedir);
}

static const char *thread_cg;

static void *thread_main(void *arg)
{
	(void)arg;
	char v[32];
	snprintf(v, sizeof(v), "%ld", (long)syscall(SYS_gettid));
	char p[1100];
	snprintf(p, sizeof(p), "%s/cgroup.threads", thread_cg);
	int fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		_exit(98);
	close(fd);
	for (;;)
		pause();
	return NULL;
}

/*
 * A pod process in cg. With threaded_cg, one of its threads moves into that threaded sub-cgroup
 * (the tenant's trick of issue 12: its cgroup.procs is unreadable).
 */
static pid_t spawn_in(const char *cg, bool ignore_term, const char *threaded_cg)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cgtest_join(cg);
		if (threaded_cg) {
			sigset_t none;
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			signal(SIGTERM, ignore_term ? SIG_IGN : SIG_DFL);
			thread_cg = threaded_cg;
			pthread_t t;
			if (pthread_create(&t, NULL, thread_main, NULL) != 0)
				_exit(97);
		}
		kid_wait_for_signals(ignore_term);
	}
	return pid;
}

static void wait_procs(int n)
{
	int fd = open(pod, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	for (int i = 0; i < 400 && cg_signal_tree(fd, 0, getpid()) != n; i++)
		usleep(5000);
	close(fd);
	usleep(30000); /* signal dispositions and thread moves settle */
}

typedef struct result {
	int started, finished, escalated, resumed;
	uint64_t started_deadline, resumed_deadline; /* deadline_mono_usec when started / resumed */
	evict_info last;
} result;

static void on_evict(evictor *ev, evict_event what, const evict_info *info, void *userdata)
{
	(void)ev;
	result *r = userdata;
	evict_log(what, info);
	if (what == EVICT_EVENT_STARTED) {
		r->started++;
		r->started_deadline = info->deadline_mono_usec;
	}
	if (what == EVICT_EVENT_ESCALATED)
		r->escalated++;
	if (what == EVICT_EVENT_RESUMED) {
		r->resumed++;
		r->resumed_deadline = info->deadline_mono_usec;
	}
	if (what == EVICT_EVENT_FINISHED) {
		r->finished++;
		r->last = *info;
	}
}

static void fast_config(evict_config *cfg)
{
	evict_config_init(cfg);
	cfg->recheck_usec = 20000;
	cfg->kill_timeout_usec = 2000000;
}

/* An evictor on a new loop, recording its in-flight evictions in statedir when persist. */
static void new_evictor(bool persist, result *res, sd_event **ret_e, evictor **ret_ev)
{
	evict_config cfg;
	fast_config(&cfg);
	if (persist)
		cfg.inflight_dir = statedir;
	assert_int_equal(sd_event_new(ret_e), 0);
	assert_int_equal(evictor_new(*ret_e, &cfg, on_evict, res, ret_ev), 0);
}

static void free_evictor(sd_event *e, evictor *ev)
{
	evictor_free(ev);
	sd_event_unref(e);
}

static evict_request request(uint64_t grace_usec)
{
	return (evict_request){ .uid = "hostile-pod", .namespace_ = "t", .name = "hostile", .cgroup_path = pod,
	                        .signal = "memory.available", .grace_usec = grace_usec, .hard = grace_usec == 0,
	                        .usage = 1, .expected_reclaim = 1 };
}

static void run(sd_event *e, const result *res, uint64_t limit_usec)
{
	uint64_t end = mono_usec() + limit_usec;
	while (res->finished == 0 && mono_usec() < end)
		assert_true(sd_event_run(e, 20000) >= 0);
}

static void evict(evict_config *cfg, uint64_t grace_usec, result *res)
{
	sd_event *e;
	evictor *ev;
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(evictor_new(e, cfg, on_evict, res, &ev), 0);
	evict_request rq = request(grace_usec);
	assert_int_equal(evictor_start(ev, &rq), 0);
	run(e, res, 10000000);
	free_evictor(e, ev);
}

static int reap(pid_t pid)
{
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? WTERMSIG(st) : -1;
}

/* The reproduction of issue 12 item 1: EOPNOTSUPP on t/cgroup.procs must not stop anything. */
static void test_threaded_subcgroup_and_sigterm_ignored(void **state)
{
	(void)state;
	const char *ctr = mkcg("ctr");
	char ctrpath[1024];
	snprintf(ctrpath, sizeof(ctrpath), "%s", ctr);
	const char *t = mkcg("ctr/t");
	write_str(t, "cgroup.type", "threaded");
	pid_t kid = spawn_in(ctrpath, true, t);
	wait_procs(1);
	evict_config cfg;
	fast_config(&cfg);
	result res = { 0 };
	evict(&cfg, 300000, &res);
	assert_int_equal(res.finished, 1);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_int_equal(res.escalated, 1);
	assert_true(res.last.cgroup_kill);
	assert_true(res.last.procs_signalled >= 1);
	assert_int_equal(res.last.walk_error, 0); /* a threaded sub-cgroup is no error */
	assert_true(res.last.duration_usec >= 300000); /* the grace was waited (no upper bound: load) */
	assert_int_equal(reap(kid), SIGKILL);
	remove_paths();
}

/* "."-named and deep sub-cgroups, and a frozen one: every process gets SIGTERM and obeys it. */
static void test_dot_deep_frozen_get_sigterm(void **state)
{
	(void)state;
	char deep[1024];
	deep_path('d', deep, sizeof(deep));
	char hidden[1024], deepest[1024], frozen[1024];
	snprintf(hidden, sizeof(hidden), "%s", mkcg(".hidden/.x"));
	snprintf(deepest, sizeof(deepest), "%s", mkcg(deep));
	snprintf(frozen, sizeof(frozen), "%s", mkcg("frz"));
	pid_t kids[3] = { spawn_in(hidden, false, NULL), spawn_in(deepest, false, NULL), spawn_in(frozen, false, NULL) };
	wait_procs(3);
	write_str(frozen, "cgroup.freeze", "1");
	usleep(50000);
	evict_config cfg;
	fast_config(&cfg);
	result res = { 0 };
	evict(&cfg, 5000000, &res);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_int_equal(res.escalated, 0); /* they all obeyed SIGTERM: no cgroup.kill needed */
	assert_int_equal(res.last.procs_signalled, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(reap(kids[i]), SIGTERM);
	remove_paths();
}

/* Without cgroup.kill (kernel < 5.14, forced): the SIGKILL passes reach the same places. */
static void test_fallback_kills_everything(void **state)
{
	(void)state;
	char deep[1024];
	deep_path('k', deep, sizeof(deep));
	char hidden[1024], deepest[1024], frozen[1024], ctr[1024], t[1024];
	snprintf(hidden, sizeof(hidden), "%s", mkcg(".h"));
	snprintf(deepest, sizeof(deepest), "%s", mkcg(deep));
	snprintf(frozen, sizeof(frozen), "%s", mkcg("frz"));
	snprintf(ctr, sizeof(ctr), "%s", mkcg("ctr"));
	snprintf(t, sizeof(t), "%s", mkcg("ctr/t"));
	write_str(t, "cgroup.type", "threaded");
	pid_t kids[4] = { spawn_in(hidden, true, NULL), spawn_in(deepest, true, NULL), spawn_in(frozen, true, NULL),
		          spawn_in(ctr, true, t) };
	wait_procs(4);
	write_str(frozen, "cgroup.freeze", "1");
	usleep(50000);
	evict_config cfg;
	fast_config(&cfg);
	cfg.no_cgroup_kill = true;
	result res = { 0 };
	evict(&cfg, 0, &res); /* hard: straight to the kill */
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_false(res.last.cgroup_kill);
	assert_int_equal(res.last.procs_signalled, 0); /* no grace, no SIGTERM */
	for (int i = 0; i < 4; i++)
		assert_int_equal(reap(kids[i]), SIGKILL);
	remove_paths();
}

/*
 * A fork storm (a process forking a SIGTERM-ignoring child every millisecond) and a process
 * hopping between two sub-cgroups while the walk runs: whatever the passes miss, the pod is
 * empty at the end of its grace period.
 */
static void test_fork_storm_and_pid_hopping(void **state)
{
	(void)state;
	char a[1024], b[1024];
	snprintf(a, sizeof(a), "%s", mkcg("hop-a"));
	snprintf(b, sizeof(b), "%s", mkcg("hop-b"));
	pid_t storm = fork();
	assert_true(storm >= 0);
	if (storm == 0) {
		cgtest_join(pod);
		signal(SIGTERM, SIG_IGN);
		for (int i = 0; i < 2000; i++) { /* bounded: 2 s of storm at most */
			pid_t c = fork();
			if (c == 0)
				kid_wait_for_signals(true);
			usleep(1000);
		}
		kid_wait_for_signals(true);
	}
	pid_t hopper = fork();
	assert_true(hopper >= 0);
	if (hopper == 0) {
		signal(SIGTERM, SIG_IGN);
		for (unsigned i = 0;; i++)
			cgtest_join(i % 2 ? a : b);
	}
	usleep(100000);
	evict_config cfg;
	fast_config(&cfg);
	result res = { 0 };
	evict(&cfg, 300000, &res);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_true(res.last.cgroup_kill);
	assert_true(res.last.procs_signalled >= 2);
	int fd = open(pod, O_RDONLY | O_DIRECTORY);
	assert_int_equal(cg_populated(fd), 0);
	close(fd);
	assert_int_equal(reap(storm), SIGKILL);
	assert_int_equal(reap(hopper), SIGKILL);
	remove_paths();
}

/* An empty pod cgroup (its processes gone, the directory still there): nothing to do, no command. */
static void test_empty_pod_not_evicted(void **state)
{
	(void)state;
	char *const argv[] = { "/bin/true", NULL };
	evict_config cfg;
	fast_config(&cfg);
	cfg.use_exec = true;
	cfg.exec_argv = argv;
	result res = { 0 };
	sd_event *e;
	evictor *ev;
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(evictor_new(e, &cfg, on_evict, &res, &ev), 0);
	evict_request rq = request(1000000);
	assert_int_equal(evictor_start(ev, &rq), 0);
	assert_int_equal(res.finished, 1);
	assert_int_equal(res.last.outcome, EVICT_EMPTY);
	assert_int_equal(res.last.exec_status, -1); /* the command never ran */
	assert_int_equal(res.started, 0);
	assert_int_equal(evictor_count(ev), 0);
	free_evictor(e, ev);
}

static void count_records(const inflight_record *r, void *userdata)
{
	(void)r;
	(*(int *)userdata)++;
}

static int records_on_disk(void)
{
	int n = 0;
	int r = inflight_load(statedir, count_records, &n);
	return r < 0 ? r : n;
}

typedef struct resume_ctx {
	evictor *ev;
	int resumed;
} resume_ctx;

static void resume_record(const inflight_record *r, void *userdata)
{
	resume_ctx *c = userdata;
	assert_int_equal(evictor_resume(c->ev, r), 0);
	c->resumed++;
}

/*
 * A crash 400 ms into a 1.2 s grace period: the next process takes the eviction over from its
 * record, does not send SIGTERM again (the pod counts them) and kills it at the original deadline.
 */
static void test_resume_after_crash(void **state)
{
	(void)state;
	int pfd[2];
	assert_int_equal(pipe(pfd), 0);
	pid_t kid = fork();
	assert_true(kid >= 0);
	if (kid == 0) {
		close(pfd[0]);
		cgtest_join(pod);
		sigset_t term;
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigprocmask(SIG_BLOCK, &term, NULL);
		for (;;) { /* one byte per SIGTERM received */
			int sig;
			if (sigwait(&term, &sig) == 0 && write(pfd[1], "T", 1) != 1)
				_exit(98);
		}
	}
	close(pfd[1]);
	wait_procs(1);

	result res = { 0 };
	sd_event *e;
	evictor *ev;
	new_evictor(true, &res, &e, &ev);
	evict_request rq = request(1200000);
	uint64_t t0 = mono_usec();
	assert_int_equal(evictor_start(ev, &rq), 0);
	assert_int_equal(records_on_disk(), 1);
	while (mono_usec() < t0 + 400000)
		assert_true(sd_event_run(e, 20000) >= 0);
	/* the crash: the tracker goes without finishing anything */
	free_evictor(e, ev);

	result res2 = { 0 };
	new_evictor(true, &res2, &e, &ev);
	resume_ctx c = { ev, 0 };
	assert_int_equal(inflight_load(statedir, resume_record, &c), 1);
	assert_int_equal(res2.resumed, 1);
	run(e, &res2, 5000000);
	uint64_t took = mono_usec() - t0;
	assert_int_equal(res2.last.outcome, EVICT_DONE);
	assert_true(res2.last.resumed);
	assert_true(res2.last.sigkilled);
	assert_true(took >= 1150000); /* the grace was waited */
	/* The original deadline, not a fresh grace: the resumed tracker's deadline is the one the first
	 * process set (through the record's CLOCK_REALTIME, hence the slack for the clocks' round
	 * trip); a fresh grace would lie 400 ms or more later. Bookkeeping, not a wall-clock window. */
	assert_true(res.started_deadline > 0 && res2.resumed_deadline > 0);
	int64_t drift = (int64_t)res2.resumed_deadline - (int64_t)res.started_deadline;
	assert_true(drift > -100000 && drift < 100000);
	assert_int_equal(reap(kid), SIGKILL);
	char buf[16];
	ssize_t n = read(pfd[0], buf, sizeof(buf));
	assert_int_equal(n, 1); /* exactly one SIGTERM, from the first process */
	close(pfd[0]);
	assert_int_equal(records_on_disk(), 0); /* finished: the record is gone */
	free_evictor(e, ev);
}

/* A record whose deadline passed while no evictd ran: cgroup.kill at once, no SIGTERM. */
static void test_resume_past_deadline_kills_at_once(void **state)
{
	(void)state;
	pid_t kid = spawn_in(pod, false, NULL); /* would die of a SIGTERM: it must get SIGKILL */
	wait_procs(1);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
	inflight_record r = { .uid = "hostile-pod", .namespace_ = "t", .name = "hostile", .signal = "memory.available",
	                      .grace_usec = 1000000, .usage = 1, .expected_reclaim = 1, .phase = INFLIGHT_TERMINATING,
	                      .started_real_usec = now - 5000000, .deadline_real_usec = now - 4000000 };
	snprintf(r.cgroup, sizeof(r.cgroup), "%s", pod);
	assert_int_equal(inflight_save(statedir, &r), 0);

	result res = { 0 };
	sd_event *e;
	evictor *ev;
	new_evictor(true, &res, &e, &ev);
	resume_ctx c = { ev, 0 };
	assert_int_equal(inflight_load(statedir, resume_record, &c), 1);
	assert_int_equal(res.escalated, 1);
	run(e, &res, 3000000);
	assert_int_equal(res.last.outcome, EVICT_DONE);
	assert_true(res.last.duration_usec >= 5000000); /* counted from the original start */
	assert_int_equal(reap(kid), SIGKILL);
	assert_int_equal(records_on_disk(), 0);
	free_evictor(e, ev);
}

static void keep_record(const inflight_record *r, void *userdata)
{
	*(inflight_record *)userdata = *r;
}

/*
 * The API server refuses an eviction still in its grace period (issue 29): the refusal and the
 * pod's failure count are in its record at once, and a process that takes the eviction over
 * carries them on (a restart must not turn the refused pod into an evicted one).
 */
static void test_refusal_recorded_while_running(void **state)
{
	(void)state;
	pid_t kid = spawn_in(pod, true, NULL);
	wait_procs(1);
	result res = { 0 };
	sd_event *e;
	evictor *ev;
	new_evictor(true, &res, &e, &ev);
	evict_request rq = request(1500000);
	rq.failures = 1;
	assert_int_equal(evictor_start(ev, &rq), 0);
	assert_int_equal(evictor_note_refusal(ev, "nobody", 2, 1), -ENOENT);
	assert_int_equal(evictor_note_refusal(ev, "hostile-pod", 2, 777), 0);
	static inflight_record r;
	assert_int_equal(inflight_load(statedir, keep_record, &r), 1);
	assert_true(r.refused);
	assert_int_equal(r.failures, 2);
	assert_int_equal(r.retry_mono_usec, 777);
	assert_int_equal(r.phase, INFLIGHT_TERMINATING);
	free_evictor(e, ev); /* the crash */

	/* as the daemon runs it: the record stays for what follows the eviction (keep_records) */
	result res2 = { 0 };
	evict_config cfg;
	fast_config(&cfg);
	cfg.inflight_dir = statedir;
	cfg.keep_records = true;
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(evictor_new(e, &cfg, on_evict, &res2, &ev), 0);
	assert_int_equal(evictor_resume(ev, &r), 0);
	/* its grace ends under the new process, whose record keeps the refusal */
	uint64_t end = mono_usec() + 5000000;
	while (res2.escalated == 0 && mono_usec() < end)
		assert_true(sd_event_run(e, 20000) >= 0);
	static inflight_record r2;
	assert_int_equal(inflight_load(statedir, keep_record, &r2), 1);
	assert_int_equal(r2.phase, INFLIGHT_KILLING);
	assert_true(r2.refused);
	assert_int_equal(r2.failures, 2);
	run(e, &res2, 5000000);
	assert_int_equal(res2.last.outcome, EVICT_DONE);
	assert_int_equal(reap(kid), SIGKILL);
	assert_int_equal(inflight_remove(statedir, "hostile-pod"), 0);
	free_evictor(e, ev);
}

/* Records from another boot, garbage and tmp files of an interrupted write are discarded. */
static void test_stale_records_discarded(void **state)
{
	(void)state;
	char p[600];
	snprintf(p, sizeof(p), "%s/other-boot.json", statedir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "{\"boot_id\":\"00000000-0000-0000-0000-000000000000\",\"uid\":\"other-boot\"}");
	fclose(f);
	snprintf(p, sizeof(p), "%s/garbage.json", statedir);
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "{\"boot_id\": [");
	fclose(f);
	snprintf(p, sizeof(p), "%s/x.json.AbC123", statedir);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(records_on_disk(), 0);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", statedir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const char *root = cgtest_find_cgroup2();
	if (!root) {
		printf("skipped: no cgroup2 hierarchy mounted\n");
		return 77;
	}
	if (geteuid() != 0) {
		printf("skipped: needs root (creates cgroups, moves processes)\n");
		return 77;
	}
	snprintf(base, sizeof(base), "%s/evictd-hostile-%d", root, (int)getpid());
	snprintf(pod, sizeof(pod), "%s/pod", base);
	snprintf(statedir, sizeof(statedir), "/tmp/evictd-hostile-state-%d", (int)getpid());
	if (mkdir(base, 0755) < 0 || mkdir(pod, 0755) < 0) {
		int e = errno;
		cleanup();
		return cgtest_env_or_fail(e, "cannot create cgroups under", root);
	}
	if (cgtest_need_cgroup_kill(pod)) {
		cleanup();
		return 77;
	}
	if (mkdir(statedir, 0755) < 0) {
		printf("not ok - cannot create %s: %s\n", statedir, strerror(errno));
		cleanup();
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threaded_subcgroup_and_sigterm_ignored),
		cmocka_unit_test(test_dot_deep_frozen_get_sigterm),
		cmocka_unit_test(test_fallback_kills_everything),
		cmocka_unit_test(test_fork_storm_and_pid_hopping),
		cmocka_unit_test(test_empty_pod_not_evicted),
		cmocka_unit_test(test_resume_after_crash),
		cmocka_unit_test(test_resume_past_deadline_kills_at_once),
		cmocka_unit_test(test_stale_records_discarded),
		cmocka_unit_test(test_refusal_recorded_while_running),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	cleanup();
	return r;
}
