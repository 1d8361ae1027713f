/* SPDX-License-Identifier: MIT */
/*
 * cgroup v2 discovery (agent/cgdiscover.c) against faked mount tables: each case runs in a child
 * with a private mount namespace where fake /proc/self/mounts (what libcgroup reads, through the
 * /proc/mounts symlink), /proc/self/mountinfo (the fallback) and /proc/cgroups are bind-mounted
 * over the real ones, and the "cgroup2 mounts" they list are bind mounts of the real cgroup2
 * hierarchy (discovery cross-checks every candidate with statfs(), so a plain directory is never
 * taken for one). Needs root (mount namespaces); skipped otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "agent-test.h"
#include "cgdiscover.h"
#include "scratch.h"

static char tmpdir[100];
static char real_v2[64];             /* this machine's cgroup2 mount, "" if none */
static char empty_parent[256];    /* a cgroup we create; its child "leaf" has no controllers */
static char real_controllers[256];

static bool is_cgroup2(const char *p)
{
	struct statfs sf;
	return statfs(p, &sf) == 0 && (long)sf.f_type == CGROUP2_SUPER_MAGIC;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(scratch_template(tmpdir, sizeof(tmpdir), "evictd-cgdiscover")))
		return -1;
	if (is_cgroup2("/sys/fs/cgroup"))
		snprintf(real_v2, sizeof(real_v2), "/sys/fs/cgroup");
	else if (is_cgroup2("/sys/fs/cgroup/unified"))
		snprintf(real_v2, sizeof(real_v2), "/sys/fs/cgroup/unified");
	if (real_v2[0]) {
		char p[PATH_MAX];
		FILE *f;
		snprintf(p, sizeof(p), "%s/cgroup.controllers", real_v2);
		if ((f = fopen(p, "re"))) {
			if (!fgets(real_controllers, sizeof(real_controllers), f))
				real_controllers[0] = '\0';
			real_controllers[strcspn(real_controllers, "\n")] = '\0';
			fclose(f);
		}
		/* a new cgroup enables nothing in its subtree_control: its child's controllers are empty */
		snprintf(empty_parent, sizeof(empty_parent), "%s/evictd-test-cgdiscover-%s-%d", real_v2, test_run_id(),
		         (int)getpid());
		snprintf(p, sizeof(p), "%s/leaf", empty_parent);
		if (mkdir(empty_parent, 0755) < 0 || mkdir(p, 0755) < 0)
			empty_parent[0] = '\0';
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX];
	(void)state;
	if (empty_parent[0]) {
		snprintf(cmd, sizeof(cmd), "%s/leaf", empty_parent);
		rmdir(cmd);
		rmdir(empty_parent);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

typedef struct fake_mount {
	const char *kind;   /* "v2": bind of src (a real cgroup2 dir); "v1 CTRL": a v1 line; "dir": a plain dir */
	const char *src;
	const char *path;   /* relative to the case's directory */
} fake_mount;

typedef struct result {
	char mode[32], root[PATH_MAX], found_by[64], controllers[256];
} result;

static void write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		_exit(3);
	close(fd);
}

/* The child: private mount namespace, fake tables, cg_discover(NULL). 77: not permitted here. */
static void child(const char *casedir, const fake_mount *m, size_t n, int out)
{
	char mounts[8192] = "proc /proc proc rw,nosuid 0 0\n", info[8192] = "22 1 0:21 / /proc rw - proc proc rw\n";
	char fm[PATH_MAX], fi[PATH_MAX], fc[PATH_MAX];
	size_t lm = strlen(mounts), li = strlen(info);

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(77);
	for (size_t i = 0; i < n; i++) {
		char path[PATH_MAX], opts[64] = "rw";
		const char *fstype = "cgroup2";
		snprintf(path, sizeof(path), "%s/%s", casedir, m[i].path);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			_exit(3);
		if (strcmp(m[i].kind, "v2") == 0) {
			if (mount(m[i].src, path, NULL, MS_BIND, NULL) < 0)
				_exit(77);
		} else if (strncmp(m[i].kind, "v1 ", 3) == 0) {
			fstype = "cgroup";
			snprintf(opts, sizeof(opts), "rw,%s", m[i].kind + 3);
		}
		lm += (size_t)snprintf(mounts + lm, sizeof(mounts) - lm, "%s %s %s %s 0 0\n", fstype, path, fstype, opts);
		li += (size_t)snprintf(info + li, sizeof(info) - li, "%zu 1 0:%zu / %s rw - %s %s %s\n", 30 + i, 40 + i, path,
		                       fstype, fstype, opts);
	}
	snprintf(fm, sizeof(fm), "%s/mounts", casedir);
	snprintf(fi, sizeof(fi), "%s/mountinfo", casedir);
	snprintf(fc, sizeof(fc), "%s/cgroups", casedir);
	write_text(fm, mounts);
	write_text(fi, info);
	write_text(fc, "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
	               "cpu\t0\t1\t1\nmemory\t0\t1\t1\npids\t0\t1\t1\nhugetlb\t0\t1\t1\nio\t0\t1\t1\n");
	if (mount(fm, "/proc/self/mounts", NULL, MS_BIND, NULL) < 0 ||
	    mount(fi, "/proc/self/mountinfo", NULL, MS_BIND, NULL) < 0 || mount(fc, "/proc/cgroups", NULL, MS_BIND, NULL) < 0)
		_exit(77);

	cg_info ci;
	if (cg_discover(NULL, &ci) < 0)
		_exit(4);
	result r = { 0 };
	snprintf(r.mode, sizeof(r.mode), "%s", cg_mode_name(ci.mode));
	snprintf(r.root, sizeof(r.root), "%s", ci.root);
	snprintf(r.found_by, sizeof(r.found_by), "%s", ci.found_by ? ci.found_by : "");
	snprintf(r.controllers, sizeof(r.controllers), "%s", ci.controllers);
	if (write(out, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(5);
	_exit(0);
}

/* Runs one case; skips the test when mount namespaces are not permitted. */
static void discover_case(const char *name, const fake_mount *m, size_t n, result *ret, char *casedir, size_t size)
{
	int fds[2], status;

	skip_unless_root(name, "bind mounts over /proc need root");
	snprintf(casedir, size, "%s/%s", tmpdir, name);
	assert_int_equal(mkdir(casedir, 0755), 0);
	assert_int_equal(pipe(fds), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		child(casedir, m, n, fds[1]);
	}
	close(fds[1]);
	ssize_t got = read(fds[0], ret, sizeof(*ret));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("# skip bind mount: no private mount namespace here (needs root; a restricted container)\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(got, (ssize_t)sizeof(*ret));
}

static void test_unified(void **state)
{
	char dir[1024], want[PATH_MAX];
	result r;
	(void)state;
	if (!real_v2[0]) {
		print_message("# skip real cgroup2: no cgroup2 mounted on this machine to bind\n");
		skip();
	}
	const fake_mount m[] = { { "v2", real_v2, "cg" } };
	discover_case("unified", m, 1, &r, dir, sizeof(dir));
	snprintf(want, sizeof(want), "%s/cg", dir);
	assert_string_equal(r.mode, "unified");
	assert_string_equal(r.root, want);
	assert_string_equal(r.controllers, real_controllers);
	/* libcgroup lists a cgroup2 mount only with controllers in its cgroup.controllers */
	assert_string_equal(r.found_by, real_controllers[0] ? "libcgroup" : "mountinfo (libcgroup declined)");
}

static void test_hybrid(void **state)
{
	char dir[1024], want[PATH_MAX];
	result r;
	(void)state;
	if (!real_v2[0]) {
		print_message("# skip fake cgroup2: no cgroup2 mounted on this machine to compare with\n");
		skip();
	}
	const fake_mount m[] = { { "v1 cpu", NULL, "cpu" }, { "v1 memory", NULL, "memory" }, { "v2", real_v2, "unified" } };
	discover_case("hybrid", m, 3, &r, dir, sizeof(dir));
	snprintf(want, sizeof(want), "%s/unified", dir);
	assert_string_equal(r.mode, "hybrid");
	assert_string_equal(r.root, want);
}

/* libcgroup skips a cgroup2 mount whose cgroup.controllers is empty (ECGROUPNOTMOUNTED). */
static void test_empty_controllers_falls_back(void **state)
{
	char dir[1024], want[PATH_MAX], leaf[PATH_MAX];
	result r;
	(void)state;
	if (!empty_parent[0]) {
		print_message("# skip empty controllers: could not create a cgroup (needs root and cgroup v2)\n");
		skip();
	}
	snprintf(leaf, sizeof(leaf), "%s/leaf", empty_parent);
	const fake_mount m[] = { { "v2", leaf, "cg" } };
	discover_case("empty", m, 1, &r, dir, sizeof(dir));
	snprintf(want, sizeof(want), "%s/cg", dir);
	assert_string_equal(r.found_by, "mountinfo (libcgroup declined)");
	assert_string_equal(r.mode, "unified");
	assert_string_equal(r.root, want);
	assert_string_equal(r.controllers, "");
}

static void test_absent_and_legacy(void **state)
{
	char dir[PATH_MAX];
	result r;
	(void)state;
	discover_case("absent", NULL, 0, &r, dir, sizeof(dir));
	assert_string_equal(r.mode, "absent");
	assert_string_equal(r.root, "");

	const fake_mount v1[] = { { "v1 memory", NULL, "memory" }, { "v1 pids", NULL, "pids" } };
	discover_case("legacy", v1, 2, &r, dir, sizeof(dir));
	assert_string_equal(r.mode, "legacy");
	assert_string_equal(r.root, "");
}

/* A table that claims cgroup2 on a plain directory: statfs() says otherwise, nothing is found. */
static void test_fake_cgroup2_on_plain_dir_rejected(void **state)
{
	char dir[PATH_MAX];
	result r;
	(void)state;
	const fake_mount m[] = { { "dir", NULL, "notcg" } };
	discover_case("plain", m, 1, &r, dir, sizeof(dir));
	assert_string_equal(r.mode, "absent");
	assert_string_equal(r.root, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unified),
		cmocka_unit_test(test_hybrid),
		cmocka_unit_test(test_empty_controllers_falls_back),
		cmocka_unit_test(test_absent_and_legacy),
		cmocka_unit_test(test_fake_cgroup2_on_plain_dir_rejected),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
