/* SPDX-License-Identifier: MIT */
/*
 * The online CPU count the fall-rate defaults are derived from: the cpuN lines of proc-root/stat,
 * on fixtures of 2 and 64 CPUs (with the long intr line that follows them on a real node), and
 * this machine's /proc against sysconf.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "node.h"
#include "scratch.h"

/* A proc root whose stat lists cpus CPUs; returns its fd, the directory in dir. */
static int fixture(char *dir, size_t size, unsigned cpus, size_t intr_fields)
{
	scratch_template(dir, size, "evictd-cpus");
	assert_non_null(mkdtemp(dir));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	FILE *f = fdopen(openat(dfd, "stat", O_WRONLY | O_CREAT, 0644), "w");
	assert_non_null(f);
	fprintf(f, "cpu  100 0 50 1000 0 0 0 0 0 0\n");
	for (unsigned i = 0; i < cpus; i++)
		fprintf(f, "cpu%u 50 0 25 500 0 0 0 0 0 0\n", i);
	fprintf(f, "intr 12345");
	for (size_t i = 0; i < intr_fields; i++)
		fprintf(f, " %zu", i);
	fprintf(f, "\nctxt 67890\nbtime 1700000000\n");
	assert_int_equal(fclose(f), 0);
	return dfd;
}

static void drop(int dfd, const char *dir)
{
	(void)unlinkat(dfd, "stat", 0);
	close(dfd);
	assert_int_equal(rmdir(dir), 0);
}

static void test_counts_cpu_lines(void **state)
{
	char dir[128];
	unsigned n = 0;
	(void)state;

	int dfd = fixture(dir, sizeof(dir), 2, 10);
	assert_int_equal(node_online_cpus(dfd, &n), 0);
	assert_int_equal(n, 2);
	drop(dfd, dir);
	/* 64 CPUs and an intr line of 100k fields (several hundred KiB, as on a big node) */
	dfd = fixture(dir, sizeof(dir), 64, 100000);
	assert_int_equal(node_online_cpus(dfd, &n), 0);
	assert_int_equal(n, 64);
	drop(dfd, dir);
}

static void test_no_count_is_an_error(void **state)
{
	char dir[128];
	unsigned n = 7;
	(void)state;

	int dfd = fixture(dir, sizeof(dir), 0, 1);
	assert_int_equal(node_online_cpus(dfd, &n), -ENOENT);
	assert_int_equal(n, 7); /* untouched */
	(void)unlinkat(dfd, "stat", 0);
	assert_int_equal(node_online_cpus(dfd, &n), -ENOENT);
	assert_int_equal(node_online_cpus(-1, &n), -EBADF);
	drop(dfd, dir);
}

static void test_this_machine(void **state)
{
	unsigned n = 0;
	(void)state;

	int proc = open("/proc", O_RDONLY | O_DIRECTORY);
	assert_int_equal(node_online_cpus(proc, &n), 0);
	assert_int_equal(n, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	close(proc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_cpu_lines),
		cmocka_unit_test(test_no_count_is_an_error),
		cmocka_unit_test(test_this_machine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
