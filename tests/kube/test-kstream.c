/* kube/kstream: items out of Lists, watch streams and multi-document YAML, one at a time, with
 * their source lines; any chunking gives the same result; hostile input ends in one clear error. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "k8s.h"
#include "kstream.h"

/* Each item summarised as "kind/name@line" (or its type), joined by spaces. */
struct run {
	char items[4096];
	size_t len;
	char *messages;
	int r;
	char rv[64], cont[64];
};

static void summarise(struct run *u, const kval *item)
{
	const kval *kind = kval_get(item, "kind"), *name = kval_get(kval_get(item, "metadata"), "name");
	const kval *type = kval_get(item, "type");
	int n;

	if (type && kval_get(item, "object")) {
		kind = kval_get(kval_get(item, "object"), "kind");
		name = kval_get(kval_get(kval_get(item, "object"), "metadata"), "name");
		n = snprintf(u->items + u->len, sizeof(u->items) - u->len, "%s%s:", u->len ? " " : "", kval_str(type));
		u->len += (size_t)n;
	}
	if (kind || name)
		n = snprintf(u->items + u->len, sizeof(u->items) - u->len, "%s%s/%s@%u",
		             u->len && u->items[u->len - 1] != ':' ? " " : "", kval_str(kind), kval_str(name),
		             kval_line(item));
	else
		n = snprintf(u->items + u->len, sizeof(u->items) - u->len, "%s(%s)@%u", u->len ? " " : "",
		             kval_kind_name(item), kval_line(item));
	u->len += (size_t)n;
}

static int on_item(void *userdata, const kval *item)
{
	summarise(userdata, item);
	return 0;
}

/* Feeds text in pieces of `chunk` bytes (0: whole). */
static void run(struct run *u, kstream_format fmt, const char *name, const char *text, size_t len, size_t chunk)
{
	size_t size = 0;
	FILE *f;
	kstream *s = NULL;
	diag d;

	memset(u, 0, sizeof(*u));
	assert_non_null(f = open_memstream(&u->messages, &size));
	diag_init(&d, f);
	assert_int_equal(kstream_new(&s, fmt, name, &d, on_item, u), 0);
	if (!chunk)
		chunk = len ? len : 1;
	u->r = 0;
	for (size_t off = 0; off < len && u->r == 0; off += chunk)
		u->r = kstream_feed(s, text + off, len - off < chunk ? len - off : chunk);
	if (u->r == 0)
		u->r = kstream_end(s);
	if (kstream_list_resource_version(s))
		snprintf(u->rv, sizeof(u->rv), "%s", kstream_list_resource_version(s));
	if (kstream_list_continue(s))
		snprintf(u->cont, sizeof(u->cont), "%s", kstream_list_continue(s));
	kstream_free(s);
	fclose(f);
}

static void done(struct run *u)
{
	free(u->messages);
}

#define RUN(u, fmt, name, lit) run(u, fmt, name, lit, sizeof(lit) - 1, 0)

/* kubectl prints items before kind and metadata; the API server after. Every chunking agrees. */
static void test_list_items_one_by_one(void **state)
{
	static const char kubectl[] =
		"{\n"
		"    \"apiVersion\": \"v1\",\n"
		"    \"items\": [\n"
		"        {\n"
		"            \"apiVersion\": \"v1\",\n"
		"            \"kind\": \"Pod\",\n"
		"            \"metadata\": {\"name\": \"a\"}\n"
		"        },\n"
		"        {\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}}\n"
		"    ],\n"
		"    \"kind\": \"List\",\n"
		"    \"metadata\": {\"resourceVersion\": \"\"}\n"
		"}\n";
	static const char api[] =
		"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"4242\",\"continue\":\"tok\"},\n"
		"\"items\":[{\"metadata\":{\"name\":\"p1\"}},{\"metadata\":{\"name\":\"p2\"}}]}";
	struct run u;
	(void)state;

	for (size_t chunk = 0; chunk < 40; chunk = chunk ? chunk * 2 + 1 : 1) {
		run(&u, KSTREAM_AUTO, "l.json", kubectl, sizeof(kubectl) - 1, chunk);
		assert_int_equal(u.r, 0);
		assert_string_equal(u.messages, "");
		assert_string_equal(u.items, "Pod/a@5 Node/n1@9");
		assert_string_equal(u.rv, "");
		done(&u);

		run(&u, KSTREAM_JSON, "api", api, sizeof(api) - 1, chunk);
		assert_int_equal(u.r, 0);
		assert_string_equal(u.items, "/p1@2 /p2@2");
		assert_string_equal(u.rv, "4242");
		assert_string_equal(u.cont, "tok");
		done(&u);
	}

	/* a kind that came first and is no List: one item, items and all */
	RUN(&u, KSTREAM_AUTO, "x.json", "{\"kind\": \"Thing\", \"metadata\": {\"name\": \"t\"}, \"items\": [1, 2]}");
	assert_string_equal(u.items, "Thing/t@1");
	done(&u);
	/* a kind after the items that is no List: read as a List, with a warning */
	RUN(&u, KSTREAM_AUTO, "y.json", "{\"items\": [{\"kind\": \"Pod\"}],\n\"kind\": \"Thing\"}");
	assert_string_equal(u.items, "Pod/@1");
	assert_string_equal(u.messages, "y.json:1: warning: kind Thing has a top-level \"items\" list: read as a List\n");
	done(&u);
}

/* Watch streams: newline-delimited events, one item each; YAML: one item per document. */
static void test_watch_and_documents(void **state)
{
	static const char watch[] =
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}}\n"
		"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}}\n"
		"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"9\"}}}\n";
	static const char docs[] =
		"kind: Pod\nmetadata: {name: a}\n---\n---\n# comment\nkind: Node\nmetadata:\n  name: n\n"
		"---\napiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: b}\n";
	struct run u;
	(void)state;

	for (size_t chunk = 0; chunk < 64; chunk = chunk ? chunk * 3 : 1) {
		run(&u, KSTREAM_JSON, "watch", watch, sizeof(watch) - 1, chunk);
		assert_int_equal(u.r, 0);
		assert_string_equal(u.items, "ADDED:Pod/a@1 MODIFIED:Pod/a@2 BOOKMARK:Pod/@3");
		done(&u);
		run(&u, KSTREAM_AUTO, "m.yaml", docs, sizeof(docs) - 1, chunk);
		assert_int_equal(u.r, 0);
		assert_string_equal(u.messages, "");
		assert_string_equal(u.items, "Pod/a@1 (null)@0 Node/n@6 Pod/b@13");
		done(&u);
	}
	/* flow YAML that looks like JSON at first: read as YAML */
	RUN(&u, KSTREAM_AUTO, "f.yaml", "{kind: Pod, metadata: {name: f}}\n");
	assert_int_equal(u.r, 0);
	assert_string_equal(u.messages, "");
	assert_string_equal(u.items, "Pod/f@1");
	done(&u);
}

/* Syntax, truncation, depth, duplicate keys, aliases: file:line and what is wrong. */
static void test_errors(void **state)
{
	struct run u;
	char *deep;
	(void)state;

	RUN(&u, KSTREAM_JSON, "cut.json", "{\"items\": [{\"kind\": \"Pod\"},\n{\"kind\": ");
	assert_int_equal(u.r, -EINVAL);
	assert_string_equal(u.items, "Pod/@1");
	assert_string_equal(u.messages, "cut.json:2: syntax error: premature EOF\n");
	done(&u);

	RUN(&u, KSTREAM_JSON, "bad.json", "{\"a\": 1}\n{\"b\": tru}\n");
	assert_int_equal(u.r, -EINVAL);
	assert_non_null(strstr(u.messages, "bad.json:2: syntax error: "));
	done(&u);

	/* a duplicate key drops its object, the stream goes on */
	RUN(&u, KSTREAM_JSON, "dup.json", "{\"kind\": \"List\", \"items\": [{\"kind\": \"Pod\",\n \"kind\": \"Node\"}, {\"kind\": \"Pod\"}]}");
	assert_int_equal(u.r, 0);
	assert_string_equal(u.items, "Pod/@2");
	assert_string_equal(u.messages, "dup.json:2: duplicate key \"kind\"\n");
	done(&u);

	deep = malloc(2 * 100 + 1);
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	deep[200] = 0;
	run(&u, KSTREAM_JSON, "deep.json", deep, 200, 0);
	assert_int_equal(u.r, -EINVAL);
	assert_string_equal(u.messages, "deep.json:1: nested deeper than 64 levels, refusing it\n");
	done(&u);
	free(deep);

	/* aliases resolve within an object; merge keys apply; unknown ones are errors */
	RUN(&u, KSTREAM_YAML, "a.yaml", "kind: Pod\nmetadata: &m {name: x}\nspec: {<<: *m, other: *m}\n---\nref: *m\n");
	assert_int_equal(u.r, -EINVAL);
	assert_string_equal(u.items, "Pod/x@1");
	assert_string_equal(u.messages, "a.yaml:5: alias *m refers to no anchor of this object\n");
	done(&u);
	/* the 5-byte input that overflowed libfyaml's alias lookup */
	RUN(&u, KSTREAM_AUTO, "ov.yaml", "- */-");
	assert_int_equal(u.r, -EINVAL);
	assert_string_equal(u.messages, "ov.yaml:1: alias */- refers to no anchor of this object\n");
	done(&u);
	/* a NUL byte, inside a document and after one */
	run(&u, KSTREAM_AUTO, "nul.yaml", "kind: Pod\n\0---\n", 15, 0);
	assert_int_equal(u.r, -EILSEQ);
	assert_string_equal(u.items, "");
	assert_string_equal(u.messages, "nul.yaml:2:1: NUL byte: Kubernetes objects are UTF-8 text without NUL bytes\n");
	done(&u);
}

static int ignore_item(void *userdata, const kval *item)
{
	(void)userdata;
	(void)item;
	return 0;
}

/* A daemon's reflector captures the decoder's line into a message of its own (its journal names
 * the program): the line does not say "preemptctl" in preemptd's or evictd-kube's log. */
static void test_captured_line_names_no_program(void **state)
{
	char buf[256];
	diag d;
	kstream *s;
	(void)state;

	assert_int_equal(diag_open_buffer(&d, buf, sizeof(buf)), 0);
	assert_int_equal(kstream_new(&s, KSTREAM_JSON, "/api/v1/pods", &d, ignore_item, NULL), 0);
	kstream_set_limits(s, 8, 0);
	assert_true(kstream_feed(s, "{\"items\":[]}", 12) < 0);
	assert_string_equal(diag_take_line(&d), "/api/v1/pods: larger than 8 bytes, refusing to read it");
	kstream_free(s);
	diag_close_buffer(&d);
}

/* A callback's negative return ends the stream with it. */
static int stop_at_second(void *userdata, const kval *item)
{
	(void)item;
	return ++*(int *)userdata == 2 ? -ECANCELED : 0;
}

static void test_callback_aborts(void **state)
{
	static const char text[] = "{\"items\": [{}, {}, {}]}";
	diag d;
	kstream *s = NULL;
	int n = 0;
	FILE *f = fopen("/dev/null", "w");
	(void)state;

	diag_init(&d, f);
	assert_int_equal(kstream_new(&s, KSTREAM_AUTO, "x", &d, stop_at_second, &n), 0);
	assert_int_equal(kstream_feed(s, text, sizeof(text) - 1), -ECANCELED);
	assert_int_equal(kstream_end(s), -ECANCELED);
	assert_int_equal(n, 2);
	kstream_free(s);
	fclose(f);
}

/* The node agent's view of a pod: per-object decode with uid, annotations, QoS, container IDs, and
 * the scheduler's request sum. */
struct pod_run {
	karena a;
	diag d;
	struct k8s_pod pod;
	int r;
};

static int on_pod(void *userdata, const kval *item)
{
	struct pod_run *p = userdata;
	p->r = k8s_decode_pod(&p->a, &p->d, "pod.json", kval_get(item, "object"), &p->pod);
	return 0;
}

static void test_decode_pod_for_the_node(void **state)
{
	static const char event[] =
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\","
		"\"uid\":\"1234-5678\",\"deletionTimestamp\":\"2024-05-01T10:00:00Z\","
		"\"annotations\":{\"kubernetes.io/config.mirror\":\"abc\",\"kubernetes.io/config.source\":\"file\"}},"
		"\"spec\":{\"priority\":7,\"priorityClassName\":\"x\",\"terminationGracePeriodSeconds\":5,"
		"\"initContainers\":[{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],"
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}],"
		"\"overhead\":{\"memory\":\"10Mi\"}},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\","
		"\"containerStatuses\":[{\"name\":\"c\",\"containerID\":\"containerd://abcdef\"}]}}}\n";
	struct pod_run p = { .r = 1 };
	kstream *s = NULL;
	char *msg = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&msg, &size);
	(void)state;

	diag_init(&p.d, f);
	assert_int_equal(kstream_new(&s, KSTREAM_AUTO, "pod.json", &p.d, on_pod, &p), 0);
	assert_int_equal(kstream_feed(s, event, sizeof(event) - 1), 0);
	assert_int_equal(kstream_end(s), 0);
	kstream_free(s);
	fclose(f);
	assert_string_equal(msg, "");
	free(msg);
	assert_int_equal(p.r, 0);
	assert_string_equal(p.pod.namespace_, "shop");
	assert_string_equal(p.pod.name, "web");
	assert_string_equal(p.pod.uid, "1234-5678");
	assert_int_equal(p.pod.annotations.n, 2);
	assert_string_equal(p.pod.annotations.v[0].key, "kubernetes.io/config.mirror");
	assert_string_equal(p.pod.qos_class, "Burstable");
	assert_int_equal(p.pod.phase, K8S_PHASE_RUNNING);
	assert_true(p.pod.has_deletion);
	assert_true(p.pod.has_priority);
	assert_int_equal(p.pod.priority, 7);
	assert_int_equal(p.pod.grace_seconds, 5);
	assert_int_equal(p.pod.ncontainer_statuses, 1);
	assert_string_equal(p.pod.container_statuses[0].container_id, "containerd://abcdef");
	assert_true(p.pod.init_containers[0].restartable);

	pp_resource *req = NULL;
	size_t n = 0;
	pp_err err;
	assert_int_equal(k8s_pod_requests(&p.pod, &p.a, &req, &n, &err), 0);
	int64_t cpu = -1, mem = -1;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(req[i].name, "cpu"))
			cpu = req[i].value;
		if (!strcmp(req[i].name, "memory"))
			mem = req[i].value;
	}
	assert_int_equal(cpu, 1100);                         /* container + sidecar, milli */
	assert_int_equal(mem, (INT64_C(1) << 30) + (10 << 20)); /* + overhead */
	karena_free(&p.a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_items_one_by_one),
		cmocka_unit_test(test_watch_and_documents),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_callback_aborts),
		cmocka_unit_test(test_captured_line_names_no_program),
		cmocka_unit_test(test_decode_pod_for_the_node),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
