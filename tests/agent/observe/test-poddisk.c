/* SPDX-License-Identifier: MIT */
/*
 * Per-pod nodefs usage (emptyDir volumes + container logs) on trees built at run time: what is
 * counted (allocated blocks, every inode), what never is (symlink targets, other filesystems,
 * other pods' logs), the walk limits, and the scanner's cache of measurements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "agent-test.h"
#include "cgdiscover.h"
#include "poddisk.h"
#include "scan.h"
#include "scratch.h"

#define Ki 1024LL
#define UID_A "aaaa-0001"
#define ED "volumes/kubernetes.io~empty-dir"

static char tmpdir[100];
static char kroot[128], logs[128];

static void mkdirs(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mkdirs(const char *fmt, ...)
{
	char path[PATH_MAX], cmd[PATH_MAX + 32];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* size bytes of non-zero data (allocated blocks), written out */
static void fill(const char *path, size_t size)
{
	char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	memset(buf, 'x', sizeof(buf));
	for (size_t done = 0; done < size; done += sizeof(buf))
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(fsync(fd), 0);
	close(fd);
}

static int setup(void **state)
{
	char p[PATH_MAX];
	(void)state;
	if (!mkdtemp(scratch_template(tmpdir, sizeof(tmpdir), "evictd-poddisk")))
		return -1;
	snprintf(kroot, sizeof(kroot), "%s/kubelet", tmpdir);
	snprintf(logs, sizeof(logs), "%s/logs", tmpdir);
	/* pod A: two emptyDirs and a log dir; a symlink to a big tree outside; a sparse file */
	mkdirs("%s/pods/" UID_A "/" ED "/cache/sub", kroot);
	mkdirs("%s/pods/" UID_A "/" ED "/work", kroot);
	mkdirs("%s/default_web-1_" UID_A "/app", logs);
	mkdirs("%s/outside", tmpdir);
	snprintf(p, sizeof(p), "%s/pods/" UID_A "/" ED "/cache/f1", kroot), fill(p, 64 * Ki);
	snprintf(p, sizeof(p), "%s/pods/" UID_A "/" ED "/cache/sub/f2", kroot), fill(p, 64 * Ki);
	snprintf(p, sizeof(p), "%s/default_web-1_" UID_A "/app/0.log", logs), fill(p, 32 * Ki);
	snprintf(p, sizeof(p), "%s/outside/big", tmpdir), fill(p, 1024 * Ki);
	char l[PATH_MAX], t[PATH_MAX];
	snprintf(l, sizeof(l), "%s/pods/" UID_A "/" ED "/work/escape", kroot);
	snprintf(t, sizeof(t), "%s/outside", tmpdir);
	if (symlink(t, l) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/pods/" UID_A "/" ED "/work/sparse", kroot);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 1LL << 30) < 0)
		return -1;
	close(fd);
	/* decoys: another pod's logs, and a name that merely ends with the UID */
	mkdirs("%s/other_x_bbbb-0002/app", logs);
	snprintf(p, sizeof(p), "%s/other_x_bbbb-0002/app/0.log", logs), fill(p, 512 * Ki);
	mkdirs("%s/default_web-1_x" UID_A, logs);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static pod_disk_usage measure(const char *k, const char *lg, uint64_t limit, const char *uid, const char *ns,
                              const char *name)
{
	poddisk_pass pass;
	pod_disk_usage u;
	assert_int_equal(poddisk_pass_open(k, lg, limit, &pass), 0);
	assert_int_equal(poddisk_measure(&pass, uid, ns, name, &u), 0);
	poddisk_pass_close(&pass);
	return u;
}

static void test_counts_empty_dirs_and_logs(void **state)
{
	(void)state;
	pod_disk_usage u = measure(kroot, logs, 100000, UID_A, "default", "web-1");
	assert_true(u.known);
	assert_false(u.partial);
	/* cache, f1, sub, f2 | work, sparse, escape (the link itself) | log dir, app, 0.log */
	assert_int_equal(u.inodes, 10);
	/* 160Ki of data; not the 1Gi apparent size of the sparse file, not the 1Mi behind the link,
	 * not the other pod's 512Ki of logs */
	assert_true(u.bytes >= 160 * Ki);
	assert_true(u.bytes < 160 * Ki + 256 * Ki);

	/* without a descriptor the log directory is found by its "_<uid>" suffix: same figures */
	pod_disk_usage v = measure(kroot, logs, 100000, UID_A, NULL, NULL);
	assert_int_equal(v.inodes, u.inodes);
	assert_int_equal(v.bytes, u.bytes);
	/* a descriptor naming a log directory that does not exist: the suffix still finds it */
	v = measure(kroot, logs, 100000, UID_A, "default", "renamed");
	assert_int_equal(v.inodes, u.inodes);
}

static void test_symlinked_volume_dir_not_followed(void **state)
{
	char l[PATH_MAX], t[PATH_MAX];
	(void)state;
	/* a pod whose whole emptyDir directory is a symlink to the big tree */
	mkdirs("%s/pods/cccc-0003/volumes", kroot);
	snprintf(l, sizeof(l), "%s/pods/cccc-0003/" ED, kroot);
	snprintf(t, sizeof(t), "%s/outside", tmpdir);
	assert_int_equal(symlink(t, l), 0);
	pod_disk_usage u = measure(kroot, logs, 100000, "cccc-0003", NULL, NULL);
	assert_true(u.known);
	assert_int_equal(u.inodes, 0);
	assert_int_equal(u.bytes, 0);
}

static void test_limits_make_a_lower_bound(void **state)
{
	char p[PATH_MAX];
	(void)state;
	mkdirs("%s/pods/dddd-0004/" ED "/many", kroot);
	for (int i = 0; i < 50; i++) {
		snprintf(p, sizeof(p), "%s/pods/dddd-0004/" ED "/many/f%d", kroot, i);
		fill(p, 4096);
	}
	pod_disk_usage all = measure(kroot, logs, 100000, "dddd-0004", NULL, NULL);
	assert_false(all.partial);
	assert_int_equal(all.inodes, 51);
	pod_disk_usage u = measure(kroot, logs, 10, "dddd-0004", NULL, NULL);
	assert_true(u.partial);
	assert_non_null(strstr(u.why, "pod-disk-walk-limit"));
	assert_non_null(strstr(u.why, "emptyDir many"));
	assert_true(u.inodes <= 11 && u.inodes > 0);
	assert_true(u.bytes < all.bytes);

	/* deeper than PODDISK_MAX_DEPTH levels */
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s/pods/eeee-0005/" ED "/deep", kroot);
	for (int i = 0; i < PODDISK_MAX_DEPTH + 3; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "/d");
	mkdirs("%s", path);
	u = measure(kroot, logs, 100000, "eeee-0005", NULL, NULL);
	assert_true(u.partial);
	assert_non_null(strstr(u.why, "deeper"));
}

static void test_not_a_kubelet_node(void **state)
{
	char none[PATH_MAX];
	(void)state;
	snprintf(none, sizeof(none), "%s/nonexistent", tmpdir);
	pod_disk_usage u = measure(none, none, 100000, UID_A, NULL, NULL);
	assert_false(u.known);
	/* a kubelet node where this pod has nothing on nodefs: measured, zero */
	u = measure(kroot, logs, 100000, "ffff-0006", NULL, NULL);
	assert_true(u.known);
	assert_int_equal(u.inodes, 0);
	assert_int_equal(u.bytes, 0);
}

/* An emptyDir with medium: Memory is a tmpfs mounted on the volume directory: not nodefs. */
static void test_memory_medium_not_counted(void **state)
{
	char vol[1024], f[PATH_MAX];
	int status;
	(void)state;
	mkdirs("%s/pods/9999-0009/" ED "/mem", kroot);
	mkdirs("%s/pods/9999-0009/" ED "/disk", kroot);
	snprintf(vol, sizeof(vol), "%s/pods/9999-0009/" ED "/mem", kroot);
	snprintf(f, sizeof(f), "%s/pods/9999-0009/" ED "/disk/f", kroot);
	fill(f, 8 * Ki);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* a private mount namespace, so the tmpfs vanishes with the child */
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tmpfs", vol, "tmpfs", 0, "size=4m") < 0)
			_exit(77);
		snprintf(f, sizeof(f), "%s/big", vol);
		fill(f, 1024 * Ki);
		pod_disk_usage u = measure(kroot, logs, 100000, "9999-0009", NULL, NULL);
		/* only disk/ and disk/f: the tmpfs volume and its 1Mi are not nodefs */
		_exit(u.known && u.inodes == 2 && u.bytes >= 8 * Ki && u.bytes < 512 * Ki ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("# skip memory medium: no private mount namespace here (needs root; a restricted container)\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The scanner measures on request only, and reuses a measurement for SCAN_DISK_TTL_USEC. */
static void test_scanner_cache(void **state)
{
	char root[PATH_MAX], proc[PATH_MAX], conf[PATH_MAX * 3], p[PATH_MAX];
	const char *uid = "a1b2c3d4-0000-4000-8000-00000000000a"; /* web-1 in the systemd fixture */
	const snapshot *snap;
	cg_info cg;
	scanner *sc;
	(void)state;

	mkdirs("%s/pods/%s/" ED "/v", kroot, uid);
	snprintf(p, sizeof(p), "%s/pods/%s/" ED "/v/a", kroot, uid);
	fill(p, 16 * Ki);
	snprintf(conf, sizeof(conf), "[agent]\nkubelet-root-dir = %s\npod-logs-dir = %s\nimagefs-path = /\n", kroot, logs);
	evictd_config *c = config_from(conf);
	assert_string_equal(c->nodefs_path, kroot); /* nodefs follows kubelet-root-dir */
	config_overrides ov = { .cgroup_root = fixture("systemd", "root", root, sizeof(root)),
		                .proc_root = fixture("systemd", "proc", proc, sizeof(proc)) };
	assert_int_equal(config_apply_overrides(c, &ov), 0);
	assert_int_equal(cg_discover(c->cgroup_root, &cg), 0);
	assert_int_equal(scanner_new(c, &cg, &sc), 0);
	assert_int_equal(scanner_scan(sc, 1000000, &snap), 0);
	const pod_info *web = NULL;
	for (size_t i = 0; i < snap->n_pods; i++)
		if (strcmp(snap->pods[i].uid, uid) == 0)
			web = &snap->pods[i];
	assert_non_null(web);
	assert_false(web->has_disk); /* a scan alone never walks */
	assert_int_equal(scanner_measure_disk(sc, 1000000), 0);
	assert_true(web->has_disk);
	assert_int_equal(web->disk_inodes, 2);
	int64_t first = web->disk_bytes;

	snprintf(p, sizeof(p), "%s/pods/%s/" ED "/v/b", kroot, uid);
	fill(p, 16 * Ki);
	/* within the TTL, across a rescan: the cached figures */
	assert_int_equal(scanner_scan(sc, 5000000, &snap), 0);
	for (size_t i = 0; i < snap->n_pods; i++)
		if (strcmp(snap->pods[i].uid, uid) == 0)
			web = &snap->pods[i];
	assert_true(web->has_disk);
	assert_int_equal(scanner_measure_disk(sc, 5000000), 0);
	assert_int_equal(web->disk_inodes, 2);
	assert_int_equal(web->disk_bytes, first);
	/* after it: measured again */
	assert_int_equal(scanner_measure_disk(sc, 1000000 + SCAN_DISK_TTL_USEC), 0);
	assert_int_equal(web->disk_inodes, 3);
	assert_true(web->disk_bytes >= first + 16 * Ki);
	scanner_free(sc);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_empty_dirs_and_logs),
		cmocka_unit_test(test_symlinked_volume_dir_not_followed),
		cmocka_unit_test(test_limits_make_a_lower_bound),
		cmocka_unit_test(test_not_a_kubelet_node),
		cmocka_unit_test(test_memory_medium_not_counted),
		cmocka_unit_test(test_scanner_cache),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
