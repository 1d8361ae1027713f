/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's effective pod request: resource.PodRequests (component-helpers) followed by the
 * conversion to framework.Resource — exact sums, one rounding per pod (reference §3.2–3.3).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "quantity.h"
#include "requests.h"
#include "strmap.h"

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The name part of a qualified name: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, <= 63. */
static bool is_qualified_name_part(const char *s, size_t len)
{
	if (len == 0 || len > 63 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* validation.IsQualifiedName: [prefix/]name with prefix a DNS subdomain. */
bool pp__is_qualified_name(const char *s)
{
	const char *slash = strchr(s, '/');
	if (!slash)
		return is_qualified_name_part(s, strlen(s));
	if (strchr(slash + 1, '/'))
		return false;
	size_t plen = (size_t)(slash - s);
	char prefix[254];
	if (plen == 0 || plen >= sizeof(prefix))
		return false;
	memcpy(prefix, s, plen);
	prefix[plen] = 0;
	return pp_is_dns_subdomain(prefix) && is_qualified_name_part(slash + 1, strlen(slash + 1));
}

static bool is_scalar_resource(const char *name)
{
	if (strstr(name, "kubernetes.io/") || pp__has_prefix(name, "hugepages-") ||
	    pp__has_prefix(name, "attachable-volumes-"))
		return true;
	/* v1helper.IsExtendedResourceName: not native (has a '/'), not "requests."-prefixed, and
	 * "requests.<name>" a valid qualified name (the quota form must be expressible). */
	if (!strchr(name, '/') || pp__has_prefix(name, "requests."))
		return false;
	size_t len = strlen(name);
	if (len > 512)
		return false;
	char quota[600];
	snprintf(quota, sizeof(quota), "requests.%s", name);
	return pp__is_qualified_name(quota);
}

bool pp_resource_is_accounted(const char *name)
{
	if (!name)
		return false;
	return strcmp(name, PP_RESOURCE_CPU) == 0 || strcmp(name, PP_RESOURCE_MEMORY) == 0 ||
	       strcmp(name, PP_RESOURCE_EPHEMERAL_STORAGE) == 0 || strcmp(name, PP_RESOURCE_PODS) == 0 ||
	       is_scalar_resource(name);
}

struct acc {
	const char *name;
	__int128 sum;      /* Σ containers + sidecars */
	__int128 sidecars; /* Σ restartable init containers so far */
	__int128 init_peak;
	__int128 pod_level;
	bool has_pod_level;
	__int128 overhead;
};

/* In first-seen order (the order of the result). A pod names a handful of resources; past
 * ACC_LINEAR_MAX a hash index takes over, so that 10^5 distinct extended resources stay linear. */
#define ACC_LINEAR_MAX 16
struct accs {
	struct acc *v;
	size_t n, cap;
	struct strmap idx; /* name -> i + 1, once n reaches ACC_LINEAR_MAX */
};

static struct acc *acc_get(struct accs *a, const char *name)
{
	if (a->idx.cap) {
		uintptr_t i = (uintptr_t)pp__strmap_get(&a->idx, name);
		if (i)
			return &a->v[i - 1];
	} else {
		for (size_t i = 0; i < a->n; i++)
			if (strcmp(a->v[i].name, name) == 0)
				return &a->v[i];
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		struct acc *v = realloc(a->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n] = (struct acc){ .name = name };
	if (a->n + 1 >= ACC_LINEAR_MAX)
		for (size_t i = a->idx.cap ? a->n : 0; i <= a->n; i++)
			if (pp__strmap_put(&a->idx, a->v[i].name, (void *)(uintptr_t)(i + 1)) < 0)
				return NULL; /* the caller fails the whole computation */
	return &a->v[a->n++];
}

/* Quantities in a request list, validated; returns the nano value of entry i. */
static int parse_one(const pp_quantity_kv *kv, const char *field, size_t idx, bool indexed, __int128 *ret,
                     pp_err *err)
{
	pp_err e;
	char where[96];

	if (indexed)
		snprintf(where, sizeof(where), "%s[%zu]", field, idx);
	else
		snprintf(where, sizeof(where), "%s", field);
	if (!kv->name || !*kv->name)
		return pp_fail(err, -EINVAL, "%s: resource name is empty", where);
	if (!kv->value)
		return pp_fail(err, -EINVAL, "%s.%.100s: missing quantity", where, kv->name);
	int r = pp__quantity_parse_nano(kv->value, ret, &e);
	if (r < 0)
		return pp_fail(err, r, "%s.%.100s: %s", where, kv->name, e.msg);
	if (*ret < 0)
		return pp_fail(err, -EINVAL, "%s.%.100s: must be greater than or equal to 0, got \"%.60s\"", where,
		               kv->name, kv->value);
	return 0;
}

static __int128 max128(__int128 a, __int128 b)
{
	return a > b ? a : b;
}

/* Nano-units above this cannot be rounded into an int64 result anyway. */
#define NANO_LIMIT ((__int128)INT64_MAX * 1000000000)

/* The containers' requests into a: their sum, sidecars, and the init containers' peak. */
static int add_containers(struct accs *a, const pp_container_requests *containers, size_t n_containers, pp_err *err)
{
	size_t n_regular = 0, n_init = 0;

	for (size_t i = 0; i < n_containers; i++) {
		const pp_container_requests *c = &containers[i];
		bool init = c->kind != PP_CONTAINER;
		char field[64];
		snprintf(field, sizeof(field), "%s[%zu].resources.requests", init ? "initContainers" : "containers",
		         init ? n_init : n_regular);
		if (init)
			n_init++;
		else
			n_regular++;
		if (c->kind > PP_SIDECAR)
			return pp_fail(err, -EINVAL, "%s: invalid container kind", field);
		if (c->n_requests && !c->requests)
			return -EINVAL;
		for (size_t j = 0; j < c->n_requests; j++) {
			__int128 v;
			int r = parse_one(&c->requests[j], field, 0, false, &v, err);
			if (r < 0)
				return r;
			if (!pp_resource_is_accounted(c->requests[j].name) || strcmp(c->requests[j].name, "pods") == 0)
				continue;
			if (v > NANO_LIMIT)
				return pp_fail(err, -ERANGE, "%s.%.100s: quantity is too large", field, c->requests[j].name);
			struct acc *x = acc_get(a, c->requests[j].name);
			if (!x)
				return -ENOMEM;
			switch (c->kind) {
			case PP_CONTAINER:
				x->sum += v;
				break;
			case PP_SIDECAR:
				x->sum += v;
				x->sidecars += v;
				x->init_peak = max128(x->init_peak, x->sidecars);
				break;
			case PP_INIT_CONTAINER:
				x->init_peak = max128(x->init_peak, v + x->sidecars);
				break;
			}
		}
		/* A regular init container's peak includes the sidecars started before it even for
		 * resources it does not request itself: init_peak >= sidecars holds already, since every
		 * sidecar raises both, so nothing to do per resource (which would be containers ×
		 * distinct resources). */
	}
	return 0;
}

/* Pod-level requests (cpu, memory, hugepages): they replace the containers' sum. */
static int add_pod_level(struct accs *a, const pp_quantity_kv *pod_level, size_t n_pod_level, pp_err *err)
{
	for (size_t j = 0; j < n_pod_level; j++) {
		__int128 v;
		int r = parse_one(&pod_level[j], "resources.requests", 0, false, &v, err);
		if (r < 0)
			return r;
		const char *nm = pod_level[j].name;
		if (strcmp(nm, "cpu") != 0 && strcmp(nm, "memory") != 0 && !pp__has_prefix(nm, "hugepages-"))
			continue;
		if (v > NANO_LIMIT)
			return pp_fail(err, -ERANGE, "resources.requests.%.100s: quantity is too large", nm);
		struct acc *x = acc_get(a, nm);
		if (!x)
			return -ENOMEM;
		x->pod_level = v;
		x->has_pod_level = true;
	}
	return 0;
}

/* The runtime class's overhead, added to either. */
static int add_overhead(struct accs *a, const pp_quantity_kv *overhead, size_t n_overhead, pp_err *err)
{
	for (size_t j = 0; j < n_overhead; j++) {
		__int128 v;
		int r = parse_one(&overhead[j], "overhead", 0, false, &v, err);
		if (r < 0)
			return r;
		if (!pp_resource_is_accounted(overhead[j].name) || strcmp(overhead[j].name, "pods") == 0)
			continue;
		if (v > NANO_LIMIT)
			return pp_fail(err, -ERANGE, "overhead.%.100s: quantity is too large", overhead[j].name);
		struct acc *x = acc_get(a, overhead[j].name);
		if (!x)
			return -ENOMEM;
		x->overhead += v;
	}
	return 0;
}

int pp_pod_requests(const pp_container_requests *containers, size_t n_containers, const pp_quantity_kv *pod_level,
                    size_t n_pod_level, const pp_quantity_kv *overhead, size_t n_overhead, pp_resource *ret,
                    size_t max, size_t *ret_n, pp_err *err)
{
	struct accs a = { 0 };
	size_t out = 0;
	int r;

	if ((n_containers && !containers) || (n_pod_level && !pod_level) || (n_overhead && !overhead) ||
	    (max && !ret) || !ret_n)
		return -EINVAL;

	r = add_containers(&a, containers, n_containers, err);
	if (r >= 0)
		r = add_pod_level(&a, pod_level, n_pod_level, err);
	if (r >= 0)
		r = add_overhead(&a, overhead, n_overhead, err);
	if (r < 0)
		goto out;

	if (a.n > max) {
		r = pp_fail(err, -ENOBUFS, "pod requests %zu distinct resources, more than %zu", a.n, max);
		goto out;
	}
	for (size_t i = 0; i < a.n; i++) {
		struct acc *x = &a.v[i];
		__int128 total = x->has_pod_level ? x->pod_level : max128(x->sum, x->init_peak);
		total += x->overhead; /* each term <= NANO_LIMIT and there are few: no overflow */
		__int128 unit = strcmp(x->name, "cpu") == 0 ? 1000000 : 1000000000;
		__int128 v = total / unit + (total % unit != 0);
		if (v > INT64_MAX) {
			r = pp_fail(err, -ERANGE, "%.100s: the pod's total request is too large", x->name);
			goto out;
		}
		ret[out++] = (pp_resource){ .name = x->name, .value = (int64_t)v };
	}
	*ret_n = out;
	r = 0;
out:
	free(a.v);
	pp__strmap_done(&a.idx);
	return r;
}
