/* SPDX-License-Identifier: MIT */
/*
 * A decision carried out on the API server, as kube-scheduler carries out its own (reference §12):
 *   bind           POST pods/NAME/binding with the pod's uid, then Event Normal Scheduled
 *                  "Successfully assigned NS/NAME to NODE";
 *   unschedulable  PATCH pods/NAME/status PodScheduled=False/Unschedulable with the FitError
 *                  (only when it changed), Event Warning FailedScheduling (the same message
 *                  again within ten minutes extends the first Event's series instead); a
 *                  binding refused: Warning FailedScheduling with the API server's message;
 *   preempt        each victim not yet terminating: DisruptionTarget=True/PreemptionByScheduler,
 *                  DELETE with a uid precondition and its own grace period, Event Normal Preempted
 *                  "Preempted by pod UID on node NODE"; the preemptor's status gets
 *                  status.nominatedNodeName and its FitError, with a FailedScheduling Event; the
 *                  lower-priority pods that lost their nomination get it cleared (with an Event
 *                  Normal NominationCleared, which kube-scheduler does not send);
 *                  under --pdb strict, evict.h says how it goes instead;
 *   postponed      (the budget holds the preemption) as unschedulable, the message saying so;
 *   nomination expired  nominatedNodeName cleared, Event Warning NominationExpired.
 * Each decision is logged to the journal (catalog: systemd/preemptd.catalog).
 */
#ifndef CTL_ACT_H
#define CTL_ACT_H

#include <stdbool.h>
#include <stdint.h>

#include "model-cluster.h"
#include "decision.h"
#include "evict.h"
#include "writer.h"

typedef struct act act;

/* How a binding ended, for the attempt's metrics (kube-scheduler counts an attempt when its
 * binding cycle ends: schedule_one.go's bindingCycle / handleBindingCycleError). */
typedef struct act_binding {
	const char *namespace_, *name;
	bool ok;                 /* the API server accepted it */
	int64_t started_mono_ns; /* the cycle's start (decision.started_mono_ns) */
	int64_t sent_mono_ns;    /* when the binding was handed to the writer */
	unsigned attempts;       /* the pod's cycles, this one included */
} act_binding;

typedef struct act_opts {
	const char *scheduler_name; /* reportingController, the victims' condition message */
	const char *identity;       /* reportingInstance (kube's form: <scheduler-name>-<hostname>) */
	/* A binding answered (or abandoned); NULL: not told. */
	void (*binding_done)(void *userdata, const act_binding *b);
	void *userdata;
	writer_opts writer;
	/* PP_PDB_STRICT: victims are evicted through the Eviction API, one after the other, and the
	 * preemptor is nominated once every one is (evict.h) */
	pp_pdb_policy pdb_policy;
	/* Pods whose last FailedScheduling is remembered (to fold repeats into a series); 0: 4096,
	 * client-go's event cache. Beyond it the least recent are forgotten: their next one is new. */
	unsigned event_memo_max;
} act_opts;

int act_new(sd_event *e, transport *t, cluster *c, const act_opts *o, act **ret);
act *act_free(act *a);

/* Only the Lease holder writes: the gate the writer asks before each request (NULL: always). */
void act_set_gate(act *a, bool (*may_write)(void *userdata, long *ret_timeout_ms), void *userdata);

/* Carries the decision out (asynchronously). now_ns: the wall clock, for Events and conditions. */
void act_decision(act *a, const decision *d, int64_t now_ns);

/* Event Normal LeaderElection "<identity> became leader" regarding the Lease, as client-go's
 * LeaseLock.RecordEvent sends it (leaderelection.go's acquire). */
void act_leader_event(act *a, const char *lease_ns, const char *lease_name, const char *lease_uid,
                      const char *identity, int64_t now_ns);

writer *act_writer(act *a);
/* The act stage's evictor (NULL under --pdb prefer). */
evictor *act_evictor(const act *a);

typedef struct act_stats {
	uint64_t bound;            /* bindings accepted */
	uint64_t bind_conflicts;   /* bindings refused with 409 */
	uint64_t bind_failures;    /* bindings refused (409 included), gone, or abandoned */
	uint64_t victims_deleted;  /* DELETEs accepted */
	uint64_t events_skipped;   /* FailedScheduling Events not repeated */
	uint64_t status_skipped;   /* PodScheduled patches not sent: unchanged */
	uint64_t forbidden;        /* 403 answers */
	uint64_t postponed;        /* preemptions the budget postponed */
	uint64_t nominations_expired; /* nominations withdrawn at their deadline */
} act_stats;
void act_get_stats(const act *a, act_stats *ret);

#endif
