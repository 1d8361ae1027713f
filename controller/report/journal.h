/* SPDX-License-Identifier: MIT */
/*
 * preemptd's log: one structured journal entry per decision and per fault (MESSAGE_ID per kind,
 * PREEMPTD_* fields, a readable MESSAGE; catalog: systemd/preemptd.catalog), or the same MESSAGE
 * as one line on stderr when not started by systemd. The target is chosen once (journal_setup);
 * sending is the common log core's (base/logging.h). Every stage writes into it; it knows none of
 * them.
 */
#ifndef CTL_JOURNAL_H
#define CTL_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

#include "logging.h"

/* A pod was bound (Binding accepted by the API server). */
#define MSGID_POD_BOUND          "3c9d2a07c7a14b6f9f1e0d5c22a61b01"
/* A pod fits nowhere and preemption does not help: PodScheduled=False, FailedScheduling. */
#define MSGID_POD_UNSCHEDULABLE  "8f0f4d62a1e34c55b3d7f2e9a04c6b12"
/* A preemption: the preemptor nominated to a node, its victims deleted. */
#define MSGID_PREEMPTION         "d2b7e61f0c4a4f8e9a35b6c1e7f04a23"
/* --pdb strict: the API server refused a victim's eviction; the preemption was withdrawn and the
 * preemptor is tried again. */
#define MSGID_PREEMPTION_WITHDRAWN "e4a19c7b2f6d4d0e8b53a1f0c9d27e68"
/* Leadership acquired or lost (the Lease). */
#define MSGID_LEADER             "51e0a9c3b8d24e7fa6c3019d5b2e8f34"
/* An API call failed in a way an operator must see (403: missing permission; retries exhausted). */
#define MSGID_API_ERROR          "a7c41e5d93f0462b8d1f7e2c6b9a0d45"
/* An object from the API server was refused and skipped (KIND/NS/NAME: field: what). */
#define MSGID_OBJECT_REFUSED     "6e2d8b4f1a7c45e0b9d3c5a8f2e1b056"
/* The caches are synced / a watch was restarted or relisted. */
#define MSGID_WATCH              "0b5f3e9a7d2c4816a4e0f1b9c3d7e267"
/* A preemption postponed by the preemption budget (--max-victims-per-minute...). */
#define MSGID_PREEMPTION_POSTPONED "4f8a2c6e1b3d45a79c0e5f7b2d8a1c36"
/* A nomination withdrawn at its deadline (--nomination-timeout): its victims did not terminate. */
#define MSGID_NOMINATION_EXPIRED   "b61d3f0a8e2c4b97a5d4e3c2f1a0b958"
/* --shadow: a decision of preemptd compared with the shadowed scheduler's (PREEMPTD_AGREE). */
#define MSGID_SHADOW             "fce8eb23525341c991911a4e51a24bed"

#define FIELD_POD        "PREEMPTD_POD"        /* namespace/name */
#define FIELD_POD_UID    "PREEMPTD_POD_UID"
#define FIELD_NODE       "PREEMPTD_NODE"
#define FIELD_PRIORITY   "PREEMPTD_PRIORITY"
#define FIELD_VICTIMS    "PREEMPTD_VICTIMS"    /* namespace/name,... in kube's order */
#define FIELD_VICTIM     "PREEMPTD_VICTIM"     /* namespace/name of the victim an answer is about */
#define FIELD_EVICTED    "PREEMPTD_EVICTED"    /* namespace/name,... of the victims evicted */
#define FIELD_PDB        "PREEMPTD_PDB"        /* namespace/name of a PodDisruptionBudget */
#define FIELD_REASON     "PREEMPTD_REASON"     /* the FitError message, or why a call failed */
#define FIELD_VERB       "PREEMPTD_VERB"
#define FIELD_PATH       "PREEMPTD_PATH"
#define FIELD_STATUS     "PREEMPTD_STATUS"     /* HTTP status, 0 when none came */
#define FIELD_LEASE      "PREEMPTD_LEASE"      /* namespace/name */
#define FIELD_IDENTITY   "PREEMPTD_IDENTITY"
#define FIELD_OBJECT     "PREEMPTD_OBJECT"     /* KIND/NS/NAME */
#define FIELD_RESOURCE   "PREEMPTD_RESOURCE"   /* pods, nodes, ... */
#define FIELD_EXPLANATION "PREEMPTD_EXPLANATION" /* the facts that decided (preemptctl --explain's "why:") */
#define FIELD_CRITERION  "PREEMPTD_CRITERION"  /* the best-candidate criterion that picked the node */
#define FIELD_RUNNER_UP  "PREEMPTD_RUNNER_UP"  /* the candidate node it beat */
#define FIELD_SCHEDULER  "PREEMPTD_SCHEDULER"  /* --shadow: the scheduler shadowed */
#define FIELD_KIND       "PREEMPTD_KIND"       /* --shadow: bind, preempt, unschedulable (preemptd's) */
#define FIELD_AGREE      "PREEMPTD_AGREE"      /* --shadow: true, false */
#define FIELD_OURS       "PREEMPTD_OURS"       /* --shadow: what preemptd would have done */
#define FIELD_THEIRS     "PREEMPTD_THEIRS"     /* --shadow: what the shadowed scheduler did */

/*
 * Where entries go and the priority limit are the common log core's (base/logging.h:
 * logging_get_target, logging_target_parse, logging_set_max_priority, logging_max_priority);
 * this sets preemptd's style on it: "preemptd: message" on stderr, lines cut at 4 KiB, and auto
 * takes the journal only when $JOURNAL_STREAM is our stderr. ident: SYSLOG_IDENTIFIER and the
 * stderr prefix (a static string; NULL keeps the previous one).
 */
void journal_setup(logging_target t, const char *ident);

#define JOURNAL_FIELDS_MAX 16
#define JOURNAL_ENTRY_BYTES 8192

/* An entry being built: its fields ("KEY=value") one after the other in one buffer, as the iovecs
 * of sd_journal_sendv will point at them. */
typedef struct journal_entry {
	int priority;
	const char *message_id;
	size_t n, used;
	size_t start[JOURNAL_FIELDS_MAX], size[JOURNAL_FIELDS_MAX];
	char buf[JOURNAL_ENTRY_BYTES];
} journal_entry;

void journal_entry_init(journal_entry *e, int priority, const char *message_id);
/* Adds KEY=value; what does not fit the entry is cut (fields are informative), fields past
 * JOURNAL_FIELDS_MAX are left out. */
void journal_entry_add(journal_entry *e, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Sets MESSAGE and sends. */
void journal_entry_send(journal_entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A plain message. */
void journal_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
