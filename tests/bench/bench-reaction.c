/* SPDX-License-Identifier: MIT */
/*
 * evictd's reaction latency and idle cost, measured on the real daemon binary. Latency is from
 * the moment a hard threshold is crossed to the moment the pod's process receives SIGTERM (its
 * handler records CLOCK_MONOTONIC into a pipe: an upper bound for "SIGTERM sent"; when the
 * immediate cgroup.kill wins the race against the handler, the moment the process is gone).
 *
 *   1. near a threshold: nodefs.available on a 64 MiB tmpfs sits 4 MiB above an 8 MiB hard
 *      threshold (the daemon polls every 10 ms there); the bench fallocate()s past it;
 *   2. instant jump: the same 64 MiB tmpfs, empty, filled past the threshold by one fallocate()
 *      of 52 MiB (faster than the disk-max-rate model: the worst case of the adaptive poll);
 *   3. idle node, sudden crossing: a tmpfs with 1 GiB of headroom above a 64 MiB threshold,
 *      untouched for a while (the daemon polls at headroom / disk-max-rate), then a writer fills
 *      it with 1 MiB write()s as fast as it can; the crossing is the write that takes available
 *      under the threshold (timestamped by the writer). The writer's rate is reported next to
 *      the daemon's disk-max-rate (4 GiB/s by default);
 *   4. idle CPU: the daemon's own CPU time (/proc/PID/schedstat, ns precision) over a minute
 *      (BENCH_IDLE_SEC, default 60) with 64 GiB of headroom, and near a threshold.
 *
 * BENCH_RUNS sets the runs of workload 3 (default 20). Needs root and a writable cgroup v2
 * hierarchy; prints "skipped: ..." otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/magic.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024LL * 1024LL)
#define TMPFS_MIB 64
#define THRESHOLD_MIB 8

static char tmpdir[64], fs[128], bigfs[128], cgroot[256], pod[320], status_path[160], evictd[4200];
static pid_t daemon_pid;
static int term_fd = -1; /* the pod process writes its SIGTERM time here */

static uint64_t now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

static void cleanup(void)
{
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	char p[400];
	snprintf(p, sizeof(p), "%s/cgroup.kill", pod);
	int fd = open(p, O_WRONLY);
	if (fd >= 0) {
		(void)!write(fd, "1", 1);
		close(fd);
	}
	usleep(100000);
	rmdir(pod);
	snprintf(p, sizeof(p), "%s/kubepods", cgroot);
	rmdir(p);
	rmdir(cgroot);
	unlink(status_path);
	umount(fs);
	umount(bigfs);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	(void)!system(cmd);
}

static void fill(const char *name, long long bytes)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", fs, name);
	if (bytes <= 0) {
		unlink(p);
		return;
	}
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || fallocate(fd, 0, 0, bytes) < 0) {
		perror(p);
		exit(1);
	}
	close(fd);
}

static int term_wfd = -1;

/* async-signal-safe: clock_gettime, write, _exit */
static void on_term(int sig)
{
	(void)sig;
	uint64_t t = now_usec();
	(void)!write(term_wfd, &t, sizeof(t));
	_exit(0);
}

/*
 * A pod process: joins the pod cgroup and waits; on SIGTERM it writes the time into term_fd
 * (read with term_time()). Returns its pidfd.
 */
static int start_pod_process(pid_t *ret_pid)
{
	int ready[2], term[2];
	if (pipe(ready) < 0 || pipe(term) < 0)
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		char p[400];
		term_wfd = term[1];
		signal(SIGTERM, on_term);
		snprintf(p, sizeof(p), "%s/cgroup.procs", pod);
		int fd = open(p, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(99);
		close(fd);
		(void)!write(ready[1], "r", 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	close(term[1]);
	char c;
	if (read(ready[0], &c, 1) != 1) {
		fprintf(stderr, "pod process failed to start\n");
		exit(1);
	}
	close(ready[0]);
	if (term_fd >= 0)
		close(term_fd);
	term_fd = term[0];
	*ret_pid = pid;
	return pidfd_open(pid, 0);
}

/*
 * When the pod process got SIGTERM (0: nothing within 5 s). A hard threshold has no grace period:
 * cgroup.kill follows SIGTERM at once and may kill the process before its handler runs; then the
 * pipe's EOF (the process is gone) is the time, a slightly later upper bound.
 */
static uint64_t term_time(void)
{
	struct pollfd p = { .fd = term_fd, .events = POLLIN };
	uint64_t t = 0;
	if (poll(&p, 1, 5000) != 1)
		return 0;
	ssize_t n = read(term_fd, &t, sizeof(t));
	if (n == 0)
		return now_usec();
	return n == sizeof(t) ? t : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	int p99 = (n * 99 + 99) / 100 - 1;
	printf("%-44s n=%d  min %.1f ms  median %.1f ms  p99 %.1f ms  max %.1f ms\n", what, n, v[0] / 1000.0,
	       v[n / 2] / 1000.0, v[p99 < n ? p99 : n - 1] / 1000.0, v[n - 1] / 1000.0);
}

/* Waits until the daemon has finished the eviction (cgroup empty, tracker empty). */
static void settle(void)
{
	for (int i = 0; i < 200; i++) {
		char buf[8192] = "";
		int fd = open(status_path, O_RDONLY);
		if (fd >= 0) {
			(void)!read(fd, buf, sizeof(buf) - 1);
			close(fd);
		}
		if (strstr(buf, "\"evictions\":[]"))
			return;
		usleep(10000);
	}
}

static int measure(const char *what, int n, long long base_fill)
{
	uint64_t *lat = calloc((size_t)n, sizeof(*lat));
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int pfd = start_pod_process(&pid);
		fill("base", base_fill);
		/* let the daemon see the state at its next tick (1 s interval), then switch to fast polling */
		usleep(1300000);
		/* cross at a random point of the daemon's polling period */
		usleep((useconds_t)(rand() % 20000));
		uint64_t t0 = now_usec();
		if (getenv("BENCH_VERBOSE")) {
			struct timespec rt;
			clock_gettime(CLOCK_REALTIME, &rt);
			fprintf(stderr, "cross at %ld.%06ld\n", (long)rt.tv_sec % 60, rt.tv_nsec / 1000);
		}
		fill("cross", (TMPFS_MIB - THRESHOLD_MIB / 2) * MIB - base_fill - 1 * MIB);
		uint64_t t1 = term_time();
		if (!t1) {
			fprintf(stderr, "%s: no SIGTERM within 5 s\n", what);
			free(lat);
			return -1;
		}
		lat[i] = t1 - t0;
		if (getenv("BENCH_VERBOSE"))
			fprintf(stderr, "%s #%d: %.1f ms\n", what, i, lat[i] / 1000.0);
		struct pollfd pp = { .fd = pfd, .events = POLLIN };
		(void)poll(&pp, 1, 5000);
		close(pfd);
		waitpid(pid, NULL, 0);
		fill("cross", 0);
		fill("base", 0);
		settle();
	}
	report(what, lat, n);
	free(lat);
	return 0;
}

static uint64_t cpu_ns(pid_t pid)
{
	char p[64], buf[128] = "";
	snprintf(p, sizeof(p), "/proc/%d/schedstat", (int)pid);
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return 0;
	(void)!read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return strtoull(buf, NULL, 10);
}

static void measure_cpu(const char *what, unsigned sec)
{
	uint64_t c0 = cpu_ns(daemon_pid), t0 = now_usec();
	sleep(sec);
	uint64_t c1 = cpu_ns(daemon_pid), t1 = now_usec();
	double per_min = (double)(c1 - c0) / 1e6 * 60e6 / (double)(t1 - t0);
	printf("%-44s %.2f ms CPU per minute (%.1f s measured)\n", what, per_min, (t1 - t0) / 1e6);
}

#define BIG_THRESHOLD_MIB 64
#define BIG_HEADROOM_MIB 1024

/*
 * Workload 3: the big tmpfs is untouched (available = threshold + 1 GiB) long enough for the
 * daemon to settle into its idle cadence; then a writer fills it with 1 MiB write()s as fast as
 * it can. t0 is when the write that takes available under the threshold returns.
 */
static int measure_writer(const char *what, int n)
{
	uint64_t *lat = calloc((size_t)n, sizeof(*lat)), *rate = calloc((size_t)n, sizeof(*rate));
	static char buf[1 << 20];
	char path[256];
	memset(buf, 0x5a, sizeof(buf)); /* not zeros: every page is really allocated */
	snprintf(path, sizeof(path), "%s/writer", bigfs);
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int pfd = start_pod_process(&pid);
		/* idle for a while, then start at a random point of the daemon's polling period */
		usleep(1500000 + (useconds_t)(rand() % 500000));
		struct statvfs sv;
		if (statvfs(bigfs, &sv) < 0)
			return -1;
		long long avail = (long long)(sv.f_frsize * sv.f_bavail);
		long long to_cross = avail - (long long)BIG_THRESHOLD_MIB * MIB; /* written > to_cross: crossed */
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return -1;
		uint64_t start = now_usec(), t0 = 0;
		long long written = 0;
		while (written <= to_cross) {
			ssize_t w = write(fd, buf, sizeof(buf));
			if (w <= 0) {
				perror("writer");
				return -1;
			}
			written += w;
		}
		t0 = now_usec();
		close(fd);
		uint64_t t1 = term_time();
		if (!t1) {
			fprintf(stderr, "%s: no SIGTERM within 5 s\n", what);
			return -1;
		}
		lat[i] = t1 > t0 ? t1 - t0 : 0; /* SIGTERM before the last write returned: 0 */
		rate[i] = (uint64_t)((double)written / (double)MIB / ((double)(t0 - start) / 1e6));
		if (getenv("BENCH_VERBOSE"))
			fprintf(stderr, "%s #%d: %.1f ms (writer %llu MiB/s)\n", what, i, lat[i] / 1000.0,
			        (unsigned long long)rate[i]);
		struct pollfd pp = { .fd = pfd, .events = POLLIN };
		(void)poll(&pp, 1, 5000);
		close(pfd);
		waitpid(pid, NULL, 0);
		unlink(path);
		settle();
	}
	/* The runs whose writer was at least 1.5 GiB/s (issue 23's bar): a loaded machine slows the
	 * writer, and a slow fall is an easy case for the rate model. */
	uint64_t *fast = calloc((size_t)n, sizeof(*fast));
	int nf = 0;
	for (int i = 0; i < n; i++)
		if (rate[i] >= 1536)
			fast[nf++] = lat[i];
	report(what, lat, n);
	if (nf)
		report("  of which writer >= 1536 MiB/s", fast, nf);
	free(fast);
	qsort(rate, (size_t)n, sizeof(*rate), cmp_u64);
	printf("%-44s min %llu  median %llu  max %llu MiB/s (disk-max-rate: 4096 MiB/s by default)\n", "  writer rate",
	       (unsigned long long)rate[0], (unsigned long long)rate[n / 2], (unsigned long long)rate[n - 1]);
	free(lat);
	free(rate);
	return 0;
}

/* Starts evictd with nodefs.available on fsdir at threshold_mib; 0 or -1. */
static int start_daemon(const char *fsdir, int threshold_mib)
{
	char conf[256];
	snprintf(conf, sizeof(conf), "%s/evictd.conf", tmpdir);
	FILE *f = fopen(conf, "w");
	if (!f)
		return -1;
	fprintf(f,
	        "[agent]\ninterval = 1s\nstatus-file = %s\nrun-directory = %s\nnodefs-path = %s\nimagefs-path = %s\n"
	        "pod-metadata-dir = %s\n"
	        "[eviction-hard]\nmemory.available = 0%%\nimagefs.available = 0%%\nimagefs.inodesFree = 0%%\n"
	        "nodefs.inodesFree = 0%%\nnodefs.available = %dMi\n",
	        status_path, tmpdir, fsdir, fsdir, tmpdir, threshold_mib);
	fclose(f);
	daemon_pid = fork();
	if (daemon_pid == 0) {
		int null = open(getenv("BENCH_DAEMON_LOG") ? getenv("BENCH_DAEMON_LOG") : "/dev/null",
		                O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(null, 2);
		execl(evictd, "evictd", "--config", conf, "--cgroup-root", cgroot, "--log-target", "stderr", (char *)NULL);
		_exit(127);
	}
	usleep(500000);
	if (waitpid(daemon_pid, NULL, WNOHANG) != 0) {
		fprintf(stderr, "%s did not start\n", evictd);
		daemon_pid = 0;
		return -1;
	}
	return 0;
}

static void stop_daemon(void)
{
	kill(daemon_pid, SIGTERM);
	waitpid(daemon_pid, NULL, 0);
	daemon_pid = 0;
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *cg2 = NULL;
	static const char *const cands[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	for (int i = 0; i < 2; i++) {
		struct statfs sf;
		if (statfs(cands[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
			cg2 = cands[i];
	}
	if (geteuid() != 0 || !cg2) {
		printf("skipped: bench-reaction needs root and a cgroup v2 hierarchy\n");
		return 0;
	}
	char self[4096];
	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(evictd, sizeof(evictd), "%s/../evictd", dirname(self));

	strcpy(tmpdir, "/tmp/evictd-bench.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(fs, sizeof(fs), "%s/fs", tmpdir);
	snprintf(bigfs, sizeof(bigfs), "%s/bigfs", tmpdir);
	/* /run is a tmpfs in production: the status file must not be measured on a disk */
	snprintf(status_path, sizeof(status_path), "/dev/shm/evictd-bench-%d.json", (int)getpid());
	snprintf(cgroot, sizeof(cgroot), "%s/evictd-bench-%d", cg2, (int)getpid());
	snprintf(pod, sizeof(pod), "%s/kubepods/podeeee-5555", cgroot);
	atexit(cleanup);
	char p[400];
	mkdir(fs, 0755);
	mkdir(bigfs, 0755);
	char opts[32], bigopts[32];
	snprintf(opts, sizeof(opts), "size=%dm", TMPFS_MIB);
	snprintf(bigopts, sizeof(bigopts), "size=%dm", BIG_HEADROOM_MIB + BIG_THRESHOLD_MIB);
	if (mount("tmpfs", fs, "tmpfs", 0, opts) < 0 || mount("tmpfs", bigfs, "tmpfs", 0, bigopts) < 0 ||
	    mkdir(cgroot, 0755) < 0) {
		printf("skipped: cannot mount a tmpfs or create cgroups: %s\n", strerror(errno));
		return 0;
	}
	snprintf(p, sizeof(p), "%s/kubepods", cgroot);
	mkdir(p, 0755);
	mkdir(pod, 0755);
	srand((unsigned)getpid());

	/* 1, 2: the 64 MiB tmpfs. near: available = threshold + 4 MiB; instant: empty, one fallocate */
	if (start_daemon(fs, THRESHOLD_MIB) < 0)
		return 1;
	long long near_fill = (TMPFS_MIB - THRESHOLD_MIB - 4) * MIB;
	if (measure("near threshold (4 MiB above) -> SIGTERM", 40, near_fill) < 0 ||
	    measure("instant 52 MiB jump from 56 MiB headroom -> SIGTERM", 10, 0) < 0)
		return 1;
	fill("base", near_fill);
	measure_cpu("daemon near a threshold (4 MiB headroom)", 10);
	fill("base", 0);
	stop_daemon();

	/* 3, 4: the big tmpfs */
	if (start_daemon(bigfs, BIG_THRESHOLD_MIB) < 0)
		return 1;
	int runs = getenv("BENCH_RUNS") ? atoi(getenv("BENCH_RUNS")) : 20;
	if (runs < 1)
		runs = 1;
	if (measure_writer("idle node (1 GiB headroom), writer -> SIGTERM", runs) < 0)
		return 1;
	/* 64 GiB of headroom (a tmpfs only reserves what is written): one read per interval */
	if (mount(NULL, bigfs, NULL, MS_REMOUNT, "size=65600m") < 0) {
		perror("remount");
		return 1;
	}
	sleep(2);
	unsigned idle = getenv("BENCH_IDLE_SEC") ? (unsigned)atoi(getenv("BENCH_IDLE_SEC")) : 60;
	measure_cpu("daemon idle (64 GiB headroom)", idle);
	return 0;
}
