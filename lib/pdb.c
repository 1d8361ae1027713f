/* SPDX-License-Identifier: MIT */
/*
 * PodDisruptionBudget status.disruptionsAllowed when the snapshot lacks it, computed as the
 * disruption controller would (reference §10): the owning controllers' scale is unknown, so the
 * expected count is the number of bound, non-terminal pods the selector matches.
 */
#include <string.h>

#include "pdb.h"
#include "select.h"

/* ceil(pct * n / 100) without overflow: both factors are small enough for int64. */
static int64_t percent_of(int32_t pct, int64_t n)
{
	return ((int64_t)pct * n + 99) / 100;
}

int32_t pp__pdb_disruptions_allowed(const pp_cluster *c, const struct pdb *b)
{
	if (b->has_disruptions_allowed)
		return b->disruptions_allowed;

	int64_t expected = 0, healthy = 0;
	for (size_t i = 0; i < c->n_pods; i++) {
		const struct pod *p = c->pods[i];
		/* The controller's selector: {} selects every pod of the namespace, nil none. */
		if (!p->node || strcmp(p->ns, b->ns) != 0 || !pp__label_selector_matches(&b->selector, p->labels, p->n_labels))
			continue;
		expected++;
		if (!p->terminating && !p->not_ready && !pp__pdb_disrupted(b, p->name))
			healthy++;
	}

	int64_t desired = 0;
	if (b->max_unavailable.kind != PP_IOP_UNSET) {
		int64_t mu = b->max_unavailable.kind == PP_IOP_INT ? b->max_unavailable.value
		                                                   : percent_of(b->max_unavailable.value, expected);
		desired = expected - mu > 0 ? expected - mu : 0;
	} else if (b->min_available.kind == PP_IOP_INT)
		desired = b->min_available.value;
	else if (b->min_available.kind == PP_IOP_PERCENT)
		desired = percent_of(b->min_available.value, expected);

	int64_t allowed = healthy - desired;
	if (expected <= 0 || allowed <= 0)
		return 0;
	return allowed > INT32_MAX ? INT32_MAX : (int32_t)allowed;
}
