/* SPDX-License-Identifier: MIT */
/*
 * allocatableMemory.available against node allocatable: the kubepods cgroup's memory.max where
 * node allocatable is enforced on pods, else MemTotal - kubeReserved - systemReserved - the hard
 * memory.available threshold (the kubelet's own when its configuration was read).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>

#include "agent-test.h"
#include "node.h"

AGENT_TEST_TMPDIR("allocatable")

#define GI (1LL << 30)
#define MI (1LL << 20)

/* root/kubepods.slice with memory.max (a number or "max"), 3Gi current of which 1Gi inactive; MemTotal 16Gi */
static void tree(const char *max)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/root/kubepods.slice", tmpdir);
	char cmd[2 * PATH_MAX];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' '%s/proc'", p, tmpdir);
	assert_int_equal(system(cmd), 0);
	char f[PATH_MAX + 32], v[64];
	snprintf(f, sizeof(f), "%s/memory.max", p);
	snprintf(v, sizeof(v), "%s\n", max);
	write_file(f, v);
	snprintf(f, sizeof(f), "%s/memory.current", p);
	write_file(f, "3221225472\n");
	snprintf(f, sizeof(f), "%s/memory.stat", p);
	write_file(f, "anon 2147483648\nfile 1073741824\ninactive_file 1073741824\n");
	snprintf(f, sizeof(f), "%s/proc/meminfo", tmpdir);
	write_file(f, "MemTotal:       16777216 kB\nMemFree:        1000 kB\n");
}

static signal_obs observe(const evictd_config *c)
{
	char p[PATH_MAX];
	node_signals ns = { 0 };
	bool want[_SIGNAL_MAX] = { [SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE] = true };
	snprintf(p, sizeof(p), "%s/root", tmpdir);
	int root = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(p, sizeof(p), "%s/proc", tmpdir);
	int proc = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(root >= 0 && proc >= 0);
	node_sources src = { .cg_root_fd = root, .proc_fd = proc, .kubepods = "kubepods.slice", .cfg = c };
	node_signals_read_some(&src, want, &ns);
	close(root);
	close(proc);
	return ns.s[SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE];
}

static void test_enforced_memory_max_wins(void **state)
{
	(void)state;
	tree("8589934592");
	evictd_config *c = config_from("[agent]\nkube-reserved-memory = 1Gi\n");
	signal_obs o = observe(c);
	assert_true(o.known);
	assert_int_equal(o.capacity, 8 * GI);
	assert_int_equal(o.available, 8 * GI - 2 * GI); /* working set = current - inactive_file */
	config_free(c);
}

static void test_unlimited_without_reservations_is_unknown(void **state)
{
	(void)state;
	tree("max");
	evictd_config *c = config_from("");
	signal_obs o = observe(c);
	assert_false(o.known);
	assert_non_null(strstr(o.reason, "memory.max is \"max\""));
	config_free(c);
}

static void test_unlimited_with_reservations_is_computed(void **state)
{
	(void)state;
	tree("max");
	evictd_config *c = config_from("[agent]\nkube-reserved-memory = 1Gi\nsystem-reserved-memory = 512Mi\n");
	signal_obs o = observe(c);
	assert_true(o.known);
	/* 16Gi - 1Gi - 512Mi - 100Mi (evictd's hard memory.available default) */
	assert_int_equal(o.capacity, 16 * GI - GI - 512 * MI - 100 * MI);
	assert_int_equal(o.available, o.capacity - 2 * GI);
	config_free(c);
}

static void test_not_enforced_computed_wins(void **state)
{
	(void)state;
	tree("8589934592");
	evictd_config *c = config_from("[agent]\nenforce-node-allocatable = none\n[eviction-hard]\nmemory.available = 1Gi\n");
	signal_obs o = observe(c);
	assert_true(o.known);
	assert_int_equal(o.capacity, 16 * GI - GI);
	config_free(c);
}

/* With the kubelet's configuration read, its own hard threshold is the one subtracted. */
static void test_kubelet_threshold_is_subtracted(void **state)
{
	char p[PATH_MAX], text[PATH_MAX + 64];
	(void)state;
	tree("max");
	snprintf(p, sizeof(p), "%s/config.yaml", tmpdir);
	write_file(p, "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	              "kubeReserved: {memory: 1Gi}\nsystemReserved: {memory: 1Gi}\nevictionHard: {memory.available: 500Mi}\n");
	snprintf(text, sizeof(text), "[kubernetes]\nkubelet-config = %s\n", p);
	evictd_config *c = config_from(text);
	assert_int_equal(c->hard[SIGNAL_MEMORY_AVAILABLE].quantity, 625 * MI); /* evictd's, with the margin */
	signal_obs o = observe(c);
	assert_true(o.known);
	assert_int_equal(o.capacity, 16 * GI - 2 * GI - 500 * MI);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enforced_memory_max_wins),
		cmocka_unit_test(test_unlimited_without_reservations_is_unknown),
		cmocka_unit_test(test_unlimited_with_reservations_is_computed),
		cmocka_unit_test(test_not_enforced_computed_wins),
		cmocka_unit_test(test_kubelet_threshold_is_subtracted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
