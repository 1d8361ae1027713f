/* SPDX-License-Identifier: MIT */
/*
 * A live cluster as input: PriorityClasses, Nodes, Pods, PodDisruptionBudgets and ResourceQuotas listed from the
 * API server of a kubeconfig, page by page (limit/continue), each page streamed through kstream
 * into the same decoder as files — so a 20,000-pod cluster costs what its decoded objects cost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "k8s.h"
#include "k8s_decode.h"
#include "kstream.h"
#include "kubeconfig.h"

#define PAGE_LIMIT 500

struct api_list {
	k8s_cluster *c;
	diag *d;
	const char *file; /* "https://server/api/v1/pods": locations name it */
	const char *kind; /* items of a list carry none */
	kstream *s;
	bool bad;
};

static int on_item(void *userdata, const kval *item)
{
	struct api_list *l = userdata;
	int r = k8s_decode_list_item(l->c, l->d, l->file, item, l->kind);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		l->bad = true;
	return 0;
}

static int on_chunk(void *userdata, const void *buf, size_t len)
{
	struct api_list *l = userdata;
	int r;

	if (!l->s) {
		r = kstream_new(&l->s, KSTREAM_JSON, l->file, l->d, on_item, l);
		if (r < 0)
			return r;
	}
	return kstream_feed(l->s, buf, len);
}

static int on_page_end(void *userdata, char *cont, size_t cont_size)
{
	struct api_list *l = userdata;
	int r;

	if (!l->s) { /* an empty body is no list */
		diag_error(l->d, &(struct diag_loc){ .file = l->file }, NULL, "empty response");
		return -EINVAL;
	}
	r = kstream_end(l->s);
	if (r == 0 && kstream_list_continue(l->s))
		snprintf(cont, cont_size, "%s", kstream_list_continue(l->s));
	l->s = kstream_free(l->s);
	return r;
}

/*
 * The client's line holds the answer's Status object, cut at some length: its "message" is what
 * the user needs ("pods is forbidden: User ... cannot list ..."). Rewrites err in place as
 * "GET path: HTTP 403: <message>" when one is found.
 */
static void status_message(char *err, size_t size)
{
	char *body = strstr(err, ": {"), *m, *out;

	if (!body || !(m = strstr(body, "\"message\"")))
		return;
	m += strlen("\"message\"");
	while (*m == ' ' || *m == ':')
		m++;
	if (*m != '"')
		return;
	m++;
	out = body + 2; /* after ": " */
	while (*m && *m != '"' && out < err + size - 1) {
		if (*m == '\\' && m[1])
			m++;
		*out++ = *m++;
	}
	*out = '\0';
}

static const struct {
	const char *path, *kind;
} lists[] = {
	{ "/apis/scheduling.k8s.io/v1/priorityclasses", "PriorityClass" },
	{ "/api/v1/nodes", "Node" },
	{ "/api/v1/pods", "Pod" },
	{ "/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget" },
	{ "/api/v1/resourcequotas", "ResourceQuota" },
};

int k8s_load_api(k8s_cluster *c, const char *kubeconfig, diag *d)
{
	kube_config *cfg = NULL;
	kube_client *client = NULL;
	char err[512];
	int r, ret = 0;

	r = kubeconfig_load_as(kubeconfig, "--kubeconfig wants a kubeconfig file, such as kubectl's ~/.kube/config",
	                       KUBECONFIG_CLUSTER_USER, &cfg, err, sizeof(err));
	if (r < 0) {
		diag_error(d, NULL, NULL, "%s", err);
		return r == -ENOMEM ? r : -EINVAL;
	}
	r = kube_client_new(cfg, &(kube_client_opts){ .user_agent = "preemptctl" }, &client);
	if (r < 0) {
		diag_error(d, NULL, NULL, "%s: cannot set up the client: %s", kubeconfig, strerror(-r));
		kubeconfig_free(cfg);
		return r == -ENOMEM ? r : -EINVAL;
	}
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		static const kube_list_ops ops = { .chunk = on_chunk, .page_end = on_page_end };
		char url[1024];
		struct api_list l = { .c = c, .d = d, .kind = lists[i].kind };

		snprintf(url, sizeof(url), "%s%s", kube_client_server(client), lists[i].path);
		if (!(l.file = karena_strdup(&c->arena, url))) {
			ret = -ENOMEM;
			break;
		}
		unsigned errors = d->nerrors;
		err[0] = '\0';
		r = kube_list(client, lists[i].path, PAGE_LIMIT, &ops, &l, err, sizeof(err));
		l.s = kstream_free(l.s);
		if (r == -ENOMEM) {
			ret = r;
			break;
		}
		/* the stream said what was wrong with the body; else the client's line (HTTP status,
		 * TLS, connection) */
		if (r < 0 && d->nerrors == errors) {
			status_message(err, sizeof(err));
			diag_error(d, NULL, NULL, "%s", err[0] ? err : strerror(-r));
		}
		if (r < 0 || l.bad)
			ret = -EINVAL;
		if (r < 0 && r != -EINVAL)
			break; /* the server or the connection is the problem: the next lists would fail alike */
	}
	kube_client_free(client);
	kubeconfig_free(cfg);
	return ret;
}
