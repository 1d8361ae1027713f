/* SPDX-License-Identifier: MIT */
/*
 * What the daemon remembers of finished evictions (podmemo.h): a failing pod backs off with a
 * doubling, capped wait and is reported once; an evicted pod stays excluded while its cgroup is
 * empty, even though its directory remains, and becomes a candidate again when processes come
 * back; entries go with their pod. Fixture cgroup directories (cgroup.events written by hand).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "podmemo.h"

#define SEC 1000000ULL

static char dir[64];

static void events(const char *text)
{
	char p[128];
	snprintf(p, sizeof(p), "%s/cgroup.events", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static evict_info info(evict_outcome o)
{
	return (evict_info){ .uid = "u1", .namespace_ = "ns", .name = "p", .cgroup_path = dir,
	                     .signal = "memory.available", .outcome = o };
}

static bool skipped(const pod_memo *m, uint64_t now, const char **why)
{
	const char **uids, **whys;
	size_t n;
	assert_int_equal(pod_memo_skip_list(m, now, &uids, &whys, &n), 0);
	bool found = false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(uids[i], "u1") == 0) {
			found = true;
			*why = whys[i];
		}
	free(uids);
	free(whys);
	return found;
}

static void test_failures_back_off_doubling_capped(void **state)
{
	(void)state;
	pod_memo *m = pod_memo_new();
	evict_info i = info(EVICT_FAILED);
	uint64_t b = 0;
	const char *why;
	assert_int_equal(pod_memo_finished(m, &i, 100 * SEC, 10 * SEC, 35 * SEC, &b), MEMO_FIRST_FAILURE);
	assert_int_equal(b, 10 * SEC);
	assert_true(skipped(m, 109 * SEC, &why));
	assert_non_null(strstr(why, "failed"));
	assert_false(skipped(m, 110 * SEC, &why)); /* due again */
	i.outcome = EVICT_TIMEOUT;
	assert_int_equal(pod_memo_finished(m, &i, 110 * SEC, 10 * SEC, 35 * SEC, &b), MEMO_REPEATED_FAILURE);
	assert_int_equal(b, 20 * SEC);
	assert_int_equal(pod_memo_finished(m, &i, 130 * SEC, 10 * SEC, 35 * SEC, &b), MEMO_REPEATED_FAILURE);
	assert_int_equal(b, 35 * SEC); /* capped */
	assert_int_equal(pod_memo_finished(m, &i, 165 * SEC, 10 * SEC, 35 * SEC, &b), MEMO_REPEATED_FAILURE);
	assert_int_equal(b, 35 * SEC);
	/* hand-overs are not remembered; a dry run's victim is, as if evicted (issue 22) */
	evict_info h = info(EVICT_HANDED_OVER);
	assert_int_equal(pod_memo_finished(m, &h, 0, SEC, SEC, &b), MEMO_IGNORED);
	evict_info d = info(EVICT_DRY);
	d.dry_run = true;
	d.uid = "u2";
	assert_int_equal(pod_memo_finished(m, &d, 0, SEC, SEC, &b), MEMO_DONE);
	pod_memo_free(m);
}

static int restarts, first_restarts;

static void on_restart(const char *uid, const char *cgroup, bool first, void *userdata)
{
	(void)cgroup;
	(void)userdata;
	assert_string_equal(uid, "u1");
	restarts++;
	first_restarts += first;
}

static void test_done_pod_excluded_until_repopulated_or_gone(void **state)
{
	(void)state;
	pod_memo *m = pod_memo_new();
	evict_info i = info(EVICT_DONE);
	const char *why;
	events("populated 0\nfrozen 0\n");
	assert_int_equal(pod_memo_finished(m, &i, 0, SEC, SEC, NULL), MEMO_DONE);
	pod_info pods[1] = { { .cgroup = "x" } };
	snprintf(pods[0].uid, sizeof(pods[0].uid), "u1");
	snapshot snap = { .pods = pods, .n_pods = 1 };
	restarts = 0;
	pod_memo_prune(m, &snap, on_restart, NULL, NULL);
	assert_true(skipped(m, 1000 * SEC, &why)); /* never due while empty */
	assert_non_null(strstr(why, "evicted already"));
	assert_int_equal(restarts, 0);
	events("populated 1\nfrozen 0\n"); /* a container restarted in the pod: a victim stays one */
	pod_memo_prune(m, &snap, on_restart, NULL, NULL);
	pod_memo_prune(m, &snap, on_restart, NULL, NULL);
	assert_int_equal(restarts, 2);     /* to be killed each time... */
	assert_int_equal(first_restarts, 1); /* ...reported once */
	assert_true(skipped(m, 0, &why));  /* never chosen anew */
	assert_int_equal(pod_memo_count(m), 1);
	/* ...unless the API server refused its eviction (a PodDisruptionBudget): then it is a failure
	 * with the retry back-off, and its restarted containers are left alone */
	uint64_t b = 0;
	assert_int_equal(pod_memo_refused(m, "u1", 100 * SEC, 10 * SEC, 40 * SEC, &b), MEMO_FIRST_FAILURE);
	assert_int_equal(b, 10 * SEC);
	assert_true(skipped(m, 105 * SEC, &why));
	assert_non_null(strstr(why, "failed"));
	assert_false(skipped(m, 110 * SEC, &why));
	restarts = 0;
	pod_memo_prune(m, &snap, on_restart, NULL, NULL);
	assert_int_equal(restarts, 0);
	assert_int_equal(pod_memo_refused(m, "nobody", 0, SEC, SEC, &b), MEMO_IGNORED); /* not ours */
	/* a failure then success: done */
	i.outcome = EVICT_FAILED;
	(void)pod_memo_finished(m, &i, 0, SEC, SEC, NULL);
	i.outcome = EVICT_EMPTY;
	assert_int_equal(pod_memo_finished(m, &i, 0, SEC, SEC, NULL), MEMO_DONE);
	snapshot none = { .pods = NULL, .n_pods = 0 };
	pod_memo_prune(m, &none, on_restart, NULL, NULL); /* the pod is gone: so is its entry */
	assert_int_equal(pod_memo_count(m), 0);
	pod_memo_free(m);
}

/*
 * The back-off is the pod's (issue 29): a refused pod killed again and refused again waits twice
 * as long — the kill in between does not reset the count; a refusal heard while its eviction still
 * runs leaves it refused, not "evicted", when that eviction ends; and what a restart restores
 * behaves the same.
 */
static void test_backoff_is_the_pods(void **state)
{
	(void)state;
	pod_memo *m = pod_memo_new();
	evict_info i = info(EVICT_DONE);
	uint64_t b = 0;
	const char *why;
	events("populated 0\nfrozen 0\n");
	assert_int_equal(pod_memo_finished(m, &i, 0, SEC, SEC, NULL), MEMO_DONE);
	assert_int_equal(pod_memo_refused(m, "u1", 10 * SEC, 10 * SEC, 80 * SEC, &b), MEMO_FIRST_FAILURE);
	assert_int_equal(b, 10 * SEC);
	assert_int_equal(pod_memo_finished(m, &i, 30 * SEC, SEC, SEC, NULL), MEMO_DONE); /* killed again */
	assert_int_equal(pod_memo_refused(m, "u1", 31 * SEC, 10 * SEC, 80 * SEC, &b), MEMO_REPEATED_FAILURE);
	assert_int_equal(b, 20 * SEC); /* doubled, not a first refusal again */
	/* refused while the next eviction runs: when it ends, still refused and waiting */
	assert_int_equal(pod_memo_refused_in_flight(m, "u1", dir, 60 * SEC, 10 * SEC, 80 * SEC, &b), MEMO_REPEATED_FAILURE);
	assert_int_equal(b, 40 * SEC);
	assert_int_equal(pod_memo_finished(m, &i, 61 * SEC, 10 * SEC, 80 * SEC, NULL), MEMO_IGNORED);
	assert_true(skipped(m, 99 * SEC, &why));
	assert_non_null(strstr(why, "failed"));
	pod_memo_state st;
	assert_true(pod_memo_get(m, "u1", &st));
	assert_false(st.done);
	assert_int_equal(st.failures, 3);
	assert_int_equal(st.retry_at, 100 * SEC);
	/* a restart: the next process restores it, and the next refusal doubles on */
	pod_memo *n = pod_memo_new();
	assert_int_equal(pod_memo_restore(n, "u1", dir, &st), 0);
	assert_true(skipped(n, 99 * SEC, &why));
	assert_false(skipped(n, 100 * SEC, &why));
	assert_int_equal(pod_memo_refused(n, "u1", 120 * SEC, 10 * SEC, 80 * SEC, &b), MEMO_REPEATED_FAILURE);
	assert_int_equal(b, 80 * SEC); /* the 4th: 80 s, the cap */
	/* restored while the refused eviction was still running: its end leaves it refused */
	pod_memo *o = pod_memo_new();
	pod_memo_state running = { .refused_in_flight = true, .failures = 2, .retry_at = 50 * SEC };
	assert_int_equal(pod_memo_restore(o, "u1", dir, &running), 0);
	assert_int_equal(pod_memo_finished(o, &i, 40 * SEC, 10 * SEC, 80 * SEC, NULL), MEMO_IGNORED);
	assert_true(skipped(o, 45 * SEC, &why));
	assert_non_null(strstr(why, "failed"));
	pod_memo_free(o);
	pod_memo_free(n);
	pod_memo_free(m);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/evictd-podmemo-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failures_back_off_doubling_capped),
		cmocka_unit_test(test_done_pod_excluded_until_repopulated_or_gone),
		cmocka_unit_test(test_backoff_is_the_pods),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	char p[128];
	snprintf(p, sizeof(p), "%s/cgroup.events", dir);
	unlink(p);
	rmdir(dir);
	return r;
}
