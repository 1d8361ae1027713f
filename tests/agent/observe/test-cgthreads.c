/* SPDX-License-Identifier: MIT */
/*
 * Task counting from cgroup.threads where a pod cgroup has no pids.current (pids controller on
 * cgroup v1): fixture trees (nesting, symlinks not followed, limits, a non-cgroup) and, where
 * this runs as root on a cgroup v2 hierarchy, a real cgroup with a real process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/magic.h>

#include "agent-test.h"
#include "cgthreads.h"

AGENT_TEST_TMPDIR("cgthreads")

static void mk(const char *rel, const char *threads)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
	if (threads) {
		char f[PATH_MAX + 16];
		snprintf(f, sizeof(f), "%s/cgroup.threads", p);
		write_file(f, threads);
	}
}

static int count(const char *rel, uint64_t *n)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
	int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	int r = cg_count_threads(fd, n);
	close(fd);
	return r;
}

static void test_subtree_sum(void **state)
{
	(void)state;
	uint64_t n = 0;
	mk("pod", "");
	mk("pod/c1", "101\n102\n103\n");
	mk("pod/c2", "201\n");
	mk("pod/c2/inner", "301\n302\n");
	mk("outside", "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
	char link[PATH_MAX], target[PATH_MAX];
	snprintf(link, sizeof(link), "%s/pod/escape", tmpdir);
	snprintf(target, sizeof(target), "%s/outside", tmpdir);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(count("pod", &n), 0);
	assert_int_equal(n, 6); /* 3 + 1 + 2; the symlinked cgroup's 9 are not counted */
	assert_int_equal(count("pod/c2", &n), 0);
	assert_int_equal(n, 3);
}

static void test_not_a_cgroup_and_limits(void **state)
{
	(void)state;
	uint64_t n = 42;
	mk("plain", NULL);
	assert_int_equal(count("plain", &n), -ENOENT);
	assert_int_equal(n, 42); /* untouched on failure */

	/* deeper than CGTHREADS_MAX_DEPTH: refused rather than a silent lower bound */
	char rel[PATH_MAX] = "deep";
	mk(rel, "1\n");
	for (int i = 0; i <= CGTHREADS_MAX_DEPTH; i++) {
		strcat(rel, "/d");
		mk(rel, "1\n");
	}
	assert_int_equal(count("deep", &n), -E2BIG);
	assert_int_equal(n, 42);
}

/* A real cgroup on the v2 hierarchy with one single-threaded process in a child cgroup. */
static void test_real_cgroup_v2(void **state)
{
	(void)state;
	const char *roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	const char *root = NULL;
	struct statfs sfs;
	for (size_t i = 0; i < 2 && !root; i++)
		if (statfs(roots[i], &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
			root = roots[i];
	if (!root || geteuid() != 0) {
		print_message("# skip real cgroup v2: %s\n", !root ? "no cgroup v2 mounted" : "needs root (creates a cgroup)");
		skip();
		return;
	}
	char cg[PATH_MAX], sub[PATH_MAX + 8], procs[PATH_MAX + 32];
	snprintf(cg, sizeof(cg), "%s/evictd-test-threads-%d", root, (int)getpid());
	snprintf(sub, sizeof(sub), "%s/ctr", cg);
	if (mkdir(cg, 0755) < 0) {
		/* delegated elsewhere or read-only: nothing to test here; anything else is a failure */
		int e = errno;
		print_message("# skip real cgroup v2: cannot create %s: %s\n", cg, strerror(e));
		assert_true(e == EACCES || e == EPERM || e == EROFS);
		skip();
		return;
	}
	assert_int_equal(mkdir(sub, 0755), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	char pid[32];
	snprintf(pid, sizeof(pid), "%d\n", (int)child);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", sub);
	int pfd = open(procs, O_WRONLY | O_CLOEXEC);
	int moved = pfd >= 0 && write(pfd, pid, strlen(pid)) == (ssize_t)strlen(pid);
	if (pfd >= 0)
		close(pfd);

	uint64_t n = 0;
	int fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = fd >= 0 ? cg_count_threads(fd, &n) : -errno;
	if (fd >= 0)
		close(fd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* the cgroup is empty once the child is reaped; give the kernel a moment to notice */
	for (int i = 0; i < 100 && rmdir(sub) < 0; i++)
		usleep(10000);
	rmdir(cg);
	assert_true(moved);
	assert_int_equal(r, 0);
	assert_int_equal(n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_subtree_sum),
		cmocka_unit_test(test_not_a_cgroup_and_limits),
		cmocka_unit_test(test_real_cgroup_v2),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
