/* SPDX-License-Identifier: MIT */
#include "hints.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* All pending pods are listed up to this many; beyond, the closest names. */
#define LIST_ALL_MAX 6
#define CLOSEST 3

static bool readable(const char *path)
{
	struct stat st;
	if (strcmp(path, "-") == 0)
		return true;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode);
	if (fd >= 0)
		close(fd);
	return ok;
}

void hint_rejected(FILE *out, unsigned nerrors, const struct model_input *in)
{
	for (size_t i = 0; i < in->nfiles; i++) {
		const char *f = in->files[i];
		if (readable(f))
			continue;
		if (i == 0 && !in->kubeconfig)
			fprintf(out, "preemptctl: nothing decided: the cluster snapshot %s cannot be read; "
			        "`kubectl get priorityclasses,nodes,pods,pdb,resourcequota -A -o json > %s` writes one\n", f, f);
		else
			fprintf(out, "preemptctl: nothing decided: %s cannot be read; give the path of a pod's manifest "
			        "(YAML or JSON, as for kubectl apply -f)\n", f);
		return;
	}
	if (in->admission_config && !readable(in->admission_config)) {
		fprintf(out, "preemptctl: nothing decided: the admission configuration %s cannot be read; give the "
		        "file kube-apiserver's --admission-control-config-file names\n", in->admission_config);
		return;
	}
	fprintf(out, "preemptctl: input rejected (%u %s, above): nothing is decided until %s fixed\n", nerrors,
	        nerrors == 1 ? "problem" : "problems", nerrors == 1 ? "it is" : "they are");
}

static bool pending(const struct k8s_pod *p)
{
	return !p->node_name && p->phase != K8S_PHASE_SUCCEEDED && p->phase != K8S_PHASE_FAILED;
}

/* Levenshtein distance, two rows (names are at most a few hundred bytes). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *prev = calloc(lb + 1, sizeof(*prev)), *cur = calloc(lb + 1, sizeof(*cur));
	size_t d = la > lb ? la : lb;
	if (prev && cur) {
		for (size_t j = 0; j <= lb; j++)
			prev[j] = j;
		for (size_t i = 1; i <= la; i++) {
			cur[0] = i;
			for (size_t j = 1; j <= lb; j++) {
				size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
				size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
				cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			}
			size_t *t = prev;
			prev = cur;
			cur = t;
		}
		d = prev[lb];
	}
	free(prev);
	free(cur);
	return d;
}

typedef struct candidate {
	const struct k8s_pod *pod;
	size_t distance;
} candidate;

static int by_distance(const void *x, const void *y)
{
	const candidate *a = x, *b = y;
	if (a->distance != b->distance)
		return a->distance < b->distance ? -1 : 1;
	int r = strcmp(a->pod->namespace_, b->pod->namespace_);
	return r ? r : strcmp(a->pod->name, b->pod->name);
}

void hint_pending_pods(FILE *out, const k8s_cluster *c, const char *namespace_, const char *name)
{
	candidate *cand = calloc(c->npods ? c->npods : 1, sizeof(*cand));
	size_t n = 0;
	char want[K8S_LABEL_MAX], have[K8S_LABEL_MAX];

	if (!cand)
		return;
	snprintf(want, sizeof(want), "%s/%s", namespace_, name);
	for (size_t i = 0; i < c->npods; i++) {
		if (!pending(&c->pods[i]))
			continue;
		snprintf(have, sizeof(have), "%s/%s", c->pods[i].namespace_, c->pods[i].name);
		cand[n++] = (candidate){ .pod = &c->pods[i], .distance = *name ? distance(want, have) : 0 };
	}
	qsort(cand, n, sizeof(*cand), by_distance);
	if (n && n <= LIST_ALL_MAX)
		fprintf(out, "; the pending %s:", n == 1 ? "pod" : "pods");
	else if (n)
		fprintf(out, *name ? "; the closest of %zu pending pods:" : "; %zu pending pods, the first:", n);
	for (size_t i = 0; i < n && (n <= LIST_ALL_MAX || i < CLOSEST); i++)
		fprintf(out, "%s %s/%s", i ? "," : "", cand[i].pod->namespace_, cand[i].pod->name);
	free(cand);
}

const struct k8s_pod *hint_pod_file_pods(const k8s_cluster *c, const char *kubeconfig, const char *const *files,
                                         size_t nfiles, size_t *count)
{
	const struct k8s_pod *first = NULL;
	*count = 0;
	for (size_t i = 0; i < c->npods; i++) {
		const char *f = c->pods[i].loc.file;
		/* the loader names standard input "<stdin>" */
		for (size_t k = kubeconfig ? 0 : 1; f && k < nfiles; k++)
			if (strcmp(f, files[k]) == 0 || (strcmp(files[k], "-") == 0 && strcmp(f, "<stdin>") == 0)) {
				if (!(*count)++)
					first = &c->pods[i];
				break;
			}
	}
	return first;
}
