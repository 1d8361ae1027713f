/* SPDX-License-Identifier: MIT */
#pragma once

/* Journal entries for decisions (one per threshold/condition change and per pod chosen). */

#include <stdbool.h>

#include "config.h"
#include "decide.h"
#include "log.h"
#include "snapshot.h"

/* Threshold met / cleared, condition changed. */
void events_log_evaluation(const evaluation *ev, const snapshot *s, const evictd_config *c);
/* One entry per pod chosen ("Evicting ns/name (priority P): signal X < T; working set ..."). */
void events_log_choices(const decision *d, const snapshot *s, const evictd_config *c);
/* Both of the above. */
void events_log_decision(const decision *d, const snapshot *s, const evictd_config *c);

/* Adds EVICTD_POD, _POD_UID, _NAMESPACE, _PRIORITY, _CGROUP, _USAGE_BYTES, _REQUEST_BYTES. */
void events_add_pod_fields(log_entry *e, const pod_info *p);

/* Remembers which signals were reported unavailable, so each change is logged once. */
typedef struct signal_report_state {
	bool initialized;
	bool known[_SIGNAL_MAX];
} signal_report_state;

/* One line per signal that is unavailable (at the first call) or changes availability. */
void events_log_signal_availability(const node_signals *n, signal_report_state *st);

/* A rejected configuration (file, line, why); `keeping` says what stays in force. */
void events_log_config_rejected(const config_error *err, const char *keeping);
