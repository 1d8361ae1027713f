/*
 * podhog — the process inside an end-to-end test pod: it uses memory, can push the node's
 * memory.available under a threshold, and records when things happened, so that the scenarios
 * can judge evictd by what the pod itself saw.
 *
 *   podhog [--out FILE] [--alloc MIB] [--delay MS] [--until-avail BYTES [--extra MIB]] [--max MIB]
 *          [--on-term exit|ignore] [--heartbeat FILE] [--cgroup-root DIR] [--proc-root DIR]
 *   podhog --now          print "MONOTONIC_NS REALTIME_NS" and exit
 *   podhog --available    print memory.available (bytes) as evictd computes it, and exit
 *   podhog --watch PID --out FILE   record "died" when process PID ends (it need not be a child)
 *
 * Events are appended to FILE, one line each: "EVENT MONOTONIC_NS REALTIME_NS [key=value...]":
 *   ready  (after --alloc)      cross  (memory.available went under --until-avail, avail=N)
 *   held   (after --extra)      sigterm (as taken inside the signal handler)
 *   died   (--watch: the watched process is gone; taken when its pidfd became readable)
 * --delay waits between "ready" and growing (time for a watcher to attach).
 * --heartbeat rewrites FILE with the monotonic time every 100 ms: its last value is when the
 * process was last alive, which is how a scenario sees when a pod was killed.
 *
 * memory.available is the kubelet's cgroup v2 figure: MemTotal − (anon + file − inactive_file)
 * of the root memory.stat — the same signal evictd watches, so "cross" is the moment the
 * threshold was crossed as evictd can see it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)

static volatile sig_atomic_t got_term;
static struct timespec term_mono, term_real;

static void on_term(int sig)
{
	(void)sig;
	/* clock_gettime is async-signal-safe: the handler's own time is the arrival time. */
	clock_gettime(CLOCK_MONOTONIC, &term_mono);
	clock_gettime(CLOCK_REALTIME, &term_real);
	got_term = 1;
}

static int64_t ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int out_fd = -1;

static void record_at(const char *event, const struct timespec *mono, const struct timespec *real,
		      const char *extra)
{
	if (out_fd < 0)
		return;
	dprintf(out_fd, "%s %" PRId64 " %" PRId64 "%s%s\n", event, ns(mono), ns(real),
		extra ? " " : "", extra ? extra : "");
}

static void record(const char *event, const char *extra)
{
	struct timespec m, r;

	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	record_at(event, &m, &r, extra);
}

/* Value of KEY in a "key value" file (memory.stat) or "Key: value kB" file (meminfo). */
static int read_key(const char *path, const char *key, uint64_t *val)
{
	char line[256];
	size_t klen = strlen(key);
	FILE *f = fopen(path, "re");
	int rc = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == ':')) {
			const char *p = line + klen + 1;

			while (*p == ' ')
				p++;
			*val = strtoull(p, NULL, 10);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

static const char *cgroup_root = "/sys/fs/cgroup";
static const char *proc_root = "/proc";

static int memory_available(uint64_t *avail)
{
	char stat[4096], meminfo[4096];
	uint64_t total_kib, anon, file, inactive_file, ws;

	snprintf(stat, sizeof(stat), "%s/memory.stat", cgroup_root);
	snprintf(meminfo, sizeof(meminfo), "%s/meminfo", proc_root);
	if (read_key(meminfo, "MemTotal", &total_kib) < 0 || read_key(stat, "anon", &anon) < 0 ||
	    read_key(stat, "file", &file) < 0 || read_key(stat, "inactive_file", &inactive_file) < 0)
		return -EIO;
	ws = anon + file > inactive_file ? anon + file - inactive_file : 0;
	*avail = total_kib * 1024 > ws ? total_kib * 1024 - ws : 0;
	return 0;
}

static void heartbeat(int fd)
{
	char buf[32];
	struct timespec m;
	int n;

	if (fd < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &m);
	n = snprintf(buf, sizeof(buf), "%" PRId64 "\n", ns(&m));
	if (pwrite(fd, buf, (size_t)n, 0) == n)
		(void)ftruncate(fd, n);
}

/* Records a pending SIGTERM; returns 1 if the process should now exit. */
static int handle_term(int exit_on_term)
{
	if (!got_term)
		return 0;
	got_term = 0;
	record_at("sigterm", &term_mono, &term_real, NULL);
	return exit_on_term;
}

/* Waits for PID to end, from outside its cgroup (so the watcher survives its eviction). A hard
 * eviction may SIGKILL the pod before its SIGTERM handler ever runs; the death time is then the
 * latest moment SIGTERM could have arrived. */
static int watch(long pid)
{
	struct pollfd p = { .events = POLLIN };

	p.fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (p.fd < 0) {
		fprintf(stderr, "podhog: pidfd_open(%ld): %s\n", pid, strerror(errno));
		return 1;
	}
	while (poll(&p, 1, -1) < 0) {
		if (errno != EINTR) {
			perror("podhog: poll");
			close(p.fd);
			return 1;
		}
	}
	record("died", NULL);
	close(p.fd);
	return 0;
}

static void usage(void)
{
	fputs("usage: podhog [--out FILE] [--alloc MIB] [--delay MS] [--until-avail BYTES [--extra MIB]] [--max MIB]\n"
	      "              [--on-term exit|ignore] [--heartbeat FILE] [--cgroup-root DIR] [--proc-root DIR]\n"
	      "       podhog --now | --available | --watch PID --out FILE\n", stderr);
	exit(2);
}

static unsigned long parse_num(const char *opt, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-') {
		fprintf(stderr, "podhog: %s: not a non-negative integer: '%s'\n", opt, s);
		exit(2);
	}
	return (unsigned long)v;
}

int main(int argc, char **argv)
{
	unsigned long alloc_mib = 0, extra_mib = 0, max_mib = 1024, until = 0, touched = 0, delay_ms = 0;
	const char *out = NULL, *hb_path = NULL;
	long watch_pid = 0;
	int exit_on_term = 1, hb_fd = -1, i;
	struct sigaction sa;
	char *mem;

	for (i = 1; i < argc; i += 2) {   /* every option but --now/--available takes a value */
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--now")) {
			struct timespec m, r;

			clock_gettime(CLOCK_MONOTONIC, &m);
			clock_gettime(CLOCK_REALTIME, &r);
			printf("%" PRId64 " %" PRId64 "\n", ns(&m), ns(&r));
			return 0;
		} else if (!strcmp(a, "--available")) {
			uint64_t avail;

			for (int j = i + 1; j + 1 < argc; j += 2) {
				if (!strcmp(argv[j], "--cgroup-root"))
					cgroup_root = argv[j + 1];
				else if (!strcmp(argv[j], "--proc-root"))
					proc_root = argv[j + 1];
			}
			if (memory_available(&avail) < 0) {
				fprintf(stderr, "podhog: cannot read %s/memory.stat or %s/meminfo\n",
					cgroup_root, proc_root);
				return 1;
			}
			printf("%" PRIu64 "\n", avail);
			return 0;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--out"))
			out = v;
		else if (!strcmp(a, "--alloc"))
			alloc_mib = parse_num(a, v);
		else if (!strcmp(a, "--until-avail"))
			until = parse_num(a, v);
		else if (!strcmp(a, "--delay"))
			delay_ms = parse_num(a, v);
		else if (!strcmp(a, "--extra"))
			extra_mib = parse_num(a, v);
		else if (!strcmp(a, "--max"))
			max_mib = parse_num(a, v);
		else if (!strcmp(a, "--watch"))
			watch_pid = (long)parse_num(a, v);
		else if (!strcmp(a, "--heartbeat"))
			hb_path = v;
		else if (!strcmp(a, "--cgroup-root"))
			cgroup_root = v;
		else if (!strcmp(a, "--proc-root"))
			proc_root = v;
		else if (!strcmp(a, "--on-term") && (!strcmp(v, "exit") || !strcmp(v, "ignore")))
			exit_on_term = !strcmp(v, "exit");
		else
			usage();
	}
	if (watch_pid > 0) {
		if (!out)
			usage();
		out_fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (out_fd < 0) {
			fprintf(stderr, "podhog: %s: %s\n", out, strerror(errno));
			return 1;
		}
		return watch(watch_pid);
	}
	if (alloc_mib > max_mib) {
		fprintf(stderr, "podhog: --alloc %lu exceeds --max %lu\n", alloc_mib, max_mib);
		return 2;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0) {
		perror("podhog: sigaction");
		return 1;
	}
	if (out) {
		out_fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (out_fd < 0) {
			fprintf(stderr, "podhog: %s: %s\n", out, strerror(errno));
			return 1;
		}
	}
	if (hb_path) {
		hb_fd = open(hb_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (hb_fd < 0) {
			fprintf(stderr, "podhog: %s: %s\n", hb_path, strerror(errno));
			return 1;
		}
	}

	/* One reservation, touched a MiB at a time: usage grows exactly as far as we say. */
	mem = mmap(NULL, max_mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (mem == MAP_FAILED) {
		perror("podhog: mmap");
		return 1;
	}
	/* Non-zero bytes: a zero page could be shared or deduplicated and not count as usage. */
	for (; touched < alloc_mib; touched++) {
		memset(mem + touched * MIB, 0x5a, MIB);
		if (handle_term(exit_on_term))
			return 0;
	}
	record("ready", NULL);
	heartbeat(hb_fd);
	if (delay_ms) {
		struct timespec d = { (time_t)(delay_ms / 1000), (long)(delay_ms % 1000) * 1000000L };

		while (nanosleep(&d, &d) < 0 && errno == EINTR)
			if (handle_term(exit_on_term))
				return 0;
	}

	if (until) {
		uint64_t avail = UINT64_MAX;
		char extra[64];

		while (memory_available(&avail) == 0 && avail >= until) {
			/* Far from the threshold, grow in bigger steps (reading memory.stat is slow under
			 * emulation); the last MiBs one at a time, so "cross" is exact to 1 MiB. */
			unsigned long step = (unsigned long)((avail - until) / MIB / 2);

			step = step < 1 ? 1 : step > 16 ? 16 : step;
			if (step > max_mib - touched)
				step = max_mib - touched;
			if (step == 0) {
				fprintf(stderr, "podhog: reached --max %lu MiB, memory.available still %" PRIu64 "\n",
					max_mib, avail);
				break;
			}
			for (; step > 0; step--)
				memset(mem + touched++ * MIB, 0x5a, MIB);
			if (handle_term(exit_on_term))
				return 0;
		}
		if (avail < until) {
			snprintf(extra, sizeof(extra), "avail=%" PRIu64 " mib=%lu", avail, touched);
			record("cross", extra);
		}
		for (unsigned long n = 0; n < extra_mib && touched < max_mib; n++) {
			memset(mem + touched++ * MIB, 0x5a, MIB);
			if (handle_term(exit_on_term))
				return 0;
		}
		snprintf(extra, sizeof(extra), "mib=%lu", touched);
		record("held", extra);
	}

	for (unsigned tick = 0;; tick++) {
		struct timespec d = { 0, 10 * 1000 * 1000 };

		if (handle_term(exit_on_term))
			return 0;
		if (tick % 10 == 0)
			heartbeat(hb_fd);
		nanosleep(&d, NULL);   /* EINTR on SIGTERM: the next turn records it */
	}
}
