/* SPDX-License-Identifier: MIT */
#include "pending.h"

void pending_reclaim_init(pending_reclaim *p)
{
	*p = (pending_reclaim){ 0 };
}

void pending_reclaim_add(pending_reclaim *p, evictd_signal s, int64_t amount, bool bound_known, int64_t bound)
{
	if (s < 0 || s >= _SIGNAL_MAX)
		return;
	bool psi = signal_is_psi(s); /* higher is worse */
	if (amount >= 0)
		p->amount[s] += amount;
	else
		p->unknown[s] = true;
	/* without a value to tell new pressure from this source's, any reading counts as new */
	int64_t b = bound_known ? bound : psi ? INT64_MIN : INT64_MAX;
	if (p->sources[s]++ == 0 || (psi ? b > p->bound[s] : b < p->bound[s]))
		p->bound[s] = b;
}
