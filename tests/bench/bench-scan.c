/* SPDX-License-Identifier: MIT */
/*
 * evictd scan cost: time per full scan (node signals + discovery + metadata + per-pod usage) and
 * per pod, and peak RSS, for 100 and 1000 pod cgroups in a fixture tree on tmpfs (/dev/shm).
 * Targets: <= 20 us per pod per scan and <= 4 MiB RSS at 1000 pods.
 * Each size runs in its own child process, so its peak RSS is its own.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgdiscover.h"
#include "config.h"
#include "log.h"
#include "scan.h"

static void put(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *p)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", p);
	for (char *s = tmp + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(tmp, 0755);
			*s = '/';
		}
	mkdir(tmp, 0755);
}

static const char *memstat =
	"anon 104857600\nfile 52428800\nkernel 1048576\nkernel_stack 65536\npagetables 262144\nsec_pagetables 0\n"
	"percpu 0\nsock 0\nvmalloc 0\nshmem 0\nzswap 0\nzswapped 0\nfile_mapped 0\nfile_dirty 0\nfile_writeback 0\n"
	"swapcached 0\nanon_thp 0\nfile_thp 0\nshmem_thp 0\ninactive_anon 0\nactive_anon 104857600\n"
	"inactive_file 20971520\nactive_file 31457280\nunevictable 0\nslab_reclaimable 0\nslab_unreclaimable 0\n"
	"slab 0\nworkingset_refault_anon 0\nworkingset_refault_file 0\nworkingset_activate_anon 0\n"
	"workingset_activate_file 0\nworkingset_restore_anon 0\nworkingset_restore_file 0\n"
	"workingset_nodereclaim 0\npgscan 0\npgsteal 0\npgscan_kswapd 0\npgscan_direct 0\npgsteal_kswapd 0\n"
	"pgsteal_direct 0\npgfault 0\npgmajfault 0\npgrefill 0\npgactivate 0\npgdeactivate 0\npglazyfree 0\n"
	"pglazyfreed 0\nzswpin 0\nzswpout 0\nthp_fault_alloc 0\nthp_collapse_alloc 0\n";

/* A kubelet (systemd driver) tree with n pods, a descriptor for each, and a proc root. */
static void build_tree(const char *base, int n)
{
	char root[PATH_MAX], pods[PATH_MAX], proc[PATH_MAX], d[PATH_MAX * 2], uid[64], name[128];
	static const char *const qos[] = { "burstable", "besteffort" };

	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(pods, sizeof(pods), "%s/pods", base);
	snprintf(proc, sizeof(proc), "%s/proc", base);
	mkdirs(root);
	mkdirs(pods);
	snprintf(d, sizeof(d), "%s/pressure", proc);
	mkdirs(d);
	snprintf(d, sizeof(d), "%s/sys/kernel", proc);
	mkdirs(d);
	snprintf(d, sizeof(d), "%s/self", proc);
	mkdirs(d);
	put(root, "cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
	put(root, "memory.stat", memstat);
	put(proc, "meminfo", "MemTotal:       16318372 kB\n");
	put(proc, "loadavg", "0.1 0.2 0.3 2/500 1234\n");
	put(proc, "pressure/memory", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	put(proc, "sys/kernel/pid_max", "4194304\n");
	put(proc, "sys/kernel/threads-max", "127000\n");
	put(proc, "self/cgroup", "0::/system.slice/evictd.service\n");
	snprintf(d, sizeof(d), "%s/kubepods.slice", root);
	mkdirs(d);
	put(d, "memory.max", "15032385536\n");
	put(d, "memory.current", "4294967296\n");
	put(d, "memory.stat", memstat);
	for (int i = 0; i < n; i++) {
		const char *q = qos[i % 2];
		snprintf(uid, sizeof(uid), "%08x-1111-2222-3333-%012x", i, i);
		char esc[64];
		snprintf(esc, sizeof(esc), "%s", uid);
		for (char *c = esc; *c; c++)
			if (*c == '-')
				*c = '_';
		snprintf(d, sizeof(d), "%s/kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%s.slice", root, q, q, esc);
		mkdirs(d);
		put(d, "memory.current", "157286400\n");
		put(d, "memory.stat", memstat);
		put(d, "cpu.stat", "usage_usec 123456789\nuser_usec 100000000\nsystem_usec 23456789\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n");
		put(d, "pids.current", "17\n");
		put(d, "memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
		put(d, "memory.min", "0\n");
		put(d, "cpu.weight", "10\n");
		snprintf(name, sizeof(name), "%s.conf", uid);
		char text[256];
		snprintf(text, sizeof(text), "[pod]\nnamespace = bench\nname = pod-%d\npriority = %d\nmemory-request = 128Mi\n", i, i % 7);
		put(pods, name, text);
	}
}

static uint64_t now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int run(const char *base, int n, int scans)
{
	char root[PATH_MAX], pods[PATH_MAX], proc[PATH_MAX];
	evictd_config *c;
	config_error err;
	cg_info cg;
	scanner *sc;
	const snapshot *snap;
	struct rusage ru;

	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(pods, sizeof(pods), "%s/pods", base);
	snprintf(proc, sizeof(proc), "%s/proc", base);
	if (config_load_string("[agent]\nnodefs-path = /\nimagefs-path = /\n", "bench", &c, &err) < 0)
		return 1;
	config_overrides ov = { .cgroup_root = root, .proc_root = proc, .pod_metadata_dir = pods };
	config_apply_overrides(c, &ov);
	if (cg_discover(c->cgroup_root, &cg) < 0 || scanner_new(c, &cg, &sc) < 0)
		return 1;
	/* first scan: descriptors parsed; the rest use the cache as the daemon does */
	uint64_t t0 = now_usec();
	if (scanner_scan(sc, t0, &snap) < 0 || snap->n_pods != (size_t)n) {
		fprintf(stderr, "scan found %zu pods, expected %d\n", snap ? snap->n_pods : 0, n);
		return 1;
	}
	uint64_t first = now_usec() - t0;
	uint64_t best = UINT64_MAX, total = 0;
	for (int i = 0; i < scans; i++) {
		uint64_t a = now_usec();
		if (scanner_scan(sc, a, &snap) < 0)
			return 1;
		uint64_t dt = now_usec() - a;
		total += dt;
		if (dt < best)
			best = dt;
	}
	getrusage(RUSAGE_SELF, &ru);
	double mean = (double)total / scans;
	printf("pods=%-5d scans=%-4d first scan %8.1f us | steady scan mean %9.1f us (best %7.1f) | "
	       "per pod %6.2f us | peak RSS %.2f MiB\n",
	       n, scans, (double)first, mean, (double)best, mean / n, ru.ru_maxrss / 1024.0);
	scanner_free(sc);
	config_free(c);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	static const int sizes[] = { 100, 1000 };
	int failed = 0;

	log_setup(LOGGING_STDERR);
	for (size_t i = 0; i < 2; i++) {
		char base[512], cmd[600];
		snprintf(base, sizeof(base), "%s/evictd-bench-XXXXXX", dir);
		if (!mkdtemp(base)) {
			perror(base);
			return 1;
		}
		build_tree(base, sizes[i]);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			{ int rc = run(base, sizes[i], sizes[i] >= 1000 ? 200 : 1000); fflush(stdout); _exit(rc); }
		int st;
		waitpid(pid, &st, 0);
		failed |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			failed = 1;
	}
	return failed;
}
