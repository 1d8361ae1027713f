/* SPDX-License-Identifier: MIT */
/*
 * The kubelet's configuration under evictd.conf: every fixture of tests/fixtures/kubelet/ against
 * the settings it is expected to give (expected.dump), kubelet-margin, the ordering warning,
 * precedence against evictd.conf and drop-ins, and broken files (one warning, evictd's own
 * configuration).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent-test.h"
#include "kubelet-config.h"
#include "scratch.h"

AGENT_TEST_TMPDIR("kubelet-config")

static const char *kubelet_fixture(const char *name, char *buf, size_t size)
{
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "tests/fixtures/kubelet/%s", name);
	if (!realpath(rel, buf) || strlen(buf) >= size) {
		fprintf(stderr, "fixture %s missing (run the tests from the source tree)\n", rel);
		abort();
	}
	return buf;
}

/* A configuration from an evictd.conf text naming kubelet-config = DIR/FILE. */
static evictd_config *with_kubelet(const char *dir, const char *file, const char *more)
{
	char text[4 * PATH_MAX];
	snprintf(text, sizeof(text), "[kubernetes]\nkubelet-config = %s/%s\n%s", dir, file, more ? more : "");
	return config_from(text);
}

typedef struct dump {
	char text[16384];
	size_t len;
	const char *dir;
} dump;

static void append(dump *d, const char *s)
{
	/* the fixture's absolute directory reads FIXTURE, so expected.dump does not depend on the checkout */
	size_t dl = strlen(d->dir);
	while (*s && d->len < sizeof(d->text) - 1) {
		if (strncmp(s, d->dir, dl) == 0) {
			d->len += (size_t)snprintf(d->text + d->len, sizeof(d->text) - d->len, "FIXTURE");
			s += dl;
		} else
			d->text[d->len++] = *s++;
	}
	d->text[d->len] = '\0';
}

static void row(const char *section, const char *key, const char *value, const char *origin, void *userdata)
{
	char line[1024];
	if (strncmp(origin, "kubelet", 7) != 0 && strncmp(origin, "follows", 7) != 0)
		return;
	if (strcmp(section, "kubernetes") == 0 && strcmp(key, "kubelet-config") == 0)
		return;
	snprintf(line, sizeof(line), "[%s] %s = %s ; ", section, key, value);
	append(userdata, line);
	append(userdata, origin);
	append(userdata, "\n");
}

static void conflict_row(const kubelet_conflict *k, void *userdata)
{
	append(userdata, "warning: ");
	append(userdata, k->text);
	append(userdata, "\n");
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[16384];
	size_t n;
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void check_fixture(const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	evictd_config *c;
	dump d = { .dir = dir };

	kubelet_fixture(name, dir, sizeof(dir));
	c = with_kubelet(dir, "config.yaml", NULL);
	assert_string_equal(c->kubelet.warning, "");
	snprintf(path, sizeof(path), "%s/config.yaml", dir);
	assert_string_equal(c->kubelet.path, path);
	config_foreach_setting(c, row, &d);
	config_kubelet_conflicts(c, NULL, conflict_row, &d);
	config_free(c);

	snprintf(path, sizeof(path), "%s/expected.dump", dir);
	if (getenv("EVICTD_WRITE_EXPECTED")) { /* to create a new fixture's file, then read it through */
		write_file(path, d.text);
		return;
	}
	const char *want = slurp(path);
	if (!want)
		fail_msg("%s missing", path);
	if (strcmp(want, d.text) != 0) {
		fprintf(stderr, "--- %s expected:\n%s--- got:\n%s", name, want, d.text);
		fail_msg("%s: the effective configuration differs from expected.dump", name);
	}
}

static void test_fixtures(void **state)
{
	static const char *const names[] = { "kubeadm", "kubeadm-root-dir", "managed-json", "soft-cgroupfs",
	                                     "percent-merge", "reserved-enforce" };
	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_fixture(names[i]);
}

/* The kubeadm fixture sets no eviction keys: the kubelet's defaults, raised by 25%. */
static void test_kubeadm_defaults_plus_margin(void **state)
{
	char dir[PATH_MAX];
	(void)state;
	evictd_config *c = with_kubelet(kubelet_fixture("kubeadm", dir, sizeof(dir)), "config.yaml", NULL);

	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_MEMORY_AVAILABLE], 0), 125LL << 20);
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_NODEFS_AVAILABLE], 1000000), 125000);
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_IMAGEFS_AVAILABLE], 1000000), 187500);
	assert_int_equal(config_threshold_resolve(config_hard(c, SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE), 0), 125LL << 20);
	/* "0s" in the file is the kubelet's 5m, not zero */
	assert_int_equal(c->pressure_transition_usec, 300 * USEC_PER_SEC);
	/* evictd acts first on every signal: nothing to warn about */
	assert_int_equal(config_kubelet_conflicts(c, NULL, NULL, NULL), 0);
	config_free(c);
}

/* tmpdir/config.yaml: a KubeletConfiguration with these lines after apiVersion and kind. */
static void kubelet_yaml(const char *lines)
{
	char path[PATH_MAX], text[2048];
	snprintf(path, sizeof(path), "%s/config.yaml", tmpdir);
	snprintf(text, sizeof(text), "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n%s", lines);
	write_file(path, text);
}

/* The ordering warnings of c, one "warning: ...\n" line each, in d; returns how many. */
static unsigned warnings(const evictd_config *c, const int64_t *caps, dump *d)
{
	memset(d, 0, sizeof(*d));
	d->dir = tmpdir;
	return config_kubelet_conflicts(c, caps, conflict_row, d);
}

/*
 * With evictd.conf's [eviction-hard] memory.available = 100Mi beside tmpdir/config.yaml, whose hard
 * memory threshold is kubelet (plus the margin: with_margin): exactly the warning for that key.
 */
static void only_hard_memory_100Mi_warned(const char *kubelet, const char *with_margin)
{
	static dump d;
	char want[1024];
	evictd_config *c = with_kubelet(tmpdir, "config.yaml", "[eviction-hard]\nmemory.available = 100Mi\n");
	assert_int_equal(warnings(c, NULL, &d), 1);
	snprintf(want, sizeof(want),
	         "warning: memory.available: evictd's hard threshold 100Mi ([eviction-hard] memory.available, test.conf:4) "
	         "is at or below the kubelet's hard %s (kubelet FIXTURE/config.yaml:4): the kubelet may evict first; "
	         "raise it above %s, or remove it from evictd.conf to take the kubelet's plus kubelet-margin (%s)\n",
	         kubelet, kubelet, with_margin);
	assert_string_equal(d.text, want);
	config_free(c);
}

/* The node: the kubelet evicts at 500Mi, evictd.conf says 100Mi. */
static void test_ordering_warning_names_both(void **state)
{
	static dump d;
	(void)state;
	kubelet_yaml("evictionHard:\n  memory.available: 500Mi\n  nodefs.available: 10%\n");
	/* allocatable follows memory on both sides: said once, under the key that was written */
	only_hard_memory_100Mi_warned("500Mi", "625Mi");
	evictd_config *c;

	/* equal is "at or below"; a percentage is compared with a quantity through the capacity */
	c = with_kubelet(tmpdir, "config.yaml", "[eviction-hard]\nnodefs.available = 10%\nmemory.available = 1%\n");
	int64_t caps[_SIGNAL_MAX];
	for (int i = 0; i < _SIGNAL_MAX; i++)
		caps[i] = -1;
	/* nodefs; memory and allocatable (1% against 500Mi) cannot be compared without a capacity */
	assert_int_equal(config_kubelet_conflicts(c, caps, NULL, NULL), 1);
	caps[SIGNAL_MEMORY_AVAILABLE] = 100LL << 30; /* 1% of 100Gi = 1Gi > 500Mi */
	assert_int_equal(config_kubelet_conflicts(c, caps, NULL, NULL), 1);
	caps[SIGNAL_MEMORY_AVAILABLE] = 10LL << 30; /* 1% of 10Gi = 102Mi < 500Mi */
	assert_int_equal(config_kubelet_conflicts(c, caps, NULL, NULL), 2);
	config_free(c);

	/* kubelet-margin = 0: evictd takes the kubelet's thresholds as they are, and says what to change */
	c = with_kubelet(tmpdir, "config.yaml", "[eviction]\nkubelet-margin = 0\n");
	assert_int_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].quantity, 500LL << 20);
	assert_int_equal(warnings(c, NULL, &d), 2); /* memory, nodefs */
	assert_non_null(strstr(d.text, "memory.available: evictd's hard threshold 500Mi is the kubelet's own (kubelet "
	                               "FIXTURE/config.yaml:4), not raised by [eviction] kubelet-margin = 0 (test.conf:4): "
	                               "both act on the same crossing; set kubelet-margin above 0, or [eviction-hard] "
	                               "memory.available above 500Mi\n"));
	assert_null(strstr(d.text, "allocatableMemory"));
	config_free(c);
}

/*
 * Hard with hard, soft with soft (issue 29): the kubelet at hard 200Mi, soft 500Mi/1m30s, evictd.conf
 * memory.available = 100Mi. evictd's soft threshold is the kubelet's plus margin, so the old "highest
 * of each side" compared 625Mi with 500Mi and said nothing, while in a fast fill the kubelet's hard
 * 200Mi acts long before evictd's 100Mi. allocatableMemory.available, which nobody wrote, is not
 * warned about on its own.
 */
static void test_ordering_hard_with_hard_soft_with_soft(void **state)
{
	static dump d;
	(void)state;
	kubelet_yaml("evictionHard:\n  memory.available: 200Mi\nevictionSoft:\n  memory.available: 500Mi\n"
	             "evictionSoftGracePeriod:\n  memory.available: 1m30s\n");
	only_hard_memory_100Mi_warned("200Mi", "250Mi");
	evictd_config *c;

	/* a soft threshold below the kubelet's soft one; evictd's hard (the kubelet's + margin) is fine */
	c = with_kubelet(tmpdir, "config.yaml",
	                 "[eviction-soft]\nmemory.available = 400Mi\n[eviction-soft-grace-period]\nmemory.available = 30s\n");
	assert_int_equal(warnings(c, NULL, &d), 1);
	assert_non_null(strstr(d.text, "warning: memory.available: evictd's soft threshold 400Mi ([eviction-soft] "
	                               "memory.available, test.conf:4) is at or below the kubelet's soft 500Mi (kubelet "
	                               "FIXTURE/config.yaml:6)"));
	config_free(c);

	/* evictd's hard above the kubelet's hard, evictd's soft inherited: nothing to say, although
	 * evictd's hard is below the kubelet's soft (hard is not compared with soft) */
	c = with_kubelet(tmpdir, "config.yaml", "[eviction-hard]\nmemory.available = 300Mi\n");
	assert_int_equal(config_kubelet_conflicts(c, NULL, NULL, NULL), 0);
	config_free(c);

	/* the kubelet names allocatable above the memory threshold evictd.conf sets: evictd then takes
	 * the kubelet's allocatable (plus margin) and nothing follows memory.available */
	kubelet_yaml("evictionHard:\n  memory.available: 200Mi\n  allocatableMemory.available: 300Mi\n");
	c = with_kubelet(tmpdir, "config.yaml", "[eviction-hard]\nmemory.available = 100Mi\n");
	assert_int_equal(warnings(c, NULL, &d), 1);
	assert_non_null(strstr(d.text, "warning: memory.available: evictd's hard threshold 100Mi"));
	assert_false(c->allocatable_follows_memory);
	config_free(c);
}

/* cgroupsPerQOS: false: the kubelet makes no pod cgroups, so the driver says nothing about pods */
static void test_no_pod_cgroups(void **state)
{
	char path[PATH_MAX];
	(void)state;
	snprintf(path, sizeof(path), "%s/noqos.yaml", tmpdir);
	write_file(path, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	                 "cgroupDriver: cgroupfs\ncgroupsPerQOS: false\n");
	evictd_config *c = with_kubelet(tmpdir, "noqos.yaml", NULL);
	assert_string_equal(c->pods[0], "kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice");
	assert_string_equal(config_origin(c, "agent", "pods"), "default");
	config_free(c);
}

static void test_quantity_margin(void **state)
{
	char dir[PATH_MAX];
	(void)state;
	evictd_config *c = with_kubelet(kubelet_fixture("managed-json", dir, sizeof(dir)), "config.yaml",
	                                "[eviction]\nkubelet-margin = 200Mi\n");
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_MEMORY_AVAILABLE], 0), 300LL << 20);
	/* a percentage threshold gets the quantity after resolution */
	threshold_value ten = { .set = true, .percent = true, .fraction = 0.10f };
	assert_int_equal(config_threshold_resolve(&c->hard[SIGNAL_NODEFS_AVAILABLE], 10LL << 30),
	                 config_threshold_resolve(&ten, 10LL << 30) + (200LL << 20));
	/* an inode count gets no bytes: the kubelet's 5% as is, and the warning says so */
	assert_true(c->hard[SIGNAL_NODEFS_INODES_FREE].percent);
	assert_true(c->hard[SIGNAL_NODEFS_INODES_FREE].fraction == 0.05f);
	dump d = { .dir = dir };
	assert_int_equal(config_kubelet_conflicts(c, NULL, conflict_row, &d), 1);
	assert_non_null(strstr(d.text, "nodefs.inodesFree: evictd's hard threshold 5% is the kubelet's own (kubelet "
	                               "FIXTURE/config.yaml:"));
	assert_non_null(strstr(d.text, "), not raised by [eviction] kubelet-margin = 200Mi (test.conf:4), a quantity, "
	                               "which only byte signals take: both act on the same crossing; set kubelet-margin "
	                               "as a percentage, or [eviction-hard] nodefs.inodesFree above 5%\n"));
	config_free(c);

	config_error err;
	c = NULL;
	assert_int_equal(config_load_string("[eviction]\nkubelet-margin = -5%\n", "t.conf", &c, &err), -EINVAL);
	assert_non_null(strstr(err.text, "t.conf:2:"));
	assert_int_equal(config_load_string("[eviction]\nkubelet-margin = 150%\n", "t.conf", &c, &err), -EINVAL);
	assert_non_null(strstr(err.text, "t.conf:2: [eviction] memory.available: percentage 150% out of range"));
}

/* evictd.conf and its drop-ins win key by key; the kubelet fills in the rest. */
static void test_precedence_files_then_kubelet(void **state)
{
	char dir[PATH_MAX], main_path[PATH_MAX], dropins[PATH_MAX + 8], p[2 * PATH_MAX];
	evictd_config *c = NULL;
	config_error err;
	(void)state;

	kubelet_fixture("soft-cgroupfs", dir, sizeof(dir));
	snprintf(main_path, sizeof(main_path), "%s/prec.conf", tmpdir);
	snprintf(dropins, sizeof(dropins), "%s.d", main_path);
	mkdir(dropins, 0755);
	snprintf(p, sizeof(p), "[kubernetes]\nkubelet-config = %s/config.yaml\n[eviction-hard]\nmemory.available = 2Gi\n", dir);
	write_file(main_path, p);
	snprintf(p, sizeof(p), "%s/50-soft.conf", dropins);
	write_file(p, "[eviction-soft]\nmemory.available = 3Gi\n[agent]\npods = custom/pod*\n");

	if (config_load(main_path, true, &c, &err) < 0)
		fail_msg("%s", err.text);
	/* evictd.conf: hard memory */
	assert_int_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].quantity, 2LL << 30);
	snprintf(p, sizeof(p), "%s:4", main_path);
	assert_string_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].origin, p);
	/* the drop-in: soft memory; its grace period still comes from the kubelet (a separate key) */
	assert_int_equal(c->soft[SIGNAL_MEMORY_AVAILABLE].quantity, 3LL << 30);
	assert_non_null(strstr(c->soft[SIGNAL_MEMORY_AVAILABLE].origin, "50-soft.conf:2"));
	assert_int_equal(c->soft_grace_usec[SIGNAL_MEMORY_AVAILABLE], 90 * USEC_PER_SEC);
	assert_non_null(strstr(c->soft_grace_origin[SIGNAL_MEMORY_AVAILABLE], "kubelet "));
	assert_string_equal(c->pods[0], "custom/pod*");
	assert_null(c->pods[1]);
	assert_non_null(strstr(config_origin(c, "agent", "pods"), "50-soft.conf:4"));
	/* the kubelet: nodefs hard and soft with the margin, minimum reclaim as is, max grace */
	assert_true(c->hard[SIGNAL_NODEFS_AVAILABLE].fraction == 0.0625f);
	assert_true(c->soft[SIGNAL_NODEFS_AVAILABLE].fraction == 0.1875f);
	assert_int_equal(c->min_reclaim[SIGNAL_NODEFS_AVAILABLE].quantity, 1LL << 30);
	assert_int_equal(c->max_pod_grace_usec, 60 * USEC_PER_SEC);
	assert_string_equal(config_origin(c, "agent", "interval"), "default");
	config_free(c);

	/* kubelet-config = none in a drop-in turns it off again: the soft threshold then lacks the
	 * kubelet's grace period, and the whole is validated as always */
	snprintf(p, sizeof(p), "%s/90-off.conf", dropins);
	write_file(p, "[kubernetes]\nkubelet-config = none\n");
	c = NULL;
	assert_int_equal(config_load(main_path, true, &c, &err), -EINVAL);
	assert_non_null(strstr(err.text, "50-soft.conf:2: [eviction-soft] memory.available needs a grace period"));
	write_file(p, "[kubernetes]\nkubelet-config = none\n[eviction-soft-grace-period]\nmemory.available = 1m\n");
	assert_int_equal(config_load(main_path, true, &c, &err), 0);
	assert_string_equal(c->kubelet.path, "");
	assert_string_equal(c->pods[0], "custom/pod*");
	assert_true(c->hard[SIGNAL_NODEFS_AVAILABLE].fraction == 0.10f); /* evictd's own default */
	config_free(c);
}

/* Broken files: one warning naming file:line; the load succeeds on evictd.conf alone. */
static void test_broken_files(void **state)
{
	static const struct { const char *file; unsigned line; const char *what; } cases[] = {
		{ "bad-yaml.yaml", 4, "not valid YAML" },
		{ "bad-apiversion.yaml", 1, "apiVersion \"kubelet.config.k8s.io/v1alpha9\" is not kubelet.config.k8s.io/v1beta1" },
		{ "bad-kind.yaml", 1, "apiVersion \"v1\"" },
		{ "bad-value.yaml", 4, "memory.available" },
		{ "bad-signal.yaml", 4, "unknown eviction signal \"disk.available\"" },
		{ "soft-no-grace.yaml", 4, "evictionSoft memory.available has no grace period" },
		{ "bad-shape.yaml", 3, "evictionHard: expected a mapping" },
		{ "duplicate.yaml", 4, "duplicate key \"cgroupDriver\"" },
		/* libfyaml loops forever on these (fuzz-kubelet-config): refused before it sees them */
		{ "not-text.yaml", 4, "column 8: control character 0x05" },
		{ "bad-utf8.yaml", 3, "column 19: invalid UTF-8 (byte 0xff)" },
	};
	char dir[PATH_MAX], want[PATH_MAX + 64];
	(void)state;

	kubelet_fixture("broken", dir, sizeof(dir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		evictd_config *c = with_kubelet(dir, cases[i].file, NULL);
		snprintf(want, sizeof(want), "%s/%s:%u: ", dir, cases[i].file, cases[i].line);
		if (strncmp(c->kubelet.warning, want, strlen(want)) != 0 || !strstr(c->kubelet.warning, cases[i].what))
			fail_msg("%s: warning \"%s\", expected \"%s...%s\"", cases[i].file, c->kubelet.warning, want,
			         cases[i].what);
		assert_string_equal(c->kubelet.path, "");
		/* evictd's own defaults, untouched */
		assert_int_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].quantity, 100LL << 20);
		assert_string_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].origin, "default");
		assert_string_equal(config_origin(c, "agent", "pods"), "default");
		config_free(c);
	}
	/* missing: silent */
	evictd_config *c = with_kubelet(dir, "no-such-file.yaml", NULL);
	assert_string_equal(c->kubelet.warning, "");
	assert_string_equal(c->kubelet.path, "");
	config_free(c);
}

/* The reader alone: JSON is YAML, aliases are refused, deeper values are skipped. */
static void test_reader(void **state)
{
	kubelet_config *k = NULL;
	config_error err;
	(void)state;
	static const char anchors[] = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	                              "evictionHard: &h\n  memory.available: 1Gi\nevictionSoft: *h\n";
	assert_int_equal(kubelet_config_parse(anchors, sizeof(anchors) - 1, "a.yaml", &k, &err), -EINVAL);
	assert_non_null(strstr(err.text, "a.yaml:5: YAML aliases are not supported"));

	static const char deep[] = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	                           "logging:\n  options:\n    json: {infoBufferSize: \"0\"}\n"
	                           "evictionHard: {\"memory.available\": \"1Gi\", \"containerfs.available\": \"5%\"}\n";
	assert_int_equal(kubelet_config_parse(deep, sizeof(deep) - 1, "d.yaml", &k, &err), 0);
	assert_int_equal(k->hard[SIGNAL_MEMORY_AVAILABLE].quantity, 1LL << 30);
	assert_true(k->enforce_pods); /* the kubelet's default enforceNodeAllocatable: [pods] */
	free(k);

	/* libfyaml 0.7.12 hangs on a '%' line with an invalid byte: refused before it sees it */
	static const char hang[] = "apiVersion: kubelet.config.k8s.io/v1beta1\n%a\xba\n";
	assert_int_equal(kubelet_config_parse(hang, sizeof(hang) - 1, "h.yaml", &k, &err), -EINVAL);
	assert_string_equal(err.text, "h.yaml:2: column 3: invalid UTF-8 (byte 0xba): a KubeletConfiguration is YAML text");

	/* null is the field unset (the kubelet's defaults); {} and [] are set and empty */
	static const char nulls[] = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	                            "evictionHard:\nenforceNodeAllocatable: ~\n";
	assert_int_equal(kubelet_config_parse(nulls, sizeof(nulls) - 1, "n.yaml", &k, &err), 0);
	assert_false(k->hard_map.set);
	assert_true(k->enforce_pods);
	free(k);
	static const char empties[] = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	                              "evictionHard: {}\nenforceNodeAllocatable: []\n";
	assert_int_equal(kubelet_config_parse(empties, sizeof(empties) - 1, "e.yaml", &k, &err), 0);
	assert_true(k->hard_map.set);
	assert_false(k->enforce_pods);
	free(k);

	kubelet_config flags = { 0 };
	assert_int_equal(kubelet_flags_parse("# x\nKUBELET_KUBEADM_ARGS=\"--a=b --root-dir /srv/kubelet --c\"\n",
	                                     "f.env", &flags, &err), 0);
	assert_string_equal(flags.root_dir, "/srv/kubelet");
	assert_int_equal(flags.root_dir_item.line, 2);
	assert_int_equal(kubelet_flags_parse("KUBELET_KUBEADM_ARGS=\"--root-dir=relative\"\n", "f.env", &flags, &err), -EINVAL);
	assert_string_equal(err.text, "f.env:1: --root-dir needs an absolute path");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixtures),
		cmocka_unit_test(test_kubeadm_defaults_plus_margin),
		cmocka_unit_test(test_ordering_warning_names_both),
		cmocka_unit_test(test_ordering_hard_with_hard_soft_with_soft),
		cmocka_unit_test(test_no_pod_cgroups),
		cmocka_unit_test(test_quantity_margin),
		cmocka_unit_test(test_precedence_files_then_kubelet),
		cmocka_unit_test(test_broken_files),
		cmocka_unit_test(test_reader),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
