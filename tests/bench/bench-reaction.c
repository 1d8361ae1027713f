/* SPDX-License-Identifier: MIT */
/*
 * evictd's reaction latency and idle cost, measured on the real daemon binary:
 *
 *   1. near a threshold: nodefs.available on a 64 MiB tmpfs sits just above a hard threshold
 *      (the daemon polls its node signals fast there); the bench then fallocate()s past it and
 *      times crossing -> the pod's process is gone (SIGTERM + cgroup.kill; the death is observed
 *      through a pidfd, an upper bound for "SIGTERM sent");
 *   2. far from a threshold: the same crossing from an idle node (bounded by the interval);
 *   3. idle CPU: the daemon's own CPU time (/proc/PID/schedstat, ns precision) over a minute
 *      with nothing near a threshold (BENCH_IDLE_SEC, default 60), and near a threshold.
 *
 * Needs root and a writable cgroup v2 hierarchy; prints "skipped: ..." otherwise.
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
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024LL * 1024LL)
#define TMPFS_MIB 64
#define THRESHOLD_MIB 8

static char tmpdir[64], fs[128], cgroot[256], pod[320], status_path[160];
static pid_t daemon_pid;

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

/* A pod process: joins the pod cgroup and waits. Returns its pidfd. */
static int start_pod_process(pid_t *ret_pid)
{
	int ready[2];
	if (pipe(ready) < 0)
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		char p[400];
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
	char c;
	if (read(ready[0], &c, 1) != 1) {
		fprintf(stderr, "pod process failed to start\n");
		exit(1);
	}
	close(ready[0]);
	*ret_pid = pid;
	return pidfd_open(pid, 0);
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
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		if (poll(&p, 1, 5000) != 1) {
			fprintf(stderr, "%s: pod not evicted within 5 s\n", what);
			free(lat);
			return -1;
		}
		lat[i] = now_usec() - t0;
		if (getenv("BENCH_VERBOSE"))
			fprintf(stderr, "%s #%d: %.1f ms\n", what, i, lat[i] / 1000.0);
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
	char evictd[4200];
	snprintf(evictd, sizeof(evictd), "%s/../evictd", dirname(self));

	strcpy(tmpdir, "/tmp/evictd-bench.XXXXXX");
	if (!mkdtemp(tmpdir))
		return 1;
	snprintf(fs, sizeof(fs), "%s/fs", tmpdir);
	/* /run is a tmpfs in production: the status file must not be measured on a disk */
	snprintf(status_path, sizeof(status_path), "/dev/shm/evictd-bench-%d.json", (int)getpid());
	snprintf(cgroot, sizeof(cgroot), "%s/evictd-bench-%d", cg2, (int)getpid());
	snprintf(pod, sizeof(pod), "%s/kubepods/podeeee-5555", cgroot);
	atexit(cleanup);
	char p[400];
	mkdir(fs, 0755);
	char opts[32];
	snprintf(opts, sizeof(opts), "size=%dm", TMPFS_MIB);
	if (mount("tmpfs", fs, "tmpfs", 0, opts) < 0 || mkdir(cgroot, 0755) < 0) {
		printf("skipped: cannot mount a tmpfs or create cgroups: %s\n", strerror(errno));
		return 0;
	}
	snprintf(p, sizeof(p), "%s/kubepods", cgroot);
	mkdir(p, 0755);
	mkdir(pod, 0755);

	char conf[256];
	snprintf(conf, sizeof(conf), "%s/evictd.conf", tmpdir);
	FILE *f = fopen(conf, "w");
	fprintf(f,
	        "[agent]\ninterval = 1s\nstatus-file = %s\nnodefs-path = %s\nimagefs-path = %s\npod-metadata-dir = %s\n"
	        "[eviction-hard]\nmemory.available = 0%%\nimagefs.available = 0%%\nimagefs.inodesFree = 0%%\n"
	        "nodefs.inodesFree = 0%%\nnodefs.available = %dMi\n",
	        status_path, fs, fs, tmpdir, THRESHOLD_MIB);
	fclose(f);

	daemon_pid = fork();
	if (daemon_pid == 0) {
		int null = open(getenv("BENCH_DAEMON_LOG") ? getenv("BENCH_DAEMON_LOG") : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(null, 2);
		execl(evictd, "evictd", "--config", conf, "--cgroup-root", cgroot, "--log-target", "stderr", (char *)NULL);
		_exit(127);
	}
	usleep(500000);
	if (waitpid(daemon_pid, NULL, WNOHANG) != 0) {
		fprintf(stderr, "%s did not start\n", evictd);
		daemon_pid = 0;
		return 1;
	}
	srand((unsigned)getpid());
	/* near: available = threshold + 4 MiB (fast polling); far: the tmpfs is empty */
	long long near_fill = (TMPFS_MIB - THRESHOLD_MIB - 4) * MIB;
	if (measure("crossing near threshold -> pod killed", 40, near_fill) < 0 ||
	    measure("crossing from idle (1 s interval) -> killed", 10, 0) < 0)
		return 1;

	unsigned idle = getenv("BENCH_IDLE_SEC") ? (unsigned)atoi(getenv("BENCH_IDLE_SEC")) : 60;
	measure_cpu("daemon idle (nothing near a threshold)", idle);
	fill("base", near_fill);
	measure_cpu("daemon near a threshold (fast polling)", 10);
	fill("base", 0);
	return 0;
}
