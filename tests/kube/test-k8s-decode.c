/* kube's object decoder (kube/k8s_decode.c, as preemptctl reads its files): kubectl Lists in JSON
 * and YAML, multi-document manifests, the Kubernetes documentation's examples, and the exact error
 * messages for bad input. */
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

struct loaded {
	k8s_cluster c;
	int r;
	unsigned nerrors, nwarnings;
	char *messages;
};

static void load_text(struct loaded *l, const char *name, const char *text)
{
	size_t size = 0;
	FILE *f = open_memstream(&l->messages, &size);
	diag d;

	assert_non_null(f);
	diag_init(&d, f);
	k8s_cluster_init(&l->c);
	l->r = k8s_load_string(&l->c, name, text, strlen(text), &d);
	fclose(f);
	l->nerrors = d.nerrors;
	l->nwarnings = d.nwarnings;
}

static void load_files(struct loaded *l, const char *const *files)
{
	size_t size = 0;
	FILE *f = open_memstream(&l->messages, &size);
	diag d;

	assert_non_null(f);
	diag_init(&d, f);
	k8s_cluster_init(&l->c);
	l->r = 0;
	for (; *files; files++) {
		int r = k8s_load_file(&l->c, *files, &d);
		if (r < 0)
			l->r = r;
	}
	fclose(f);
	l->nerrors = d.nerrors;
	l->nwarnings = d.nwarnings;
}

static void unload(struct loaded *l)
{
	k8s_cluster_done(&l->c);
	free(l->messages);
}

static const char *label(const struct k8s_map *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->v[i].key, key) == 0)
			return m->v[i].value;
	return NULL;
}

static void test_docs_examples(void **state)
{
	static const char *const files[] = {
		"tests/fixtures/k8s/docs-priorityclass.yaml",
		"tests/fixtures/k8s/docs-priorityclass-nonpreempting.yaml",
		"tests/fixtures/k8s/docs-pod.yaml",
		NULL,
	};
	struct loaded l;
	(void)state;

	load_files(&l, files);
	assert_string_equal(l.messages, "");
	assert_int_equal(l.r, 0);
	assert_int_equal(l.c.nclasses, 2);
	assert_string_equal(l.c.classes[0].name, "high-priority");
	assert_int_equal(l.c.classes[0].value, 1000000);
	assert_false(l.c.classes[0].global_default);
	assert_null(l.c.classes[0].preemption_policy);
	assert_string_equal(l.c.classes[0].description,
	                    "This priority class should be used for XYZ service pods only.");
	assert_string_equal(l.c.classes[1].name, "high-priority-nonpreempting");
	assert_string_equal(l.c.classes[1].preemption_policy, "Never");

	assert_int_equal(l.c.npods, 1);
	const struct k8s_pod *p = &l.c.pods[0];
	assert_string_equal(p->namespace_, "default");
	assert_string_equal(p->name, "nginx");
	assert_string_equal(label(&p->labels, "env"), "test");
	assert_string_equal(p->priority_class_name, "high-priority");
	assert_false(p->has_priority);
	assert_null(p->node_name);
	assert_int_equal(p->ncontainers, 1);
	assert_string_equal(p->containers[0].name, "nginx");
	assert_int_equal(p->containers[0].requests.n, 0);
	/* the location of each object is kept for later messages */
	assert_string_equal(p->loc.file, "tests/fixtures/k8s/docs-pod.yaml");
	assert_int_equal(p->loc.line, 1);
	unload(&l);
}

/* kubectl's List in JSON and the same in YAML decode to the same objects. */
static void test_kubectl_list_json_and_yaml(void **state)
{
	static const char *const json[] = { "tests/fixtures/k8s/cluster.json", NULL };
	static const char *const yaml[] = { "tests/fixtures/k8s/cluster.yaml", NULL };
	struct loaded a, b;
	(void)state;

	load_files(&a, json);
	load_files(&b, yaml);
	assert_string_equal(a.messages, "");
	assert_string_equal(b.messages, "");
	assert_int_equal(a.c.nclasses, 5);
	assert_int_equal(a.c.nnodes, 3);
	assert_int_equal(a.c.npods, 10);
	assert_int_equal(b.c.nclasses, a.c.nclasses);
	assert_int_equal(b.c.nnodes, a.c.nnodes);
	assert_int_equal(b.c.npods, a.c.npods);
	for (size_t i = 0; i < a.c.npods; i++) {
		const struct k8s_pod *x = &a.c.pods[i], *y = &b.c.pods[i];
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->priority, y->priority);
		assert_int_equal(x->has_start, y->has_start);
		assert_int_equal(x->start_ns, y->start_ns);
		assert_int_equal(x->phase, y->phase);
		assert_string_equal(x->containers[0].requests.v[0].value, y->containers[0].requests.v[0].value);
	}
	const struct k8s_node *n = &a.c.nodes[1];
	assert_string_equal(n->name, "n2");
	assert_string_equal(label(&n->allocatable, "cpu"), "4");
	assert_string_equal(label(&n->allocatable, "memory"), "8Gi");
	assert_string_equal(label(&n->labels, "kubernetes.io/hostname"), "n2");
	const struct k8s_pod *p = k8s_cluster_find_pod(&a.c, "default", "b2");
	assert_non_null(p);
	assert_string_equal(p->node_name, "n2");
	assert_int_equal(p->phase, K8S_PHASE_RUNNING);
	assert_true(p->has_priority);
	assert_int_equal(p->priority, 100);
	assert_int_equal(p->start_ns, INT64_C(1714557900) * 1000000000); /* 2024-05-01T10:05:00Z */
	assert_int_equal(p->grace_seconds, 30);
	assert_null(k8s_cluster_find_pod(&a.c, "other", "b2"));
	unload(&a);
	unload(&b);
}

static void test_multi_document_and_fields(void **state)
{
	static const char text[] =
		"# a manifest\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: Node\n"
		"metadata: {name: w1, labels: {zone: a}}\n"
		"spec:\n"
		"  unschedulable: true\n"
		"  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n"
		"status:\n"
		"  capacity: {cpu: ' 2 ', memory: 4Gi, pods: 10, example.com/gpu: 1}\n"
		"---\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: Pod\n"
		"metadata:\n"
		"  name: web-1\n"
		"  namespace: shop\n"
		"  deletionTimestamp: 2024-05-01T10:00:00.5+02:00\n"
		"spec:\n"
		"  initContainers:\n"
		"  - {name: init, resources: {requests: {cpu: 1}}}\n"
		"  - {name: proxy, restartPolicy: Always, resources: {requests: {memory: 64Mi}}}\n"
		"  containers:\n"
		"  - name: app\n"
		"    resources: {requests: {cpu: 250m, memory: 1.5e3}}\n"
		"  overhead: {cpu: 10m}\n"
		"  tolerations: [{operator: Exists}]\n"
		"  nodeSelector: {zone: a}\n"
		"  affinity:\n"
		"    nodeAffinity:\n"
		"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		"        nodeSelectorTerms:\n"
		"        - matchExpressions: [{key: zone, operator: In, values: [a, b]}]\n"
		"          matchFields: [{key: metadata.name, operator: NotIn, values: [w2]}]\n"
		"    podAntiAffinity:\n"
		"      requiredDuringSchedulingIgnoredDuringExecution:\n"
		"      - labelSelector: {matchLabels: {app: web}}\n"
		"        topologyKey: kubernetes.io/hostname\n"
		"status:\n"
		"  nominatedNodeName: w1\n"
		"  conditions:\n"
		"  - {type: DisruptionTarget, status: 'True', reason: PreemptionByScheduler}\n"
		"---\n"
		"apiVersion: policy/v1\n"
		"kind: PodDisruptionBudget\n"
		"metadata: {name: web, namespace: shop}\n"
		"spec: {minAvailable: 50%, selector: {matchExpressions: [{key: app, operator: Exists}]}}\n"
		"status: {disruptionsAllowed: 1, disruptedPods: {web-0: '2024-05-01T10:00:00Z'}}\n";
	struct loaded l;
	(void)state;

	load_text(&l, "m.yaml", text);
	assert_string_equal(l.messages, "");
	assert_int_equal(l.r, 0);
	assert_int_equal(l.c.nnodes, 1);
	const struct k8s_node *n = &l.c.nodes[0];
	assert_true(n->unschedulable);
	assert_int_equal(n->ntaints, 1);
	assert_string_equal(n->taints[0].effect, "NoSchedule");
	/* capacity stands in for the absent allocatable; blanks are trimmed as JSON decoding does */
	assert_string_equal(label(&n->allocatable, "cpu"), "2");
	assert_string_equal(label(&n->allocatable, "pods"), "10");
	assert_string_equal(label(&n->allocatable, "example.com/gpu"), "1");
	assert_int_equal(n->loc.line, 3);

	assert_int_equal(l.c.npods, 1);
	const struct k8s_pod *p = &l.c.pods[0];
	assert_string_equal(p->namespace_, "shop");
	assert_true(p->has_deletion);
	assert_int_equal(p->deletion_ns, INT64_C(1714550400) * 1000000000 + 500000000);
	assert_int_equal(p->ninit_containers, 2);
	assert_false(p->init_containers[0].restartable);
	assert_true(p->init_containers[1].restartable);
	assert_string_equal(label(&p->containers[0].requests, "memory"), "1.5e3");
	assert_string_equal(label(&p->overhead, "cpu"), "10m");
	assert_int_equal(p->ntolerations, 1);
	assert_string_equal(p->tolerations[0].op, "Exists");
	assert_string_equal(p->tolerations[0].key, "");
	assert_string_equal(label(&p->node_selector, "zone"), "a");
	assert_true(p->has_node_affinity);
	assert_int_equal(p->nnode_terms, 1);
	assert_int_equal(p->node_terms[0].nexprs, 1);
	assert_int_equal(p->node_terms[0].exprs[0].nvalues, 2);
	assert_string_equal(p->node_terms[0].fields[0].values[0], "w2");
	assert_int_equal(p->nanti_affinity, 1);
	assert_string_equal(p->anti_affinity[0].topology_key, "kubernetes.io/hostname");
	assert_string_equal(label(&p->anti_affinity[0].selector.match_labels, "app"), "web");
	assert_string_equal(p->nominated_node_name, "w1");
	assert_true(p->preempted_by_scheduler);
	assert_false(p->has_grace);

	assert_int_equal(l.c.npdbs, 1);
	const struct k8s_pdb *b = &l.c.pdbs[0];
	assert_true(b->min_available.present);
	assert_true(b->min_available.percent);
	assert_int_equal(b->min_available.value, 50);
	assert_false(b->max_unavailable.present);
	assert_true(b->selector.present);
	assert_int_equal(b->selector.nexprs, 1);
	assert_true(b->has_disruptions_allowed);
	assert_int_equal(b->disruptions_allowed, 1);
	assert_int_equal(b->ndisrupted, 1);
	assert_string_equal(b->disrupted_pods[0], "web-0");
	unload(&l);
}

/* Every error names file, line, object and field; all of them are reported, not just the first. */
/* The DisruptionTarget condition's reason says who is taking the pod down: kube-scheduler's
 * preemption, or an eviction the API server let through (preemptd --pdb strict's victims). */
static void test_disruption_target_reasons(void **state)
{
	static const char text[] =
		"{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[\n"
		"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"evicted\",\"namespace\":\"a\"},"
		"\"spec\":{\"containers\":[{\"name\":\"c\"}]},\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\","
		"\"status\":\"True\",\"reason\":\"EvictionByEvictionAPI\",\"message\":\"Eviction API: evicting\"}]}},\n"
		"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"false\",\"namespace\":\"a\"},"
		"\"spec\":{\"containers\":[{\"name\":\"c\"}]},\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\","
		"\"status\":\"False\",\"reason\":\"EvictionByEvictionAPI\"}]}},\n"
		"{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"gc\",\"namespace\":\"a\"},"
		"\"spec\":{\"containers\":[{\"name\":\"c\"}]},\"status\":{\"conditions\":[{\"type\":\"DisruptionTarget\","
		"\"status\":\"True\",\"reason\":\"DeletionByPodGC\"}]}}]}";
	struct loaded l;
	(void)state;

	load_text(&l, "pods.json", text);
	assert_string_equal(l.messages, "");
	assert_int_equal(l.c.npods, 3);
	assert_true(l.c.pods[0].evicted_by_api);
	assert_false(l.c.pods[0].preempted_by_scheduler);
	assert_false(l.c.pods[1].evicted_by_api); /* status False */
	assert_false(l.c.pods[2].evicted_by_api);
	assert_false(l.c.pods[2].preempted_by_scheduler);
	unload(&l);
}

static void test_errors_name_object_and_field(void **state)
{
	static const char text[] =
		"{\"kind\": \"List\", \"items\": [\n"
		"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"web-1\"}, \"spec\": {\"containers\": [\n"
		"  {\"name\": \"a\", \"resources\": {\"requests\": {\"cpu\": \"1x\", \"memory\": \"-1\"}}}]}},\n"
		"{\"kind\": \"PriorityClass\", \"metadata\": {\"name\": \"p\"}, \"value\": \"10\"},\n"
		"{\"kind\": \"PriorityClass\", \"metadata\": {\"name\": \"q\"}},\n"
		"{\"kind\": \"Pod\", \"metadata\": {\"namespace\": \"x\"}, \"spec\": {}},\n"
		"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"nospec\"}},\n"
		"{\"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}, \"spec\": {\"taints\": [{\"key\": \"k\", \"effect\": \"Sometimes\"}]},\n"
		"  \"status\": {\"allocatable\": {\"cpu\": true}}},\n"
		"{\"kind\": \"PodDisruptionBudget\", \"metadata\": {\"name\": \"b\"}, \"spec\": {\"minAvailable\": \"5\", \"maxUnavailable\": \"10%\"}},\n"
		"{\"kind\": \"Pod\", \"metadata\": {\"name\": \"t\", \"creationTimestamp\": \"yesterday\"}, \"spec\": {\"containers\": [{\"name\": \"c\"}],\n"
		"  \"priority\": 1.5, \"tolerations\": [{\"key\": \"a\", \"operator\": \"Exists\", \"value\": \"v\"}]}},\n"
		"{\"metadata\": {\"name\": \"kindless\"}}\n"
		"]}\n";
	static const char expected[] =
		"bad.json:3: pods/default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity \"1x\": unknown suffix \"x\"\n"
		"bad.json:3: pods/default/web-1: spec.containers[0].resources.requests.memory: quantity \"-1\" must not be negative\n"
		"bad.json:4: priorityclasses/p: value: expected an integer, got a string\n"
		"bad.json:5: priorityclasses/q: value: required field is missing\n"
		"bad.json:6: pods/x/(unnamed): metadata.name: required field is missing\n"
		"bad.json:7: pods/default/nospec: spec: required field is missing\n"
		"bad.json:8: nodes/n1: spec.taints[0].effect: unsupported value \"Sometimes\" (NoSchedule, PreferNoSchedule or NoExecute)\n"
		"bad.json:9: nodes/n1: status.allocatable.cpu: expected a quantity, got a boolean\n"
		"bad.json:10: poddisruptionbudgets/default/b: spec.minAvailable: \"5\" is neither an integer nor a percentage between 0% and 100%\n"
		"bad.json:11: pods/default/t: metadata.creationTimestamp: invalid timestamp \"yesterday\" (want RFC 3339, e.g. 2024-05-01T10:00:00Z)\n"
		"bad.json:12: pods/default/t: spec.priority: expected an integer, got \"1.5\"\n"
		"bad.json:12: pods/default/t: spec.tolerations[0].value: must be empty when operator is Exists\n"
		"bad.json:13: kind: required field is missing\n";
	struct loaded l;
	(void)state;

	load_text(&l, "bad.json", text);
	assert_string_equal(l.messages, expected);
	assert_int_equal(l.r, -EINVAL);
	assert_int_equal(l.nerrors, 13);
	assert_int_equal(l.c.npods, 0);
	assert_int_equal(l.c.nclasses, 0);
	assert_int_equal(l.c.nnodes, 0);
	unload(&l);
}

static void test_syntax_errors(void **state)
{
	struct loaded l;
	(void)state;

	load_text(&l, "cut.json", "{\"kind\": \"List\", \"items\": [\n  {\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"");
	assert_int_equal(l.r, -EINVAL);
	assert_int_equal(l.nerrors, 1);
	assert_non_null(strstr(l.messages, "cut.json:"));
	assert_non_null(strstr(l.messages, ": syntax error: "));
	unload(&l);

	load_text(&l, "bad.yaml", "kind: Pod\nmetadata:\n  name: x\n   bad: 1\n");
	assert_string_equal(l.messages, "bad.yaml:3: syntax error: invalid multiline plain key\n");
	assert_int_equal(l.r, -EINVAL);
	unload(&l);

	load_text(&l, "dup.yaml", "kind: Pod\nkind: Node\n");
	assert_string_equal(l.messages, "dup.yaml:2: duplicate key \"kind\"\n");
	unload(&l);

	static const char *const missing[] = { "tests/fixtures/k8s/does-not-exist.json", NULL };
	load_files(&l, missing);
	assert_int_equal(l.r, -ENOENT);
	assert_string_equal(l.messages,
	                    "preemptctl: tests/fixtures/k8s/does-not-exist.json: No such file or directory\n");
	unload(&l);
}

static void test_unknown_kinds_warn(void **state)
{
	struct loaded l;
	(void)state;

	load_text(&l, "svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n---\n"
	                          "kind: PriorityClass\nmetadata: {name: a}\nvalue: -5\n");
	assert_int_equal(l.r, 0);
	assert_int_equal(l.nerrors, 0);
	assert_int_equal(l.nwarnings, 1);
	assert_string_equal(l.messages, "svc.yaml:1: warning: Service/web: kind Service is not used by preemptctl, ignored\n");
	assert_int_equal(l.c.nignored, 1);
	assert_int_equal(l.c.nclasses, 1);
	assert_int_equal(l.c.classes[0].value, -5);
	unload(&l);
}

/* Strings in YAML must be strings: Kubernetes' decoder rejects `version: 1` in labels. */
static void test_yaml_scalar_types(void **state)
{
	struct loaded l;
	(void)state;

	load_text(&l, "t.yaml", "kind: Pod\nmetadata:\n  name: p\n  labels: {version: 1, ok: '1', on: true}\n"
	                        "spec: {containers: [{name: c}]}\n");
	assert_string_equal(l.messages,
	                    "t.yaml:4: pods/default/p: metadata.labels.version: expected a string, got a number (quote it)\n"
	                    "t.yaml:4: pods/default/p: metadata.labels.on: expected a string, got a boolean (quote it)\n");
	unload(&l);
}

/* Aliases and merge keys work; exponential alias expansion ("billion laughs") is refused. */
static void test_yaml_aliases(void **state)
{
	struct loaded l;
	char *laughs, *p;
	(void)state;

	load_text(&l, "a.yaml", "base: &b {cpu: 100m}\nkind: Pod\nmetadata: {name: x}\n"
	                        "spec: {containers: [{name: c, resources: {requests: {<<: *b, memory: 1Gi}}},\n"
	                        "                    {name: d, resources: {requests: *b}}]}\n");
	assert_string_equal(l.messages, "");
	assert_int_equal(l.c.npods, 1);
	assert_int_equal(l.c.pods[0].containers[0].requests.n, 2);
	assert_string_equal(label(&l.c.pods[0].containers[0].requests, "cpu"), "100m");
	assert_string_equal(label(&l.c.pods[0].containers[0].requests, "memory"), "1Gi");
	assert_string_equal(label(&l.c.pods[0].containers[1].requests, "cpu"), "100m");
	unload(&l);

	laughs = p = calloc(1, 4096);
	assert_non_null(laughs);
	p += sprintf(p, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 9; i++) {
		p += sprintf(p, "a%d: &a%d [", i, i);
		for (int j = 0; j < 10; j++)
			p += sprintf(p, "%s*a%d", j ? ", " : "", i - 1);
		p += sprintf(p, "]\n");
	}
	sprintf(p, "kind: Pod\n");
	load_text(&l, "laughs.yaml", laughs);
	assert_string_equal(l.messages, "laughs.yaml:5: YAML aliases expand to more than 100000 nodes (or nest too "
	                                "deeply), refusing the document\n");
	assert_int_equal(l.r, -EINVAL);
	unload(&l);
	free(laughs);
}

static void test_time_parsing(void **state)
{
	int64_t t = 0;
	(void)state;

	assert_int_equal(k8s_parse_time("1970-01-01T00:00:00Z", &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(k8s_parse_time("2024-02-29T23:59:59.123456789Z", &t), 0);
	assert_int_equal(t, INT64_C(1709251199) * 1000000000 + 123456789);
	assert_int_equal(k8s_parse_time("2024-05-01T12:00:00+02:00", &t), 0);
	assert_int_equal(t, INT64_C(1714557600) * 1000000000);
	assert_int_equal(k8s_parse_time("2023-02-29T00:00:00Z", &t), -EINVAL);
	assert_int_equal(k8s_parse_time("2024-05-01 10:00:00Z", &t), -EINVAL);
	assert_int_equal(k8s_parse_time("2024-05-01T10:00:00", &t), -EINVAL);
	assert_int_equal(k8s_parse_time("2024-05-01T10:00:00.Z", &t), -EINVAL);
	assert_int_equal(k8s_parse_time("9999-01-01T00:00:00Z", &t), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docs_examples),
		cmocka_unit_test(test_kubectl_list_json_and_yaml),
		cmocka_unit_test(test_multi_document_and_fields),
		cmocka_unit_test(test_disruption_target_reasons),
		cmocka_unit_test(test_errors_name_object_and_field),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_unknown_kinds_warn),
		cmocka_unit_test(test_yaml_scalar_types),
		cmocka_unit_test(test_yaml_aliases),
		cmocka_unit_test(test_time_parsing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
