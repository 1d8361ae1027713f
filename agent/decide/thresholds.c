/* SPDX-License-Identifier: MIT */
#include "thresholds.h"

#include <string.h>

const char *threshold_kind_name(threshold_kind k)
{
	return k == THRESHOLD_HARD ? "hard" : "soft";
}

bool threshold_crossed(evictd_signal s, int64_t available, int64_t threshold)
{
	return signal_is_psi(s) ? available > threshold : available < threshold;
}

void thresholds_evaluate(const evictd_config *c, const node_signals *obs, threshold_state *st, uint64_t now_usec,
                         evaluation *ret)
{
	bool observed_cond[_CONDITION_MAX] = { false };

	memset(ret, 0, sizeof(*ret));
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int s = 0; s < _SIGNAL_MAX; s++) {
			const threshold_value *tv = k == THRESHOLD_HARD ? &c->hard[s] : &c->soft[s];
			const signal_obs *o = &obs->s[s];
			threshold_eval *e = &ret->t[k][s];
			bool was_met = st->met[k][s];

			e->configured = tv->set;
			e->observed = o->known;
			e->grace_usec = k == THRESHOLD_SOFT ? c->soft_grace_usec[s] : 0;
			if (!tv->set || !o->known) {
				/* No observation: nothing is met (the kubelet logs and moves on). */
				e->cleared = was_met;
				st->met[k][s] = st->actionable[k][s] = false;
				st->first_met_usec[k][s] = 0;
				continue;
			}
			e->threshold = config_threshold_resolve_signal((evictd_signal)s, tv, o->capacity);
			e->min_reclaim = c->min_reclaim[s].set ? config_threshold_resolve_signal((evictd_signal)s, &c->min_reclaim[s], o->capacity) : 0;
			bool met = threshold_crossed((evictd_signal)s, o->available, e->threshold);
			if (!met && st->actionable[k][s]) {
				int64_t until = signal_is_psi((evictd_signal)s) ? e->threshold - e->min_reclaim
				                                                 : e->threshold + e->min_reclaim;
				met = threshold_crossed((evictd_signal)s, o->available, until);
			}
			e->met = met;
			e->newly_met = met && !was_met;
			e->cleared = !met && was_met;
			if (met) {
				if (!was_met)
					st->first_met_usec[k][s] = now_usec;
				e->met_since_usec = st->first_met_usec[k][s];
				e->actionable = now_usec - st->first_met_usec[k][s] >= e->grace_usec;
				observed_cond[signal_condition((evictd_signal)s)] = true;
			} else
				st->first_met_usec[k][s] = 0;
			st->met[k][s] = met;
			e->newly_actionable = e->actionable && !st->actionable[k][s];
			st->actionable[k][s] = e->actionable;
		}

	for (int cnd = 0; cnd < _CONDITION_MAX; cnd++) {
		if (observed_cond[cnd]) {
			st->condition_seen[cnd] = true;
			st->condition_last_usec[cnd] = now_usec;
		}
		bool on = observed_cond[cnd] ||
		          (st->condition_seen[cnd] && now_usec - st->condition_last_usec[cnd] < c->pressure_transition_usec);
		ret->conditions[cnd] = on;
		ret->condition_changed[cnd] = on != st->condition[cnd];
		st->condition[cnd] = on;
	}
}
