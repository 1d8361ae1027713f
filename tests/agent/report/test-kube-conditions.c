/* SPDX-License-Identifier: MIT */
/*
 * evictd's side of its Node conditions: a condition record in the spool when a condition changes
 * (evictd's own type, the kubelet's reason with evictd's prefix, the signals that hold it), every
 * condition once at start, on an orderly stop False only where the pressure is known to be gone
 * (else Unknown, reason EvictdStopped); nothing in dry-run mode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>

#include "agent-test.h"
#include "kube-spool.h"

AGENT_TEST_TMPDIR("kube-conditions")

static char spool[PATH_MAX];

static evictd_config *conf(bool dry_run)
{
	char text[PATH_MAX + 128];
	snprintf(spool, sizeof(spool), "%s/spool", tmpdir);
	snprintf(text, sizeof(text), "[agent]\ndry-run = %s\n[kubernetes]\nenable = yes\nspool-dir = %s\n",
	         dry_run ? "yes" : "no", spool);
	return config_from(text);
}

/* The records' contents in name order, one per line; removes them. */
static unsigned take(char *out, size_t size)
{
	struct dirent **names = NULL;
	int n = scandir(spool, &names, NULL, alphasort);
	unsigned k = 0;
	size_t l = 0;
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		char p[2 * PATH_MAX];
		if (names[i]->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", spool, names[i]->d_name);
			FILE *f = fopen(p, "r");
			assert_non_null(f);
			l += fread(out + l, 1, size - l - 2, f);
			out[l++] = '\n';
			out[l] = '\0';
			fclose(f);
			unlink(p);
			k++;
		}
		free(names[i]);
	}
	free(names);
	return k;
}

static void pressure(evaluation *ev, snapshot *s, bool on)
{
	*ev = (evaluation){ 0 };
	*s = (snapshot){ 0 };
	s->node.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = true, .available = 80LL << 20, .capacity = 16LL << 30 };
	ev->t[THRESHOLD_HARD][SIGNAL_MEMORY_AVAILABLE] =
		(threshold_eval){ .configured = true, .observed = true, .threshold = 625LL << 20, .met = on };
	ev->conditions[CONDITION_MEMORY_PRESSURE] = on;
	ev->condition_changed[CONDITION_MEMORY_PRESSURE] = true;
}

static void test_change_writes_one_record(void **state)
{
	char buf[16384];
	evaluation ev;
	snapshot s;
	(void)state;
	evictd_config *c = conf(false);

	pressure(&ev, &s, true);
	kube_spool_thresholds(c, &ev, &s);
	assert_int_equal(take(buf, sizeof(buf)), 1);
	assert_non_null(strstr(buf, "\"kind\":\"condition\",\"type\":\"EvictdMemoryPressure\",\"status\":\"True\","
	                            "\"reason\":\"EvictdHasInsufficientMemory\""));
	assert_non_null(strstr(buf, "\"message\":\"evictd is evicting pods to relieve MemoryPressure: "
	                            "memory.available 80Mi < 625Mi (hard)\""));
	/* unchanged: nothing */
	ev.condition_changed[CONDITION_MEMORY_PRESSURE] = false;
	kube_spool_thresholds(c, &ev, &s);
	assert_int_equal(take(buf, sizeof(buf)), 0);
	/* cleared */
	pressure(&ev, &s, false);
	kube_spool_thresholds(c, &ev, &s);
	assert_int_equal(take(buf, sizeof(buf)), 1);
	assert_non_null(strstr(buf, "\"status\":\"False\",\"reason\":\"EvictdHasSufficientMemory\""));
	config_free(c);
}

static void test_start_and_stop(void **state)
{
	char buf[16384];
	evaluation ev;
	snapshot s;
	(void)state;
	evictd_config *c = conf(false);

	pressure(&ev, &s, false);
	ev.condition_changed[CONDITION_MEMORY_PRESSURE] = false;
	kube_spool_conditions(c, &ev, &s.node, true);
	assert_int_equal(take(buf, sizeof(buf)), 3); /* every condition, so a stale True is cleared */
	assert_non_null(strstr(buf, "EvictdDiskPressure\",\"status\":\"False\",\"reason\":\"EvictdHasNoDiskPressure\""));
	assert_non_null(strstr(buf, "EvictdPIDPressure\",\"status\":\"False\",\"reason\":\"EvictdHasSufficientPID\""));
	/* an orderly stop without pressure: False where evictd watched and saw none */
	kube_spool_conditions_stopped(c, &ev, &s.node);
	assert_int_equal(take(buf, sizeof(buf)), 3);
	assert_non_null(strstr(buf, "EvictdMemoryPressure\",\"status\":\"False\",\"reason\":\"EvictdStopped\","
	                            "\"message\":\"evictd stopped; no threshold for MemoryPressure was met at its last "
	                            "evaluation\""));
	assert_null(strstr(buf, "\"True\""));
	config_free(c);
}

/*
 * An orderly stop never says False for pressure that may still be there: a condition True at the
 * last evaluation, or one none of whose thresholded signals could be read, says Unknown
 * (EvictdStopped); a condition with no threshold at all was never claimed and stays False.
 */
static void test_stop_with_pressure_is_unknown(void **state)
{
	char buf[16384];
	evaluation ev;
	snapshot s;
	(void)state;
	evictd_config *c = conf(false);

	pressure(&ev, &s, true);
	kube_spool_conditions_stopped(c, &ev, &s.node);
	assert_int_equal(take(buf, sizeof(buf)), 3);
	assert_non_null(strstr(buf, "EvictdMemoryPressure\",\"status\":\"Unknown\",\"reason\":\"EvictdStopped\","
	                            "\"message\":\"evictd stopped while MemoryPressure held (memory.available 80Mi < "
	                            "625Mi (hard)): nothing relieves it until evictd runs again\""));
	/* nodefs was never read in this evaluation: not known to be free of pressure */
	assert_non_null(strstr(buf, "EvictdDiskPressure\",\"status\":\"Unknown\",\"reason\":\"EvictdStopped\","
	                            "\"message\":\"evictd stopped; none of the signals of DiskPressure could be measured"));
	/* no pid.available threshold by default: nothing was watched, nothing was claimed */
	assert_non_null(strstr(buf, "EvictdPIDPressure\",\"status\":\"False\",\"reason\":\"EvictdStopped\""));
	assert_null(strstr(buf, "\"True\""));

	/* within pressure-transition-period: True with no threshold met any more, still Unknown */
	pressure(&ev, &s, false);
	ev.conditions[CONDITION_MEMORY_PRESSURE] = true;
	kube_spool_conditions_stopped(c, &ev, &s.node);
	assert_int_equal(take(buf, sizeof(buf)), 3);
	assert_non_null(strstr(buf, "EvictdMemoryPressure\",\"status\":\"Unknown\",\"reason\":\"EvictdStopped\","
	                            "\"message\":\"evictd stopped while MemoryPressure held (within "
	                            "pressure-transition-period)"));

	/* stopped before any evaluation: nothing measured */
	kube_spool_conditions_stopped(c, &ev, NULL);
	assert_int_equal(take(buf, sizeof(buf)), 3);
	assert_non_null(strstr(buf, "EvictdMemoryPressure\",\"status\":\"Unknown\""));
	config_free(c);
}

static void test_dry_run_writes_nothing(void **state)
{
	char buf[16384];
	evaluation ev;
	snapshot s;
	(void)state;
	evictd_config *c = conf(true);
	pressure(&ev, &s, true);
	kube_spool_thresholds(c, &ev, &s);
	kube_spool_conditions(c, &ev, &s.node, true);
	kube_spool_conditions_stopped(c, &ev, &s.node);
	assert_int_equal(take(buf, sizeof(buf)), 0);
	config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_change_writes_one_record),
		cmocka_unit_test(test_start_and_stop),
		cmocka_unit_test(test_stop_with_pressure_is_unknown),
		cmocka_unit_test(test_dry_run_writes_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
