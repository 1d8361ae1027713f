/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "cluster.h"
#include "sched_reserve.h"
#include "strmap.h"

#define NSEC_PER_SEC 1000000000LL
#define DEFAULT_GRACE_S 30

int64_t pp__resv_due(const pp_cluster *c, const char *ns, const char *name, int64_t now)
{
	const struct pod *p = pp__cluster_find_pod(c, ns, name);

	if (!p)
		return INT64_MIN;
	if (p->terminating)
		return p->deletion;
	int64_t grace = p->grace < 0 ? DEFAULT_GRACE_S : p->grace;
	return pp__sat_add(now, grace > INT64_MAX / NSEC_PER_SEC ? INT64_MAX : grace * NSEC_PER_SEC);
}

static const struct node *find_node(const pp_cluster *c, const char *name)
{
	return pp__strmap_get(&c->node_map, name);
}

/* A pod the preemptor waits for on its nominated node. */
static bool awaited(const struct pod *p, int32_t prio)
{
	return p->priority < prio && p->terminating && p->preempted_by_scheduler && !p->stuck;
}

int64_t pp__resv_node_due(const pp_cluster *c, const char *node, int32_t prio)
{
	const struct node *n = find_node(c, node);
	int64_t due = INT64_MIN;

	for (size_t i = 0; n && i < n->n_pods; i++) {
		const struct pod *p = n->slots[i].pod;
		if (awaited(p, prio) && p->deletion > due)
			due = p->deletion;
	}
	return due;
}

int pp__resv_mark_stuck(pp_cluster *c, const char *node, int32_t prio, pp_victim **ret, size_t *ret_n)
{
	const struct node *n = find_node(c, node);
	size_t count = 0;

	for (size_t i = 0; n && i < n->n_pods; i++)
		count += awaited(n->slots[i].pod, prio);
	pp_victim *v = calloc(count ? count : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t j = 0;
	for (size_t i = 0; n && i < n->n_pods; i++) {
		const struct slot *sl = &n->slots[i];
		struct pod *p = sl->pod;
		if (!awaited(p, prio))
			continue;
		p->stuck = true;
		c->n_stuck++;
		v[j++] = (pp_victim){ .namespace_ = p->ns, .name = p->name, .priority = p->priority,
			              .start_time_ns = sl->has_start ? sl->start : 0, .terminating = true };
	}
	if (count)
		pp__node_changed(c, n);
	*ret = v;
	*ret_n = count;
	return 0;
}
