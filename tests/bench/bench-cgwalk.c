/* SPDX-License-Identifier: MIT */
/*
 * A pod with N empty sub-cgroups (issue 12: a tenant's way to stall the daemon) and one process
 * at the bottom, on the real cgroup v2 hierarchy. Side by side, for the same tree:
 *
 *   blocking    the pre-issue-12 way, one recursive walk (cg_signal_tree, here with signal 0):
 *               the event loop stalls for the whole walk;
 *   incremental evictd's walk run from its event loop (walk-dirs-per-turn sub-cgroups per turn,
 *               default 64): a 1 ms timer on the same loop measures the longest stall while the
 *               SIGTERM walk of a soft eviction runs, and the time until SIGTERM reached every
 *               sub-cgroup ("SIGTERM sent" logged);
 *   hard kill   the time from evictor_start() of a hard eviction to cgroup.kill written (no walk).
 *
 *   bench-cgwalk [N]     (default 100000; root and a writable cgroup2 mount, else "skipped")
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "agent/cgtest.h"
#include "cgkill.h"
#include "evictor.h"

#define FANOUT 1000

static char pod[256];
static unsigned n_dirs;

static uint64_t mono_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

static void subdir(unsigned i, char *buf, size_t size, bool leaf)
{
	if (leaf)
		snprintf(buf, size, "%s/g%u/c%u", pod, i / FANOUT, i % FANOUT);
	else
		snprintf(buf, size, "%s/g%u", pod, i / FANOUT);
}

static int make_tree(void)
{
	char p[512];
	for (unsigned i = 0; i < n_dirs; i++) {
		if (i % FANOUT == 0) {
			subdir(i, p, sizeof(p), false);
			if (mkdir(p, 0755) < 0)
				return -errno;
		}
		subdir(i, p, sizeof(p), true);
		if (mkdir(p, 0755) < 0)
			return -errno;
	}
	return 0;
}

static void remove_tree(void)
{
	char p[512];
	cgtest_kill(pod);
	for (unsigned i = n_dirs; i-- > 0;) {
		subdir(i, p, sizeof(p), true);
		rmdir(p);
		if (i % FANOUT == 0) {
			subdir(i, p, sizeof(p), false);
			rmdir(p);
		}
	}
	rmdir(pod);
}

static pid_t spawn_at_bottom(void)
{
	char p[600];
	subdir(n_dirs - 1, p, sizeof(p), true);
	pid_t pid = fork();
	if (pid == 0) {
		cgtest_join(p);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGTERM, SIG_IGN);
		for (;;)
			pause();
	}
	usleep(50000);
	return pid;
}

typedef struct run {
	uint64_t last_tick, max_gap, started_at, escalated_at;
	bool started, finished;
} run;

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)usec;
	run *r = userdata;
	uint64_t now = mono_usec();
	if (r->last_tick && now - r->last_tick > r->max_gap)
		r->max_gap = now - r->last_tick;
	r->last_tick = now;
	sd_event_source_set_time_relative(s, 1000);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

static void on_evict(evictor *ev, evict_event what, const evict_info *info, void *userdata)
{
	(void)ev, (void)info;
	run *r = userdata;
	if (what == EVICT_EVENT_STARTED && !r->started) {
		r->started = true;
		r->started_at = mono_usec();
	}
	if (what == EVICT_EVENT_ESCALATED)
		r->escalated_at = mono_usec();
	if (what == EVICT_EVENT_FINISHED)
		r->finished = true;
}

/* One eviction on the loop; returns when STARTED (soft) or FINISHED (hard) was seen. */
static void evict(bool hard, run *r, uint64_t *ret_t0)
{
	sd_event *e;
	evictor *ev;
	sd_event_source *tick;
	evict_config cfg;
	evict_config_init(&cfg);
	sd_event_new(&e);
	evictor_new(e, &cfg, on_evict, r, &ev);
	sd_event_add_time_relative(e, &tick, CLOCK_MONOTONIC, 1000, 1, on_tick, r);
	evict_request rq = { .uid = "bench", .name = "bench", .cgroup_path = pod, .signal = "memory.available",
	                     .hard = hard, .grace_usec = hard ? 0 : 60000000, .usage = 1 };
	*ret_t0 = mono_usec();
	r->last_tick = *ret_t0;
	evictor_start(ev, &rq);
	uint64_t end = mono_usec() + 60000000;
	while (!(hard ? r->finished : r->started) && mono_usec() < end)
		sd_event_run(e, 100000);
	sd_event_source_disable_unref(tick);
	evictor_free(ev);
	sd_event_unref(e);
}

int main(int argc, char **argv)
{
	n_dirs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100000;
	if (n_dirs < 1)
		n_dirs = 1;
	const char *root = cgtest_find_cgroup2();
	if (!root || geteuid() != 0) {
		printf("skipped: needs root and a cgroup2 mount\n");
		return 0;
	}
	snprintf(pod, sizeof(pod), "%s/evictd-bench-cgwalk-%d", root, (int)getpid());
	if (mkdir(pod, 0755) < 0) {
		printf("skipped: cannot create %s: %s\n", pod, strerror(errno));
		return 0;
	}
	uint64_t t = mono_usec();
	int r = make_tree();
	if (r < 0) {
		printf("skipped: cannot create %u sub-cgroups: %s\n", n_dirs, strerror(-r));
		remove_tree();
		return 0;
	}
	printf("pod with %u empty sub-cgroups (%u x %u) made in %.1f s; one process at the bottom\n", n_dirs,
	       (n_dirs + FANOUT - 1) / FANOUT, FANOUT, (double)(mono_usec() - t) / 1e6);
	pid_t kid = spawn_at_bottom();

	int fd = open(pod, O_RDONLY | O_DIRECTORY);
	t = mono_usec();
	int n = cg_signal_tree(fd, 0, getpid());
	uint64_t blocking = mono_usec() - t;
	close(fd);

	run soft = { 0 }, hard = { 0 };
	uint64_t t0;
	evict(false, &soft, &t0);
	uint64_t walk = soft.started_at - t0;
	evict(true, &hard, &t0);
	uint64_t kill_at = hard.escalated_at - t0;

	printf("%-44s %12s %16s\n", "", "walk time", "longest stall");
	printf("%-44s %9.1f ms %13.1f ms   (%d process found)\n", "blocking walk (before issue 12)",
	       blocking / 1e3, blocking / 1e3, n);
	printf("%-44s %9.1f ms %13.1f ms\n", "incremental walk, 64 sub-cgroups per turn", walk / 1e3,
	       soft.max_gap / 1e3);
	printf("%-44s %9s %13.1f ms   (cgroup.kill %.2f ms after start)\n", "hard eviction", "none",
	       hard.max_gap / 1e3, kill_at / 1e3);
	waitpid(kid, NULL, 0);
	remove_tree();
	return 0;
}
