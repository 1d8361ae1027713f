/* SPDX-License-Identifier: MIT */
/*
 * The metrics text itself: counters per signal/kind/outcome, cumulative histogram buckets, PSI as
 * a ratio, unreadable signals left out, label escaping, a buffer too small refused whole, and
 * metrics_update() writing only on change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent-test.h"
#include "evictd-metrics.h"

AGENT_TEST_TMPDIR("metrics")

static char buf[METRICS_MAX_BYTES];

static void render(metrics *m, const evictd_config *c, const node_signals *n, const evaluation *e)
{
	int r = metrics_render(m, c, n, e, 2, buf, sizeof(buf));
	assert_true(r > 0);
	assert_int_equal((size_t)r, strlen(buf));
}

static void has(const char *line)
{
	char pat[512];
	snprintf(pat, sizeof(pat), "\n%s\n", line);
	if (!strstr(buf, pat))
		fail_msg("no line \"%s\" in:\n%s", line, buf);
}

static void test_values(void **state)
{
	(void)state;
	evictd_config *c = config_from("[eviction-hard]\nnodefs.available = 10%\n[eviction]\npsi-memory-some = 40%\n");
	metrics *m = NULL;
	assert_int_equal(metrics_new(&m), 0);
	node_signals n = { 0 };
	n.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = true, .available = 80 << 20, .capacity = 8LL << 30 };
	n.s[SIGNAL_NODEFS_AVAILABLE] = (signal_obs){ .known = true, .available = 5 << 20, .capacity = 100 << 20 };
	n.s[SIGNAL_MEMORY_SOME] = (signal_obs){ .known = true, .available = 4250, .capacity = 10000 };
	evaluation e = { 0 };
	e.t[THRESHOLD_HARD][SIGNAL_NODEFS_AVAILABLE].met = true;
	e.conditions[CONDITION_DISK_PRESSURE] = true;

	metrics_eviction_started(m);
	metrics_eviction_started(m);
	metrics_eviction_finished(m, "nodefs.available", true, "done");
	metrics_eviction_finished(m, "nodefs.available", true, "done");
	metrics_eviction_finished(m, "memory.available", false, "timeout");
	metrics_eviction_finished(m, "no.such.signal", true, "done"); /* ignored */
	metrics_observe_decision(m, 300);    /* 0.0003 s: in le=0.0005 and up */
	metrics_observe_decision(m, 20000);  /* 0.02 s */
	metrics_observe_decision(m, 9000000); /* 9 s: only +Inf */
	assert_int_equal(metrics_evictions_started(m), 2);

	render(m, c, &n, &e);
	has("# TYPE evictd_evictions_total counter");
	has("evictd_evictions_total{signal=\"nodefs.available\",kind=\"hard\",outcome=\"done\"} 2");
	has("evictd_evictions_total{signal=\"memory.available\",kind=\"soft\",outcome=\"timeout\"} 1");
	has("evictd_evictions_started_total 2");
	has("evictd_evictions_in_flight 2");
	has("evictd_signal_observed{signal=\"memory.available\"} 83886080");
	has("evictd_signal_observed{signal=\"memory.some\"} 0.4250");
	assert_null(strstr(buf, "evictd_signal_observed{signal=\"pid.available\"}")); /* unreadable: absent */
	has("evictd_signal_threshold{signal=\"nodefs.available\",kind=\"hard\"} 10485760");
	has("evictd_signal_threshold{signal=\"memory.some\",kind=\"hard\"} 0.4000");
	has("evictd_threshold_met{signal=\"nodefs.available\",kind=\"hard\"} 1");
	has("evictd_threshold_met{signal=\"memory.available\",kind=\"hard\"} 0");
	has("evictd_node_condition{condition=\"DiskPressure\"} 1");
	has("evictd_node_condition{condition=\"MemoryPressure\"} 0");
	has("evictd_decision_duration_seconds_bucket{le=\"0.00025\"} 0");
	has("evictd_decision_duration_seconds_bucket{le=\"0.0005\"} 1");
	has("evictd_decision_duration_seconds_bucket{le=\"0.025\"} 2");
	has("evictd_decision_duration_seconds_bucket{le=\"5\"} 2");
	has("evictd_decision_duration_seconds_bucket{le=\"+Inf\"} 3");
	has("evictd_decision_duration_seconds_count 3");
	has("evictd_scan_duration_seconds_count 0");

	/* too small a buffer: refused, never a cut file */
	char small[256];
	assert_int_equal(metrics_render(m, c, &n, &e, 0, small, sizeof(small)), -ENOBUFS);
	metrics_free(m);
	config_free(c);
}

static void test_label_escaping(void **state)
{
	(void)state;
	evictd_config *c = config_from("");
	metrics *m = NULL;
	assert_int_equal(metrics_new(&m), 0);
	metrics_eviction_finished(m, "pid.available", true, "a\"b\\c");
	render(m, c, NULL, NULL);
	has("evictd_evictions_total{signal=\"pid.available\",kind=\"hard\",outcome=\"a\\\"b\\\\c\"} 1");
	metrics_free(m);
	config_free(c);
}

static void test_update_writes_on_change_only(void **state)
{
	(void)state;
	char path[PATH_MAX], conf[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/evictd.prom", tmpdir);
	snprintf(conf, sizeof(conf), "[agent]\nmetrics-file = %s\n", path);
	evictd_config *c = config_from(conf);
	metrics *m = NULL;
	struct stat a, b;
	assert_int_equal(metrics_new(&m), 0);
	node_signals n = { 0 };
	n.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = true, .available = 1 << 30, .capacity = 8LL << 30 };

	assert_int_equal(metrics_update(m, c, &n, NULL, 0, 1000000), 0);
	assert_int_equal(stat(path, &a), 0);
	assert_int_equal(a.st_mode & 0777, 0644);
	/* an observed value moves: not before the refresh period */
	n.s[SIGNAL_MEMORY_AVAILABLE].available -= 4096;
	assert_int_equal(metrics_update(m, c, &n, NULL, 0, 2000000), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	/* an eviction: at once */
	metrics_eviction_started(m);
	assert_int_equal(metrics_update(m, c, &n, NULL, 1, 2100000), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_int_not_equal(a.st_ino, b.st_ino);
	/* nothing changed after the refresh period: rendered, identical, not rewritten */
	a = b;
	assert_int_equal(metrics_update(m, c, &n, NULL, 1, 2100000 + METRICS_REFRESH_USEC), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	metrics_free(m);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_update_writes_on_change_only),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
