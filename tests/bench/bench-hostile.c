/* SPDX-License-Identifier: MIT */
/*
 * Scaling of libpreempt on adversarial input sizes: each case runs at n, 2n, 4n, 8n and prints
 * the time and the growth factor per doubling (≈2 linear, ≈2.1 n log n, ≈4 quadratic).
 * These are the sizes documented in tests/fuzz/FINDINGS.md. `make bench` runs it.
 *
 * Then preemptctl's input (issue 12): mappings of n keys (JSON and YAML), Lists of n pods and of
 * n empty objects, each written to a file and read by `preemptctl check` in a child process, whose
 * wall time, peak RSS (wait4) and error text size are printed — all must grow linearly, and the
 * error text stay bounded (messages past the hundredth are counted, not printed).
 * PREEMPTCTL overrides the program (default: preemptctl next to this binary's directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preempt.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void case_quantity_zeros(size_t n)
{
	char *s = malloc(n + 4);
	int64_t v;
	memset(s, '0', n);
	memcpy(s + n, "1Ki", 4);
	if (pp_quantity_parse(s, &v, NULL) < 0 || v != 1024)
		abort();
	free(s);
}

static void case_duration_components(size_t n)
{
	char *s = malloc(2 * n + 1);
	int64_t v;
	for (size_t i = 0; i < n; i++)
		memcpy(s + 2 * i, "0s", 2);
	s[2 * n] = 0;
	if (pp_duration_parse(s, &v, NULL) < 0 || v != 0)
		abort();
	free(s);
}

static void case_pcset_load(size_t n)
{
	pp_pcset *s = NULL;
	char name[32];
	if (pp_pcset_new(&s) < 0)
		abort();
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "class-%zu", i);
		if (pp_pcset_add(s, name, (int32_t)i, false, PP_PREEMPT_LOWER_PRIORITY, NULL) < 0)
			abort();
	}
	pp_pcset_free(s);
}

static void case_evict_rank_equal(size_t n)
{
	pp_evict_pod *pods = calloc(n, sizeof(*pods));
	size_t *order = malloc(n * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		pods[i] = (pp_evict_pod){ .namespace_ = "ns", .name = "same", .uid = "u", .has_stats = true,
			                  .usage = INT64_MAX, .request = INT64_MIN };
	if (pp_evict_rank(PP_EVICT_MEMORY, pods, n, order) < 0)
		abort();
	free(pods);
	free(order);
}

static void run(const char *name, void (*fn)(size_t), size_t n0)
{
	double prev = 0;
	printf("%-28s", name);
	for (size_t n = n0, k = 0; k < 4; n *= 2, k++) {
		double t0 = now_s();
		fn(n);
		double t = now_s() - t0;
		printf("  n=%-8zu %8.2f ms%s", n, t * 1e3, "");
		if (prev > 0)
			printf(" (x%.1f)", t / prev);
		prev = t;
	}
	printf("\n");
}

/* --- preemptctl input ------------------------------------------------------------------------ */

static char preemptctl[4096], tmpdir[64];

typedef void (*gen_fn)(FILE *f, size_t n);

static void gen_json_labels(FILE *f, size_t n)
{
	fputs("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":{", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\"example.com/k%zu\":\"v\"", i ? "," : "", i);
	fputs("}},\"status\":{\"allocatable\":{\"cpu\":\"1\"}}}\n", f);
}

static void gen_yaml_labels(FILE *f, size_t n)
{
	fputs("kind: Node\nmetadata:\n  name: n1\n  labels:\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "    example.com/k%zu: v\n", i);
	fputs("status: {allocatable: {cpu: \"1\"}}\n", f);
}

static void gen_pod_list(FILE *f, size_t n)
{
	fputs("{\"kind\":\"List\",\"items\":[\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%zu\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
		        i ? ",\n" : "", i);
	fputs("]}\n", f);
}

static void gen_empty_items(FILE *f, size_t n)
{
	fputs("{\"kind\":\"List\",\"items\":[", f);
	for (size_t i = 0; i < n; i++)
		fputs(i ? ",{}" : "{}", f);
	fputs("]}\n", f);
}

/* Runs `preemptctl check path`: wall seconds, peak RSS in KiB, stderr bytes. */
static int check_file(const char *path, double *wall, long *rss_kb, long *err_bytes)
{
	char errpath[128];
	struct rusage ru;
	int status;

	snprintf(errpath, sizeof(errpath), "%s/stderr", tmpdir);
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int out = open("/dev/null", O_WRONLY), err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
			_exit(127);
		execl(preemptctl, "preemptctl", "check", path, (char *)NULL);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -errno;
	*wall = now_s() - t0;
	*rss_kb = ru.ru_maxrss;
	struct stat st;
	*err_bytes = stat(errpath, &st) == 0 ? (long)st.st_size : -1;
	unlink(errpath);
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		return -EIO; /* 0 accepted, 1 rejected: anything else is a crash */
	return 0;
}

static void run_input(const char *name, gen_fn gen, size_t n0)
{
	double prev = 0;
	long prev_rss = 0;
	printf("%-28s", name);
	for (size_t n = n0, k = 0; k < 4; n *= 2, k++) {
		char path[128];
		snprintf(path, sizeof(path), "%s/input", tmpdir);
		FILE *f = fopen(path, "we");
		if (!f)
			abort();
		gen(f, n);
		if (fclose(f) != 0)
			abort();
		double t = 0;
		long rss = 0, errb = 0;
		if (check_file(path, &t, &rss, &errb) < 0) {
			printf("  n=%-8zu FAILED (crash or exec error)\n", n);
			unlink(path);
			return;
		}
		unlink(path);
		printf("  n=%-8zu %7.0f ms %6ld MB %4ld KB err", n, t * 1e3, rss / 1024, errb / 1024);
		if (prev > 0)
			printf(" (x%.1f, rss x%.1f)", t / prev, (double)rss / (double)prev_rss);
		prev = t;
		prev_rss = rss;
	}
	printf("\n");
}

static void run_preemptctl(int argc, char **argv)
{
	if (getenv("PREEMPTCTL"))
		snprintf(preemptctl, sizeof(preemptctl), "%s", getenv("PREEMPTCTL"));
	else {
		char self[4096];
		snprintf(self, sizeof(self), "%s", argc > 0 ? argv[0] : ".");
		snprintf(preemptctl, sizeof(preemptctl), "%s/../preemptctl", dirname(self));
	}
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/bench-hostile.XXXXXX");
	if (access(preemptctl, X_OK) != 0 || !mkdtemp(tmpdir)) {
		printf("preemptctl input: skipped (%s not found)\n", preemptctl);
		return;
	}
	printf("preemptctl check (wall, peak RSS, error text; per doubling):\n");
	run_input("JSON mapping: n keys", gen_json_labels, 25000);
	run_input("YAML mapping: n keys", gen_yaml_labels, 25000);
	run_input("List of n pods", gen_pod_list, 125000);
	run_input("List of n {} (errors)", gen_empty_items, 375000);
	rmdir(tmpdir);
}

int main(int argc, char **argv)
{
	/* first: a child's peak RSS includes this process's at fork time (Linux keeps it over exec) */
	run_preemptctl(argc, argv);
	run("quantity: leading zeros", case_quantity_zeros, 1u << 20);
	run("duration: 0s components", case_duration_components, 1u << 18);
	run("pcset: load n classes", case_pcset_load, 2500);
	run("evict_rank: equal pods", case_evict_rank_equal, 1u << 17);
	return 0;
}
