/* SPDX-License-Identifier: MIT */
/*
 * The incremental signal walk (cgwalk.h) on fixture trees, without root: names starting with ".",
 * nesting far deeper than 16, bounded work per step, a sub-cgroup vanishing between steps, a
 * pid already signalled not signalled again, and running out of fds at depth (skipped, counted,
 * not a failure). The real-cgroup cases (threaded, frozen) are in test-hostile-cgroup.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgwalk.h"
#include "kid.h"

#define DEEP 200

static char root[64];

static void put_pid(const char *dir, pid_t pid)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "%d\n", (int)pid);
	fclose(f);
}

static pid_t kid(void)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		kid_wait_for_signals(false);
	return pid;
}

/* root/.hidden (pid a), root/d0/.../d199 (pid b at the bottom); returns the bottom path. */
static void make_tree(pid_t a, pid_t b, char *deep, size_t size)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/.hidden", root);
	assert_int_equal(mkdir(p, 0755), 0);
	put_pid(p, a);
	snprintf(deep, size, "%s", root);
	for (int i = 0; i < DEEP; i++) {
		size_t l = strlen(deep);
		snprintf(deep + l, size - l, "/d%d", i);
		assert_int_equal(mkdir(deep, 0755), 0);
	}
	put_pid(deep, b);
}

static void remove_tree(void)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s/.hidden %s/d0", root, root);
	assert_int_equal(system(cmd), 0);
}

static int open_root(void)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static void test_dot_and_deep_reached_in_bounded_steps(void **state)
{
	(void)state;
	pid_t a = kid(), b = kid();
	char deep[4096];
	make_tree(a, b, deep, sizeof(deep));
	int fd = open_root();
	cg_walk *w;
	assert_int_equal(cg_walk_new(fd, SIGTERM, getpid(), 0, &w), 0);
	unsigned steps = 0;
	int r;
	while ((r = cg_walk_step(w, 4)) > 0)
		steps++;
	assert_int_equal(r, 0);
	assert_true(steps >= (DEEP + 2) / 4); /* 4 sub-cgroups per step at most */
	assert_int_equal(cg_walk_signalled(w), 2); /* and not twice: the second pass found nothing new */
	assert_int_equal(cg_walk_error(w), 0);
	assert_true(cg_walk_visited(w) >= 2 * (DEEP + 2)); /* two passes */
	cg_walk_free(w);
	int st;
	assert_int_equal(waitpid(a, &st, 0), a);
	assert_int_equal(WTERMSIG(st), SIGTERM);
	assert_int_equal(waitpid(b, &st, 0), b);
	assert_int_equal(WTERMSIG(st), SIGTERM);
	close(fd);
	remove_tree();
}

static void test_vanished_subcgroup_is_not_an_error(void **state)
{
	(void)state;
	char p[128];
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/gone%d", root, i);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	int fd = open_root();
	cg_walk *w;
	assert_int_equal(cg_walk_new(fd, 0, getpid(), CG_WALK_ONE_PASS, &w), 0);
	assert_int_equal(cg_walk_step(w, 1), 1); /* the root only; its listing is under way */
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/gone%d", root, i);
		assert_int_equal(rmdir(p), 0);
	}
	while (cg_walk_step(w, 1) > 0)
		;
	assert_int_equal(cg_walk_error(w), 0);
	assert_int_equal(cg_walk_skipped(w), 0);
	assert_true(cg_walk_first_pass_done(w));
	cg_walk_free(w);
	close(fd);
}

static void test_out_of_fds_at_depth_is_skipped_not_fatal(void **state)
{
	(void)state;
	pid_t a = kid(), b = kid();
	char deep[4096];
	make_tree(a, b, deep, sizeof(deep));
	int fd = open_root();
	struct rlimit old, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 64; /* far fewer than DEEP levels of open directories */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	cg_walk *w;
	assert_int_equal(cg_walk_new(fd, SIGTERM, getpid(), CG_WALK_ONE_PASS, &w), 0);
	int r;
	while ((r = cg_walk_step(w, 64)) > 0)
		;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(r, 0);
	assert_int_equal(cg_walk_error(w), -EMFILE);
	assert_true(cg_walk_skipped(w) >= 1);
	assert_int_equal(cg_walk_signalled(w), 1); /* .hidden, not the bottom: said, not hidden */
	cg_walk_free(w);
	int st;
	assert_int_equal(waitpid(a, &st, 0), a);
	kill(b, SIGKILL);
	assert_int_equal(waitpid(b, &st, 0), b);
	close(fd);
	remove_tree();
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/evictd-cgwalk-XXXXXX");
	if (!mkdtemp(root))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dot_and_deep_reached_in_bounded_steps),
		cmocka_unit_test(test_vanished_subcgroup_is_not_an_error),
		cmocka_unit_test(test_out_of_fds_at_depth_is_skipped_not_fatal),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd) != 0)
		r = 1;
	return r;
}
