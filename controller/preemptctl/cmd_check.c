/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <time.h>

#include "cmd.h"
#include "k8s.h"
#include "model.h"
#include "model-quota.h"
#include "refusal.h"
#include "clock.h"

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* What the API server would refuse, and what the quotas' state says about it. */
static int check_admission(model *m, const k8s_cluster *c, diag *d)
{
	for (size_t i = 0; i < m->nrefused; i++) {
		const model_refusal *r = &m->refused[i];
		char label[K8S_LABEL_MAX];
		k8s_pod_label(r->pod, label, sizeof(label));
		diag_error(d, &r->pod->loc, label, "refused at admission by the %s plugin: %s", refusal_plugin(r->admission),
		           pp_admission_message(r->admission));
	}
	int r = quota_report(m, c, d);
	diag_flush(d);
	return r;
}

int cmd_check(const char *kubeconfig, const char *admission_config, const char *const *files, size_t nfiles,
              FILE *out, FILE *err)
{
	k8s_cluster c;
	model m = { 0 };
	diag d;
	int r;
	struct model_input in = { kubeconfig, files, nfiles, admission_config, clock_wall_ns() };
	diag_init(&d, err);
	k8s_cluster_init(&c);
	r = model_load(&m, &c, &in, &d);
	if (r != -ENOMEM && check_admission(&m, &c, &d) == -ENOMEM)
		r = -ENOMEM;
	if (r != -ENOMEM)
		r = d.nerrors ? -EINVAL : 0;
	if (r < 0) {
		/* an input that is no cluster at all has said so in its one line */
		if (r != -ENOMEM && !(d.unusable && d.nerrors == 1))
			fprintf(err, "preemptctl: %u %s found\n", d.nerrors, plural(d.nerrors, "problem", "problems"));
		model_done(&m);
		k8s_cluster_done(&c);
		return d.unusable ? EXIT_USAGE : EXIT_REJECTED;
	}
	fprintf(out, "ok: %zu %s, %zu %s, %zu %s (%zu bound, %zu pending, %zu finished), %zu %s",
	        c.nclasses, plural(c.nclasses, "PriorityClass", "PriorityClasses"),
	        c.nnodes, plural(c.nnodes, "node", "nodes"),
	        c.npods, plural(c.npods, "pod", "pods"), m.nbound, m.npending, m.nterminal,
	        c.npdbs, plural(c.npdbs, "PodDisruptionBudget", "PodDisruptionBudgets"));
	if (c.nquotas)
		fprintf(out, ", %zu %s", c.nquotas, plural(c.nquotas, "ResourceQuota", "ResourceQuotas"));
	if (d.nwarnings)
		fprintf(out, ", %u %s", d.nwarnings, plural(d.nwarnings, "warning", "warnings"));
	fputc('\n', out);
	model_done(&m);
	k8s_cluster_done(&c);
	return 0;
}
