/*
 * The decoder's quota paths (issue 30): ResourceQuota objects (manifests, kubectl JSON with
 * status), the pod fields the quota system reads (limits, the API server's limits-to-requests
 * defaulting, activeDeadlineSeconds, deletionGracePeriodSeconds, qosClass, cross-namespace
 * affinity), and kube-apiserver's admission configuration file (inline, by path, the older
 * group, its strict decoding) with the exact messages.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "k8s.h"

struct run {
	k8s_cluster c;
	int r;
	diag d;
	char *out;
	size_t len;
};

/* kind: 'o' objects, 'a' an admission configuration (name is its path for relative paths) */
static void run(struct run *x, char kind, const char *name, const char *text)
{
	FILE *f = open_memstream(&x->out, &x->len);
	assert_non_null(f);
	diag_init(&x->d, f);
	k8s_cluster_init(&x->c);
	x->r = kind == 'o' ? k8s_load_string(&x->c, name, text, strlen(text), &x->d)
	                   : k8s_load_admission_string(&x->c, name, text, strlen(text), &x->d);
	fclose(f);
}

static void done(struct run *x)
{
	k8s_cluster_done(&x->c);
	free(x->out);
}

static const char *get(const k8s_rlist *l, const char *k)
{
	const char *v = k8s_rlist_get(l, k);
	return v ? v : "(absent)";
}

static void test_quota_manifest(void **state)
{
	struct run x;
	(void)state;
	run(&x, 'o', "q.yaml",
	    "apiVersion: v1\n"
	    "kind: ResourceQuota\n"
	    "metadata: {name: pods-cluster-services, namespace: kube-system}\n"
	    "spec:\n"
	    "  hard: {pods: \"10\", requests.cpu: 1500m}\n"
	    "  scopes: [NotTerminating]\n"
	    "  scopeSelector:\n"
	    "    matchExpressions:\n"
	    "    - operator : In\n"
	    "      scopeName: PriorityClass\n"
	    "      values: [\"cluster-services\", critical]\n");
	assert_int_equal(x.r, 0);
	assert_int_equal(x.d.nerrors, 0);
	assert_int_equal(x.c.nquotas, 1);
	const struct k8s_quota *q = &x.c.quotas[0];
	assert_string_equal(q->namespace_, "kube-system");
	assert_string_equal(q->name, "pods-cluster-services");
	assert_int_equal(q->loc.line, 1);
	assert_string_equal(get(&q->hard, "pods"), "10");
	assert_string_equal(get(&q->hard, "requests.cpu"), "1500m");
	assert_int_equal(q->nscopes, 1);
	assert_string_equal(q->scopes[0], "NotTerminating");
	assert_int_equal(q->nselector, 1);
	assert_string_equal(q->selector[0].scope_name, "PriorityClass");
	assert_string_equal(q->selector[0].op, "In");
	assert_int_equal(q->selector[0].nvalues, 2);
	assert_string_equal(q->selector[0].values[1], "critical");
	assert_false(q->has_status);
	done(&x);
}

/* `kubectl get resourcequota -A -o json`: a List; status as the quota controller wrote it */
static void test_quota_kubectl_json(void **state)
{
	struct run x;
	(void)state;
	run(&x, 'o', "rq.json",
	    "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\","
	    "\"metadata\":{\"name\":\"compute\",\"namespace\":\"team\"},\"spec\":{\"hard\":{\"requests.memory\":\"4Gi\"}},"
	    "\"status\":{\"hard\":{\"requests.memory\":\"4Gi\"},\"used\":{\"requests.memory\":\"1536Mi\"}}},"
	    "{\"apiVersion\":\"v1\",\"kind\":\"ResourceQuota\",\"metadata\":{\"name\":\"new\",\"namespace\":\"team\"},"
	    "\"spec\":{\"hard\":{\"pods\":\"1\"}},\"status\":{}}]}");
	assert_int_equal(x.r, 0);
	assert_int_equal(x.c.nquotas, 2);
	assert_true(x.c.quotas[0].has_status);
	assert_string_equal(get(&x.c.quotas[0].status_used, "requests.memory"), "1536Mi");
	/* "status: {}" is a quota the controller has not synced: no status */
	assert_false(x.c.quotas[1].has_status);
	done(&x);
}

static void test_quota_errors(void **state)
{
	struct run x;
	(void)state;
	run(&x, 'o', "bad.yaml",
	    "apiVersion: v1\n"
	    "kind: ResourceQuota\n"
	    "metadata: {name: q, namespace: ns}\n"
	    "spec:\n"
	    "  hard: {pods: many}\n"
	    "  scopes: BestEffort\n"
	    "  scopeSelector:\n"
	    "    matchExpressions:\n"
	    "    - {operator: Exists}\n");
	assert_int_equal(x.r, -EINVAL);
	assert_int_equal(x.c.nquotas, 0);
	assert_string_equal(x.out,
	                    "bad.yaml:5: resourcequotas/ns/q: spec.hard.pods: invalid quantity \"many\": unknown suffix \"many\"\n"
	                    "bad.yaml:6: resourcequotas/ns/q: spec.scopes: expected a list, got a string\n"
	                    "bad.yaml:9: resourcequotas/ns/q: spec.scopeSelector.matchExpressions[0].scopeName: required field "
	                    "is missing\n");
	done(&x);
}

/* SetDefaults_Pod: limits without requests become requests (containers, init containers, and the
 * pod-level cpu/memory/hugepages); the quota system's other pod fields. */
static void test_pod_quota_fields(void **state)
{
	struct run x;
	(void)state;
	run(&x, 'o', "pod.yaml",
	    "apiVersion: v1\n"
	    "kind: Pod\n"
	    "metadata: {name: p, namespace: ns, deletionTimestamp: \"2024-06-01T00:00:00Z\", deletionGracePeriodSeconds: 30}\n"
	    "spec:\n"
	    "  activeDeadlineSeconds: 600\n"
	    "  resources: {limits: {cpu: \"2\", example.com/dongle: \"1\"}}\n"
	    "  initContainers:\n"
	    "  - {name: init, resources: {limits: {memory: 1Gi}}}\n"
	    "  containers:\n"
	    "  - name: app\n"
	    "    resources: {requests: {cpu: 100m}, limits: {cpu: 500m, memory: 2Gi}}\n"
	    "  affinity:\n"
	    "    podAntiAffinity:\n"
	    "      preferredDuringSchedulingIgnoredDuringExecution:\n"
	    "      - weight: 1\n"
	    "        podAffinityTerm: {topologyKey: zone, namespaceSelector: {}}\n"
	    "status: {qosClass: Burstable}\n");
	assert_int_equal(x.r, 0);
	const struct k8s_pod *p = &x.c.pods[0];
	assert_string_equal(get(&p->containers[0].requests, "cpu"), "100m"); /* a request stays */
	assert_string_equal(get(&p->containers[0].requests, "memory"), "2Gi"); /* a limit fills in */
	assert_string_equal(get(&p->containers[0].limits, "cpu"), "500m");
	assert_string_equal(get(&p->init_containers[0].requests, "memory"), "1Gi");
	assert_string_equal(get(&p->pod_limits, "cpu"), "2");
	assert_string_equal(get(&p->pod_requests, "cpu"), "2");
	assert_string_equal(get(&p->pod_requests, "example.com/dongle"), "(absent)"); /* not a pod-level resource */
	assert_true(p->has_active_deadline);
	assert_int_equal(p->active_deadline_seconds, 600);
	assert_true(p->has_deletion_grace);
	assert_int_equal(p->deletion_grace_seconds, 30);
	assert_string_equal(p->qos_class, "Burstable");
	assert_true(p->cross_namespace_affinity);

	/* into libpreempt: containers first, then init containers */
	karena a = { 0 };
	pp_quota_pod qp;
	assert_int_equal(k8s_quota_pod(p, "batch", &a, &qp), 0);
	assert_int_equal(qp.n_containers, 2);
	assert_int_equal(qp.containers[0].kind, PP_CONTAINER);
	assert_string_equal(qp.containers[1].name, "init");
	assert_int_equal(qp.containers[1].kind, PP_INIT_CONTAINER);
	assert_string_equal(qp.priority_class_name, "batch");
	assert_true(qp.has_deletion_grace);
	karena_free(&a);
	done(&x);

	/* required terms: namespaces make it cross-namespace; a plain term does not */
	run(&x, 'o', "pod2.yaml",
	    "apiVersion: v1\nkind: Pod\nmetadata: {name: q}\nspec:\n  containers: [{name: c}]\n"
	    "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
	    "      - {topologyKey: zone, labelSelector: {}}\n"
	    "      - {topologyKey: zone, labelSelector: {}, namespaces: [other]}\n"
	    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: r}\nspec:\n  containers: [{name: c}]\n"
	    "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
	    "      - {topologyKey: zone, labelSelector: {}}\n");
	assert_int_equal(x.r, 0);
	assert_true(x.c.pods[0].cross_namespace_affinity);
	assert_false(x.c.pods[1].cross_namespace_affinity);
	done(&x);
}

static const char inline_config[] =
	"apiVersion: apiserver.config.k8s.io/v1\n"
	"kind: AdmissionConfiguration\n"
	"plugins:\n"
	"- name: EventRateLimit\n"
	"  configuration: {anything: goes}\n"
	"- name: ResourceQuota\n"
	"  configuration:\n"
	"    apiVersion: apiserver.config.k8s.io/v1\n"
	"    kind: ResourceQuotaConfiguration\n"
	"    limitedResources:\n"
	"    - resource: pods\n"
	"      matchScopes:\n"
	"      - {scopeName: PriorityClass, operator: In, values: [cluster-services]}\n"
	"    - {apiGroup: \"\", resource: pods, matchContains: [requests.memory]}\n"
	"- name: ResourceQuota\n"
	"  configuration: {never: read}\n";

static void test_admission_inline(void **state)
{
	struct run x;
	(void)state;
	run(&x, 'a', "admission.yaml", inline_config);
	assert_int_equal(x.r, 0);
	assert_string_equal(x.out, "");
	assert_string_equal(x.c.admission_file, "admission.yaml");
	/* the first ResourceQuota entry counts, as kube-apiserver's ConfigFor takes the first */
	assert_int_equal(x.c.nlimited, 2);
	const struct k8s_limited_resource *l = &x.c.limited[0];
	assert_string_equal(l->resource, "pods");
	assert_string_equal(l->api_group, "");
	assert_int_equal(l->loc.line, 11);
	assert_int_equal(l->nscopes, 1);
	assert_string_equal(l->scopes[0].op, "In");
	assert_string_equal(l->scopes[0].values[0], "cluster-services");
	assert_int_equal(x.c.limited[1].ncontains, 1);
	assert_string_equal(x.c.limited[1].contains[0], "requests.memory");
	done(&x);
}

static void test_admission_path(void **state)
{
	char dir[] = "/tmp/test-k8s-quota.XXXXXX", path[256], admission[256];
	struct run x;
	FILE *f;
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/rq.yaml", dir);
	snprintf(admission, sizeof(admission), "%s/admission.yaml", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("apiVersion: resourcequota.admission.k8s.io/v1beta1\nkind: Configuration\n"
	      "limitedResources:\n- resource: pods\n  matchScopes: [{scopeName: BestEffort}]\n", f);
	fclose(f);
	/* relative to the admission file's directory, as kube-apiserver resolves it */
	run(&x, 'a', admission, "apiVersion: apiserver.k8s.io/v1alpha1\nkind: AdmissionConfiguration\n"
	                        "plugins:\n- {name: ResourceQuota, path: rq.yaml}\n");
	assert_int_equal(x.r, 0);
	assert_int_equal(x.c.nlimited, 1);
	assert_string_equal(x.c.limited[0].scopes[0].scope_name, "BestEffort");
	assert_null(x.c.limited[0].scopes[0].op);
	assert_string_equal(x.c.limited[0].loc.file, path);
	done(&x);

	/* a file that is not there, and one that is not a regular file */
	run(&x, 'a', admission, "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
	                        "plugins:\n- name: ResourceQuota\n  path: none.yaml\n");
	assert_int_equal(x.r, -EINVAL);
	char want[600];
	snprintf(want, sizeof(want), "%s:5: AdmissionConfiguration: plugins[0].path: %s/none.yaml: No such file or directory\n",
	         admission, dir);
	assert_string_equal(x.out, want);
	done(&x);
	run(&x, 'a', admission, "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
	                        "plugins:\n- {name: ResourceQuota, path: /dev/null}\n");
	assert_int_equal(x.r, -EINVAL);
	assert_non_null(strstr(x.out, "plugins[0].path: /dev/null: not a regular file"));
	done(&x);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_admission_errors(void **state)
{
	static const struct {
		const char *text, *out;
	} t[] = {
		{ "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n"
		  "  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: ResourceQuotaConfiguration\n"
		  "    limitedResources:\n    - resource: pods\n      matchScope: []\n",
		  "a.yaml:10: ResourceQuotaConfiguration: plugins[0].configuration.limitedResources[0].matchScope: unknown field "
		  "(kube-apiserver decodes this file strictly)\n" },
		{ "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nmetadata: {name: x}\nplugins: []\n",
		  "a.yaml:3: AdmissionConfiguration: metadata: unknown field (kube-apiserver decodes this file strictly)\n" },
		{ "apiVersion: v1\nkind: ResourceQuotaConfiguration\n",
		  "a.yaml:1: admission configuration: v1 ResourceQuotaConfiguration is not an admission configuration "
		  "(apiserver.config.k8s.io/v1 AdmissionConfiguration, apiserver.config.k8s.io/v1alpha1 AdmissionConfiguration, "
		  "apiserver.k8s.io/v1alpha1 AdmissionConfiguration)\n" },
		{ "kind: AdmissionConfiguration\n", "a.yaml:1: admission configuration: apiVersion: required field is missing\n" },
		{ "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n"
		  "  configuration: {apiVersion: apiserver.config.k8s.io/v1, kind: Configuration}\n",
		  "a.yaml:5: AdmissionConfiguration: plugins[0].configuration: apiserver.config.k8s.io/v1 Configuration is not the "
		  "ResourceQuota plugin's configuration (apiserver.config.k8s.io/v1 ResourceQuotaConfiguration, "
		  "resourcequota.admission.k8s.io/v1beta1 Configuration, resourcequota.admission.k8s.io/v1alpha1 Configuration)\n" },
		{ "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n---\n"
		  "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n",
		  "a.yaml:4: admission configuration: a second object: kube-apiserver reads one AdmissionConfiguration\n" },
		{ "", "a.yaml: no AdmissionConfiguration in the file\n" },
		{ "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- {path: x.yaml}\n",
		  "a.yaml:4: AdmissionConfiguration: plugins[0].name: required field is missing\n" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct run x;
		run(&x, 'a', "a.yaml", t[i].text);
		if (x.r != -EINVAL || strcmp(x.out, t[i].out) != 0)
			fail_msg("case %zu: %d \"%s\", want \"%s\"", i, x.r, x.out, t[i].out);
		assert_int_equal(x.c.nlimited, 0);
		done(&x);
	}
	/* without a ResourceQuota plugin: its default (nothing limited), said */
	struct run x;
	run(&x, 'a', "a.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
	                       "- {name: PodSecurity, path: ps.yaml}\n");
	assert_int_equal(x.r, 0);
	assert_string_equal(x.out, "a.yaml: warning: no plugin named ResourceQuota: its default configuration applies (no "
	                           "limitedResources)\n");
	done(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_manifest),
		cmocka_unit_test(test_quota_kubectl_json),
		cmocka_unit_test(test_quota_errors),
		cmocka_unit_test(test_pod_quota_fields),
		cmocka_unit_test(test_admission_inline),
		cmocka_unit_test(test_admission_path),
		cmocka_unit_test(test_admission_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
