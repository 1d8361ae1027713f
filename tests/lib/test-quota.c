/*
 * ResourceQuotas and the ResourceQuota admission plugin (lib/quota*.c, lib/qty.c), as table tests
 * taken from Kubernetes' own:
 *   apimachinery pkg/api/resource/quantity_test.go      TestQuantityString, TestQuantityParseEmit,
 *                                                       TestQuantityAddZeroPreservesSuffix
 *   kubernetes pkg/quota/v1/evaluator/core/pods_test.go TestPodEvaluatorUsage, TestPodConstraintsFunc,
 *                                                       TestPodEvaluatorMatchingScopes,
 *                                                       TestPodEvaluatorUsageStats
 *   kubernetes plugin/pkg/admission/resourcequota/admission_test.go
 *                                                       TestAdmit* (named at each test)
 * Where upstream only checks "an error", the message is the one kube-apiserver prints, pinned
 * byte for byte (controller.go's fmt strings, admission.NewForbidden's wrapping).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "preempt.h"
#include "quota.h"

#define KV(...) ((const pp_quantity_kv[]){ __VA_ARGS__ })
#define NKV(...) (sizeof((const pp_quantity_kv[]){ __VA_ARGS__ }) / sizeof(pp_quantity_kv))
#define LIST(...) KV(__VA_ARGS__), NKV(__VA_ARGS__)
#define NONE NULL, 0

/* --- quantities: apimachinery's tables -------------------------------------------------------- */

static char *fmt(const char *in, bool *kept)
{
	struct pp_qty q;
	char buf[128];
	pp_err err = { "" };
	assert_int_equal(pp__qty_parse(in, &q, &err), 0);
	if (kept)
		*kept = q.text != NULL;
	pp__qty_format(&q, buf, sizeof(buf));
	pp__qty_done(&q);
	return strdup(buf);
}

/* quantity_test.go TestQuantityString: the canonical form is kept as written when parsed; the
 * alternate spelling is not, and prints as the canonical form. */
static void test_quantity_string(void **state)
{
	static const struct {
		const char *expect, *alternate;
	} table[] = {
		{ "1Gi", "1024Mi" }, { "300Mi", "307200Ki" }, { "6Ki", "" }, { "1001Gi", "1025024Mi" },
		{ "1Ti", "1024Gi" }, { "5", "5000m" }, { "500m", "0.5" }, { "1G", "1000M" }, { "1G", "0.001T" },
		{ "1m", "1000u" }, { "80m", "" }, { "1080m", "1.08" }, { "1080m", "1080000000n" }, { "300M", "" },
		{ "1T", "" }, { "1234567M", "" }, { "1234567m", "" }, { "3k", "" }, { "1025", "" }, { "0", "" },
		{ "1e9", ".001e12" }, { "1e-3", "0.001e0" }, { "1e-9", "1000e-12" }, { "80e-3", "" }, { "300e6", "" },
		{ "1e12", "" }, { "1e3", "" }, { "3e3", "" }, { "0", "00" }, { "1n", "" }, { "80n", "" }, { "1080n", "" },
		{ "1u", "" }, { "80u", "" }, { "1080u", "" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		bool kept = false;
		char *s = fmt(table[i].expect, &kept);
		assert_string_equal(s, table[i].expect);
		assert_true(kept);
		free(s);
		if (!*table[i].alternate)
			continue;
		s = fmt(table[i].alternate, &kept);
		assert_false(kept);
		assert_string_equal(s, table[i].expect);
		free(s);
	}
}

/* quantity_test.go TestQuantityParseEmit, and negative values */
static void test_quantity_parse_emit(void **state)
{
	static const char *const table[][2] = {
		{ "1Ki", "1Ki" }, { "1Mi", "1Mi" }, { "1Gi", "1Gi" }, { "1024Mi", "1Gi" }, { "1000M", "1G" },
		{ ".001Ki", "1024m" }, { ".000001Ki", "1024u" }, { ".000000001Ki", "1024n" }, { ".000000000001Ki", "2n" },
		/* ParseQuantity's fast path keeps these as written (controller_test.go style inputs) */
		{ "1.500", "1.500" }, { "100m", "100m" }, { "3Ki", "3Ki" }, { "8Ki", "8Ki" }, { "1.5Gi", "1536Mi" },
		{ "1.5", "1500m" }, { "1000m", "1" }, { "0Gi", "0" }, { "12e3", "12e3" }, { "-100m", "-100m" },
		{ "-1.5", "-1500m" },
		/* BinarySI below 1024 prints as DecimalSI (CanonicalizeBytes): 1000 is 1k, not 1000 */
		{ "0.9765625Ki", "1k" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		char *s = fmt(table[i][0], NULL);
		assert_string_equal(s, table[i][1]);
		free(s);
	}
}

/* TestQuantityAddZeroPreservesSuffix; and a sum drops the text (1.500 + 0.5 is 2, not 2.000) */
static void test_quantity_add(void **state)
{
	static const char *const values[] = { "100m", "1Gi" };
	char buf[64];
	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct pp_qty v, zero, a;
		assert_int_equal(pp__qty_parse(values[i], &v, NULL), 0);
		assert_int_equal(pp__qty_parse("0", &zero, NULL), 0);
		assert_int_equal(pp__qty_copy(&a, &v), 0);
		pp__qty_add(&a, &zero);
		pp__qty_format(&a, buf, sizeof(buf));
		assert_string_equal(buf, values[i]);
		pp__qty_add(&zero, &v);
		pp__qty_format(&zero, buf, sizeof(buf));
		assert_string_equal(buf, values[i]);
		pp__qty_done(&v);
		pp__qty_done(&zero);
		pp__qty_done(&a);
	}
	struct pp_qty x, y;
	assert_int_equal(pp__qty_parse("1.500", &x, NULL), 0);
	assert_int_equal(pp__qty_parse("500m", &y, NULL), 0);
	pp__qty_add(&x, &y);
	pp__qty_format(&x, buf, sizeof(buf));
	assert_string_equal(buf, "2");
	pp__qty_done(&x);
	pp__qty_done(&y);
}

/* --- the pod evaluator: pods_test.go ------------------------------------------------------------ */

static char *usage_of(const pp_quota_pod *p, bool charged)
{
	struct pp_qpod q;
	pp_err err = { "" };
	assert_int_equal(pp__qpod_init(&q, p, charged, &err), 0);
	char *s = pp__rlist_print(&q.usage, NULL, NULL);
	pp__qpod_done(&q);
	return s;
}

/* C(kind, requests..., limits...): LIST(...) or NONE for each */
#define C(kind, ...) { kind, NULL, __VA_ARGS__ }
#define ONE_CONTAINER(kind, ...) .containers = ((const pp_container_resources[]){ C(kind, __VA_ARGS__) }), .n_containers = 1

/* pods_test.go TestPodEvaluatorUsage */
static void test_pod_usage(void **state)
{
	static const char *const ext = "example.com/dongle", *const dra = "deviceclass.resource.kubernetes.io/dongle";
	(void)state;
	struct {
		const char *name;
		pp_quota_pod pod;
		const char *usage;
	} t[] = {
		{ "init container CPU",
		  { ONE_CONTAINER(PP_INIT_CONTAINER, LIST({ "cpu", "1m" }), LIST({ "cpu", "2m" })) },
		  "count/pods=1,cpu=1m,limits.cpu=2m,pods=1,requests.cpu=1m" },
		{ "init container MEM",
		  { ONE_CONTAINER(PP_INIT_CONTAINER, LIST({ "memory", "1m" }), LIST({ "memory", "2m" })) },
		  "count/pods=1,limits.memory=2m,memory=1m,pods=1,requests.memory=1m" },
		{ "init container local ephemeral storage",
		  { ONE_CONTAINER(PP_INIT_CONTAINER, LIST({ "ephemeral-storage", "32Mi" }),
		                                LIST({ "ephemeral-storage", "64Mi" })) },
		  "count/pods=1,ephemeral-storage=32Mi,limits.ephemeral-storage=64Mi,pods=1,requests.ephemeral-storage=32Mi" },
		{ "init container hugepages",
		  { ONE_CONTAINER(PP_INIT_CONTAINER, LIST({ "hugepages-2Mi", "100Mi" }), NONE) },
		  "count/pods=1,hugepages-2Mi=100Mi,pods=1,requests.hugepages-2Mi=100Mi" },
		{ "init container extended resources",
		  { ONE_CONTAINER(PP_INIT_CONTAINER, LIST({ ext, "3" }), LIST({ ext, "3" })) },
		  "count/pods=1,pods=1,requests.example.com/dongle=3" },
		{ "init container implicit extended resources",
		  { ONE_CONTAINER(PP_INIT_CONTAINER, LIST({ dra, "3" }), LIST({ dra, "3" })) },
		  "count/pods=1,pods=1,requests.deviceclass.resource.kubernetes.io/dongle=3" },
		{ "container CPU",
		  { ONE_CONTAINER(PP_CONTAINER, LIST({ "cpu", "1m" }), LIST({ "cpu", "2m" })) },
		  "count/pods=1,cpu=1m,limits.cpu=2m,pods=1,requests.cpu=1m" },
		{ "container MEM",
		  { ONE_CONTAINER(PP_CONTAINER, LIST({ "memory", "1m" }), LIST({ "memory", "2m" })) },
		  "count/pods=1,limits.memory=2m,memory=1m,pods=1,requests.memory=1m" },
		{ "container hugepages",
		  { ONE_CONTAINER(PP_CONTAINER, LIST({ "hugepages-2Mi", "100Mi" }), NONE) },
		  "count/pods=1,hugepages-2Mi=100Mi,pods=1,requests.hugepages-2Mi=100Mi" },
		{ "container extended resources",
		  { ONE_CONTAINER(PP_CONTAINER, LIST({ ext, "3" }), LIST({ ext, "3" })) },
		  "count/pods=1,pods=1,requests.example.com/dongle=3" },
		{ "terminated generic count still appears",
		  { ONE_CONTAINER(PP_CONTAINER, LIST({ ext, "3" }), LIST({ ext, "3" })), .terminal = true },
		  "count/pods=1" },
		{ "init container maximums override sum of containers",
		  { .containers = (const pp_container_resources[]){
		            C(PP_INIT_CONTAINER, LIST({ "cpu", "4" }, { "memory", "100M" }, { ext, "4" }),
		              LIST({ "cpu", "8" }, { "memory", "200M" }, { ext, "4" })),
		            C(PP_INIT_CONTAINER, LIST({ "cpu", "1" }, { "memory", "50M" }, { ext, "2" }),
		              LIST({ "cpu", "2" }, { "memory", "100M" }, { ext, "2" })),
		            C(PP_CONTAINER, LIST({ "cpu", "1" }, { "memory", "50M" }, { ext, "1" }),
		              LIST({ "cpu", "2" }, { "memory", "100M" }, { ext, "1" })),
		            C(PP_CONTAINER, LIST({ "cpu", "2" }, { "memory", "25M" }, { ext, "2" }),
		              LIST({ "cpu", "5" }, { "memory", "50M" }, { ext, "2" })) },
		    .n_containers = 4 },
		  "count/pods=1,cpu=4,limits.cpu=8,limits.memory=200M,memory=100M,pods=1,requests.cpu=4,"
		  "requests.example.com/dongle=4,requests.memory=100M" },
		{ "count pod overhead as usage",
		  { ONE_CONTAINER(PP_CONTAINER, LIST({ "cpu", "1" }), LIST({ "cpu", "2" })),
		    .overhead = KV({ "cpu", "1" }), .n_overhead = 1 },
		  "count/pods=1,cpu=2,limits.cpu=3,pods=1,requests.cpu=2" },
		{ "pod-level CPU",
		  { .pod_requests = KV({ "cpu", "1m" }), .n_pod_requests = 1, .pod_limits = KV({ "cpu", "2m" }), .n_pod_limits = 1 },
		  "count/pods=1,cpu=1m,limits.cpu=2m,pods=1,requests.cpu=1m" },
		{ "pod-level Memory",
		  { .pod_requests = KV({ "memory", "1Mi" }), .n_pod_requests = 1, .pod_limits = KV({ "memory", "2Mi" }),
		    .n_pod_limits = 1 },
		  "count/pods=1,limits.memory=2Mi,memory=1Mi,pods=1,requests.memory=1Mi" },
		{ "pod-level memory with container-level ephemeral storage",
		  { .pod_requests = KV({ "memory", "1Mi" }), .n_pod_requests = 1, .pod_limits = KV({ "memory", "2Mi" }),
		    .n_pod_limits = 1,
		    ONE_CONTAINER(PP_CONTAINER, LIST({ "ephemeral-storage", "32Mi" }),
		                                LIST({ "ephemeral-storage", "64Mi" })) },
		  "count/pods=1,ephemeral-storage=32Mi,limits.ephemeral-storage=64Mi,limits.memory=2Mi,memory=1Mi,pods=1,"
		  "requests.ephemeral-storage=32Mi,requests.memory=1Mi" },
		/* Beyond the upstream table: the formats Go's resource lists keep — a lone container's
		 * text survives, a sum is canonical, sidecars add to the containers and to every later
		 * init step (helpers.go aggregateContainerResourcesByFn). */
		{ "one container's text is kept",
		  { ONE_CONTAINER(PP_CONTAINER, LIST({ "cpu", "1.500" }, { "memory", "1.5Gi" }), NONE) },
		  "count/pods=1,cpu=1.500,memory=1536Mi,pods=1,requests.cpu=1.500,requests.memory=1536Mi" },
		{ "a sum is canonical, in the first container's format",
		  { .containers = (const pp_container_resources[]){ C(PP_CONTAINER, LIST({ "memory", "512Mi" }), NONE),
		                                                   C(PP_CONTAINER, LIST({ "memory", "512M" }), NONE) },
		    .n_containers = 2 },
		  "count/pods=1,memory=1024288Ki,pods=1,requests.memory=1024288Ki" },
		{ "sidecars: containers + sidecars vs the init step after the sidecar",
		  { .containers = (const pp_container_resources[]){ C(PP_SIDECAR, LIST({ "cpu", "1" }), NONE),
		                                                   C(PP_INIT_CONTAINER, LIST({ "cpu", "3" }), NONE),
		                                                   C(PP_CONTAINER, LIST({ "cpu", "2" }), NONE) },
		    .n_containers = 3 },
		  "count/pods=1,cpu=4,pods=1,requests.cpu=4" },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		t[i].pod.namespace_ = "test";
		t[i].pod.name = t[i].name;
		char *s = usage_of(&t[i].pod, !t[i].pod.terminal);
		if (strcmp(s, t[i].usage) != 0)
			fail_msg("%s: usage %s, want %s", t[i].name, s, t[i].usage);
		free(s);
	}
}

static bool matches(const pp_quota_pod *p, const char *scope, const char *op, const char *const *values, size_t n)
{
	struct pp_qpod q;
	char *vals[4] = { NULL };
	struct pp_scope_req s = { (char *)scope, (char *)op, vals, n };
	for (size_t i = 0; i < n; i++)
		vals[i] = (char *)values[i];
	assert_int_equal(pp__qpod_init(&q, p, true, NULL), 0);
	bool m = pp__qpod_matches(&q, &s);
	pp__qpod_done(&q);
	return m;
}

/* pods_test.go TestPodEvaluatorMatchingScopes: which of the scopes {Terminating, NotTerminating,
 * BestEffort, NotBestEffort, PriorityClass In [class1], CrossNamespacePodAffinity} a pod matches
 * (the selectors carry no operator there: the presence scopes ignore it). */
static void test_matching_scopes(void **state)
{
	static const char *const class1[] = { "class1" };
	static const struct {
		const char *scope, *op;
	} selectors[] = { { "Terminating", "" }, { "NotTerminating", "" }, { "BestEffort", "" },
		          { "NotBestEffort", "" }, { "PriorityClass", "In" }, { "CrossNamespacePodAffinity", "" } };
	struct {
		const char *name;
		pp_quota_pod pod;
		const char *want; /* one letter per selector that matches */
	} t[] = {
		{ "EmptyPod", { 0 }, "NB" },
		{ "PriorityClass", { .priority_class_name = "class1" }, "NBP" },
		{ "NotBestEffort",
		  { ONE_CONTAINER(PP_CONTAINER, LIST({ "cpu", "1" }, { "memory", "50M" }, { "example.com/dongle", "1" }),
		                                LIST({ "cpu", "2" }, { "memory", "100M" }, { "example.com/dongle", "1" })) },
		  "NX" },
		{ "Terminating", { .has_active_deadline = true, .active_deadline_s = 30 }, "TB" },
		{ "CrossNamespaceRequiredAffinity",
		  { .has_active_deadline = true, .active_deadline_s = 30, .cross_namespace_affinity = true }, "TBC" },
	};
	static const char letters[] = "TNBXPC";
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char got[8] = "";
		size_t n = 0;
		t[i].pod.namespace_ = "test";
		t[i].pod.name = "p";
		for (size_t s = 0; s < 6; s++)
			if (matches(&t[i].pod, selectors[s].scope, selectors[s].op, class1, s == 4))
				got[n++] = letters[s];
		if (strcmp(got, t[i].want) != 0)
			fail_msg("%s: matched %s, want %s", t[i].name, got, t[i].want);
	}
	/* The label-selector semantics of the other operators: a pod without a class is "not in". */
	pp_quota_pod none = { .namespace_ = "test", .name = "p" }, c1 = { .namespace_ = "test", .name = "p",
		                                                             .priority_class_name = "class1" };
	assert_true(matches(&none, "PriorityClass", "NotIn", class1, 1));
	assert_false(matches(&c1, "PriorityClass", "NotIn", class1, 1));
	assert_true(matches(&none, "PriorityClass", "DoesNotExist", NULL, 0));
	assert_false(matches(&c1, "PriorityClass", "DoesNotExist", NULL, 0));
	assert_true(matches(&c1, "PriorityClass", "Exists", NULL, 0));
	assert_false(matches(&none, "PriorityClass", "In", class1, 1));
	/* status.qosClass decides when the pod has one (GetPodQOS) */
	pp_quota_pod be = { .namespace_ = "test", .name = "p", .qos_class = "Burstable" };
	assert_false(matches(&be, "BestEffort", "Exists", NULL, 0));
}

/* pods_test.go TestPodConstraintsFunc */
static void test_constraints(void **state)
{
	struct {
		const char *name;
		pp_quota_pod pod;
		pp_quantity_kv hard[2];
		size_t nhard;
		const char *err;
	} t[] = {
		{ "init container resource missing",
		  { .containers = (const pp_container_resources[]){ { PP_INIT_CONTAINER, "dummy", LIST({ "cpu", "1m" }),
		                                                      LIST({ "cpu", "2m" }) } },
		    .n_containers = 1 },
		  { { "memory", "1" } }, 1, "must specify memory for: dummy" },
		{ "multiple init container resource missing",
		  { .containers = (const pp_container_resources[]){ { PP_INIT_CONTAINER, "foo", LIST({ "cpu", "1m" }),
		                                                      LIST({ "cpu", "2m" }) },
		                                                    { PP_INIT_CONTAINER, "bar", LIST({ "cpu", "1m" }),
		                                                      LIST({ "cpu", "2m" }) } },
		    .n_containers = 2 },
		  { { "memory", "1" } }, 1, "must specify memory for: bar,foo" },
		{ "container resource missing",
		  { .containers = (const pp_container_resources[]){ { PP_CONTAINER, "dummy", LIST({ "cpu", "1m" }),
		                                                      LIST({ "cpu", "2m" }) } },
		    .n_containers = 1 },
		  { { "memory", "1" } }, 1, "must specify memory for: dummy" },
		{ "container resource missing multiple",
		  { .containers = (const pp_container_resources[]){ { PP_CONTAINER, "foo", NONE, NONE },
		                                                    { PP_CONTAINER, "bar", NONE, NONE } },
		    .n_containers = 2 },
		  { { "memory", "1" }, { "cpu", "1" } }, 2, "must specify cpu for: bar,foo; memory for: bar,foo" },
		{ "pod-level resource set, container-level required resources missing",
		  { .pod_requests = KV({ "cpu", "1m" }), .n_pod_requests = 1,
		    .containers = (const pp_container_resources[]){ { PP_CONTAINER, "foo", NONE, NONE },
		                                                    { PP_CONTAINER, "bar", NONE, NONE } },
		    .n_containers = 2 },
		  { { "memory", "1" }, { "cpu", "1" } }, 2, NULL },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct pp_qpod q;
		struct pp_rlist hard = { 0 };
		char *msg = NULL;
		t[i].pod.namespace_ = "test";
		t[i].pod.name = "p";
		assert_int_equal(pp__rlist_parse(&hard, t[i].hard, t[i].nhard, "hard", NULL), 0);
		assert_int_equal(pp__qpod_init(&q, &t[i].pod, true, NULL), 0);
		assert_int_equal(pp__qpod_constraints(&q, &hard, &msg), 0);
		if (t[i].err ? !msg || strcmp(msg, t[i].err) != 0 : msg != NULL)
			fail_msg("%s: got \"%s\", want \"%s\"", t[i].name, msg ? msg : "(none)", t[i].err ? t[i].err : "(none)");
		free(msg);
		pp__qpod_done(&q);
		pp__rlist_done(&hard);
	}
}

/* --- quotas ------------------------------------------------------------------------------------- */

struct tquota {
	const char *ns, *name;
	const pp_quantity_kv *hard;
	size_t n_hard;
	const pp_quantity_kv *used; /* NULL with has_status false: computed */
	size_t n_used;
	bool status;
	const char *const *scopes;
	size_t n_scopes;
	const pp_scope_requirement *sel;
	size_t n_sel;
};

static int add(pp_quotas *q, const struct tquota *t, pp_err *err)
{
	pp_quota_spec s = {
		.namespace_ = t->ns ? t->ns : "test", .name = t->name, .scopes = t->scopes, .n_scopes = t->n_scopes,
		.scope_selector = t->sel, .n_scope_selector = t->n_sel, .has_status = t->status,
	};
	if (t->status) {
		s.status_hard = t->hard;
		s.n_status_hard = t->n_hard;
		s.status_used = t->used;
		s.n_status_used = t->n_used;
	} else {
		s.hard = t->hard;
		s.n_hard = t->n_hard;
	}
	return pp_quotas_add(q, &s, err);
}

static const char *used_of(pp_quotas *q, const char *ns, const char *name)
{
	pp_quota_info info;
	for (size_t i = 0; i < pp_quotas_count(q); i++) {
		assert_int_equal(pp_quotas_info(q, i, &info), 0);
		if (strcmp(info.namespace_, ns) == 0 && strcmp(info.name, name) == 0)
			return info.used;
	}
	fail_msg("no quota %s/%s", ns, name);
	return NULL;
}

/* pods_test.go makePod: one container with requests = limits */
static pp_quota_pod make_pod(const char *name, const char *class_name, pp_container_resources *c,
                             const pp_quantity_kv *res, size_t n_res, bool terminal)
{
	*c = (pp_container_resources){ PP_CONTAINER, "c", res, n_res, res, n_res };
	return (pp_quota_pod){ .namespace_ = "test", .name = name, .priority_class_name = class_name,
		               .containers = c, .n_containers = 1, .terminal = terminal };
}

/* pods_test.go TestPodEvaluatorUsageStats: what the quota controller counts into a quota without
 * status — pods and compute resources of matching, non-terminal pods; count/pods of every pod. */
static void test_usage_stats(void **state)
{
	static const pp_quantity_kv cpu1[] = { { "cpu", "1" } };
	static const pp_quantity_kv hard_all[] = { { "pods", "100" }, { "count/pods", "100" }, { "cpu", "100" },
		                                    { "requests.cpu", "100" }, { "limits.cpu", "100" } };
	static const pp_quantity_kv hard_pods[] = { { "pods", "100" }, { "count/pods", "100" } };
	static const char *const high[] = { "high-priority" };
	static const char *const pc[] = { "PriorityClass" }, *const pc_be[] = { "PriorityClass", "BestEffort" };
	static const pp_scope_requirement in_high[] = { { "PriorityClass", "In", high, 1 } };
	struct {
		const char *name;
		struct tquota q;
		int pods; /* 2: p1, p2; 3: + p3; 4: + p4 */
		const char *used;
	} t[] = {
		{ "all pods in running state", { .name = "q", .hard = hard_all, .n_hard = 5 }, -2,
		  "count/pods=2,cpu=2,limits.cpu=2,pods=2,requests.cpu=2" },
		{ "one pods in terminal state", { .name = "q", .hard = hard_all, .n_hard = 5 }, 2,
		  "count/pods=2,cpu=1,limits.cpu=1,pods=1,requests.cpu=1" },
		{ "partial pods matching quotaScopeSelector", { .name = "q", .hard = hard_all, .n_hard = 5, .sel = in_high, .n_sel = 1 },
		  3, "count/pods=2,cpu=1,limits.cpu=1,pods=1,requests.cpu=1" },
		{ "partial pods matching quotaScopeSelector - w/ scopeName specified",
		  { .name = "q", .hard = hard_all, .n_hard = 5, .scopes = pc, .n_scopes = 1, .sel = in_high, .n_sel = 1 }, 3,
		  "count/pods=2,cpu=1,limits.cpu=1,pods=1,requests.cpu=1" },
		/* upstream also limits cpu here, which validation refuses with BestEffort: pods only */
		{ "partial pods matching quotaScopeSelector - w/ multiple scopeNames specified",
		  { .name = "q", .hard = hard_pods, .n_hard = 2, .scopes = pc_be, .n_scopes = 2, .sel = in_high, .n_sel = 1 }, 4,
		  "count/pods=1,pods=0" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		pp_quotas *q = NULL;
		pp_container_resources c[4];
		pp_err err = { "" };
		pp_quota_pod pods[4] = {
			make_pod("p1", t[i].pods == -2 ? NULL : "high-priority", &c[0], cpu1, 1, false),
			make_pod("p2", t[i].pods == -2 ? NULL : "high-priority", &c[1], cpu1, 1, t[i].pods != -2),
			make_pod("p3", "low-priority", &c[2], cpu1, 1, false),
			make_pod("p4", "high-priority", &c[3], NULL, 0, true),
		};
		size_t n = t[i].pods < 0 ? 2 : (size_t)t[i].pods;
		assert_int_equal(pp_quotas_new(&q), 0);
		if (add(q, &t[i].q, &err) < 0)
			fail_msg("%s: %s", t[i].name, err.msg);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(pp_quotas_count_pod(q, &pods[k], 0, NULL), 0);
		if (strcmp(used_of(q, "test", "q"), t[i].used) != 0)
			fail_msg("%s: used %s, want %s", t[i].name, used_of(q, "test", "q"), t[i].used);
		pp_quotas_free(q);
	}
}

/* pods_test.go TestPodEvaluatorUsage "pod deletion timestamp (not) exceeded" (QuotaV1Pod), through
 * the controller's count: past its deletion grace a pod is in count/pods only. */
static void test_usage_deletion_grace(void **state)
{
	static const pp_quantity_kv hard[] = { { "pods", "10" }, { "count/pods", "10" }, { "requests.cpu", "10" } };
	const int64_t now = 1000LL * 1000000000;
	pp_container_resources c;
	(void)state;
	for (int past = 0; past < 2; past++) {
		pp_quotas *q = NULL;
		pp_quota_pod p = make_pod("p", NULL, &c, KV({ "cpu", "1" }), 1, false);
		p.has_deletion_grace = true;
		p.deletion_grace_s = 30;
		p.deletion_time_ns = past ? now - 60LL * 1000000000 : now;
		assert_int_equal(pp_quotas_new(&q), 0);
		assert_int_equal(add(q, &(struct tquota){ .name = "q", .hard = hard, .n_hard = 3 }, NULL), 0);
		assert_int_equal(pp_quotas_count_pod(q, &p, now, NULL), 0);
		assert_string_equal(used_of(q, "test", "q"), past ? "count/pods=1,pods=0,requests.cpu=0"
		                                                   : "count/pods=1,pods=1,requests.cpu=1");
		pp_quotas_free(q);
	}
}

/* --- admission: admission_test.go --------------------------------------------------------------- */

static char *admit(pp_quotas *q, const pp_quota_pod *p, unsigned flags)
{
	pp_admission *a = NULL;
	pp_err err = { "" };
	int r = pp_quotas_admit(q, p, flags, &a, &err);
	if (r < 0)
		fail_msg("pp_quotas_admit: %d %s", r, err.msg);
	char *s = strdup(pp_admission_message(a));
	assert_true((pp_admission_refusal(a) == PP_REFUSAL_NONE) == (*s == '\0'));
	pp_admission_free(a);
	return s;
}

#define assert_admit(q, p, flags, want)                                                         \
	do {                                                                                    \
		char *m_ = admit(q, p, flags);                                                  \
		if (strcmp(m_, want) != 0)                                                      \
			fail_msg("admission: \"%s\", want \"%s\"", m_, want);                   \
		free(m_);                                                                       \
	} while (0)

/* validPod: one unnamed container ("foo:V0" in upstream) with these requests and limits */
static pp_quota_pod valid_pod(const char *name, pp_container_resources *c, const pp_quantity_kv *req, size_t nreq,
                              const pp_quantity_kv *lim, size_t nlim, const char *class_name)
{
	*c = (pp_container_resources){ PP_CONTAINER, NULL, req, nreq, lim, nlim };
	return (pp_quota_pod){ .namespace_ = "test", .name = name, .priority_class_name = class_name,
		               .containers = c, .n_containers = 1 };
}

static const pp_quantity_kv std_hard[] = { { "cpu", "3" }, { "memory", "100Gi" }, { "pods", "5" } };
static const pp_quantity_kv std_used[] = { { "cpu", "1" }, { "memory", "50Gi" }, { "pods", "3" } };

static void test_admit_quota_limit(void **state)
{
	pp_quotas *q = NULL;
	pp_container_resources c;
	pp_quota_pod p;
	(void)state;

	/* TestAdmitBelowQuotaLimit: the pod's usage lands on the quota, formats as upstream expects */
	assert_int_equal(pp_quotas_new(&q), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota", .hard = std_hard, .n_hard = 3, .used = std_used,
	                                          .n_used = 3, .status = true }, NULL), 0);
	p = valid_pod("allowed-pod", &c, LIST({ "cpu", "100m" }, { "memory", "2Gi" }), NONE, NULL);
	assert_admit(q, &p, 0, "");
	assert_string_equal(used_of(q, "test", "quota"), "cpu=1100m,memory=52Gi,pods=4");

	/* TestAdmitExceedQuotaLimit (the message kube-apiserver prints) */
	p = valid_pod("not-allowed-pod", &c, LIST({ "cpu", "3" }, { "memory", "2Gi" }), NONE, NULL);
	assert_admit(q, &p, 0,
	             "pods \"not-allowed-pod\" is forbidden: exceeded quota: quota, requested: cpu=3, used: cpu=1100m, "
	             "limited: cpu=3");
	assert_string_equal(used_of(q, "test", "quota"), "cpu=1100m,memory=52Gi,pods=4");
	pp_quotas_free(q);

	/* TestAdmitDryRun: admitted without a charge; refused all the same */
	assert_int_equal(pp_quotas_new(&q), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota", .hard = std_hard, .n_hard = 3, .used = std_used,
	                                          .n_used = 3, .status = true }, NULL), 0);
	p = valid_pod("allowed-pod", &c, LIST({ "cpu", "100m" }, { "memory", "2Gi" }), NONE, NULL);
	assert_admit(q, &p, PP_ADMIT_DRY_RUN, "");
	assert_string_equal(used_of(q, "test", "quota"), "cpu=1,memory=50Gi,pods=3");
	p = valid_pod("too-large-pod", &c, LIST({ "cpu", "100m" }, { "memory", "60Gi" }), NONE, NULL);
	assert_admit(q, &p, PP_ADMIT_DRY_RUN,
	             "pods \"too-large-pod\" is forbidden: exceeded quota: quota, requested: memory=60Gi, used: "
	             "memory=50Gi, limited: memory=100Gi");

	/* TestAdmissionIgnoresSubresources' first half: memory 2Gi over 1Gi used of 2Gi */
	assert_int_equal(add(q, &(struct tquota){ .ns = "sub", .name = "quota", .hard = KV({ "memory", "2Gi" }),
	                                          .n_hard = 1, .used = KV({ "memory", "1Gi" }), .n_used = 1,
	                                          .status = true }, NULL), 0);
	p = valid_pod("123", &c, LIST({ "cpu", "100m" }, { "memory", "2Gi" }), NONE, NULL);
	p.namespace_ = "sub";
	assert_admit(q, &p, 0,
	             "pods \"123\" is forbidden: exceeded quota: quota, requested: memory=2Gi, used: memory=1Gi, "
	             "limited: memory=2Gi");

	/* TestAdmitPodInNamespaceWithoutQuota */
	p = valid_pod("allowed-pod", &c, LIST({ "cpu", "100m" }, { "memory", "2Gi" }), LIST({ "cpu", "200m" }), NULL);
	p.namespace_ = "other";
	assert_admit(q, &p, 0, "");
	pp_quotas_free(q);
}

/* TestAdmitEnforceQuotaConstraints, and a quota whose status lacks a used value */
static void test_admit_constraints_and_status(void **state)
{
	pp_quotas *q = NULL;
	pp_container_resources c;
	pp_quota_pod p;
	static const pp_quantity_kv hard[] = { { "cpu", "3" }, { "memory", "100Gi" }, { "limits.memory", "200Gi" },
		                                { "pods", "5" } };
	static const pp_quantity_kv used[] = { { "cpu", "1" }, { "memory", "50Gi" }, { "limits.memory", "100Gi" },
		                                { "pods", "3" } };
	(void)state;
	assert_int_equal(pp_quotas_new(&q), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota", .hard = hard, .n_hard = 4, .used = used, .n_used = 4,
	                                          .status = true }, NULL), 0);
	p = valid_pod("not-allowed-pod", &c, LIST({ "cpu", "100m" }, { "memory", "2Gi" }), LIST({ "cpu", "200m" }), NULL);
	assert_admit(q, &p, 0, "pods \"not-allowed-pod\" is forbidden: failed quota: quota: must specify limits.memory for: ");
	c.name = "web";
	assert_admit(q, &p, 0, "pods \"not-allowed-pod\" is forbidden: failed quota: quota: must specify limits.memory for: web");
	pp_quotas_free(q);

	assert_int_equal(pp_quotas_new(&q), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota", .hard = KV({ "pods", "5" }, { "requests.cpu", "2" }),
	                                          .n_hard = 2, .used = KV({ "pods", "1" }), .n_used = 1, .status = true },
	                     NULL), 0);
	p = valid_pod("p", &c, LIST({ "cpu", "100m" }), NONE, NULL);
	assert_admit(q, &p, 0, "pods \"p\" is forbidden: status unknown for quota: quota, resources: pods,requests.cpu");
	pp_quotas_free(q);
}

/* TestAdmitBelowTerminatingQuotaLimit, TestAdmitBelowBestEffortQuotaLimit,
 * TestAdmitBestEffortQuotaLimitIgnoresBurstable, TestAdmitWhenUnrelatedResourceExceedsQuota */
static void test_admit_scoped_quotas(void **state)
{
	static const char *const term[] = { "Terminating" }, *const nonterm[] = { "NotTerminating" };
	static const char *const be[] = { "BestEffort" }, *const notbe[] = { "NotBestEffort" };
	static const pp_quantity_kv pods5[] = { { "pods", "5" } }, pods3[] = { { "pods", "3" } };
	pp_quotas *q = NULL;
	pp_container_resources c;
	pp_quota_pod p;
	(void)state;

	assert_int_equal(pp_quotas_new(&q), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota-non-terminating", .hard = std_hard, .n_hard = 3,
	                                          .used = std_used, .n_used = 3, .status = true, .scopes = nonterm,
	                                          .n_scopes = 1 }, NULL), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota-terminating", .hard = std_hard, .n_hard = 3,
	                                          .used = std_used, .n_used = 3, .status = true, .scopes = term,
	                                          .n_scopes = 1 }, NULL), 0);
	p = valid_pod("allowed-pod", &c, LIST({ "cpu", "100m" }, { "memory", "2Gi" }), NONE, NULL);
	p.has_active_deadline = true;
	p.active_deadline_s = 30;
	assert_admit(q, &p, 0, "");
	assert_string_equal(used_of(q, "test", "quota-terminating"), "cpu=1100m,memory=52Gi,pods=4");
	assert_string_equal(used_of(q, "test", "quota-non-terminating"), "cpu=1,memory=50Gi,pods=3");
	pp_quotas_free(q);

	assert_int_equal(pp_quotas_new(&q), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota-besteffort", .hard = pods5, .n_hard = 1, .used = pods3,
	                                          .n_used = 1, .status = true, .scopes = be, .n_scopes = 1 }, NULL), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota-not-besteffort", .hard = pods5, .n_hard = 1,
	                                          .used = pods3, .n_used = 1, .status = true, .scopes = notbe,
	                                          .n_scopes = 1 }, NULL), 0);
	p = valid_pod("allowed-pod", &c, NONE, NONE, NULL);
	assert_admit(q, &p, 0, "");
	assert_string_equal(used_of(q, "test", "quota-besteffort"), "pods=4");
	assert_string_equal(used_of(q, "test", "quota-not-besteffort"), "pods=3");
	p = valid_pod("allowed-pod", &c, LIST({ "cpu", "100m" }, { "memory", "1Gi" }), NONE, NULL);
	assert_admit(q, &p, 0, "");
	assert_string_equal(used_of(q, "test", "quota-besteffort"), "pods=4");
	assert_string_equal(used_of(q, "test", "quota-not-besteffort"), "pods=4");
	pp_quotas_free(q);

	assert_int_equal(pp_quotas_new(&q), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota", .hard = KV({ "services", "3" }, { "pods", "4" }),
	                                          .n_hard = 2, .used = KV({ "services", "4" }, { "pods", "1" }), .n_used = 2,
	                                          .status = true }, NULL), 0);
	p = valid_pod("allowed-pod", &c, NONE, NONE, NULL);
	assert_admit(q, &p, 0, "");
	assert_string_equal(used_of(q, "test", "quota"), "pods=2,services=4");
	pp_quota_info info;
	assert_int_equal(pp_quotas_info(q, 0, &info), 0);
	assert_string_equal(info.exceeded, "services");
	assert_string_equal(info.hard, "pods=4,services=3");
	pp_quotas_free(q);
}

static pp_quotas *with_config(const pp_limited_resource *lr, size_t n)
{
	pp_quotas *q = NULL;
	pp_err err = { "" };
	assert_int_equal(pp_quotas_new(&q), 0);
	for (size_t i = 0; i < n; i++)
		if (pp_quotas_add_limited_resource(q, &lr[i], &err) < 0)
			fail_msg("limitedResources[%zu]: %s", i, err.msg);
	return q;
}

/* TestAdmitLimitedResourceNoQuota, ...IgnoresNonMatchingResources, ...WithQuota,
 * ...WithMultipleQuota, ...WithQuotaThatDoesNotCover */
static void test_admit_limited_resources(void **state)
{
	static const char *const cpu[] = { "cpu" }, *const req_cpu[] = { "requests.cpu" }, *const svc[] = { "services" };
	pp_container_resources c;
	pp_quota_pod p = valid_pod("not-allowed-pod", &c, LIST({ "cpu", "3" }, { "memory", "2Gi" }), NONE, NULL);
	pp_quotas *q;
	(void)state;

	q = with_config(&(pp_limited_resource){ .resource = "pods", .match_contains = cpu, .n_match_contains = 1 }, 1);
	assert_admit(q, &p, 0, "pods \"not-allowed-pod\" is forbidden: insufficient quota to consume: cpu,requests.cpu");
	pp_quotas_free(q);

	q = with_config(&(pp_limited_resource){ .resource = "services", .match_contains = svc, .n_match_contains = 1 }, 1);
	assert_admit(q, &p, 0, "");
	pp_quotas_free(q);

	q = with_config(&(pp_limited_resource){ .resource = "pods", .match_contains = req_cpu, .n_match_contains = 1 }, 1);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota", .hard = KV({ "requests.cpu", "10" }), .n_hard = 1,
	                                          .used = KV({ "requests.cpu", "1" }), .n_used = 1, .status = true }, NULL), 0);
	assert_admit(q, &p, 0, "");
	assert_int_equal(add(q, &(struct tquota){ .name = "quota2", .hard = KV({ "memory", "10Gi" }), .n_hard = 1,
	                                          .used = KV({ "memory", "1Gi" }), .n_used = 1, .status = true }, NULL), 0);
	assert_admit(q, &p, 0, "");
	pp_quotas_free(q);

	q = with_config(&(pp_limited_resource){ .resource = "pods", .match_contains = cpu, .n_match_contains = 1 }, 1);
	assert_int_equal(add(q, &(struct tquota){ .name = "quota", .hard = KV({ "memory", "10Gi" }), .n_hard = 1,
	                                          .used = KV({ "memory", "1Gi" }), .n_used = 1, .status = true }, NULL), 0);
	assert_admit(q, &p, 0, "pods \"not-allowed-pod\" is forbidden: insufficient quota to consume: cpu,requests.cpu");
	/* the check that runs on pods that exist already sees the same gap */
	assert_admit(q, &p, PP_ADMIT_COVERAGE_ONLY,
	             "pods \"not-allowed-pod\" is forbidden: insufficient quota to consume: cpu,requests.cpu");
	pp_quotas_free(q);
}

/* admission_test.go TestAdmitLimitedScopeWithCoverQuota, the whole table */
static void test_admit_limited_scopes(void **state)
{
	static const char *const cs[] = { "cluster-services" };
	static const char *const two[] = { "another-priorityclass-name", "cluster-services" };
	static const char *const another[] = { "another-priorityclass-name" };
	static const char *const be_scope[] = { "BestEffort" };
	static const pp_scope_requirement pc_exists[] = { { "PriorityClass", "Exists", NULL, 0 } };
	static const pp_scope_requirement be_exists[] = { { "BestEffort", "Exists", NULL, 0 } };
	static const pp_scope_requirement pc_in_cs[] = { { "PriorityClass", "In", cs, 1 } };
	static const pp_scope_requirement pc_in_two[] = { { "PriorityClass", "In", two, 2 } };
	static const pp_scope_requirement pc_in_another[] = { { "PriorityClass", "In", another, 1 } };
	static const char *const req_cpu[] = { "requests.cpu" };
	static const pp_limited_resource c_pc_exists[] = { { .resource = "pods", .match_scopes = pc_exists, .n_match_scopes = 1 } };
	static const pp_limited_resource c_pc_exists_cpu[] = { { .resource = "pods", .match_scopes = pc_exists,
		                                                 .n_match_scopes = 1, .match_contains = req_cpu,
		                                                 .n_match_contains = 1 } };
	static const pp_limited_resource c_be[] = { { .resource = "pods", .match_scopes = be_exists, .n_match_scopes = 1 } };
	static const pp_limited_resource c_be_pcin[] = { { .resource = "pods", .match_scopes = be_exists, .n_match_scopes = 1 },
		                                           { .resource = "pods", .match_scopes = pc_in_cs, .n_match_scopes = 1 } };
	static const pp_limited_resource c_pcin[] = { { .resource = "pods", .match_scopes = pc_in_cs, .n_match_scopes = 1 } };
	static const pp_limited_resource c_pcin2[] = { { .resource = "pods", .match_scopes = pc_in_two, .n_match_scopes = 1 } };
	const struct tquota q_pc_exists = { .name = "quota", .sel = pc_exists, .n_sel = 1 };
	const struct tquota q_be = { .name = "quota-besteffort", .scopes = be_scope, .n_scopes = 1,
		                     .hard = KV({ "pods", "5" }), .n_hard = 1, .used = KV({ "pods", "3" }), .n_used = 1,
		                     .status = true };
	const struct tquota q_pcin = { .name = "quota", .sel = pc_in_cs, .n_sel = 1 };
	const struct tquota q_pc_exists_mem = { .name = "quota", .sel = pc_exists, .n_sel = 1,
		                                .hard = KV({ "memory", "10Gi" }), .n_hard = 1,
		                                .used = KV({ "memory", "1Gi" }), .n_used = 1, .status = true };
	const struct tquota q_pcin_another = { .name = "quota", .sel = pc_in_another, .n_sel = 1 };
	static const pp_quantity_kv big[] = { { "cpu", "3" }, { "memory", "2Gi" } };
	static const pp_quantity_kv small[] = { { "cpu", "100m" }, { "memory", "1Gi" } };
	static const pp_quantity_kv huge[] = { { "cpu", "3" }, { "memory", "20Gi" } };
	const struct {
		const char *description, *pod;
		const pp_quantity_kv *req;
		const char *class_name;
		const struct tquota *quota, *another;
		const pp_limited_resource *config;
		size_t n_config;
		const char *err;
	} t[] = {
		{ "Covering quota exists for configured limited scope PriorityClassNameExists.", "allowed-pod", big,
		  "fake-priority", &q_pc_exists, NULL, c_pc_exists, 1, "" },
		{ "configured limited scope PriorityClassNameExists and limited cpu resource. No covering quota for cpu and "
		  "pod admit fails.", "not-allowed-pod", big, "fake-priority", &q_pc_exists, NULL, c_pc_exists_cpu, 1,
		  "pods \"not-allowed-pod\" is forbidden: insufficient quota to consume: requests.cpu" },
		{ "Covering quota does not exist for configured limited scope PriorityClassNameExists.", "not-allowed-pod",
		  big, "fake-priority", NULL, NULL, c_pc_exists, 1,
		  "insufficient quota to match these scopes: [{PriorityClass Exists []}]" },
		{ "Covering quota does not exist for configured limited scope resourceQuotaBestEffort", "not-allowed-pod",
		  NULL, "fake-priority", NULL, NULL, c_be, 1, "insufficient quota to match these scopes: [{BestEffort Exists []}]" },
		{ "Covering quota exist for configured limited scope resourceQuotaBestEffort", "allowed-pod", NULL,
		  "fake-priority", &q_be, NULL, c_be, 1, "" },
		{ "Two scopes,BestEffort and PriorityClassIN, in two LimitedResources. Neither matches pod. Pod allowed",
		  "allowed-pod", small, "fake-priority", NULL, NULL, c_be_pcin, 2, "" },
		{ "... Only BestEffort scope matches pod. Pod admit fails because covering quota is missing for BestEffort "
		  "scope", "allowed-pod", NULL, "fake-priority", NULL, NULL, c_be_pcin, 2,
		  "insufficient quota to match these scopes: [{BestEffort Exists []}]" },
		{ "... Only PriorityClass scope matches pod. Pod admit fails because covering quota is missing for "
		  "PriorityClass scope", "allowed-pod", small, "cluster-services", NULL, NULL, c_be_pcin, 2,
		  "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]" },
		{ "... Both the scopes matches pod. Pod admit fails because covering quota is missing for PriorityClass "
		  "scope and BestEffort scope", "allowed-pod", NULL, "cluster-services", NULL, NULL, c_be_pcin, 2,
		  "insufficient quota to match these scopes: [{BestEffort Exists []} {PriorityClass In [cluster-services]}]" },
		{ "... Quota available only for BestEffort scope. Pod admit fails because covering quota is missing for "
		  "PriorityClass scope", "allowed-pod", NULL, "cluster-services", &q_be, NULL, c_be_pcin, 2,
		  "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]" },
		{ "... Quota available only for PriorityClass scope. Pod admit fails because covering quota is missing for "
		  "BestEffort scope", "allowed-pod", NULL, "cluster-services", &q_pcin, NULL, c_be_pcin, 2,
		  "insufficient quota to match these scopes: [{BestEffort Exists []}]" },
		{ "... Quota available only for both the scopes. Pod admit success. No Error", "allowed-pod", NULL,
		  "cluster-services", &q_be, &q_pcin, c_be_pcin, 2, "" },
		{ "Pod allowed with priorityclass if limited scope PriorityClassNameExists not configured.", "allowed-pod",
		  big, "fake-priority", NULL, NULL, NULL, 0, "" },
		{ "quota fails, though covering quota for configured limited scope PriorityClassNameExists exists.",
		  "not-allowed-pod", huge, "fake-priority", &q_pc_exists_mem, NULL, c_pc_exists, 1,
		  "pods \"not-allowed-pod\" is forbidden: exceeded quota: quota, requested: memory=20Gi, used: memory=1Gi, "
		  "limited: memory=10Gi" },
		{ "Pod has different priorityclass than configured limited. Covering quota exists for configured limited "
		  "scope PriorityClassIn.", "allowed-pod", big, "fake-priority", &q_pcin, NULL, c_pcin, 1, "" },
		{ "Pod has limited priorityclass. Covering quota exists for configured limited scope PriorityClassIn.",
		  "allowed-pod", big, "cluster-services", &q_pcin, NULL, c_pcin2, 1, "" },
		{ "Pod has limited priorityclass. Covering quota  does not exist for configured limited scope "
		  "PriorityClassIn.", "not-allowed-pod", big, "cluster-services", &q_pcin_another, NULL, c_pcin2, 1,
		  "insufficient quota to match these scopes: [{PriorityClass In [another-priorityclass-name "
		  "cluster-services]}]" },
		{ "From the above test case, just changing pod priority from cluster-services to "
		  "another-priorityclass-name. expecting no error", "allowed-pod", big, "another-priorityclass-name",
		  &q_pcin_another, NULL, c_pcin2, 1, "" },
		{ "Pod has limited priorityclass. Covering quota does NOT exists for configured limited scope "
		  "PriorityClassIn.", "not-allowed-pod", big, "cluster-services", NULL, NULL, c_pcin2, 1,
		  "insufficient quota to match these scopes: [{PriorityClass In [another-priorityclass-name "
		  "cluster-services]}]" },
		{ "Pod has limited priorityclass. Covering quota exists for configured limited scope PriorityClassIn "
		  "through PriorityClassNameExists", "allowed-pod", big, "cluster-services", &q_pc_exists, NULL, c_pcin2, 1,
		  "" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		pp_quotas *q = with_config(t[i].config, t[i].n_config);
		pp_container_resources c;
		pp_quota_pod p = valid_pod(t[i].pod, &c, t[i].req, t[i].req ? 2 : 0, NONE, t[i].class_name);
		pp_admission *a = NULL;
		pp_err err = { "" };
		if (t[i].quota && add(q, t[i].quota, &err) < 0)
			fail_msg("%s: %s", t[i].description, err.msg);
		if (t[i].another && add(q, t[i].another, &err) < 0)
			fail_msg("%s: %s", t[i].description, err.msg);
		assert_int_equal(pp_quotas_admit(q, &p, 0, &a, &err), 0);
		if (strcmp(pp_admission_message(a), t[i].err) != 0)
			fail_msg("%s: \"%s\", want \"%s\"", t[i].description, pp_admission_message(a), t[i].err);
		/* the scope refusal is the plugin's plain error (500), the others are Forbidden */
		if (*t[i].err)
			assert_int_equal(pp_admission_http_status(a), strncmp(t[i].err, "insufficient quota to match", 27) ? 403 : 500);
		pp_admission_free(a);
		pp_quotas_free(q);
	}
}

/* --- validation: pkg/apis/core/validation ValidateResourceQuota ------------------------------------ */

static void test_validation(void **state)
{
	static const char *const be[] = { "BestEffort" }, *const be_notbe[] = { "BestEffort", "NotBestEffort" };
	static const char *const bogus[] = { "Bogus" };
	static const char *const cs[] = { "cluster-services" };
	static const pp_scope_requirement in_novalues[] = { { "PriorityClass", "In", NULL, 0 } };
	static const pp_scope_requirement exists_values[] = { { "PriorityClass", "Exists", cs, 1 } };
	static const pp_scope_requirement be_in[] = { { "BestEffort", "In", cs, 1 } };
	static const pp_scope_requirement bad_op[] = { { "PriorityClass", "in", cs, 1 } };
	const struct {
		struct tquota q;
		const char *err; /* a part of the message; NULL: valid */
	} t[] = {
		{ { .name = "q", .hard = KV({ "pods", "10" }, { "requests.cpu", "1500m" }, { "count/pods", "3" }), .n_hard = 3 }, NULL },
		{ { .name = "q", .hard = KV({ "example.com/dongle", "2" }), .n_hard = 1 }, NULL },
		{ { .name = "q", .hard = KV({ "foo", "1" }), .n_hard = 1 }, "spec.hard[foo]: must be a standard resource for quota" },
		{ { .name = "q", .hard = KV({ "pods", "1.5" }), .n_hard = 1 }, "spec.hard[pods]: must be an integer" },
		{ { .name = "q", .hard = KV({ "cpu", "-1" }), .n_hard = 1 }, "spec.hard[cpu]: must be greater than or equal to 0" },
		{ { .name = "q", .hard = KV({ "cpu", "1" }), .n_hard = 1, .scopes = be, .n_scopes = 1 },
		  "spec.scopes[0]: unsupported scope applied to resource" },
		{ { .name = "q", .hard = KV({ "pods", "1" }), .n_hard = 1, .scopes = be_notbe, .n_scopes = 2 }, "conflicting scopes" },
		{ { .name = "q", .scopes = bogus, .n_scopes = 1 }, "spec.scopes[0]: unsupported scope \"Bogus\"" },
		{ { .name = "q", .sel = in_novalues, .n_sel = 1 }, "spec.scopeSelector.matchExpressions[0].values: must be at least one value" },
		{ { .name = "q", .sel = exists_values, .n_sel = 1 }, "matchExpressions[0].values: must be no value" },
		{ { .name = "q", .sel = be_in, .n_sel = 1 }, "matchExpressions[0].operator: must be Exists" },
		{ { .name = "q", .sel = bad_op, .n_sel = 1 }, "matchExpressions[0].operator: not a valid selector operator" },
		{ { .name = "Q_bad" }, "metadata.name" },
		{ { .name = "q", .hard = KV({ "pods", "1" }), .n_hard = 1, .used = KV({ "pods", "x" }), .n_used = 1, .status = true },
		  "status.used[pods]: " },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		pp_quotas *q = NULL;
		pp_err err = { "" };
		assert_int_equal(pp_quotas_new(&q), 0);
		int r = add(q, &t[i].q, &err);
		if (t[i].err ? r != -EINVAL || !strstr(err.msg, t[i].err) : r != 0)
			fail_msg("case %zu: %d \"%s\", want %s", i, r, err.msg, t[i].err ? t[i].err : "valid");
		pp_quotas_free(q);
	}
	/* duplicates */
	pp_quotas *q = NULL;
	assert_int_equal(pp_quotas_new(&q), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "q" }, NULL), 0);
	assert_int_equal(add(q, &(struct tquota){ .name = "q" }, NULL), -EEXIST);
	assert_int_equal(add(q, &(struct tquota){ .ns = "other", .name = "q" }, NULL), 0);
	assert_int_equal(pp_quotas_count(q), 2);

	/* the plugin's configuration: what kube-apiserver would read as "never matches" is refused */
	static const pp_scope_requirement typo[] = { { "Priorityclass", "In", cs, 1 } };
	static const pp_scope_requirement be_no_op[] = { { "BestEffort", NULL, NULL, 0 } };
	pp_err err = { "" };
	assert_int_equal(pp_quotas_add_limited_resource(q, &(pp_limited_resource){ .resource = "pods", .match_scopes = typo,
	                                                                          .n_match_scopes = 1 }, &err), -EINVAL);
	assert_string_equal(err.msg, "limitedResources[0].matchScopes[0].scopeName: unsupported scope \"Priorityclass\"");
	assert_int_equal(pp_quotas_add_limited_resource(q, &(pp_limited_resource){ .resource = "pods", .match_scopes = bad_op,
	                                                                          .n_match_scopes = 1 }, &err), -EINVAL);
	assert_int_equal(pp_quotas_add_limited_resource(q, &(pp_limited_resource){ .resource = "pods", .match_scopes = be_in,
	                                                                          .n_match_scopes = 1 }, &err), -EINVAL);
	assert_int_equal(pp_quotas_add_limited_resource(q, &(pp_limited_resource){ .resource = "" }, &err), -EINVAL);
	assert_string_equal(err.msg, "limitedResources[0].resource: Required value");
	assert_int_equal(pp_quotas_add_limited_resource(q, &(pp_limited_resource){ .resource = "pods",
	                                                                          .match_scopes = be_no_op,
	                                                                          .n_match_scopes = 1 }, &err), 0);
	/* the scope's operator is printed as configured: empty */
	pp_container_resources c;
	pp_quota_pod p = valid_pod("p", &c, NONE, NONE, NULL);
	assert_admit(q, &p, 0, "insufficient quota to match these scopes: [{BestEffort  []}]");
	pp_quotas_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantity_string),
		cmocka_unit_test(test_quantity_parse_emit),
		cmocka_unit_test(test_quantity_add),
		cmocka_unit_test(test_pod_usage),
		cmocka_unit_test(test_matching_scopes),
		cmocka_unit_test(test_constraints),
		cmocka_unit_test(test_usage_stats),
		cmocka_unit_test(test_usage_deletion_grace),
		cmocka_unit_test(test_admit_quota_limit),
		cmocka_unit_test(test_admit_constraints_and_status),
		cmocka_unit_test(test_admit_scoped_quotas),
		cmocka_unit_test(test_admit_limited_resources),
		cmocka_unit_test(test_admit_limited_scopes),
		cmocka_unit_test(test_validation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
