/* SPDX-License-Identifier: MIT */
/*
 * The ResourceQuota admission plugin on a pod's creation: CheckRequest of
 * apiserver/pkg/admission/plugin/resourcequota/controller.go, in its order of checks, with its
 * messages:
 *   1. every quota of the namespace whose scopes match the pod and that limits a pod resource:
 *      "failed quota: NAME: must specify ..." (Constraints), "status unknown for quota: ...";
 *   2. limitedResources.matchContains not covered: "insufficient quota to consume: ...";
 *   3. limitedResources.matchScopes not covered by the scope of any quota of the namespace
 *      (matching the pod, with or without hard limits): "insufficient quota to match these
 *      scopes: [...]" — a plain error, not wrapped in a Forbidden;
 *   4. the first matching quota that the pod would exceed: "exceeded quota: NAME, requested: ...,
 *      used: ..., limited: ...".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qty.h"
#include "quota.h"
#include "quota_pod.h"

struct pp_admission {
	pp_refusal refusal;
	int http_status;
	char *message;
	char *quota;
};

/* A small set of borrowed strings, in insertion order. */
struct names {
	const char **v;
	size_t n, cap;
};

static bool names_has(const struct names *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], x) == 0)
			return true;
	return false;
}

static int names_add(struct names *s, const char *x)
{
	if (names_has(s, x))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		const char **v = reallocarray(s->v, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

/* sorted and joined by sep; malloc'd */
static char *names_join(struct names *s, const char *sep)
{
	size_t len = 1, at = 0;
	char *out;
	qsort(s->v, s->n, sizeof(*s->v), pp__strptr_cmp);
	for (size_t i = 0; i < s->n; i++)
		len += strlen(s->v[i]) + strlen(sep);
	if (!(out = malloc(len)))
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < s->n; i++)
		at += (size_t)snprintf(out + at, len - at, "%s%s", i ? sep : "", s->v[i]);
	return out;
}

/*
 * Fills a refusal. forbidden: admission.NewForbidden's wrapping, `pods "NAME" is forbidden: `
 * (apierrors.NewForbidden with the name %q-quoted); else the plugin's error as is.
 */
__attribute__((format(printf, 6, 7))) static int refuse(pp_admission *a, pp_refusal why, const char *pod,
                                                        bool forbidden, const char *quota, const char *fmt, ...)
{
	char *text = NULL, *msg = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	if (forbidden) {
		/* %q of a DNS name is the name in double quotes; escape what Go would anyway */
		size_t len = strlen(pod), at = 0;
		char *quoted = malloc(2 * len + 3);
		if (!quoted) {
			free(text);
			return -ENOMEM;
		}
		quoted[at++] = '"';
		for (const char *p = pod; *p; p++) {
			if (*p == '"' || *p == '\\')
				quoted[at++] = '\\';
			quoted[at++] = *p;
		}
		quoted[at++] = '"';
		quoted[at] = '\0';
		r = asprintf(&msg, "pods %s is forbidden: %s", quoted, text);
		free(quoted);
		free(text);
		if (r < 0)
			return -ENOMEM;
	} else {
		msg = text;
	}
	if (quota && !(a->quota = strdup(quota))) {
		free(msg);
		return -ENOMEM;
	}
	a->refusal = why;
	a->http_status = forbidden ? 403 : 500;
	a->message = msg;
	return 1;
}

static bool in_names(const char *name, const void *ud)
{
	return names_has(ud, name);
}

/* limitedByDefault: the pod's positive usages whose names contain a matchContains string of a
 * limitedResources entry for pods. */
static int limited_by_default(const pp_quotas *q, const struct pp_qpod *p, struct names *ret)
{
	for (size_t i = 0; i < q->n_lim; i++) {
		const struct pp_limited *l = &q->lim[i];
		if (*l->group || strcmp(l->resource, "pods") != 0)
			continue;
		for (size_t k = 0; k < p->usage.n; k++)
			for (size_t c = 0; p->usage.v[k].q.nano > 0 && c < l->n_contains; c++)
				if (strstr(p->usage.v[k].name, l->contains[c])) {
					if (names_add(ret, p->usage.v[k].name) < 0)
						return -ENOMEM;
					break;
				}
	}
	return 0;
}

/* UncoveredQuotaScopes: the limited scopes (of every limitedResources entry, whatever its
 * resource, as getMatchedLimitedScopes takes them) that match the pod and whose scope name no
 * quota selector matching the pod shares. "[{A B [c]} {D E []}]", malloc'd, or "" when none. */
static char *uncovered_scopes(const pp_quotas *q, const struct pp_qpod *p, const struct names *covered)
{
	const struct pp_scope_req **v = NULL;
	size_t n = 0, cap = 0, len = 3, at;
	char *s;

	for (size_t i = 0; i < q->n_lim; i++)
		for (size_t k = 0; k < q->lim[i].n_scopes; k++) {
			const struct pp_scope_req *ls = &q->lim[i].scopes[k];
			if (!pp__qpod_matches(p, ls) || names_has(covered, ls->scope))
				continue;
			if (n == cap) {
				const struct pp_scope_req **nv = reallocarray(v, cap = cap ? 2 * cap : 4, sizeof(*v));
				if (!nv) {
					free(v);
					return NULL;
				}
				v = nv;
			}
			v[n++] = ls;
			len += pp__scope_req_len(ls) + 1;
		}
	if (!(s = malloc(len))) {
		free(v);
		return NULL;
	}
	if (n == 0)
		s[0] = '\0';
	else {
		at = (size_t)snprintf(s, len, "[");
		for (size_t i = 0; i < n; i++) {
			if (i)
				s[at++] = ' ';
			pp__scope_req_format(v[i], s + at, len - at);
			at += pp__scope_req_len(v[i]);
		}
		snprintf(s + at, len - at, "]");
	}
	free(v);
	return s;
}

/* Quota x's usage with pod p admitted, into nu: requested = Mask(RemoveZeros(usage), hard),
 * newUsage = Add(used, requested). 1 and a refusal in a when it exceeds hard, else 0 or -errno. */
static int stage_usage(const struct pp_quota *x, const struct pp_qpod *p, pp_admission *a, struct pp_rlist *nu)
{
	struct names exceeded = { 0 };
	char *requested = NULL, *used = NULL, *limited = NULL;
	int r;

	if ((r = pp__rlist_copy(nu, &x->used)) < 0)
		return r;
	for (size_t k = 0; k < p->usage.n; k++) {
		const struct pp_rentry *u = &p->usage.v[k], *h = pp__rlist_find(&x->hard, u->name);
		if (u->q.nano == 0 || !h)
			continue;
		if ((r = pp__rlist_add(nu, u->name, &u->q)) < 0)
			goto out;
		if (pp__qty_cmp(&pp__rlist_find(nu, u->name)->q, &h->q) > 0 && (r = names_add(&exceeded, u->name)) < 0)
			goto out;
	}
	if (exceeded.n) {
		requested = pp__rlist_print(&p->usage, in_names, &exceeded);
		used = pp__rlist_print(&x->used, in_names, &exceeded);
		limited = pp__rlist_print(&x->hard, in_names, &exceeded);
		if (!requested || !used || !limited)
			r = -ENOMEM;
		else
			r = refuse(a, PP_REFUSAL_EXCEEDED, p->spec->name, true, x->name,
			           "exceeded quota: %s, requested: %s, used: %s, limited: %s", x->name, requested, used, limited);
	}
out:
	free(requested);
	free(used);
	free(limited);
	free(exceeded.v);
	return r;
}

static int admit_check(pp_quotas *q, const struct pp_qpod *p, unsigned flags, pp_admission *a, struct pp_rlist *staged)
{
	const char *pod = p->spec->name;
	bool coverage_only = flags & PP_ADMIT_COVERAGE_ONLY;
	size_t b = pp__quotas_ns_begin(q, p->spec->namespace_), e = pp__quotas_ns_end(q, p->spec->namespace_, b);
	struct names limited = { 0 }, restricted = { 0 }, covered = { 0 };
	bool *interesting = NULL;
	char *text = NULL, *t2 = NULL;
	int r = 0;

	if ((r = limited_by_default(q, p, &limited)) < 0)
		goto out;
	if (!(interesting = calloc(e - b + 1, sizeof(*interesting)))) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = b; i < e; i++) {
		struct pp_quota *x = &q->v[i];
		bool limits_pods = false;
		for (size_t s = 0; s < x->n_sel; s++)
			if (pp__qpod_matches(p, &x->sel[s]) && (r = names_add(&covered, x->sel[s].scope)) < 0)
				goto out;
		for (size_t k = 0; k < x->hard.n; k++)
			limits_pods |= pp__quota_pod_resource(x->hard.v[k].name);
		if (!limits_pods || !pp__qpod_matches_scopes(p, x->sel, x->n_sel))
			continue;
		if (!coverage_only) {
			if ((r = pp__qpod_constraints(p, &x->hard, &text)) < 0)
				goto out;
			if (text) {
				r = refuse(a, PP_REFUSAL_CONSTRAINTS, pod, true, x->name, "failed quota: %s: %s", x->name, text);
				goto out;
			}
		}
		struct names mine = { 0 };
		bool unknown = false;
		for (size_t k = 0; k < x->hard.n && r >= 0; k++)
			if (pp__quota_pod_resource(x->hard.v[k].name)) {
				unknown |= !pp__rlist_find(&x->used, x->hard.v[k].name);
				if ((r = names_add(&mine, x->hard.v[k].name)) >= 0)
					r = names_add(&restricted, x->hard.v[k].name);
			}
		if (r >= 0 && unknown && !coverage_only) {
			if (!(text = names_join(&mine, ",")))
				r = -ENOMEM;
			else
				r = refuse(a, PP_REFUSAL_STATUS_UNKNOWN, pod, true, x->name,
				           "status unknown for quota: %s, resources: %s", x->name, text);
		}
		free(mine.v);
		if (r != 0)
			goto out;
		interesting[i - b] = true;
	}

	/* a pod always uses pods=1 and count/pods=1: never the zero-usage short cut */
	struct names uncovered = { 0 };
	for (size_t i = 0; i < limited.n && r >= 0; i++)
		if (!names_has(&restricted, limited.v[i]))
			r = names_add(&uncovered, limited.v[i]);
	if (r >= 0 && uncovered.n) {
		if (!(text = names_join(&uncovered, ",")))
			r = -ENOMEM;
		else
			r = refuse(a, PP_REFUSAL_UNCOVERED_RESOURCES, pod, true, NULL, "insufficient quota to consume: %s", text);
	}
	free(uncovered.v);
	if (r != 0)
		goto out;
	if (!(t2 = uncovered_scopes(q, p, &covered))) {
		r = -ENOMEM;
		goto out;
	}
	if (*t2) {
		r = refuse(a, PP_REFUSAL_UNCOVERED_SCOPES, pod, false, NULL, "insufficient quota to match these scopes: %s", t2);
		goto out;
	}
	if (coverage_only)
		goto out;

	for (size_t i = b; i < e; i++)
		if (interesting[i - b] && (r = stage_usage(&q->v[i], p, a, &staged[i - b])) != 0)
			goto out;
out:
	free(text);
	free(t2);
	free(interesting);
	free(limited.v);
	free(restricted.v);
	free(covered.v);
	return r;
}

int pp_quotas_admit(pp_quotas *q, const pp_quota_pod *pod, unsigned flags, pp_admission **ret, pp_err *err)
{
	struct pp_qpod p;
	struct pp_rlist *staged = NULL;
	pp_admission *a;
	size_t b, e;
	int r;

	if (!q || !pod || !pod->namespace_ || !ret || (flags & ~(PP_ADMIT_DRY_RUN | PP_ADMIT_COVERAGE_ONLY)))
		return -EINVAL;
	b = pp__quotas_ns_begin(q, pod->namespace_);
	e = pp__quotas_ns_end(q, pod->namespace_, b);
	if (b == e && q->n_lim == 0) {
		/* checkAttributes: no quota and no limitedResources, nothing to evaluate */
		if (!(a = calloc(1, sizeof(*a))) || !(a->message = strdup(""))) {
			pp_admission_free(a);
			return -ENOMEM;
		}
		*ret = a;
		return 0;
	}
	if ((r = pp__qpod_init(&p, pod, true, err)) < 0)
		return r;
	a = calloc(1, sizeof(*a));
	staged = calloc(e - b + 1, sizeof(*staged));
	if (!a || !staged) {
		r = -ENOMEM;
		goto out;
	}
	r = admit_check(q, &p, flags, a, staged);
	if (r == 0 && !(flags & (PP_ADMIT_DRY_RUN | PP_ADMIT_COVERAGE_ONLY)))
		for (size_t i = b; i < e; i++)
			if (staged[i - b].v) {
				pp__rlist_done(&q->v[i].used);
				q->v[i].used = staged[i - b];
				memset(&staged[i - b], 0, sizeof(staged[i - b]));
			}
	if (r >= 0 && !a->message && !(a->message = strdup("")))
		r = -ENOMEM;
out:
	for (size_t i = 0; staged && i < e - b; i++)
		pp__rlist_done(&staged[i]);
	free(staged);
	pp__qpod_done(&p);
	if (r < 0) {
		pp_admission_free(a);
		return r;
	}
	*ret = a;
	return 0;
}

pp_admission *pp_admission_free(pp_admission *a)
{
	if (a) {
		free(a->message);
		free(a->quota);
		free(a);
	}
	return NULL;
}

pp_refusal pp_admission_refusal(const pp_admission *a)
{
	return a ? a->refusal : PP_REFUSAL_NONE;
}

const char *pp_admission_message(const pp_admission *a)
{
	return a && a->message ? a->message : "";
}

int pp_admission_http_status(const pp_admission *a)
{
	return a ? a->http_status : 0;
}

const char *pp_admission_quota(const pp_admission *a)
{
	return a ? a->quota : NULL;
}
