/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "cmd.h"
#include "k8s.h"
#include "model.h"

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

int cmd_check(const char *kubeconfig, const char *const *files, size_t nfiles, FILE *out, FILE *err)
{
	k8s_cluster c;
	model m = { 0 };
	diag d;
	int r;

	diag_init(&d, err);
	k8s_cluster_init(&c);
	r = model_load(&m, &c, kubeconfig, files, nfiles, &d);
	if (r < 0) {
		if (r != -ENOMEM)
			fprintf(err, "preemptctl: %u %s found\n", d.nerrors, plural(d.nerrors, "problem", "problems"));
		model_done(&m);
		k8s_cluster_done(&c);
		return EXIT_REJECTED;
	}
	fprintf(out, "ok: %zu %s, %zu %s, %zu %s (%zu bound, %zu pending, %zu finished), %zu %s",
	        c.nclasses, plural(c.nclasses, "PriorityClass", "PriorityClasses"),
	        c.nnodes, plural(c.nnodes, "node", "nodes"),
	        c.npods, plural(c.npods, "pod", "pods"), m.nbound, m.npending, m.nterminal,
	        c.npdbs, plural(c.npdbs, "PodDisruptionBudget", "PodDisruptionBudgets"));
	if (d.nwarnings)
		fprintf(out, ", %u %s", d.nwarnings, plural(d.nwarnings, "warning", "warnings"));
	fputc('\n', out);
	model_done(&m);
	k8s_cluster_done(&c);
	return 0;
}
