/* SPDX-License-Identifier: MIT */
/* Configuration: defaults, every key, drop-ins, every kind of error with file:line, reload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent-test.h"
#include "scratch.h"

AGENT_TEST_TMPDIR("config")

static void test_defaults_are_kubelet_linux_defaults(void **state)
{
	evictd_config *c = config_from("");
	(void)state;

	assert_true(c->hard[SIGNAL_MEMORY_AVAILABLE].set);
	assert_false(c->hard[SIGNAL_MEMORY_AVAILABLE].percent);
	assert_int_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].quantity, 100LL << 20);
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_NODEFS_AVAILABLE], 1000000), 100000);
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_NODEFS_INODES_FREE], 1000000), 50000);
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_IMAGEFS_AVAILABLE], 1000000), 150000);
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_IMAGEFS_INODES_FREE], 1000000), 50000);
	/* no pid.available default, no soft thresholds, no PSI */
	assert_false(c->hard[SIGNAL_PID_AVAILABLE].set);
	for (int s = 0; s < _SIGNAL_MAX; s++)
		assert_false(c->soft[s].set);
	assert_false(c->hard[SIGNAL_MEMORY_SOME].set);
	/* allocatableMemory.available follows the hard memory threshold (enforceNodeAllocatable=pods) */
	assert_true(c->hard[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].set);
	assert_int_equal(c->hard[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].quantity, 100LL << 20);
	assert_int_equal(c->pressure_transition_usec, 300 * USEC_PER_SEC);
	assert_int_equal(c->max_pod_grace_usec, 0);
	assert_int_equal(c->interval_usec, USEC_PER_SEC);
	assert_string_equal(c->pods[0], "kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice");
	assert_string_equal(c->pods[3], "kubepods/pod*");
	assert_null(c->pods[4]);
	assert_string_equal(c->pod_metadata_dir, "/run/evictd/pods");
	assert_string_equal(c->proc_root, "/proc");
	assert_false(c->dry_run);
	assert_int_equal(c->action, ACTION_KILL);
	config_free(c);
}

static void test_every_key(void **state)
{
	(void)state;
	evictd_config *c = config_from(
	        "[agent]\n"
	        "interval = 500ms\n"
	        "cgroup-root = /sys/fs/cgroup\n"
	        "pods = a/*/pod* b/pod*\n"
	        "  c/*.slice\n"
	        "pod-metadata-dir = /run/x\n"
	        "proc-root = /host/proc\n"
	        "nodefs-path = /var/lib/kubelet\n"
	        "imagefs-path = /var/lib/containers\n"
	        "status-file = /run/evictd/s.json\n"
	        "run-directory = /run/evictd-state\n"
	        "dry-run = yes\n"
	        "action = exec\n"
	        "exec = /usr/bin/kubectl-evict {namespace} {name} --grace={grace}\n"
	        "exec-timeout = 1m\n"
	        "exec-fallback = kill\n"
	        "[eviction-hard]\n"
	        "memory.available = 1Gi\n"
	        "nodefs.available = 5%\n"
	        "pid.available = 1e3\n"
	        "[eviction-soft]\n"
	        "memory.available = 1.5Gi ; inline comment\n"
	        "[eviction-soft-grace-period]\n"
	        "memory.available = 1m30s\n"
	        "[eviction-minimum-reclaim]\n"
	        "memory.available = 500Mi\n"
	        "nodefs.available = 2%\n"
	        "[eviction]\n"
	        "max-pod-grace-period = 20s\n"
	        "pressure-transition-period = 30s\n"
	        "retry-backoff = 1s\n"
	        "retry-backoff-max = 1m\n"
	        "psi-memory-some = 40%\n"
	        "psi-memory-full = 10.5%\n"
	        "[priority-class high-priority]\n"
	        "value = 1000000\n"
	        "global-default = no\n"
	        "preemption-policy = Never\n"
	        "description = for XYZ service pods only\n"
	        "[priority-class default-class]\n"
	        "value = 10\n"
	        "global-default = yes\n");
	assert_int_equal(c->interval_usec, 500000);
	assert_string_equal(c->cgroup_root, "/sys/fs/cgroup");
	assert_string_equal(c->pods[0], "a/*/pod*");
	assert_string_equal(c->pods[1], "b/pod*");
	assert_string_equal(c->pods[2], "c/*.slice");
	assert_null(c->pods[3]);
	assert_string_equal(c->pod_metadata_dir, "/run/x");
	assert_string_equal(c->proc_root, "/host/proc");
	assert_string_equal(c->imagefs_path, "/var/lib/containers");
	assert_string_equal(c->status_file, "/run/evictd/s.json");
	assert_true(c->dry_run);
	assert_int_equal(c->action, ACTION_EXEC);
	assert_string_equal(c->exec_argv[0], "/usr/bin/kubectl-evict");
	assert_string_equal(c->exec_argv[3], "--grace={grace}");
	assert_null(c->exec_argv[4]);
	assert_int_equal(c->exec_timeout_usec, 60 * USEC_PER_SEC);
	assert_true(c->exec_fallback_kill);
	assert_int_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].quantity, 1LL << 30);
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_NODEFS_AVAILABLE], 200), 10);
	assert_int_equal(c->hard[SIGNAL_PID_AVAILABLE].quantity, 1000);
	/* other defaults are kept per key (drop-ins must be able to change one threshold) */
	assert_true(c->hard[SIGNAL_IMAGEFS_AVAILABLE].set);
	assert_int_equal(c->soft[SIGNAL_MEMORY_AVAILABLE].quantity, 1536LL << 20);
	assert_int_equal(c->soft_grace_usec[SIGNAL_MEMORY_AVAILABLE], 90 * USEC_PER_SEC);
	assert_int_equal(c->min_reclaim[SIGNAL_MEMORY_AVAILABLE].quantity, 500LL << 20);
	assert_int_equal(c->min_reclaim[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].quantity, 500LL << 20);
	assert_int_equal(c->hard[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE].quantity, 1LL << 30);
	assert_int_equal(c->max_pod_grace_usec, 20 * USEC_PER_SEC);
	assert_int_equal(c->pressure_transition_usec, 30 * USEC_PER_SEC);
	assert_string_equal(c->run_dir, "/run/evictd-state");
	assert_int_equal(c->retry_backoff_usec, USEC_PER_SEC);
	assert_int_equal(c->retry_backoff_max_usec, 60 * USEC_PER_SEC);
	assert_int_equal(config_threshold_resolve_signal(SIGNAL_MEMORY_SOME, &c->hard[SIGNAL_MEMORY_SOME], 10000), 4000);
	assert_int_equal(config_threshold_resolve_signal(SIGNAL_MEMORY_FULL, &c->hard[SIGNAL_MEMORY_FULL], 10000), 1050);
	assert_int_equal(c->n_classes, 2);

	/* the classes reach libpreempt: globalDefault resolves a pod without a class */
	int32_t prio;
	pp_preemption_policy pol;
	assert_int_equal(pp_pcset_resolve(c->pcset, NULL, NULL, &prio, &pol, NULL), 0);
	assert_int_equal(prio, 10);
	assert_int_equal(pp_pcset_resolve(c->pcset, "high-priority", NULL, &prio, &pol, NULL), 0);
	assert_int_equal(prio, 1000000);
	assert_int_equal(pol, PP_PREEMPT_NEVER);
	config_free(c);
}

static void test_zero_and_hundred_percent_disable(void **state)
{
	(void)state;
	evictd_config *c = config_from("[eviction-hard]\nnodefs.available = 0%\nimagefs.available = 100%\n");
	assert_false(c->hard[SIGNAL_NODEFS_AVAILABLE].set);
	assert_false(c->hard[SIGNAL_IMAGEFS_AVAILABLE].set);
	assert_true(c->hard[SIGNAL_MEMORY_AVAILABLE].set);
	config_free(c);
}

/* Expects the text to be rejected with "test.conf:LINE: ..." containing `what`. */
static void expect_error(const char *text, unsigned line, const char *what)
{
	evictd_config *c = NULL;
	config_error err;
	char prefix[64];

	assert_int_equal(config_load_string(text, "test.conf", &c, &err), -EINVAL);
	assert_null(c);
	snprintf(prefix, sizeof(prefix), "test.conf:%u: ", line);
	if (strncmp(err.text, prefix, strlen(prefix)) != 0 || !strstr(err.msg, what)) {
		fprintf(stderr, "expected \"%s...%s\", got \"%s\"\n", prefix, what, err.text);
		fail();
	}
	assert_string_equal(err.file, "test.conf");
	assert_int_equal(err.line, line);
}

/* No eviction command is shipped, so action = exec without one is an error, not a default path. */
static void test_exec_action_needs_a_command(void **state)
{
	evictd_config *c = NULL;
	config_error err;
	(void)state;

	assert_int_equal(config_load_string("[agent]\naction = exec\n", "test.conf", &c, &err), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(err.msg, "action = exec needs exec = COMMAND"));
	assert_int_equal(config_load_string("[agent]\naction = exec\nexec = /usr/local/bin/evict {uid}\n", "test.conf",
	                                    &c, &err), 0);
	assert_string_equal(c->exec_argv[0], "/usr/local/bin/evict");
	config_free(c);
	assert_int_equal(config_load_string("[agent]\naction = kill\n", "test.conf", &c, &err), 0);
	assert_null(c->exec_argv[0]);
	config_free(c);
}

static void test_errors_name_file_and_line(void **state)
{
	(void)state;
	char longline[400];

	expect_error("[agent]\ninterval = 1s\n[evictoin-hard]\nmemory.available = 1Gi\n", 3, "unknown section [evictoin-hard]");
	expect_error("[agent]\nintervall = 1s\n", 2, "unknown key \"intervall\"");
	expect_error("[eviction-hard]\nmemory.avail = 1Gi\n", 2, "unknown signal \"memory.avail\"");
	expect_error("\n[eviction-hard]\nmemory.available = 1Gb\n", 3, "invalid quantity \"1Gb\"");
	expect_error("[eviction-hard]\nnodefs.available = 120%\n", 2, "out of range");
	expect_error("[eviction-hard]\nmemory.available = 0\n", 2, "out of range");
	expect_error("[eviction-hard]\nmemory.available = -5Mi\n", 2, "");
	expect_error("[eviction-minimum-reclaim]\nmemory.available = 0%\n", 2, "greater than 0%");
	expect_error("[agent]\ninterval = 1 second\n", 2, "invalid duration \"1 second\"");
	expect_error("[eviction]\nmax-pod-grace-period = -30s\n", 2, "invalid duration");
	expect_error("[agent]\ninterval = 2h\n", 2, "out of range");
	expect_error("[agent]\ndry-run = maybe\n", 2, "expected yes or no");
	expect_error("[agent]\naction = reboot\n", 2, "expected kill or exec");
	expect_error("[agent]\nexec = kubectl {namespace}\n", 2, "absolute path");
	expect_error("[agent]\nexec = /bin/x {pod}\n", 2, "placeholders");
	expect_error("[agent]\ncgroup-root = sys/fs/cgroup\n", 2, "absolute path");
	expect_error("[agent]\npods = /kubepods/*\n", 2, "relative to the cgroup root");
	expect_error("[eviction]\npsi-memory-some = 100Mi\n", 2, "percentages");
	expect_error("[priority-class high]\nvalue = 1000000001\n", 2, "maximum allowed value");
	expect_error("[priority-class high]\nvalue = 99999999999\n", 2, "out of range");
	expect_error("[priority-class Not_A_Name]\nvalue = 1\n", 2, "not a valid PriorityClass name");
	expect_error("[priority-class a]\nvalue = 1\nglobal-default = yes\n[priority-class b]\nvalue = 2\nglobal-default = yes\n",
	             5, "already marked as default");
	expect_error("[eviction-soft]\nmemory.available = 1Gi\n", 2, "needs a grace period");
	expect_error("[agent]\ninterval = 1s\ninterval = 2s\n", 3, "duplicate key");
	expect_error("[eviction]\nretry-backoff = 10ms\n", 2, "out of range (100ms-24h)");
	expect_error("[agent]\nrun-directory = run/evictd\n", 2, "absolute path");
	/* a cross-key rule: said without a line, naming both keys */
	evictd_config *c = NULL;
	config_error err;
	assert_int_equal(config_load_string("[eviction]\nretry-backoff = 1m\nretry-backoff-max = 10s\n", "test.conf",
	                                    &c, &err), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(err.text, "retry-backoff-max must not be shorter than retry-backoff"));
	expect_error("[agent]\ninterval = 1s\n  2s\n", 3, "indented line");
	expect_error("[agent]\nthis is not ini\n", 2, "syntax error");

	/* an over-long line is an error at its own line, never silently cut */
	memset(longline, 'x', sizeof(longline));
	memcpy(longline, "[agent]\n# ", 10);
	snprintf(longline + 300, sizeof(longline) - 300, "\ninterval = 1s\n");
	expect_error(longline, 2, "line longer than");
}

static void test_dropins_in_strcmp_order_later_wins(void **state)
{
	char main_path[PATH_MAX], dir[PATH_MAX], p[PATH_MAX + 32];
	evictd_config *c = NULL;
	config_error err;
	(void)state;

	snprintf(main_path, sizeof(main_path), "%s/evictd.conf", tmpdir);
	snprintf(dir, sizeof(dir), "%s/evictd.conf.d", tmpdir);
	mkdir(dir, 0755);
	write_file(main_path, "[agent]\ninterval = 5s\n[eviction-hard]\nmemory.available = 1Gi\n");
	snprintf(p, sizeof(p), "%s/B-upper.conf", dir); /* 'B' < 'a' in strcmp, whatever the locale */
	write_file(p, "[agent]\ninterval = 3s\ndry-run = yes\n");
	snprintf(p, sizeof(p), "%s/a-lower.conf", dir);
	write_file(p, "[agent]\ninterval = 2s\n[eviction-hard]\nmemory.available = 2Gi\n");
	snprintf(p, sizeof(p), "%s/.hidden.conf", dir);
	write_file(p, "[agent]\ninterval = 9s\n");
	snprintf(p, sizeof(p), "%s/README", dir);
	write_file(p, "not ini at all\n");
	snprintf(p, sizeof(p), "%s/05-dir.conf", dir);
	mkdir(p, 0755);

	assert_int_equal(config_load(main_path, true, &c, &err), 0);
	assert_int_equal(c->interval_usec, 2 * USEC_PER_SEC);
	assert_true(c->dry_run);
	assert_int_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].quantity, 2LL << 30);
	assert_non_null(strstr(c->sources, "B-upper.conf"));
	assert_null(strstr(c->sources, "hidden"));

	/* a bad drop-in: the error names the drop-in and its line, and reload keeps the old config */
	snprintf(p, sizeof(p), "%s/z-bad.conf", dir);
	write_file(p, "[agent]\n\ninterval = 1s\nbogus = 1\n");
	evictd_config *before = c;
	config_overrides ov = { .proc_root = "/fixture/proc" };
	assert_int_equal(config_reload(&c, main_path, true, &ov, &err), -EINVAL);
	assert_ptr_equal(c, before);
	assert_int_equal(c->interval_usec, 2 * USEC_PER_SEC);
	assert_string_equal(c->proc_root, "/proc");
	assert_int_equal(err.line, 4);
	assert_non_null(strstr(err.file, "z-bad.conf"));
	assert_non_null(strstr(err.text, "z-bad.conf:4: unknown key \"bogus\""));

	/* fixed: the reload goes through and the overrides are re-applied */
	write_file(p, "[agent]\ninterval = 750ms\n");
	assert_int_equal(config_reload(&c, main_path, true, &ov, &err), 0);
	assert_int_equal(c->interval_usec, 750000);
	assert_string_equal(c->proc_root, "/fixture/proc");
	config_free(c);
}

/* One PSI threshold, two names: either works alone, both set is an error naming both places. */
static void test_psi_alias_conflicts_loudly(void **state)
{
	char main_path[PATH_MAX], dir[PATH_MAX], p[PATH_MAX + 32];
	evictd_config *c = NULL;
	config_error err;
	(void)state;

	c = config_from("[eviction-hard]\nmemory.some = 30%\n");
	assert_true(c->hard[SIGNAL_MEMORY_SOME].set);
	config_free(c);
	c = config_from("[eviction]\npsi-memory-full = 5%\n");
	assert_true(c->hard[SIGNAL_MEMORY_FULL].set);
	config_free(c);
	/* either order, in one file */
	expect_error("[eviction-hard]\nmemory.some = 30%\n[eviction]\npsi-memory-some = 40%\n", 4,
	             "[eviction-hard] memory.some and [eviction] psi-memory-some name the same threshold and both are "
	             "set (here and at test.conf:2): keep [eviction-hard] memory.some only");
	expect_error("[eviction]\npsi-memory-full = 40%\n[eviction-hard]\nmemory.full = 0%\n", 4,
	             "(here and at test.conf:2)");
	/* the other PSI signal's alias is another threshold */
	c = config_from("[eviction-hard]\nmemory.some = 30%\n[eviction]\npsi-memory-full = 5%\n");
	config_free(c);

	/* across files: a drop-in using the other name does not silently win */
	snprintf(main_path, sizeof(main_path), "%s/psi.conf", tmpdir);
	snprintf(dir, sizeof(dir), "%s/psi.conf.d", tmpdir);
	mkdir(dir, 0755);
	write_file(main_path, "[eviction]\npsi-memory-some = 40%\n");
	snprintf(p, sizeof(p), "%s/10-psi.conf", dir);
	write_file(p, "\n[eviction-hard]\nmemory.some = 20%\n");
	c = NULL;
	assert_int_equal(config_load(main_path, true, &c, &err), -EINVAL);
	assert_null(c);
	assert_non_null(strstr(err.text, "10-psi.conf:3: "));
	assert_non_null(strstr(err.text, "psi.conf:2)"));
	/* the same name again in a drop-in is the usual key-by-key override */
	write_file(p, "[eviction]\npsi-memory-some = 20%\n");
	assert_int_equal(config_load(main_path, true, &c, &err), 0);
	assert_int_equal(c->hard[SIGNAL_MEMORY_SOME].fraction * 100 + 0.5f, 20);
	config_free(c);
	unlink(p);
	rmdir(dir);
	unlink(main_path);
}

static void test_missing_main_file(void **state)
{
	char path[PATH_MAX];
	evictd_config *c = NULL;
	config_error err;
	(void)state;

	snprintf(path, sizeof(path), "%s/nope.conf", tmpdir);
	/* the default path may be absent: defaults */
	assert_int_equal(config_load(path, false, &c, &err), 0);
	assert_true(c->hard[SIGNAL_MEMORY_AVAILABLE].set);
	config_free(c);
	/* an explicit --config must exist */
	c = NULL;
	assert_int_equal(config_load(path, true, &c, &err), -ENOENT);
	assert_null(c);
	assert_non_null(strstr(err.text, "nope.conf: cannot open"));
}

/* The adaptive-polling rates: defaults, quantities with and without "/s", errors with file:line. */
static void test_max_rate_keys(void **state)
{
	evictd_config *c = NULL;
	config_error err;
	(void)state;

	assert_int_equal(config_new_default(&c), 0);
	assert_int_equal(c->memory_max_rate, 6LL << 30);
	assert_int_equal(c->disk_max_rate, 4LL << 30);
	assert_int_equal(c->inodes_max_rate, 100000);
	assert_int_equal(c->pid_max_rate, 10000);
	config_free(c);

	c = config_from("[agent]\nmemory-max-rate = 1Gi/s\ndisk-max-rate = 500Mi\ninodes-max-rate = 20k/s\n"
	                "pid-max-rate = 300\n");
	assert_int_equal(c->memory_max_rate, 1LL << 30);
	assert_int_equal(c->disk_max_rate, 500LL << 20);
	assert_int_equal(c->inodes_max_rate, 20000);
	assert_int_equal(c->pid_max_rate, 300);
	config_free(c);

	static const struct {
		const char *text, *expect;
	} bad[] = {
		{ "[agent]\n\nmemory-max-rate = 0\n", "test.conf:3: memory-max-rate \"0\" out of range (must be positive)" },
		{ "[agent]\ndisk-max-rate = -1Gi\n", "test.conf:2: disk-max-rate \"-1Gi\" out of range" },
		{ "[agent]\npid-max-rate = fast\n", "test.conf:2: pid-max-rate: invalid rate \"fast\"" },
		{ "[agent]\ninodes-max-rate = /s\n", "test.conf:2: inodes-max-rate: invalid rate \"/s\"" },
		{ "[agent]\nmemory-max-rate = 1Gi/m\n", "test.conf:2: memory-max-rate: invalid rate \"1Gi/m\"" },
		{ "[eviction]\nmemory-max-rate = 1Gi\n", "unknown key \"memory-max-rate\" in section [eviction]" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = NULL;
		memset(&err, 0, sizeof(err));
		assert_int_equal(config_load_string(bad[i].text, "test.conf", &c, &err), -EINVAL);
		assert_null(c);
		if (!strstr(err.text, bad[i].expect))
			fail_msg("\"%s\" does not contain \"%s\"", err.text, bad[i].expect);
	}
}

/* image-usage-refresh: the kubelet's 5 minutes by default, 0 turns it off, a typo names file:line. */
static void test_image_usage_refresh(void **state)
{
	(void)state;
	evictd_config *c = config_from("");
	assert_int_equal(c->image_usage_refresh_usec, 300 * USEC_PER_SEC);
	config_free(c);
	c = config_from("[eviction]\nimage-usage-refresh = 0\n");
	assert_int_equal(c->image_usage_refresh_usec, 0);
	config_free(c);
	c = config_from("[eviction]\nimage-usage-refresh = 90s\n");
	assert_int_equal(c->image_usage_refresh_usec, 90 * USEC_PER_SEC);
	config_free(c);

	static const struct {
		const char *text, *expect;
	} bad[] = {
		{ "[eviction]\n\nimage-usage-refresh = 10ms\n", "test.conf:3: image-usage-refresh \"10ms\" out of range (0 for off, or 1s-24h)" },
		{ "[eviction]\nimage-usage-refresh = 25h\n", "test.conf:2: image-usage-refresh \"25h\" out of range" },
		{ "[eviction]\nimage-usage-refresh = often\n", "test.conf:2: image-usage-refresh" },
		{ "[agent]\nimage-usage-refresh = 5m\n", "unknown key \"image-usage-refresh\" in section [agent]" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		config_error err;
		c = NULL;
		memset(&err, 0, sizeof(err));
		assert_int_equal(config_load_string(bad[i].text, "test.conf", &c, &err), -EINVAL);
		assert_null(c);
		if (!strstr(err.text, bad[i].expect))
			fail_msg("\"%s\" does not contain \"%s\"", err.text, bad[i].expect);
	}
}

/*
 * The key table (`evictd --dump-config-keys`, checked against the man page) and the parser agree:
 * every listed key reaches its handler (a bad value is an error about the value, never "unknown
 * key"), and a key that is not listed is refused.
 */
static void test_key_table_matches_parser(void **state)
{
	(void)state;
	size_t n;
	const config_key *k = config_keys(&n);
	assert_true(n > 20);
	for (size_t i = 0; i < n; i++) {
		char text[256];
		const char *section = strcmp(k[i].section, CONFIG_SECTION_CLASS) == 0 ? "priority-class c1" : k[i].section;
		const char *key = strcmp(k[i].key, CONFIG_KEY_SIGNAL) == 0 ? "memory.available" : k[i].key;
		snprintf(text, sizeof(text), "[%s]\n%s = ?bad?\n", section, key);
		evictd_config *c = NULL;
		config_error err;
		int r = config_load_string(text, "t.conf", &c, &err);
		if (r == 0) {
			/* free text (description) is accepted as is */
			config_free(c);
			continue;
		}
		if (strstr(err.text, "unknown key") || strstr(err.text, "unknown section"))
			fail_msg("[%s] %s is in the key table but the parser says: %s", section, key, err.text);
	}
	evictd_config *c = config_from("");
	assert_null(c->metrics_file); /* metrics are off by default */
	config_free(c);
	c = config_from("[agent]\nmetrics-file = /var/lib/node_exporter/textfile_collector/evictd.prom\n");
	assert_string_equal(c->metrics_file, "/var/lib/node_exporter/textfile_collector/evictd.prom");
	config_free(c);
	c = NULL;
	config_error err;
	assert_int_equal(config_load_string("[agent]\nmetrics-file = /tmp/evictd.txt\n", "t.conf", &c, &err), -EINVAL);
	assert_string_equal(err.text, "t.conf:2: metrics-file \"/tmp/evictd.txt\" must be \"none\" or an absolute path ending in .prom");
	assert_int_equal(config_load_string("[agent]\nno-such-key = 1\n", "t.conf", &c, &err), -EINVAL);
	assert_string_equal(err.text, "t.conf:2: unknown key \"no-such-key\" in section [agent]");
	assert_int_equal(config_load_string("[priority-class x]\nvalue = 1\ncolour = red\n", "t.conf", &c, &err), -EINVAL);
	assert_string_equal(err.text, "t.conf:3: unknown key \"colour\" in section [priority-class x]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_kubelet_linux_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_zero_and_hundred_percent_disable),
		cmocka_unit_test(test_exec_action_needs_a_command),
		cmocka_unit_test(test_errors_name_file_and_line),
		cmocka_unit_test(test_dropins_in_strcmp_order_later_wins),
		cmocka_unit_test(test_psi_alias_conflicts_loudly),
		cmocka_unit_test(test_missing_main_file),
		cmocka_unit_test(test_max_rate_keys),
		cmocka_unit_test(test_image_usage_refresh),
		cmocka_unit_test(test_key_table_matches_parser),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
