/*
 * The Kubernetes write bodies (kube/k8s_body): each parsed back, with the fields the API server
 * checks (type meta, metadata, preconditions, grace period, condition, Event regarding/note/series),
 * hostile strings (quotes, control bytes, bytes that are not UTF-8) and the size bound.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "k8s_body.h"

#define T0 1714557600123456789LL /* 2024-05-01T10:00:00.123456789Z */

#define GET(v, ...) yajl_tree_get(v, (const char *[]){ __VA_ARGS__, NULL }, yajl_t_any)
#define STR(v, ...) YAJL_GET_STRING(GET(v, __VA_ARGS__))

/* body parsed back; the text is freed */
static yajl_val parse(char *body)
{
	char err[256];
	assert_non_null(body);
	yajl_val v = yajl_tree_parse(body, err, sizeof(err));
	if (!v)
		fail_msg("not JSON (%s): %s", err, body);
	free(body);
	assert_true(YAJL_IS_OBJECT(v));
	return v;
}

static void assert_str(yajl_val v, const char *want)
{
	assert_non_null(v);
	assert_true(YAJL_IS_STRING(v));
	assert_string_equal(YAJL_GET_STRING(v), want);
}

static void assert_int(yajl_val v, long long want)
{
	assert_non_null(v);
	assert_true(YAJL_IS_INTEGER(v));
	assert_int_equal(YAJL_GET_INTEGER(v), want);
}

static yajl_val only_condition(yajl_val v)
{
	yajl_val cs = GET(v, "status", "conditions");
	assert_true(YAJL_IS_ARRAY(cs));
	assert_int_equal(YAJL_GET_ARRAY(cs)->len, 1);
	return YAJL_GET_ARRAY(cs)->values[0];
}

static void test_binding(void **state)
{
	(void)state;
	yajl_val v = parse(k8s_body_binding("default", "web-0", "uid-1", "node-a"));
	assert_str(GET(v, "apiVersion"), "v1");
	assert_str(GET(v, "kind"), "Binding");
	assert_str(GET(v, "metadata", "namespace"), "default");
	assert_str(GET(v, "metadata", "name"), "web-0");
	assert_str(GET(v, "metadata", "uid"), "uid-1");
	assert_str(GET(v, "target", "kind"), "Node");
	assert_str(GET(v, "target", "name"), "node-a");
	yajl_tree_free(v);
}

static void test_disruption_condition(void **state)
{
	(void)state;
	k8s_body_condition c = { "DisruptionTarget", "True", "TerminationByKubelet", "The node was low on memory.", T0 };
	yajl_val v = parse(k8s_body_pod_status_patch("uid-1", &c, false, NULL));
	assert_str(GET(v, "metadata", "uid"), "uid-1");
	yajl_val cond = only_condition(v);
	assert_str(GET(cond, "type"), "DisruptionTarget");
	assert_str(GET(cond, "status"), "True");
	assert_str(GET(cond, "reason"), "TerminationByKubelet");
	assert_str(GET(cond, "message"), "The node was low on memory.");
	assert_str(GET(cond, "lastTransitionTime"), "2024-05-01T10:00:00Z");
	assert_true(YAJL_IS_NULL(GET(cond, "lastProbeTime")));
	assert_null(GET(v, "status", "nominatedNodeName")); /* not touched */
	yajl_tree_free(v);
}

static void test_unschedulable_and_nomination(void **state)
{
	(void)state;
	/* a new message on a condition already there: no lastTransitionTime, the old one stays */
	k8s_body_condition c = { "PodScheduled", "False", "Unschedulable", "0/3 nodes are available", 0 };
	yajl_val v = parse(k8s_body_pod_status_patch("uid-2", &c, true, "node-b"));
	assert_null(GET(only_condition(v), "lastTransitionTime"));
	assert_str(GET(only_condition(v), "reason"), "Unschedulable");
	assert_str(GET(v, "status", "nominatedNodeName"), "node-b");
	yajl_tree_free(v);

	/* kube's clearNominatedNodeName: null, and no condition */
	v = parse(k8s_body_pod_status_patch("uid-2", NULL, true, NULL));
	assert_str(GET(v, "metadata", "uid"), "uid-2");
	assert_true(YAJL_IS_NULL(GET(v, "status", "nominatedNodeName")));
	assert_null(GET(v, "status", "conditions"));
	yajl_tree_free(v);
}

static void test_node_conditions(void **state)
{
	(void)state;
	k8s_body_node_condition c[] = {
		{ "EvictdMemoryPressure", "True", "MemoryPressure", "memory.available < 100Mi", "2024-05-01T10:00:05Z",
		  "2024-05-01T09:00:00Z" },
		{ "EvictdDiskPressure", "False", "NoDiskPressure", "", "2024-05-01T10:00:05Z", "2024-05-01T08:00:00Z" },
	};
	yajl_val v = parse(k8s_body_node_conditions_patch(c, 2));
	yajl_val cs = GET(v, "status", "conditions");
	assert_int_equal(YAJL_GET_ARRAY(cs)->len, 2);
	assert_str(GET(YAJL_GET_ARRAY(cs)->values[1], "type"), "EvictdDiskPressure");
	assert_str(GET(YAJL_GET_ARRAY(cs)->values[0], "lastHeartbeatTime"), "2024-05-01T10:00:05Z");
	assert_str(GET(YAJL_GET_ARRAY(cs)->values[0], "lastTransitionTime"), "2024-05-01T09:00:00Z");
	yajl_tree_free(v);
}

static void test_delete_options(void **state)
{
	(void)state;
	yajl_val v = parse(k8s_body_delete_options("uid-3", 30));
	assert_str(GET(v, "apiVersion"), "v1");
	assert_str(GET(v, "kind"), "DeleteOptions");
	assert_int(GET(v, "gracePeriodSeconds"), 30);
	assert_str(GET(v, "preconditions", "uid"), "uid-3");
	yajl_tree_free(v);

	/* no grace period given: the field is absent (0 would be a forced deletion) */
	v = parse(k8s_body_delete_options("uid-3", -1));
	assert_null(GET(v, "gracePeriodSeconds"));
	assert_str(GET(v, "preconditions", "uid"), "uid-3");
	yajl_tree_free(v);
}

static void test_eviction(void **state)
{
	(void)state;
	yajl_val v = parse(k8s_body_eviction("prod", "db-0", "uid-4", 1));
	assert_str(GET(v, "apiVersion"), "policy/v1");
	assert_str(GET(v, "kind"), "Eviction");
	assert_str(GET(v, "metadata", "name"), "db-0");
	assert_str(GET(v, "metadata", "namespace"), "prod");
	assert_str(GET(v, "deleteOptions", "preconditions", "uid"), "uid-4");
	assert_int(GET(v, "deleteOptions", "gracePeriodSeconds"), 1);
	assert_null(GET(v, "deleteOptions", "kind"));
	yajl_tree_free(v);

	v = parse(k8s_body_eviction("prod", "db-0", "uid-4", -1));
	assert_null(GET(v, "deleteOptions", "gracePeriodSeconds"));
	yajl_tree_free(v);
}

static void test_event_v1(void **state)
{
	(void)state;
	char name[300];
	k8s_body_event e = { .ns = "default", .name = "low", .uid = "uid-5", .related_ns = "default",
		             .related_name = "high", .related_uid = "uid-6", .type = "Normal", .reason = "Preempted",
		             .action = "Preempting", .note = "Preempted by pod uid-6 on node n1",
		             .controller = "default-scheduler", .instance = "preemptd-a", .now_ns = T0 };
	yajl_val v = parse(k8s_body_event_v1(&e));
	k8s_body_event_name("low", T0, name, sizeof(name));
	assert_string_equal(name, "low.17cb550d9e4e0d15");
	assert_str(GET(v, "apiVersion"), "events.k8s.io/v1");
	assert_str(GET(v, "kind"), "Event");
	assert_str(GET(v, "metadata", "name"), name);
	assert_str(GET(v, "metadata", "namespace"), "default");
	assert_str(GET(v, "eventTime"), "2024-05-01T10:00:00.123456Z");
	assert_str(GET(v, "regarding", "apiVersion"), "v1");
	assert_str(GET(v, "regarding", "kind"), "Pod");
	assert_str(GET(v, "regarding", "name"), "low");
	assert_str(GET(v, "regarding", "namespace"), "default");
	assert_str(GET(v, "regarding", "uid"), "uid-5");
	assert_str(GET(v, "related", "name"), "high");
	assert_str(GET(v, "reason"), "Preempted");
	assert_str(GET(v, "action"), "Preempting");
	assert_str(GET(v, "note"), "Preempted by pod uid-6 on node n1");
	assert_str(GET(v, "reportingController"), "default-scheduler");
	assert_str(GET(v, "reportingInstance"), "preemptd-a");
	yajl_tree_free(v);
}

static void test_event_note_cut(void **state)
{
	(void)state;
	char note[2000];
	/* "é" (two bytes) across the cut: it is not split */
	memset(note, 'a', sizeof(note) - 1);
	note[sizeof(note) - 1] = '\0';
	note[1019] = '\xc3';
	note[1020] = '\xa9';
	k8s_body_event e = { .ns = "ns", .name = "p", .uid = "u", .type = "Warning", .reason = "FailedScheduling",
		             .action = "Scheduling", .note = note, .controller = "c", .instance = "i", .now_ns = T0 };
	yajl_val v = parse(k8s_body_event_v1(&e));
	const char *got = STR(v, "note");
	assert_non_null(got);
	assert_true(strlen(got) <= 1024);
	assert_int_equal(strlen(got), 1019 + 4);
	assert_string_equal(got + 1019, " ...");
	yajl_tree_free(v);
}

static void test_event_series(void **state)
{
	(void)state;
	yajl_val v = parse(k8s_body_event_series_patch(3, T0));
	assert_int(GET(v, "series", "count"), 3);
	assert_str(GET(v, "series", "lastObservedTime"), "2024-05-01T10:00:00.123456Z");
	yajl_tree_free(v);
}

static void test_core_event(void **state)
{
	(void)state;
	const char *annotations[] = { "offending_containers", "app", "starved_resource", "memory", NULL };
	k8s_body_core_event e = { .ns = "default", .name = "web.1", .object_kind = "Pod", .object_name = "web",
		                  .object_ns = "default", .object_uid = "uid-7", .type = "Warning", .reason = "Evicted",
		                  .message = "The node was low on resource: memory.", .component = "evictd",
		                  .host = "node-a", .first_time = "2024-05-01T10:00:00Z",
		                  .last_time = "2024-05-01T10:00:00Z", .annotations = annotations };
	yajl_val v = parse(k8s_body_core_event_v1(&e));
	assert_str(GET(v, "apiVersion"), "v1");
	assert_str(GET(v, "kind"), "Event");
	assert_str(GET(v, "metadata", "name"), "web.1");
	assert_str(GET(v, "metadata", "annotations", "starved_resource"), "memory");
	assert_str(GET(v, "involvedObject", "kind"), "Pod");
	assert_str(GET(v, "involvedObject", "namespace"), "default");
	assert_str(GET(v, "involvedObject", "uid"), "uid-7");
	assert_str(GET(v, "reason"), "Evicted");
	assert_str(GET(v, "message"), "The node was low on resource: memory.");
	assert_str(GET(v, "source", "component"), "evictd");
	assert_str(GET(v, "source", "host"), "node-a");
	assert_str(GET(v, "reportingInstance"), "node-a");
	assert_int(GET(v, "count"), 1);
	yajl_tree_free(v);

	/* a Node's Event: its reference has no namespace, and no annotations */
	e = (k8s_body_core_event){ .ns = "default", .name = "node-a.1", .object_kind = "Node", .object_name = "node-a",
		                   .object_uid = "node-a", .type = "Warning", .reason = "EvictionThresholdMet",
		                   .message = "m", .component = "evictd", .host = "node-a", .first_time = "t",
		                   .last_time = "t" };
	v = parse(k8s_body_core_event_v1(&e));
	assert_null(GET(v, "involvedObject", "namespace"));
	assert_null(GET(v, "metadata", "annotations"));
	assert_str(GET(v, "involvedObject", "kind"), "Node");
	yajl_tree_free(v);
}

static void test_lease(void **state)
{
	(void)state;
	k8s_body_lease l = { .ns = "kube-system", .name = "preemptd", .resource_version = "17", .holder = "a",
		             .duration_s = 15, .transitions = 2, .acquire_time = "t1", .renew_time = "t2" };
	yajl_val v = parse(k8s_body_lease_v1(&l));
	assert_str(GET(v, "apiVersion"), "coordination.k8s.io/v1");
	assert_str(GET(v, "metadata", "resourceVersion"), "17");
	assert_str(GET(v, "spec", "holderIdentity"), "a");
	assert_int(GET(v, "spec", "leaseDurationSeconds"), 15);
	assert_int(GET(v, "spec", "leaseTransitions"), 2);
	yajl_tree_free(v);
}

/* A pod name of 253 characters still makes an Event name the API server takes (253 at most). */
static void test_event_name_bound(void **state)
{
	(void)state;
	char obj[254], name[300];
	memset(obj, 'p', 253);
	obj[253] = '\0';
	k8s_body_event_name(obj, T0, name, sizeof(name));
	assert_int_equal(strlen(name), 253);
	assert_string_equal(name + 253 - 17, ".17cb550d9e4e0d15");
	k8s_body_event_name("short", T0, name, sizeof(name));
	assert_string_equal(name, "short.17cb550d9e4e0d15");
}

/* Quotes, backslashes, newlines, control bytes and an injection attempt come back as they went. */
static void test_hostile_strings(void **state)
{
	(void)state;
	const char *hostile = "\"},\"kind\":\"Pod\",\"x\":{\"a\\\n\t\r\x01\x1f\x7f </script> é 日本";
	k8s_body_condition c = { "DisruptionTarget", "True", "TerminationByKubelet", hostile, T0 };
	char *body = k8s_body_pod_status_patch(hostile, &c, false, NULL);
	assert_non_null(body);
	for (const char *p = body; *p; p++)
		assert_true((unsigned char)*p >= 0x20); /* every control byte escaped */
	yajl_val v = parse(body);
	assert_str(GET(v, "metadata", "uid"), hostile);
	assert_str(GET(only_condition(v), "message"), hostile);
	assert_null(GET(v, "kind"));
	yajl_tree_free(v);
}

/* A byte that is not UTF-8 becomes U+FFFD, one for each such byte, as the API server's decoder
 * reads it; the write is not lost. */
static void test_invalid_utf8(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "a\xff" "b", "a\xef\xbf\xbd" "b" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },             /* overlong "/" */
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* a surrogate */
		{ "x\xe6\x97", "x\xef\xbf\xbd\xef\xbf\xbd" },           /* cut short at the end */
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" }, /* past U+10FFFF */
		{ "ok é \xf0\x9f\x98\x80", "ok é \xf0\x9f\x98\x80" },   /* valid: untouched */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		yajl_val v = parse(k8s_body_delete_options(cases[i].in, -1));
		assert_str(GET(v, "preconditions", "uid"), cases[i].want);
		yajl_tree_free(v);
	}
}

/* No body grows past K8S_BODY_MAX: NULL with E2BIG instead; just under it is fine. */
static void test_size_bound(void **state)
{
	(void)state;
	size_t n = K8S_BODY_MAX;
	char *big = malloc(n + 1);
	assert_non_null(big);
	memset(big, 'm', n);
	big[n] = '\0';
	k8s_body_condition c = { "DisruptionTarget", "True", "TerminationByKubelet", big, T0 };

	errno = 0;
	assert_null(k8s_body_pod_status_patch("u", &c, false, NULL));
	assert_int_equal(errno, E2BIG);

	/* control bytes grow six times when escaped: the bound counts that */
	memset(big, '\x01', n / 5);
	big[n / 5] = '\0';
	errno = 0;
	assert_null(k8s_body_pod_status_patch("u", &c, false, NULL));
	assert_int_equal(errno, E2BIG);

	memset(big, 'm', n / 2);
	big[n / 2] = '\0';
	yajl_val v = parse(k8s_body_pod_status_patch("u", &c, false, NULL));
	const char *got = STR(only_condition(v), "message");
	assert_non_null(got);
	assert_int_equal(strlen(got), n / 2);
	yajl_tree_free(v);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binding),
		cmocka_unit_test(test_disruption_condition),
		cmocka_unit_test(test_unschedulable_and_nomination),
		cmocka_unit_test(test_node_conditions),
		cmocka_unit_test(test_delete_options),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_event_v1),
		cmocka_unit_test(test_event_note_cut),
		cmocka_unit_test(test_event_series),
		cmocka_unit_test(test_core_event),
		cmocka_unit_test(test_lease),
		cmocka_unit_test(test_event_name_bound),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_size_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
