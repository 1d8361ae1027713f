/* SPDX-License-Identifier: MIT */
#include "budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objmap.h"

struct budget_memory {
	objmap protected_; /* "ns/name" of the pods protected after a refusal -> the map itself */
};

int budget_memory_new(budget_memory **ret)
{
	budget_memory *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	*ret = b;
	return 0;
}

budget_memory *budget_memory_free(budget_memory *b)
{
	if (!b)
		return NULL;
	objmap_done(&b->protected_);
	free(b);
	return NULL;
}

size_t budget_memory_count(const budget_memory *b)
{
	return objmap_count(&b->protected_);
}

static void pod_key(char *buf, size_t size, const char *ns, const char *name)
{
	snprintf(buf, size, "%s/%s", ns, name);
}

struct lift {
	budget_memory *b;
	pp_sched *s;
	const char *ns;
	size_t ns_len;
};

static void lift_one(const char *key, void *value, void *userdata)
{
	struct lift *l = userdata;

	(void)value;
	if (strncmp(key, l->ns, l->ns_len) != 0 || key[l->ns_len] != '/')
		return;
	(void)pp_sched_set_pod_protected(l->s, l->ns, key + l->ns_len + 1, false, NULL);
	(void)objmap_remove(&l->b->protected_, key);
}

void budget_memory_pdb_changed(budget_memory *b, pp_sched *s, const char *ns)
{
	struct lift l = { b, s, ns, strlen(ns) };

	if (objmap_count(&b->protected_))
		objmap_foreach(&b->protected_, lift_one, &l);
}

void budget_memory_forget(budget_memory *b, const char *ns, const char *name)
{
	char key[512];

	if (!objmap_count(&b->protected_))
		return;
	pod_key(key, sizeof(key), ns, name);
	(void)objmap_remove(&b->protected_, key);
}

int budget_memory_refused(budget_memory *b, pp_sched *s, const char *ns, const char *name, const char *pdb,
                          cluster_refusal *ret)
{
	const pp_cluster *lc = pp_sched_cluster(s);
	pp_pdb_info bi;
	char key[512];
	int r;

	for (size_t i = 0; pdb && pp_cluster_pod_pdb(lc, ns, name, i, &bi) == 0; i++)
		if (!strcmp(bi.name, pdb) && !strcmp(bi.namespace_, ns)) {
			/* the budget as the API server sees it: spent, whatever the watch showed */
			r = pp_sched_set_pdb_disruptions_allowed(s, ns, pdb, 0, NULL);
			if (r >= 0)
				*ret = CLUSTER_BUDGET_SPENT;
			return r;
		}
	r = pp_sched_set_pod_protected(s, ns, name, true, NULL);
	if (r < 0)
		return r;
	pod_key(key, sizeof(key), ns, name);
	r = objmap_put(&b->protected_, key, b);
	if (r < 0) {
		/* unremembered, it would stay protected for good: better chosen and refused again */
		(void)pp_sched_set_pod_protected(s, ns, name, false, NULL);
		return r;
	}
	*ret = CLUSTER_POD_PROTECTED;
	return 0;
}

int budget_tightest(const pp_cluster *lc, const char *ns, const char *name, int32_t *ret_allowed, const char **ret_pdb)
{
	pp_pdb_info bi;
	int found = 0;

	for (size_t i = 0; pp_cluster_pod_pdb(lc, ns, name, i, &bi) == 0; i++)
		if (!found || bi.disruptions_allowed < *ret_allowed) {
			found = 1;
			*ret_allowed = bi.disruptions_allowed;
			if (ret_pdb)
				*ret_pdb = bi.name;
		}
	return found;
}
