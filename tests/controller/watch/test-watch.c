/* The watch without a server: recorded watch streams replayed into the model (the bytes the API
 * server would send, in any chunking) — nodes, classes, budgets and pods added, modified and
 * deleted; bookmarks; an object the decoder refuses skipped and counted once per object; a pod
 * without spec.priority admitted through its class; the lists asked and answered in pages, and a
 * relist after 410 Gone that keeps the queue and the nominations and drops what left meanwhile. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "journal.h"
#include "watch.h"

#define T0 (1714557600LL * 1000000000LL)

struct world {
	queue *q;
	cluster *c;
	watch *w;
};

static void setup(struct world *w)
{
	cluster_opts co = { .scheduler_name = "preemptd" };
	journal_setup(LOGGING_STDERR, "test-watch");
	assert_int_equal(queue_new(NULL, T0, &w->q), 0);
	assert_int_equal(cluster_new(w->q, &co, &w->c), 0);
	assert_int_equal(watch_new(NULL, NULL, w->c, NULL, &w->w), 0);
}

static void teardown(struct world *w)
{
	watch_free(w->w);
	cluster_free(w->c);
	queue_free(w->q);
}

/* Replays text byte by byte when one_by_one, else whole. */
static void replay(struct world *w, cluster_kind k, const char *text, bool one_by_one)
{
	size_t n = strlen(text);
	if (!one_by_one) {
		assert_int_equal(watch_replay(w->w, k, text, n), 0);
		return;
	}
	for (size_t i = 0; i < n; i++)
		assert_int_equal(watch_replay(w->w, k, text + i, 1), 0);
}

static const char *node_of(struct world *w, const char *ns, const char *name)
{
	pp_pod_info pi;
	if (pp_cluster_pod_info(queue_cluster(w->q), ns, name, &pi) < 0)
		return "(absent)";
	return pi.node_name ? pi.node_name : "";
}

#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}\n"
#define NODE(name, cpu)                                                                                         \
	"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name "\",\"resourceVersion\":\"5\"}," \
	"\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}"
#define POD(name, node, cpu, rv)                                                                               \
	"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"web\",\"name\":\"" name "\","     \
	"\"uid\":\"uid-" name "\",\"resourceVersion\":\"" rv "\"},\"spec\":{\"nodeName\":\"" node "\","          \
	"\"schedulerName\":\"default-scheduler\",\"priority\":0,\"containers\":[{\"name\":\"c\",\"resources\":" \
	"{\"requests\":{\"cpu\":\"" cpu "\"}}}]},\"status\":{\"phase\":\"Running\"}}"

static void test_stream_applied(void **state)
{
	(void)state;
	struct world w;
	watch_stats st;
	setup(&w);
	replay(&w, CLUSTER_NODES, EV("ADDED", NODE("n1", "4")) EV("ADDED", NODE("n2", "4")), true);
	replay(&w, CLUSTER_NODES, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Node\",\"metadata\":"
	                          "{\"resourceVersion\":\"9\"}}}\n", false);
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 2);
	replay(&w, CLUSTER_PODS, EV("ADDED", POD("a", "n1", "1", "10")) EV("ADDED", POD("b", "n2", "1", "11")), true);
	assert_string_equal(node_of(&w, "web", "a"), "n1");
	replay(&w, CLUSTER_PODS, EV("DELETED", POD("a", "n1", "1", "12")), false);
	assert_string_equal(node_of(&w, "web", "a"), "(absent)");
	replay(&w, CLUSTER_NODES, EV("DELETED", NODE("n1", "4")), false);
	assert_int_equal(pp_cluster_node_count(queue_cluster(w.q)), 1);
	watch_get_stats(w.w, &st);
	assert_int_equal(st.events[CLUSTER_PODS], 3);
	assert_int_equal(st.events[CLUSTER_NODES], 3);
	assert_int_equal(st.refused[CLUSTER_PODS], 0);
	teardown(&w);
}

/* A pod with a bad quantity is refused each time it comes, told once; the good ones go on. */
static void test_bad_object_skipped(void **state)
{
	(void)state;
	struct world w;
	watch_stats st;
	setup(&w);
	replay(&w, CLUSTER_NODES, EV("ADDED", NODE("n1", "4")), false);
	replay(&w, CLUSTER_PODS, EV("ADDED", POD("bad", "n1", "1x", "10")) EV("MODIFIED", POD("bad", "n1", "1x", "11"))
	                             EV("ADDED", POD("good", "n1", "1", "12")),
	       false);
	assert_string_equal(node_of(&w, "web", "good"), "n1");
	assert_string_equal(node_of(&w, "web", "bad"), "(absent)");
	watch_get_stats(w.w, &st);
	assert_int_equal(st.refused[CLUSTER_PODS], 2);
	/* told once already: the model knows */
	assert_false(cluster_first_refusal(w.c, CLUSTER_PODS, "web", "bad"));
	teardown(&w);
}

/* A pod without spec.priority (an old API server, a hand-made object) gets its class's. */
static void test_priority_from_class(void **state)
{
	(void)state;
	struct world w;
	pp_pod_info pi;
	setup(&w);
	replay(&w, CLUSTER_CLASSES, EV("ADDED", "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\","
	                                        "\"metadata\":{\"name\":\"gold\",\"uid\":\"u\"},\"value\":1000}"),
	       false);
	replay(&w, CLUSTER_PODS, EV("ADDED", "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"web\",\"name\":\"p\","
	                                     "\"uid\":\"u-p\"},\"spec\":{\"schedulerName\":\"preemptd\","
	                                     "\"priorityClassName\":\"gold\",\"containers\":[{\"name\":\"c\"}]}}"),
	       false);
	assert_int_equal(pp_cluster_pod_info(queue_cluster(w.q), "web", "p", &pi), 0);
	assert_int_equal(pi.priority, 1000);
	teardown(&w);
}

/* The body of the call the reflector of k asks now, and its end with HTTP 200. */
static void answer(struct world *w, cluster_kind k, const char *body)
{
	assert_int_equal(watch_replay(w->w, k, body, strlen(body)), 0);
	assert_int_equal(watch_replay_end(w->w, k, 200), 0);
}

static void assert_asked(struct world *w, cluster_kind k, const char *query)
{
	const char *rq = watch_replay_request(w->w, k);
	assert_non_null(rq);
	if (!strstr(rq, query))
		fail_msg("asked %s, not ...%s", rq, query);
}

#define PENDING(name, nominated, rv)                                                                            \
	"{\"metadata\":{\"namespace\":\"web\",\"name\":\"" name "\",\"uid\":\"uid-" name "\",\"resourceVersion\":" \
	"\"" rv "\"},\"spec\":{\"schedulerName\":\"preemptd\",\"priority\":10,\"containers\":[{\"name\":\"c\","  \
	"\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]},\"status\":{\"phase\":\"Pending\",\"nominatedNodeName\":" \
	"\"" nominated "\"}}"
#define LIST(kind, rv, cont, items)                                                                             \
	"{\"kind\":\"" kind "\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"" rv "\"" cont "},"     \
	"\"items\":[" items "]}"

/* Start-up lists every kind as client-go asks (resourceVersion=0 with limit, then continue alone),
 * the pods last; a 410 on the pods' watch relists from the last resourceVersion seen, in pages
 * since the server paged: the model keeps its view until the last page, then drops the pods the
 * relist did not bring, and the preemptor waiting for its victims keeps its queue place and its
 * nomination. */
static void test_relist_after_gone_in_pages(void **state)
{
	(void)state;
	struct world w;
	pp_pod_info pi;
	queue_counts qc;
	setup(&w);
	watch_start(w.w);
	assert_asked(&w, CLUSTER_CLASSES, "/priorityclasses?resourceVersion=0&limit=500");
	assert_null(watch_replay_request(w.w, CLUSTER_PODS));
	answer(&w, CLUSTER_CLASSES, LIST("PriorityClassList", "3", "", ""));
	assert_asked(&w, CLUSTER_CLASSES, "watch=1&resourceVersion=3&");
	assert_asked(&w, CLUSTER_NODES, "/nodes?resourceVersion=0&limit=500");
	answer(&w, CLUSTER_NODES, LIST("NodeList", "5", "", NODE("n1", "4")));
	answer(&w, CLUSTER_PDBS, LIST("PodDisruptionBudgetList", "5", "", ""));
	assert_asked(&w, CLUSTER_PODS, "status.phase%21%3DFailed&resourceVersion=0&limit=500");
	answer(&w, CLUSTER_PODS, LIST("PodList", "20", ",\"continue\":\"c1\"", POD("a", "n1", "900m", "10") ","
	                                                                          POD("b", "n1", "900m", "11")));
	assert_asked(&w, CLUSTER_PODS, "status.phase%21%3DFailed&limit=500&continue=c1");
	assert_null(strstr(watch_replay_request(w.w, CLUSTER_PODS), "resourceVersion"));
	answer(&w, CLUSTER_PODS, LIST("PodList", "20", "", PENDING("p", "n1", "19")));
	assert_true(watch_synced(w.w));
	assert_asked(&w, CLUSTER_PODS, "watch=1&resourceVersion=20&");

	/* the watch brings a change, then says 410 */
	replay(&w, CLUSTER_PODS, EV("MODIFIED", POD("a", "n1", "900m", "21")), false);
	queue_get_counts(w.q, &qc);
	size_t queued = qc.active + qc.backoff + qc.unschedulable;
	assert_int_equal(queued, 1);
	replay(&w, CLUSTER_PODS, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
	                         "\"Failure\",\"reason\":\"Expired\",\"code\":410}}\n", false);
	assert_int_equal(watch_replay_end(w.w, CLUSTER_PODS, 200), 0);
	assert_asked(&w, CLUSTER_PODS, "status.phase%21%3DFailed&resourceVersion=21&limit=500");
	answer(&w, CLUSTER_PODS, LIST("PodList", "30", ",\"continue\":\"c2\"", PENDING("p", "n1", "19")));
	/* b is not in the first page: gone only once the list is whole */
	assert_string_equal(node_of(&w, "web", "b"), "n1");
	answer(&w, CLUSTER_PODS, LIST("PodList", "30", "", POD("a", "n1", "900m", "21")));
	assert_asked(&w, CLUSTER_PODS, "watch=1&resourceVersion=30&");
	assert_string_equal(node_of(&w, "web", "b"), "(absent)");
	assert_string_equal(node_of(&w, "web", "a"), "n1");
	assert_int_equal(pp_cluster_pod_info(queue_cluster(w.q), "web", "p", &pi), 0);
	assert_non_null(pi.nominated_node_name);
	assert_string_equal(pi.nominated_node_name, "n1");
	queue_get_counts(w.q, &qc);
	assert_int_equal(qc.active + qc.backoff + qc.unschedulable, queued);
	watch_stats st;
	watch_get_stats(w.w, &st);
	assert_int_equal(st.lists[CLUSTER_PODS], 2);
	assert_int_equal(st.restarts[CLUSTER_PODS], 1);
	teardown(&w);
}

/* A list answered whole, as kube-apiserver's watch cache answers resourceVersion=0 whatever the
 * limit (and a relist from a resourceVersion, asked without one): at 150,000 pods, or 20,000 real
 * ones with their managedFields, it is well over 64 MiB; decoded one object at a time, it is
 * taken whole, not refused and retried for ever. */
static void test_whole_list_over_64_mib(void **state)
{
	(void)state;
	enum { PODS = 1100, NOTE = 62 * 1024 };
	struct world w;
	char *note = malloc(NOTE + 1), *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	assert_non_null(note);
	assert_non_null(f);
	memset(note, 'x', NOTE);
	note[NOTE] = '\0';
	fputs(LIST("PodList", "9", "", ""), f);
	fseek(f, -2, SEEK_CUR); /* into "items":[ */
	for (int i = 0; i < PODS; i++)
		fprintf(f, "%s{\"metadata\":{\"namespace\":\"web\",\"name\":\"p%04d\",\"uid\":\"u%04d\",\"annotations\":"
		        "{\"note\":\"%s\"}},\"spec\":{\"nodeName\":\"n1\",\"schedulerName\":\"default-scheduler\","
		        "\"priority\":0,\"containers\":[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Running\"}}",
		        i ? "," : "", i, i, note);
	fputs("]}", f);
	fclose(f);
	free(note);
	assert_true(len > ((size_t)64 << 20));

	setup(&w);
	watch_start(w.w);
	answer(&w, CLUSTER_CLASSES, LIST("PriorityClassList", "3", "", ""));
	answer(&w, CLUSTER_NODES, LIST("NodeList", "5", "", NODE("n1", "4")));
	answer(&w, CLUSTER_PDBS, LIST("PodDisruptionBudgetList", "5", "", ""));
	for (size_t off = 0; off < len; off += 1 << 20)
		assert_int_equal(watch_replay(w.w, CLUSTER_PODS, body + off, len - off < (1u << 20) ? len - off : 1u << 20), 0);
	free(body);
	assert_int_equal(watch_replay_end(w.w, CLUSTER_PODS, 200), 0);
	assert_true(watch_synced(w.w));
	assert_int_equal(pp_cluster_pod_count(queue_cluster(w.q)), PODS);
	assert_asked(&w, CLUSTER_PODS, "watch=1&resourceVersion=9&");
	teardown(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_applied),
		cmocka_unit_test(test_bad_object_skipped),
		cmocka_unit_test(test_priority_from_class),
		cmocka_unit_test(test_relist_after_gone_in_pages),
		cmocka_unit_test(test_whole_list_over_64_mib),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
