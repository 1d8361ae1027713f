/* SPDX-License-Identifier: MIT */
#include "events.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void events_add_pod_fields(log_entry *e, const pod_info *p)
{
	char n[320];

	log_entry_add(e, FIELD_POD, "%s", snapshot_pod_display_name(p, n, sizeof(n)));
	log_entry_add(e, FIELD_POD_UID, "%s", p->uid);
	log_entry_add(e, FIELD_NAMESPACE, "%s", p->namespace_ ? p->namespace_ : "");
	log_entry_add(e, FIELD_PRIORITY, "%" PRId32, p->priority);
	log_entry_add(e, FIELD_CGROUP, "/%s", p->cgroup);
	if (p->has_memory)
		log_entry_add(e, FIELD_USAGE_BYTES, "%" PRId64, p->working_set);
	log_entry_add(e, FIELD_REQUEST_BYTES, "%" PRId64, p->memory_request);
}

static const char *op(evictd_signal s, bool met)
{
	if (signal_is_psi(s))
		return met ? ">" : "<=";
	return met ? "<" : ">=";
}

void events_log_evaluation(const evaluation *ev, const snapshot *s, const evictd_config *c)
{
	char a[32], t[32], m[32], g[32];

	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int sig = 0; sig < _SIGNAL_MAX; sig++) {
			const threshold_eval *te = &ev->t[k][sig];
			const signal_obs *o = &s->node.s[sig];
			log_entry e;
			if (!te->newly_met && !te->cleared)
				continue;
			log_entry_init(&e, te->newly_met ? LOG_WARNING : LOG_NOTICE,
			               te->newly_met ? MSGID_THRESHOLD_MET : MSGID_THRESHOLD_CLEARED);
			log_entry_add(&e, FIELD_SIGNAL, "%s", signal_name((evictd_signal)sig));
			log_entry_add(&e, FIELD_THRESHOLD_KIND, "%s", threshold_kind_name((threshold_kind)k));
			log_entry_add(&e, FIELD_UNIT, "%s", signal_unit((evictd_signal)sig));
			log_entry_add(&e, FIELD_DRY_RUN, "%d", c->dry_run ? 1 : 0);
			if (!o->known) {
				log_entry_send(&e, "Threshold cleared: %s %s threshold no longer observable (%s)",
				               signal_name((evictd_signal)sig), threshold_kind_name((threshold_kind)k),
				               o->reason);
				continue;
			}
			log_entry_add(&e, FIELD_OBSERVED, "%" PRId64, o->available);
			log_entry_add(&e, FIELD_THRESHOLD, "%" PRId64, te->threshold);
			log_entry_add(&e, FIELD_MIN_RECLAIM, "%" PRId64, te->min_reclaim);
			decide_format_signal_value((evictd_signal)sig, o->available, a, sizeof(a));
			decide_format_signal_value((evictd_signal)sig, te->threshold, t, sizeof(t));
			if (te->newly_met) {
				if (k == THRESHOLD_SOFT)
					snprintf(g, sizeof(g), ", grace %" PRIu64 "s", te->grace_usec / USEC_PER_SEC);
				else
					g[0] = '\0';
				log_entry_send(&e, "Threshold met: %s %s %s %s (%s%s)", signal_name((evictd_signal)sig), a,
				               op((evictd_signal)sig, true), t, threshold_kind_name((threshold_kind)k), g);
			} else {
				decide_format_signal_value((evictd_signal)sig, te->min_reclaim, m, sizeof(m));
				log_entry_send(&e, "Threshold cleared: %s %s %s %s + minimum reclaim %s (%s)",
				               signal_name((evictd_signal)sig), a, op((evictd_signal)sig, false), t, m,
				               threshold_kind_name((threshold_kind)k));
			}
		}

	for (int cnd = 0; cnd < _CONDITION_MAX; cnd++) {
		log_entry e;
		if (!ev->condition_changed[cnd])
			continue;
		log_entry_init(&e, ev->conditions[cnd] ? LOG_WARNING : LOG_NOTICE, MSGID_CONDITION_CHANGED);
		log_entry_add(&e, FIELD_CONDITION, "%s", signal_condition_name((evictd_condition)cnd));
		log_entry_add(&e, FIELD_CONDITION_STATUS, "%s", ev->conditions[cnd] ? "True" : "False");
		log_entry_send(&e, "Node condition %s is now %s", signal_condition_name((evictd_condition)cnd),
		               ev->conditions[cnd] ? "True" : "False");
	}
}

void events_log_choices(const decision *d, const snapshot *s, const evictd_config *c)
{
	for (size_t i = 0; i < d->n_evict; i++) {
		const eviction_choice *ch = &d->evict[i];
		const pod_info *p = &s->pods[ch->pod];
		char name[320], a[32], t[32], u[32], q[32], why[160];
		log_entry e;

		log_entry_init(&e, LOG_WARNING, MSGID_POD_CHOSEN);
		events_add_pod_fields(&e, p);
		log_entry_add(&e, FIELD_SIGNAL, "%s", signal_name(ch->signal));
		log_entry_add(&e, FIELD_THRESHOLD_KIND, "%s", threshold_kind_name(ch->kind));
		log_entry_add(&e, FIELD_OBSERVED, "%" PRId64, ch->observed);
		log_entry_add(&e, FIELD_THRESHOLD, "%" PRId64, ch->threshold);
		log_entry_add(&e, FIELD_RANK, "%u", ch->rank);
		log_entry_add(&e, FIELD_GRACE_SEC, "%" PRIu64, ch->grace_usec / USEC_PER_SEC);
		log_entry_add(&e, FIELD_DRY_RUN, "%d", c->dry_run ? 1 : 0);
		if (ch->expected_reclaim >= 0)
			log_entry_add(&e, FIELD_EXPECTED_RECLAIM, "%" PRId64, ch->expected_reclaim);
		if (p->has_pids)
			log_entry_add(&e, FIELD_PROCESSES, "%" PRId64, p->pids);
		evictd_rank_kind rk = signal_rank_kind(ch->signal);
		bool imagefs = rk == RANK_IMAGEFS || rk == RANK_IMAGEFS_INODES;
		if ((rk == RANK_DISK || rk == RANK_INODES) && p->has_disk) {
			log_entry_add(&e, FIELD_DISK_BYTES, "%" PRId64, p->disk_bytes);
			log_entry_add(&e, FIELD_DISK_INODES, "%" PRId64, p->disk_inodes);
		} else if (imagefs && p->has_imagefs) {
			log_entry_add(&e, FIELD_DISK_BYTES, "%" PRId64, p->imagefs_bytes);
			log_entry_add(&e, FIELD_DISK_INODES, "%" PRId64, p->imagefs_inodes);
		}
		/* what the usage is made of, as the layout says (runtime-disk.h): writable layers count for
		 * nodefs unless they have a filesystem of their own, logs for imagefs only on one disk */
		bool layers_on_nodefs = p->has_rootfs && (s->layout == LAYOUT_SINGLE || s->layout == LAYOUT_SPLIT);
		const char *what = !imagefs ? (layers_on_nodefs ? "emptyDir+logs+writable layers" : "emptyDir+logs")
		                   : s->layout == LAYOUT_SINGLE ? "writable layers+logs+emptyDir"
		                                                : "writable layers";

		decide_format_signal_value(ch->signal, ch->observed, a, sizeof(a));
		decide_format_signal_value(ch->signal, ch->threshold, t, sizeof(t));
		if (rk == RANK_PID)
			snprintf(why, sizeof(why), "%" PRId64 " tasks", p->pids);
		else if (imagefs && !p->has_imagefs)
			snprintf(why, sizeof(why), "lowest priority (writable layers cannot be attributed to pods)");
		else if (rk == RANK_IMAGEFS)
			snprintf(why, sizeof(why), "%s %s %s ephemeral-storage request %s", what,
			         log_format_bytes(p->imagefs_bytes, u, sizeof(u)),
			         p->imagefs_bytes > p->storage_request ? "exceeds" : "within",
			         log_format_bytes(p->storage_request, q, sizeof(q)));
		else if (rk == RANK_IMAGEFS_INODES)
			snprintf(why, sizeof(why), "%s %" PRId64 " inodes", what, p->imagefs_inodes);
		else if ((rk == RANK_DISK || rk == RANK_INODES) && !p->has_disk)
			snprintf(why, sizeof(why), "disk usage not measured; lowest priority");
		else if (rk == RANK_DISK)
			snprintf(why, sizeof(why), "%s %s%s %s ephemeral-storage request %s", what,
			         p->disk_partial ? "at least " : "", log_format_bytes(p->disk_bytes, u, sizeof(u)),
			         p->disk_bytes > p->storage_request ? "exceeds" : "within",
			         log_format_bytes(p->storage_request, q, sizeof(q)));
		else if (rk == RANK_INODES)
			snprintf(why, sizeof(why), "%s %s%" PRId64 " inodes", what, p->disk_partial ? "at least " : "",
			         p->disk_inodes);
		else if (!p->has_memory)
			snprintf(why, sizeof(why), "memory usage unknown");
		else
			snprintf(why, sizeof(why), "working set %s %s request %s", log_format_bytes(p->working_set, u, sizeof(u)),
			         p->working_set > p->memory_request ? "exceeds" : "within",
			         log_format_bytes(p->memory_request, q, sizeof(q)));
		log_entry_send(&e, "%s %s (priority %" PRId32 "): %s %s %s %s; %s%s", c->dry_run ? "Would evict" : "Evicting",
		               snapshot_pod_display_name(p, name, sizeof(name)), p->priority, signal_name(ch->signal), a,
		               op(ch->signal, true), t, why, c->dry_run ? " (dry run)" : "");
	}
}

void events_log_decision(const decision *d, const snapshot *s, const evictd_config *c)
{
	events_log_evaluation(&d->eval, s, c);
	events_log_choices(d, s, c);
}

void events_log_signal_availability(const node_signals *n, signal_report_state *st)
{
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		bool k = n->s[s].known;
		log_entry e;
		if (st->initialized && st->known[s] == k)
			continue;
		st->known[s] = k;
		if (k && !st->initialized)
			continue;
		/* In a terminal the "monitoring" line that follows the first reading names each
		 * unavailable signal with its reason: once is enough on a screen. The journal keeps
		 * one entry per signal, with its MESSAGE_ID, for whoever queries it. */
		if (!st->initialized && logging_get_target() == LOGGING_STDERR)
			continue;
		log_entry_init(&e, k ? LOG_NOTICE : LOG_WARNING, MSGID_SIGNAL_UNAVAILABLE);
		log_entry_add(&e, FIELD_SIGNAL, "%s", signal_name((evictd_signal)s));
		if (k)
			log_entry_send(&e, "Signal %s is available again", signal_name((evictd_signal)s));
		else {
			log_entry_add(&e, FIELD_REASON, "%s", n->s[s].reason);
			log_entry_send(&e, "Signal %s unavailable: %s", signal_name((evictd_signal)s), n->s[s].reason);
		}
	}
	st->initialized = true;
}

void events_log_config_rejected(const config_error *err, const char *keeping)
{
	log_entry e;

	log_entry_init(&e, LOG_ERR, MSGID_CONFIG_REJECTED);
	log_entry_add(&e, FIELD_CONFIG_FILE, "%s", err->file);
	if (err->line)
		log_entry_add(&e, FIELD_CONFIG_LINE, "%u", err->line);
	log_entry_add(&e, FIELD_REASON, "%s", err->msg);
	log_entry_send(&e, "Configuration rejected: %s%s%s", err->text, keeping ? "; " : "", keeping ? keeping : "");
}
