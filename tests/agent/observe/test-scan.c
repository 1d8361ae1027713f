/* SPDX-License-Identifier: MIT */
/*
 * Discovery, signals and metadata on the fixture trees: both kubelet cgroup drivers and plain
 * systemd slices; the descriptor trust rules (root-owned, not group/other-writable, no symlink,
 * one link).
 */
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent-test.h"
#include "cgdiscover.h"
#include "cgfs.h"
#include "podmeta.h"
#include "pods.h"
#include "scan.h"
#include "log.h"
#include "scratch.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	scratch_template(tmpdir, sizeof(tmpdir), "evictd-test-scan");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A private copy of <layout>/pods, root-owned 0644 as a node would have it. */
static const char *copy_pods(const char *layout, char *buf, size_t size)
{
	char src[PATH_MAX], cmd[PATH_MAX * 2 + 64];
	snprintf(buf, size, "%s/%s-pods", tmpdir, layout);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s' && chmod 0755 '%s' && chmod 0644 '%s'/*", buf,
	         fixture(layout, "pods", src, sizeof(src)), buf, buf, buf);
	assert_int_equal(system(cmd), 0);
	return buf;
}

typedef struct scan_ctx {
	evictd_config *cfg;
	cg_info cg;
	scanner *sc;
	const snapshot *snap;
} scan_ctx;

static void scan_layout(scan_ctx *x, const char *layout, const char *extra_conf, const char *pods_dir)
{
	char root[PATH_MAX], proc[PATH_MAX], conf[1024];
	snprintf(conf, sizeof(conf), "[agent]\nnodefs-path = /\nimagefs-path = /\n%s\n[priority-class high-priority]\nvalue = 1000000\n",
	         extra_conf ? extra_conf : "");
	x->cfg = config_from(conf);
	config_overrides ov = {
		.cgroup_root = fixture(layout, "root", root, sizeof(root)),
		.proc_root = fixture(layout, "proc", proc, sizeof(proc)),
		.pod_metadata_dir = pods_dir,
	};
	assert_int_equal(config_apply_overrides(x->cfg, &ov), 0);
	assert_int_equal(cg_discover(x->cfg->cgroup_root, &x->cg), 0);
	assert_int_equal(scanner_new(x->cfg, &x->cg, &x->sc), 0);
	assert_int_equal(scanner_scan(x->sc, 1000000, &x->snap), 0);
}

static void scan_done(scan_ctx *x)
{
	scanner_free(x->sc);
	config_free(x->cfg);
}

static const pod_info *pod_by_uid(const snapshot *s, const char *uid)
{
	for (size_t i = 0; i < s->n_pods; i++)
		if (strcmp(s->pods[i].uid, uid) == 0)
			return &s->pods[i];
	fail_msg("pod %s not found", uid);
	return NULL;
}

static void test_parse_path(void **state)
{
	char uid[POD_UID_MAX];
	pod_qos q;
	(void)state;

	assert_int_equal(pod_parse_path("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b_3c4d.slice", uid, &q), 0);
	assert_string_equal(uid, "1a2b-3c4d");
	assert_int_equal(q, QOS_BURSTABLE);
	assert_int_equal(pod_parse_path("kubepods.slice/kubepods-pod1a2b_3c4d.slice", uid, &q), 0);
	assert_string_equal(uid, "1a2b-3c4d");
	assert_int_equal(q, QOS_GUARANTEED);
	assert_int_equal(pod_parse_path("kubepods/besteffort/pod1a2b-3c4d", uid, &q), 0);
	assert_string_equal(uid, "1a2b-3c4d");
	assert_int_equal(q, QOS_BESTEFFORT);
	assert_int_equal(pod_parse_path("kubepods/pod1a2b-3c4d", uid, &q), 0);
	assert_int_equal(q, QOS_GUARANTEED);
	assert_int_equal(pod_parse_path("workload.slice/workload-render.slice", uid, &q), 0);
	assert_string_equal(uid, "workload-render");
	assert_int_equal(q, QOS_UNKNOWN);
	/* a UID names a file: nothing that could leave the metadata directory */
	assert_int_equal(pod_parse_path("kubepods/pod..", uid, &q), -EINVAL);
	assert_int_equal(pod_parse_path("x/a b", uid, &q), -EINVAL);
}

static void test_systemd_driver(void **state)
{
	char pods[PATH_MAX];
	scan_ctx x;
	(void)state;
	skip_unless_root(__func__, "the pods are named by descriptors, descriptors are trusted only when root-owned");

	scan_layout(&x, "systemd", NULL, copy_pods("systemd", pods, sizeof(pods)));
	const snapshot *s = x.snap;

	/* six pods; container scopes inside them and evictd's own service are not pods */
	assert_int_equal(s->n_pods, 6);
	const pod_info *web = pod_by_uid(s, "a1b2c3d4-0000-4000-8000-00000000000a");
	assert_string_equal(web->namespace_, "default");
	assert_string_equal(web->name, "web-1");
	assert_int_equal(web->qos, QOS_BURSTABLE);
	assert_int_equal(web->priority, 0);
	assert_int_equal(web->memory_request, 512LL << 20);
	assert_int_equal(web->memory_request_src, META_DESCRIPTOR);
	assert_int_equal(web->cpu_request_milli, 250);
	assert_int_equal(web->termination_grace_usec, 45 * USEC_PER_SEC);
	assert_true(web->has_memory);
	assert_int_equal(web->working_set, (int64_t)(1.2 * (1 << 30)));
	assert_int_equal(web->inactive_file, 100LL << 20);
	assert_int_equal(web->pids, 12);
	assert_true(web->has_cpu);
	assert_true(web->has_psi);

	const pod_info *db = pod_by_uid(s, "a1b2c3d4-0000-4000-8000-00000000000c");
	assert_int_equal(db->qos, QOS_GUARANTEED);
	assert_int_equal(db->priority, 1000000); /* priority-class resolved through the configuration */
	assert_string_equal(db->priority_class, "high-priority");
	const pod_info *dns = pod_by_uid(s, "a1b2c3d4-0000-4000-8000-00000000000e");
	assert_int_equal(dns->priority, 2000000000);
	assert_true(dns->critical);
	const pod_info *be = pod_by_uid(s, "a1b2c3d4-0000-4000-8000-00000000000b");
	assert_int_equal(be->qos, QOS_BESTEFFORT);
	assert_int_equal(be->memory_request, 0);
	assert_int_equal(be->termination_grace_usec, 30 * USEC_PER_SEC); /* Kubernetes' default */

	/* memory.available = MemTotal - (anon + file - inactive_file) of the root: 80Mi of 8Gi */
	const signal_obs *m = &s->node.s[SIGNAL_MEMORY_AVAILABLE];
	assert_true(m->known);
	assert_int_equal(m->capacity, 8LL << 30);
	assert_int_equal(m->available, 80LL << 20);
	/* allocatable: kubepods.slice memory.max 7Gi - working set 5Gi */
	assert_int_equal(s->node.s[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].available, 2LL << 30);
	assert_int_equal(s->node.s[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].capacity, 7LL << 30);
	/* pid: min(pid_max 4194304, threads-max 62000) - 412 tasks */
	assert_int_equal(s->node.s[SIGNAL_PID_AVAILABLE].available, 62000 - 412);
	assert_int_equal(s->node.s[SIGNAL_PID_AVAILABLE].capacity, 62000);
	/* PSI avg10 1.50% and 0.25% */
	assert_int_equal(s->node.s[SIGNAL_MEMORY_SOME].available, 150);
	assert_int_equal(s->node.s[SIGNAL_MEMORY_FULL].available, 25);
	assert_true(s->node.s[SIGNAL_NODEFS_AVAILABLE].known);

	/* a second scan: cpu rate between scans, metadata kept */
	assert_int_equal(scanner_scan(x.sc, 3000000, &x.snap), 0);
	web = pod_by_uid(x.snap, "a1b2c3d4-0000-4000-8000-00000000000a");
	assert_true(web->has_cpu_rate);
	assert_true(web->cpu_rate == 0.0); /* fixture counters do not move */
	assert_string_equal(web->name, "web-1");
	scan_done(&x);
}

static void test_cgroupfs_driver(void **state)
{
	char pods[PATH_MAX];
	scan_ctx x;
	(void)state;

	scan_layout(&x, "cgroupfs", NULL, copy_pods("cgroupfs", pods, sizeof(pods)));
	const snapshot *s = x.snap;
	assert_int_equal(s->n_pods, 3);

	/* no descriptor: named by its UID, requests from memory.min and cpu.weight */
	const pod_info *p = pod_by_uid(s, "11111111-2222-3333-4444-555555555555");
	assert_false(p->has_descriptor);
	assert_string_equal(p->name, "11111111-2222-3333-4444-555555555555");
	assert_string_equal(p->namespace_, "");
	assert_int_equal(p->qos, QOS_BURSTABLE);
	assert_int_equal(p->memory_request, 256LL << 20);
	assert_int_equal(p->memory_request_src, META_CGROUP);
	/* kubelet: 250m -> 256 shares -> weight 10; the smallest request with weight 10 is 233m */
	assert_int_equal(p->cpu_request_milli, 233);
	assert_int_equal(p->cpu_request_src, META_CGROUP);
	assert_int_equal(p->priority, 0);

	assert_int_equal(pod_by_uid(s, "22222222-2222-3333-4444-555555555555")->qos, QOS_BESTEFFORT);
	assert_int_equal(pod_by_uid(s, "33333333-2222-3333-4444-555555555555")->qos, QOS_GUARANTEED);

	/* allocatable: kubepods memory.max 6Gi - (6Gi - 50Mi inactive) = 50Mi */
	assert_int_equal(s->node.s[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].available, 50LL << 20);
	/* memory.available: 16Gi - (6Gi + 2Gi - 1Gi) = 9Gi */
	assert_int_equal(s->node.s[SIGNAL_MEMORY_AVAILABLE].available, 9LL << 30);
	/* pid: min(65536, 62000) - 61500 */
	assert_int_equal(s->node.s[SIGNAL_PID_AVAILABLE].available, 500);
	assert_int_equal(s->node.s[SIGNAL_MEMORY_SOME].available, 4250);
	scan_done(&x);

	/* the globalDefault class gives the pod without a descriptor its priority */
	scan_layout(&x, "cgroupfs", "[priority-class everyone]\nvalue = 7\nglobal-default = yes", pods);
	assert_int_equal(pod_by_uid(x.snap, "11111111-2222-3333-4444-555555555555")->priority, 7);
	scan_done(&x);
}

static void test_systemd_slices_and_self(void **state)
{
	char pods[PATH_MAX];
	scan_ctx x;
	(void)state;
	skip_unless_root(__func__, "the pods are named by descriptors, descriptors are trusted only when root-owned");

	scan_layout(&x, "slices", "pods = workload.slice/workload-*.slice", copy_pods("slices", pods, sizeof(pods)));
	assert_int_equal(x.snap->n_pods, 3);
	const pod_info *r = pod_by_uid(x.snap, "workload-render");
	assert_string_equal(r->namespace_, "media");
	assert_int_equal(r->priority, 100);
	assert_false(r->is_self);
	/* <proc-root>/self/cgroup puts evictd inside workload-evictd.slice */
	assert_true(pod_by_uid(x.snap, "workload-evictd")->is_self);
	assert_string_equal(scanner_self_cgroup(x.sc), "workload.slice/workload-evictd.slice/evictd.scope");
	scan_done(&x);
}

static void test_unavailable_signals_are_not_invented(void **state)
{
	char proc[PATH_MAX];
	scan_ctx x;
	(void)state;

	/* a cgroup root without memory.stat (memory controller on v1, as on hybrid hosts) */
	snprintf(proc, sizeof(proc), "%s/emptyroot", tmpdir);
	mkdir(proc, 0755);
	x.cfg = config_from("[agent]\nnodefs-path = /nonexistent-evictd-path\n");
	char p2[PATH_MAX];
	config_overrides ov = { .cgroup_root = proc, .proc_root = fixture("systemd", "proc", p2, sizeof(p2)) };
	assert_int_equal(config_apply_overrides(x.cfg, &ov), 0);
	assert_int_equal(cg_discover(x.cfg->cgroup_root, &x.cg), 0);
	assert_int_equal(x.cg.mode, CG_MODE_DIRECTORY);
	assert_false(x.cg.memory);
	assert_int_equal(scanner_new(x.cfg, &x.cg, &x.sc), 0);
	assert_int_equal(scanner_scan(x.sc, 1, &x.snap), 0);
	const node_signals *n = &x.snap->node;
	assert_false(n->s[SIGNAL_MEMORY_AVAILABLE].known);
	assert_non_null(strstr(n->s[SIGNAL_MEMORY_AVAILABLE].reason, "memory controller"));
	assert_false(n->s[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].known);
	assert_false(n->s[SIGNAL_NODEFS_AVAILABLE].known);
	assert_non_null(strstr(n->s[SIGNAL_NODEFS_AVAILABLE].reason, "/nonexistent-evictd-path"));
	assert_true(n->s[SIGNAL_PID_AVAILABLE].known);
	assert_int_equal(x.snap->n_pods, 0);
	scan_done(&x);
}

/* Applies the descriptor of pod web-1 after `mutate` changed it; returns podmeta's result. */
static int try_descriptor(const char *pods, void (*mutate)(const char *path), char *why, size_t size)
{
	char path[PATH_MAX + 64];
	const char *uid = "a1b2c3d4-0000-4000-8000-00000000000a";
	pod_info p = { 0 };
	evictd_config *c = config_from("");
	snprintf(path, sizeof(path), "%s/%s.conf", pods, uid);
	mutate(path);
	snprintf(p.uid, sizeof(p.uid), "%s", uid);
	int fd = open(pods, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	why[0] = '\0';
	int r = podmeta_apply_descriptor(fd, NULL, c->pcset, &p, why, size);
	if (r > 0)
		assert_string_equal(p.name, "web-1");
	else
		assert_null(p.name); /* an ignored descriptor changes nothing */
	close(fd);
	snapshot_pod_info_done(&p);
	config_free(c);
	return r;
}

static void keep(const char *path) { (void)path; }
static void chown_nobody(const char *path) { assert_int_equal(chown(path, 65534, 0), 0); }
static void chmod_group_writable(const char *path) { assert_int_equal(chmod(path, 0664), 0); }
static void chmod_other_writable(const char *path) { assert_int_equal(chmod(path, 0646), 0); }
static void make_symlink(const char *path)
{
	char target[PATH_MAX + 8];
	snprintf(target, sizeof(target), "%s.real", path);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(symlink(target, path), 0);
}
static void make_hardlink(const char *path)
{
	char other[PATH_MAX + 8];
	snprintf(other, sizeof(other), "%s.link", path);
	assert_int_equal(link(path, other), 0);
}
static void make_malformed(const char *path) { write_file(path, "[pod]\nname = web-1\npriority = high\n"); chmod(path, 0644); }
static void make_disagreeing(const char *path)
{
	write_file(path, "[pod]\nname = web-1\npriority-class = system-node-critical\npriority = 5\n");
	chmod(path, 0644);
}
static void make_big(const char *path)
{
	FILE *f = fopen(path, "w");
	for (int i = 0; i < 2000; i++)
		fputs("; padding padding padding\n", f);
	fclose(f);
	chmod(path, 0644);
}

static void test_descriptor_trust_rules(void **state)
{
	char pods[PATH_MAX], why[512];
	(void)state;

	skip_unless_root(__func__, "ownership can only be set up by root");
	/* each on a fresh copy: the result, and what the reason must say (NULL: not checked) */
	static const struct {
		void (*mutate)(const char *path);
		int want;
		const char *why;
	} cases[] = {
		{ keep, 1, NULL },
		{ chown_nobody, -EPERM, "owned by uid 65534, not root" },
		{ chmod_group_writable, -EPERM, "writable by its group" },
		{ chmod_other_writable, -EPERM, "writable by others" },
		{ make_symlink, -EPERM, "symbolic link" },
		{ make_hardlink, -EPERM, "hard links" },
		{ make_malformed, -EINVAL, "line 3: priority \"high\"" },
		{ make_disagreeing, -EINVAL, NULL },
		{ make_big, -EFBIG, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		copy_pods("systemd", pods, sizeof(pods));
		assert_int_equal(try_descriptor(pods, cases[i].mutate, why, sizeof(why)), cases[i].want);
		if (cases[i].why)
			assert_non_null(strstr(why, cases[i].why));
	}
}

static void test_untrusted_descriptor_falls_back_in_scan(void **state)
{
	char pods[PATH_MAX], path[PATH_MAX + 64];
	scan_ctx x;
	(void)state;

	skip_unless_root(__func__, "descriptors are trusted only when root-owned");
	copy_pods("systemd", pods, sizeof(pods));
	/* a tenant that could write its descriptor claims a critical priority: ignored */
	snprintf(path, sizeof(path), "%s/a1b2c3d4-0000-4000-8000-00000000000b.conf", pods);
	write_file(path, "[pod]\nnamespace = default\nname = batch-1\npriority = 2000001000\n");
	assert_int_equal(chown(path, 65534, 65534), 0);
	scan_layout(&x, "systemd", NULL, pods);
	const pod_info *p = pod_by_uid(x.snap, "a1b2c3d4-0000-4000-8000-00000000000b");
	assert_false(p->has_descriptor);
	assert_int_equal(p->priority, 0);
	assert_false(p->critical);
	assert_string_equal(p->name, "a1b2c3d4-0000-4000-8000-00000000000b");
	scan_done(&x);
}

/* ---- robustness and security of the reads (tests/fuzz/FINDINGS.md) ---- */

#define WEB_UID "a1b2c3d4-0000-4000-8000-00000000000a"
#define WEB_DIR "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-poda1b2c3d4_0000_4000_8000_00000000000a.slice"

/* A private, writable copy of <layout>/root. */
static const char *copy_root(const char *layout, char *buf, size_t size)
{
	char src[PATH_MAX], cmd[PATH_MAX * 2 + 64];
	snprintf(buf, size, "%s/%s-root", tmpdir, layout);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", buf, fixture(layout, "root", src, sizeof(src)), buf);
	assert_int_equal(system(cmd), 0);
	return buf;
}

/* Runs one scan with stderr going to a file, and returns what was logged. */
static const snapshot *scan_logged(scanner *sc, uint64_t now, char *log, size_t size)
{
	char path[PATH_MAX];
	const snapshot *snap = NULL;
	int saved = dup(STDERR_FILENO), fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	assert_int_equal(scanner_scan(sc, now, &snap), 0);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	n = pread(fd, log, size - 1, 0);
	close(fd);
	assert_true(n >= 0);
	log[n] = '\0';
	return snap;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_unreadable_stats_warned_once_then_recovered(void **state)
{
	char root[PATH_MAX], proc[PATH_MAX], pods[PATH_MAX], path[PATH_MAX * 2], log[16384];
	evictd_config *cfg = config_from("[agent]\nnodefs-path = /\nimagefs-path = /\n");
	cg_info cg;
	scanner *sc;
	const snapshot *snap;
	(void)state;
	skip_unless_root(__func__, "the pods are named by descriptors, descriptors are trusted only when root-owned");

	config_overrides ov = {
		.cgroup_root = copy_root("systemd", root, sizeof(root)),
		.proc_root = fixture("systemd", "proc", proc, sizeof(proc)),
		.pod_metadata_dir = copy_pods("systemd", pods, sizeof(pods)),
	};
	assert_int_equal(config_apply_overrides(cfg, &ov), 0);
	assert_int_equal(cg_discover(cfg->cgroup_root, &cg), 0);
	assert_int_equal(scanner_new(cfg, &cg, &sc), 0);
	snap = scan_logged(sc, 1000000, log, sizeof(log));
	assert_true(pod_by_uid(snap, WEB_UID)->has_memory);
	assert_null(strstr(log, WEB_UID));

	/* garbage: unmeasured, and one warning naming pod, UID and file */
	snprintf(path, sizeof(path), "%s/%s/memory.current", root, WEB_DIR);
	write_file(path, "12 MiB\n");
	snap = scan_logged(sc, 2000000, log, sizeof(log));
	assert_false(pod_by_uid(snap, WEB_UID)->has_memory);
	assert_int_equal(count(log, "warning: Cannot use memory.current of pod default/web-1 (" WEB_UID
	                            "): its content cannot be parsed"), 1);
	/* still broken: not repeated every scan */
	snap = scan_logged(sc, 3000000, log, sizeof(log));
	assert_false(pod_by_uid(snap, WEB_UID)->has_memory);
	assert_null(strstr(log, WEB_UID));
	/* fixed: measured again, and said so once */
	write_file(path, "1395864371\n");
	snap = scan_logged(sc, 4000000, log, sizeof(log));
	assert_true(pod_by_uid(snap, WEB_UID)->has_memory);
	assert_int_equal(count(log, "memory.current of pod default/web-1 (" WEB_UID ") is usable again"), 1);
	snap = scan_logged(sc, 5000000, log, sizeof(log));
	assert_null(strstr(log, WEB_UID));

	/*
	 * A FIFO does not block the scan; it is refused as not a regular file. (A new scanner: the
	 * kept fd of the replaced file would still read the old one, which on cgroupfs cannot happen.)
	 */
	snprintf(path, sizeof(path), "%s/%s/memory.stat", root, WEB_DIR);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
	scanner_free(sc);
	assert_int_equal(scanner_new(cfg, &cg, &sc), 0);
	snap = scan_logged(sc, 6000000, log, sizeof(log));
	assert_false(pod_by_uid(snap, WEB_UID)->has_memory);
	assert_non_null(strstr(log, "Cannot use memory.stat of pod default/web-1 (" WEB_UID "): it is not a regular file"));
	scanner_free(sc);
	config_free(cfg);
}

static void test_open_dir_beneath(void **state)
{
	char root[PATH_MAX], path[PATH_MAX * 2], out[PATH_MAX];
	int rfd, fd;
	(void)state;

	copy_root("systemd", root, sizeof(root));
	snprintf(out, sizeof(out), "%s/outside", tmpdir);
	mkdir(out, 0755);
	snprintf(path, sizeof(path), "%s/kubepods.slice/link", root);
	assert_int_equal(symlink(out, path), 0);
	rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(rfd >= 0);

	fd = cgfs_open_dir_beneath(rfd, WEB_DIR);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(cgfs_open_dir_beneath(rfd, "kubepods.slice/link"), -ELOOP);
	assert_int_equal(cgfs_open_dir_beneath(rfd, "kubepods.slice/../../outside"), -EXDEV);
	assert_int_equal(cgfs_open_dir_beneath(rfd, out), -EXDEV);
	assert_int_equal(cgfs_open_dir_beneath(rfd, "kubepods.slice/memory.current"), -ENOTDIR);
	/* absolute (the evictor's form): fine without symlinks, refused through one */
	snprintf(path, sizeof(path), "%s/%s", root, WEB_DIR);
	fd = cgfs_open_dir_beneath(AT_FDCWD, path);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/kubepods.slice/link", root);
	assert_int_equal(cgfs_open_dir_beneath(AT_FDCWD, path), -ELOOP);
	close(rfd);
}

static void count_link(const char *path, void *userdata)
{
	char *seen = userdata;
	if (strlen(seen) + strlen(path) + 2 < 1024) {
		strcat(seen, path);
		strcat(seen, "\n");
	}
}

static void test_discovery_never_follows_symlinks(void **state)
{
	char root[PATH_MAX], path[PATH_MAX * 4], target[PATH_MAX], seen[1024] = "";
	char *patterns[] = { "kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice", "kubepods.slice/kubepods-pod*.slice", NULL };
	pod_info *pods = NULL;
	size_t n = 0;
	int rfd;
	(void)state;

	copy_root("systemd", root, sizeof(root));
	/* a pod directory that is a symlink to a copy of web-1 outside the root */
	snprintf(target, sizeof(target), "%s/outside-pod", tmpdir);
	snprintf(path, sizeof(path), "rm -rf '%s' && cp -a '%s/%s' '%s'", target, root, WEB_DIR, target);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podeeee.slice", root);
	assert_int_equal(symlink(target, path), 0);
	/* a QoS directory that is a symlink: burstable moved out, linked back */
	snprintf(path, sizeof(path), "%s/kubepods.slice/kubepods-burstable.slice", root);
	snprintf(target, sizeof(target), "%s/outside-qos", tmpdir);
	assert_int_equal(rename(path, target), 0);
	assert_int_equal(symlink(target, path), 0);

	rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(pods_discover(rfd, patterns, count_link, seen, &pods, &n), 0);
	/* besteffort b and Guaranteed c remain; burstable a, d, e, f and the linked eeee are gone */
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_null(strstr(pods[i].uid, "eeee"));
		assert_null(strstr(pods[i].cgroup, "burstable"));
		free(pods[i].cgroup);
	}
	free(pods);
	assert_non_null(strstr(seen, "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podeeee.slice\n"));
	assert_non_null(strstr(seen, "kubepods.slice/kubepods-burstable.slice\n"));
	close(rfd);
}

static int metadir_verdict(const char *dir, char *why, size_t size)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	int r = podmeta_dir_check(fd, why, size);
	close(fd);
	return r;
}

static void test_metadata_directory_trust(void **state)
{
	char parent[PATH_MAX], dir[PATH_MAX + 8], why[PATH_MAX + 128];
	(void)state;

	skip_unless_root(__func__, "the directory's ownership can only be set up by root");
	snprintf(parent, sizeof(parent), "%s/meta-parent", tmpdir);
	snprintf(dir, sizeof(dir), "%s/pods", parent);
	mkdir(parent, 0755);
	mkdir(dir, 0755);
	chmod(parent, 0755);
	chmod(dir, 0755);
	/* /tmp above is sticky 1777: accepted as an ancestor */
	assert_int_equal(metadir_verdict(dir, why, sizeof(why)), 0);
	chmod(dir, 0777);
	assert_int_equal(metadir_verdict(dir, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "the directory is writable by others (mode 0777)"));
	chmod(dir, 01777); /* sticky is not enough for the metadata directory itself */
	assert_int_equal(metadir_verdict(dir, why, sizeof(why)), -EPERM);
	chmod(dir, 0775);
	assert_int_equal(metadir_verdict(dir, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "writable by its group"));
	chmod(dir, 0755);
	assert_int_equal(chown(dir, 65534, 0), 0);
	assert_int_equal(metadir_verdict(dir, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "owned by uid 65534"));
	assert_int_equal(chown(dir, 0, 0), 0);
	chmod(parent, 0777);
	assert_int_equal(metadir_verdict(dir, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "meta-parent is writable by others"));
	chmod(parent, 01777); /* a sticky ancestor: others cannot rename root's "pods" */
	assert_int_equal(metadir_verdict(dir, why, sizeof(why)), 0);
	chmod(parent, 0755);
}

static void test_discover_this_machine(void **state)
{
	struct statfs sf;
	cg_info ci;
	(void)state;

	assert_int_equal(cg_discover(NULL, &ci), 0);
	if (statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC) {
		assert_int_equal(ci.mode, CG_MODE_UNIFIED);
		assert_string_equal(ci.root, "/sys/fs/cgroup");
	} else if (statfs("/sys/fs/cgroup/unified", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC) {
		assert_int_equal(ci.mode, CG_MODE_HYBRID);
		assert_string_equal(ci.root, "/sys/fs/cgroup/unified");
	} else {
		assert_true(ci.mode == CG_MODE_LEGACY || ci.mode == CG_MODE_ABSENT);
		assert_string_equal(ci.root, "");
	}
	assert_non_null(ci.found_by);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_path),
		cmocka_unit_test(test_discover_this_machine),
		cmocka_unit_test(test_systemd_driver),
		cmocka_unit_test(test_cgroupfs_driver),
		cmocka_unit_test(test_systemd_slices_and_self),
		cmocka_unit_test(test_unavailable_signals_are_not_invented),
		cmocka_unit_test(test_descriptor_trust_rules),
		cmocka_unit_test(test_untrusted_descriptor_falls_back_in_scan),
		cmocka_unit_test(test_unreadable_stats_warned_once_then_recovered),
		cmocka_unit_test(test_open_dir_beneath),
		cmocka_unit_test(test_discovery_never_follows_symlinks),
		cmocka_unit_test(test_metadata_directory_trust),
	};
	/* warnings about ignored descriptors are expected here; keep them off the TAP stream's way */
	log_setup(LOGGING_STDERR);
	return cmocka_run_group_tests(tests, setup, teardown);
}
