/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: kube-apiserver's admission configuration file (k8s_load_admission_string,
 * strict decoding, the ResourceQuota plugin inline or by path) — then, when it loads, the model of a
 * fixed cluster with ResourceQuotas and new pods under it, so that whatever configuration the
 * decoder lets through also drives libpreempt's quota admission.
 * Invariants: every error is printed; a refusal has the API server's shape (403: "pods \"NAME\" is
 * forbidden: ...", 500: "insufficient quota to match these scopes: [...]"); a pod is either in the
 * cluster or refused, never both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"
#include "model.h"
#include "fuzz-common.h"

/* fuzz-links: controller lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char cluster[] =
	"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: cluster-services}\nvalue: 1000000\n---\n"
	"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 1000\nglobalDefault: true\n---\n"
	"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"4\", memory: 8Gi, pods: \"10\"}}\n---\n"
	"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: cs, namespace: kube-system}\n"
	"spec: {hard: {pods: \"2\"}, scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: "
	"[cluster-services]}]}}\n---\n"
	"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: compute, namespace: tenant}\n"
	"spec: {hard: {requests.cpu: \"2\", requests.memory: 2Gi}}\n"
	"status: {hard: {requests.cpu: \"2\", requests.memory: 2Gi}, used: {requests.cpu: 500m, requests.memory: 1Gi}}\n---\n"
	"apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: be, namespace: tenant}\nspec: {hard: {pods: \"1\"}, scopes: [BestEffort]}\n---\n"
	"apiVersion: v1\nkind: Pod\nmetadata: {name: running, namespace: tenant}\n"
	"spec: {nodeName: n1, priorityClassName: cluster-services, containers: [{name: c, resources: {requests: {cpu: 500m}}}]}\n---\n"
	"apiVersion: v1\nkind: Pod\nmetadata: {name: agent, namespace: kube-system}\n"
	"spec: {priorityClassName: cluster-services, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n---\n"
	"apiVersion: v1\nkind: Pod\nmetadata: {name: agent, namespace: tenant}\n"
	"spec: {priorityClassName: cluster-services, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n---\n"
	"apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: tenant}\n"
	"spec: {containers: [{name: c, resources: {requests: {cpu: 1500m, memory: 512Mi}, limits: {memory: 1Gi}}}]}\n---\n"
	"apiVersion: v1\nkind: Pod\nmetadata: {name: idle, namespace: tenant}\nspec: {containers: [{name: c}]}\n---\n"
	"apiVersion: v1\nkind: Pod\nmetadata: {name: idle2, namespace: tenant}\nspec: {containers: [{name: c}]}\n";

static void check_refusal(const model_refusal *r)
{
	const char *msg = pp_admission_message(r->admission);
	int status = pp_admission_http_status(r->admission);
	char prefix[512];

	FUZZ_ASSERT(pp_admission_refusal(r->admission) != PP_REFUSAL_NONE);
	if (status == 403) {
		snprintf(prefix, sizeof(prefix), "pods \"%s\" is forbidden: ", r->pod->name);
		FUZZ_CHECK(strncmp(msg, prefix, strlen(prefix)) == 0, "403 message \"%s\"", msg);
	} else {
		static const char scopes[] = "insufficient quota to match these scopes: [";
		FUZZ_CHECK(status == 500 && strncmp(msg, scopes, sizeof(scopes) - 1) == 0 && msg[strlen(msg) - 1] == ']',
		           "%d message \"%s\"", status, msg);
	}
}

/* The configuration, then the cluster under it; returns how many errors were reported to f. */
static unsigned run(const uint8_t *data, size_t size, FILE *f)
{
	k8s_cluster c;
	diag d;

	diag_init(&d, f);
	k8s_cluster_init(&c);
	/* a directory that does not exist: relative plugin paths name no file */
	int r = k8s_load_admission_string(&c, "/nonexistent/fuzz/admission.yaml", (const char *)data, size, &d);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM, "k8s_load_admission_string: %d", r);
	FUZZ_CHECK(r == 0 || d.nerrors > 0 || r == -ENOMEM, "failed (%d) without an error", r);
	if (r == 0 && k8s_load_string(&c, "cluster.yaml", cluster, sizeof(cluster) - 1, &d) == 0) {
		model m = { 0 };
		r = model_build(&m, &c, 0, &d);
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM, "model_build: %d", r);
		for (size_t i = 0; i < m.nrefused; i++) {
			pp_pod_info info;
			check_refusal(&m.refused[i]);
			FUZZ_CHECK(pp_cluster_pod_info(m.cluster, m.refused[i].pod->namespace_, m.refused[i].pod->name,
			                               &info) == -ENOENT,
			           "refused pod %s is in the cluster", m.refused[i].pod->name);
		}
		model_done(&m);
	}
	k8s_cluster_done(&c);
	return d.nerrors;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_out out;
	if (!fuzz_out_open(&out))
		return 0;
	unsigned errors = run(data, size, out.f);
	FUZZ_CHECK(fuzz_out_close(&out) > 0 || errors == 0, "%u errors, nothing printed", errors);
	return 0;
}
