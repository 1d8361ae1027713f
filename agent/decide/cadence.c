/* SPDX-License-Identifier: MIT */
#include "cadence.h"

int64_t cadence_max_rate(const evictd_config *c, evictd_signal s)
{
	switch (s) {
	case SIGNAL_MEMORY_AVAILABLE:
	case SIGNAL_ALLOCATABLE_MEMORY_AVAILABLE:
		return c->memory_max_rate;
	case SIGNAL_NODEFS_AVAILABLE:
	case SIGNAL_IMAGEFS_AVAILABLE:
		return c->disk_max_rate;
	case SIGNAL_NODEFS_INODES_FREE:
	case SIGNAL_IMAGEFS_INODES_FREE:
		return c->inodes_max_rate;
	case SIGNAL_PID_AVAILABLE:
		return c->pid_max_rate;
	default:
		return 0;
	}
}

static uint64_t headroom_usec(int64_t headroom, int64_t rate)
{
	if (headroom <= 0)
		return 0;
	/* headroom / rate seconds; double: headroom * 1e6 overflows int64 beyond 9 TB */
	double usec = (double)headroom * 1e6 / (double)rate;
	return usec >= (double)UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)usec;
}

uint64_t cadence_next_usec(const evictd_config *c, const node_signals *n, const evaluation *ev, uint64_t now_usec)
{
	uint64_t wait = c->interval_usec;

	for (int s = 0; s < _SIGNAL_MAX; s++) {
		const signal_obs *o = &n->s[s];
		int64_t rate = cadence_max_rate(c, (evictd_signal)s);
		if (!o->known)
			continue;
		for (int k = 0; k < _THRESHOLD_KIND_MAX; k++) {
			const threshold_eval *e = &ev->t[k][s];
			uint64_t w;
			if (!e->configured || !e->observed)
				continue;
			if (e->met && e->actionable)
				w = CADENCE_MET_USEC;
			else if (e->met) /* soft, in its grace period: one good sample resets it, none is needed */
				w = e->met_since_usec + e->grace_usec > now_usec ? e->met_since_usec + e->grace_usec - now_usec : 0;
			else if (rate > 0)
				w = headroom_usec(o->available - e->threshold, rate);
			else
				continue;
			if (w < wait)
				wait = w;
		}
	}
	return wait < CADENCE_MIN_USEC ? CADENCE_MIN_USEC : wait;
}
