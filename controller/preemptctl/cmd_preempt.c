/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "cmd.h"
#include "explain.h"
#include "hints.h"
#include "jsonw.h"
#include "k8s.h"
#include "model.h"
#include "refusal.h"

static int print_decision(FILE *out, const struct preempt_args *a, const pp_preemption *p)
{
	char pod[K8S_LABEL_MAX];
	snprintf(pod, sizeof(pod), "%s/%s", a->namespace_, a->name);

	fputs("{\"pod\":", out);
	jsonw_fput_string(out, pod);
	fputs(",\"node\":", out);
	if (pp_preemption_outcome(p) == PP_OUTCOME_NONE) {
		fputs("null,\"reason\":", out);
		jsonw_fput_string(out, pp_preemption_reason(p));
	} else {
		jsonw_fput_string(out, pp_preemption_node(p));
		fputs(",\"victims\":[", out);
		for (size_t i = 0; i < pp_preemption_victim_count(p); i++) {
			const pp_victim *v = pp_preemption_victim(p, i);
			char name[K8S_LABEL_MAX];
			snprintf(name, sizeof(name), "%s/%s", v->namespace_, v->name);
			if (i)
				fputc(',', out);
			jsonw_fput_string(out, name);
		}
		fputc(']', out);
	}
	fputs("}\n", out);
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}

int cmd_preempt(const struct preempt_args *a, FILE *out, FILE *err)
{
	k8s_cluster c;
	model m = { 0 };
	diag d;
	pp_preemption *p = NULL;
	pp_pod_info info;
	pp_err perr;
	struct preempt_args chosen;
	int r, status = EXIT_REJECTED;

	struct model_input in = { a->kubeconfig, a->files, a->nfiles, a->admission_config, a->now_ns };
	diag_init(&d, err);
	k8s_cluster_init(&c);
	r = model_load_to_decide(&m, &c, &in, &d);
	if (r < 0)
		goto out;
	if (!a->name) {
		/* no --pod: the one pod of the pod file(s) */
		size_t n;
		const struct k8s_pod *only = hint_pod_file_pods(&c, a->kubeconfig, a->files, a->nfiles, &n);
		if (n != 1) {
			fprintf(err, "preemptctl: preempt needs --pod NAMESPACE/NAME");
			if (n)
				fprintf(err, ": the pod files hold %zu pods, %s/%s the first", n, only->namespace_, only->name);
			else
				hint_pending_pods(err, &c, "", "");
			fputs("\n", err);
			status = EXIT_USAGE;
			goto out;
		}
		chosen = *a;
		chosen.namespace_ = only->namespace_;
		chosen.name = only->name;
		a = &chosen;
	}
	/* The API server refuses the pod before any scheduler sees it. */
	const model_refusal *refused = model_find_refusal(&m, a->namespace_, a->name);
	if (refused) {
		if (a->explain)
			refusal_explain(err, a->namespace_, a->name, refused->admission);
		if (refusal_json(out, a->namespace_, a->name, refused->admission) < 0)
			fprintf(err, "preemptctl: writing the decision: %s\n", strerror(EIO));
		else
			status = 0;
		goto out;
	}
	for (size_t i = 0; i < m.nrefused; i++) {
		const struct k8s_pod *rp = m.refused[i].pod;
		char label[K8S_LABEL_MAX];
		k8s_pod_label(rp, label, sizeof(label));
		diag_warn(&d, &rp->loc, label, "refused at admission by the %s plugin, so not created: %s",
		          refusal_plugin(m.refused[i].admission), pp_admission_message(m.refused[i].admission));
	}
	diag_flush(&d);

	r = pp_cluster_pod_info(m.cluster, a->namespace_, a->name, &info);
	if (r == -ENOENT) {
		const struct k8s_pod *kp = k8s_cluster_find_pod(&c, a->namespace_, a->name);
		if (kp)
			fprintf(err, "preemptctl: pods/%s/%s: the pod has finished (status.phase), nothing to schedule\n",
			        a->namespace_, a->name);
		else {
			fprintf(err, "preemptctl: pods/%s/%s: no such pod in the input", a->namespace_, a->name);
			hint_pending_pods(err, &c, a->namespace_, a->name);
			fputs("\n", err);
		}
		goto out;
	}
	if (r < 0) {
		fprintf(err, "preemptctl: pods/%s/%s: %s\n", a->namespace_, a->name, strerror(-r));
		goto out;
	}
	if (info.node_name) {
		fprintf(err, "preemptctl: pods/%s/%s: already bound to node %s (spec.nodeName); only a pending pod "
		        "can be scheduled\n", a->namespace_, a->name, info.node_name);
		goto out;
	}

	(void)pp_cluster_set_pdb_policy(m.cluster, a->pdb_policy);
	pp_preempt_options opts = { .now_ns = a->now_ns, .explain = a->explain };
	r = pp_cluster_preempt(m.cluster, a->namespace_, a->name, &opts, &p, &perr);
	if (r < 0) {
		fprintf(err, "preemptctl: pods/%s/%s: %s\n", a->namespace_, a->name, r == -ENOMEM ? "out of memory" : perr.msg);
		goto out;
	}
	if (a->explain)
		explain_preemption(err, p, &info, a->now_ns);
	if (print_decision(out, a, p) < 0) {
		fprintf(err, "preemptctl: writing the decision: %s\n", strerror(EIO));
		goto out;
	}
	status = 0;
out:
	if (d.unusable)
		status = EXIT_USAGE;
	pp_preemption_free(p);
	model_done(&m);
	k8s_cluster_done(&c);
	return status;
}
