/* SPDX-License-Identifier: MIT */
#include "cadence.h"

#define TIMER_ACCURACY_MIN_USEC 1000ULL

void cadence_derive_rates(evictd_config *c, unsigned online_cpus)
{
	if (online_cpus == 0)
		online_cpus = 1;
	c->online_cpus = online_cpus;
	if (c->memory_max_rate_auto) {
		int64_t r = CADENCE_MEMORY_RATE_PER_CPU * (int64_t)online_cpus;
		c->memory_max_rate = r > CADENCE_MEMORY_BANDWIDTH ? CADENCE_MEMORY_BANDWIDTH : r;
	}
	if (c->pid_max_rate_auto) {
		int64_t r = CADENCE_PID_RATE_PER_CPU * (int64_t)online_cpus;
		c->pid_max_rate = r > CADENCE_PID_RATE_MAX ? CADENCE_PID_RATE_MAX : r;
	}
}

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

static bool has_threshold(const evictd_config *c, evictd_signal s)
{
	const threshold_value *h = config_hard(c, s);
	return (h && h->set) || c->soft[s].set;
}

void cadence_plan(const evictd_config *c, const node_signals *n, const evaluation *ev, uint64_t now_usec,
                  uint64_t ret_due[_SIGNAL_MAX])
{
	uint64_t rate_max = c->interval_usec > CADENCE_RATE_MAX_USEC ? c->interval_usec : CADENCE_RATE_MAX_USEC;

	for (int s = 0; s < _SIGNAL_MAX; s++) {
		const signal_obs *o = &n->s[s];
		int64_t rate = cadence_max_rate(c, (evictd_signal)s);
		uint64_t due = UINT64_MAX;

		if (!has_threshold(c, (evictd_signal)s)) {
			ret_due[s] = UINT64_MAX;
			continue;
		}
		/* Not observable now, or no rate model: nothing bounds its change but the interval. */
		if (!o->known || rate <= 0)
			due = c->interval_usec;
		else
			due = rate_max;
		for (int k = 0; k < _THRESHOLD_KIND_MAX && o->known; k++) {
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
			if (w < due)
				due = w;
		}
		ret_due[s] = due < CADENCE_MIN_USEC ? CADENCE_MIN_USEC : due;
	}
}

uint64_t cadence_next_usec(const evictd_config *c, const node_signals *n, const evaluation *ev, uint64_t now_usec)
{
	uint64_t due[_SIGNAL_MAX], wait = UINT64_MAX;

	cadence_plan(c, n, ev, now_usec, due);
	for (int s = 0; s < _SIGNAL_MAX; s++)
		if (due[s] < wait)
			wait = due[s];
	/* No threshold at all: nothing to poll for but the interval keeps the daemon's status fresh. */
	return wait == UINT64_MAX ? c->interval_usec : wait;
}

unsigned cadence_due(const cadence_state *st, const bool want[_SIGNAL_MAX], uint64_t now_usec, uint64_t slack_usec,
                     bool all, bool ret_read[_SIGNAL_MAX])
{
	unsigned n = 0;
	uint64_t first = UINT64_MAX;
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		ret_read[s] = want[s] && (all || st->due_at[s] <= now_usec + slack_usec);
		n += ret_read[s];
		if (want[s] && st->due_at[s] < first)
			first = st->due_at[s];
	}
	/* The tick was armed for the earliest due signal: it is read even if the clock says "not yet". */
	for (int s = 0; s < _SIGNAL_MAX && n == 0 && first != UINT64_MAX; s++)
		if (want[s] && st->due_at[s] == first) {
			ret_read[s] = true;
			n++;
		}
	return n;
}

uint64_t cadence_update(cadence_state *st, const evictd_config *c, const node_signals *n, const evaluation *ev,
                        const bool read[_SIGNAL_MAX], uint64_t now_usec)
{
	uint64_t due[_SIGNAL_MAX], next = UINT64_MAX;

	cadence_plan(c, n, ev, now_usec, due);
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		uint64_t at = due[s] == UINT64_MAX ? UINT64_MAX : now_usec + due[s];
		if (read[s] || at < st->due_at[s] || due[s] == UINT64_MAX)
			st->due_at[s] = at;
		if (st->due_at[s] < next)
			next = st->due_at[s];
	}
	if (next == UINT64_MAX)
		return c->interval_usec;
	return next > now_usec + CADENCE_MIN_USEC ? next - now_usec : CADENCE_MIN_USEC;
}

void cadence_timer(uint64_t wait_usec, uint64_t *ret_at, uint64_t *ret_accuracy)
{
	uint64_t acc = wait_usec / 16;
	if (acc <= TIMER_ACCURACY_MIN_USEC) {
		/* As before: a short wait's deadline already has margin (CADENCE_MIN_USEC's floor). */
		*ret_at = wait_usec;
		*ret_accuracy = TIMER_ACCURACY_MIN_USEC;
		return;
	}
	*ret_at = wait_usec - acc;
	*ret_accuracy = acc;
}
