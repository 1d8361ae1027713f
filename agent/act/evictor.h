/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The evictor: carries out eviction decisions on an sd-event loop and tracks them until the pod
 * is gone. It never blocks — grace periods, exec timeouts and the wait for an empty cgroup are
 * timers and event sources — so monitoring keeps running while pods terminate.
 *
 * It is also the eviction tracker: a pod in flight is never started twice, and the reclaim it is
 * expected to bring counts (evictor_pending_reclaim) until it has terminated, so the next decision
 * does not pick more victims for pressure that is already being relieved.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "inflight.h"

typedef struct evictor evictor;

typedef struct evict_config {
	bool dry_run;               /* decide and log, touch nothing */
	bool use_exec;              /* action = exec, else kill */
	char *const *exec_argv;     /* borrowed, validated with exec_argv_validate() */
	uint64_t exec_timeout_usec; /* the command is SIGKILLed after this */
	bool exec_fallback_kill;    /* a failed command falls back to the kill action */
	uint64_t kill_timeout_usec; /* after SIGKILL, how long to wait for an empty cgroup */
	uint64_t recheck_usec;      /* cgroup.events re-read period while a pod terminates */
	const char *inflight_dir;   /* borrowed; where in-flight evictions are recorded (NULL: nowhere) */
	bool keep_records;          /* a finished eviction's record is left to the FINISHED callback, which
	                             * replaces it with what follows (a reclaim, a back-off) or removes it:
	                             * so that no moment is without a record (inflight.h) */
	unsigned walk_dirs_per_turn;/* sub-cgroups a signal walk visits per event-loop turn */
	bool no_cgroup_kill;        /* test hook: behave as on a kernel without cgroup.kill */
} evict_config;

/* evict_config with the defaults: kill, 30 s exec timeout, 10 s kill timeout, 500 ms recheck,
 * 64 sub-cgroups per loop turn. */
void evict_config_init(evict_config *c);

typedef struct evict_request {
	const char *uid;         /* key of the tracker; required */
	const char *namespace_;  /* "" when unknown */
	const char *name;        /* the uid when there is no descriptor */
	const char *cgroup_path; /* absolute path of the pod cgroup; required */
	const char *signal;      /* the signal that made this pod a victim, e.g. "memory.available" */
	bool hard;               /* hard threshold: no grace */
	uint64_t grace_usec;     /* SIGTERM → cgroup.kill; the caller applies min(pod, max-pod-grace) */
	int32_t priority;
	int64_t usage;           /* the pod's usage for signal (bytes, or processes for pid.available) */
	int64_t expected_reclaim;/* counted by evictor_pending_reclaim() until the pod is gone */
	const reclaim_entry *reclaim; /* recorded with the eviction (inflight.h), NULL: none */
	unsigned failures;       /* the pod's failed or refused evictions so far, recorded with it */
} evict_request;

typedef enum evict_phase {
	EVICT_PHASE_TERMINATING, /* SIGTERM sent, grace running */
	EVICT_PHASE_KILLING,     /* cgroup.kill (or per-process SIGKILL) sent */
	EVICT_PHASE_EXEC,        /* the configured command runs */
	EVICT_PHASE_WAITING,     /* the command succeeded; waiting for the pod to go */
	EVICT_PHASE_DRY_RUN,     /* nothing is done; tracked for the grace it would have had */
} evict_phase;

typedef enum evict_outcome {
	EVICT_RUNNING = 0,
	EVICT_DONE,      /* the pod cgroup is empty (or gone) */
	EVICT_TIMEOUT,   /* still populated after SIGKILL + kill timeout, or after a command */
	EVICT_FAILED,    /* could not be started (see error), or the command failed, no fallback */
	EVICT_DRY,       /* dry run: nothing was touched */
	EVICT_HANDED_OVER, /* daemon stopping while an orchestrator (exec) deletes the pod */
	EVICT_GONE,      /* the pod cgroup no longer existed at the start: the pod ended after it was
	                  * chosen; nothing was signalled (error -ENOENT) */
	EVICT_EMPTY,     /* the pod cgroup had no process left at the start ("populated 0"): nothing
	                  * was signalled and no command was run */
} evict_outcome;

#define EVICT_STDERR_TAIL 512

/* Why the pod was killed (cgroup.kill, or SIGKILL without it): each says something else. */
typedef enum evict_kill_cause {
	EVICT_KILL_NONE = 0,     /* not killed (yet) */
	EVICT_KILL_NO_GRACE,     /* no grace period (hard threshold): at once, without SIGTERM */
	EVICT_KILL_GRACE_OVER,   /* the grace period ended before the pod did */
	EVICT_KILL_STOPPING,     /* evictd stopping: no pod is left SIGTERMed but never killed */
	EVICT_KILL_LATE,         /* taken over after a restart: its grace ended while no evictd ran */
	EVICT_KILL_AGAIN,        /* taken over after a restart from a process that was killing it:
	                          * written again (idempotent), as that process may have died first */
} evict_kill_cause;

/* A snapshot of one eviction, for callbacks, logs and status.json. Valid during the call only. */
typedef struct evict_info {
	const char *uid, *namespace_, *name, *cgroup_path, *signal;
	bool hard, dry_run, exec;
	int32_t priority;
	uint64_t grace_usec;
	int64_t usage, expected_reclaim;
	uint64_t started_mono_usec;  /* CLOCK_MONOTONIC */
	uint64_t started_real_usec;  /* CLOCK_REALTIME, for humans */
	uint64_t deadline_mono_usec; /* next escalation (end of grace / of the command's timeout) */
	evict_phase phase;
	int procs_signalled;         /* processes that got SIGTERM */
	bool sigkilled;              /* the grace ended before the pod did */
	evict_kill_cause kill_cause; /* why, once sigkilled */
	bool kill_announced;         /* STARTED was emitted by the kill itself (no grace): it said so */
	bool cgroup_kill;            /* false: per-process SIGKILL (kernel without cgroup.kill) */
	bool resumed;                /* taken over from a previous evictd process (inflight.h) */
	int walk_error;              /* first error of the signal walk (-errno), 0 when none: logged, not fatal */
	unsigned walk_skipped;       /* sub-cgroups the walk could not read */
	/* set when finished */
	evict_outcome outcome;
	uint64_t duration_usec;      /* SIGTERM (or command start) → empty cgroup */
	int64_t reclaimed_bytes;     /* memory.current at start when readable, else usage if bytes; -1 unknown */
	int error;                   /* -errno for EVICT_FAILED */
	int exec_status;             /* wait status of the command, -1 when it did not exit */
	char exec_stderr[EVICT_STDERR_TAIL]; /* last bytes of the command's stderr */
} evict_info;

typedef enum evict_event {
	EVICT_EVENT_STARTED,   /* SIGTERM sent, command started, or dry run logged */
	EVICT_EVENT_ESCALATED, /* cgroup.kill / SIGKILL written (kill_cause says why) */
	EVICT_EVENT_EXEC_DONE, /* the command exited or timed out (see exec_status) */
	EVICT_EVENT_FINISHED,  /* outcome set; the pod has already left the tracker */
	EVICT_EVENT_RESUMED,   /* an eviction recorded by a previous evictd process was taken over */
} evict_event;

typedef void (*evict_callback)(evictor *ev, evict_event what, const evict_info *info, void *userdata);

/* The loop must be single-threaded; SIGCHLD is blocked here (sd-event child sources need that). */
int evictor_new(sd_event *e, const evict_config *cfg, evict_callback cb, void *userdata,
                evictor **ret);
evictor *evictor_free(evictor *ev);

/* Replaces the configuration (after a reload); evictions in flight keep the settings they began with. */
int evictor_set_config(evictor *ev, const evict_config *cfg);

/*
 * Starts one eviction. Returns 0 (started; EVICT_EVENT_STARTED was emitted, maybe FINISHED too;
 * or only FINISHED with EVICT_EMPTY when the pod cgroup had no process left),
 * -EALREADY when this uid is in flight, -EINVAL on a bad request, -ESHUTDOWN after
 * evictor_shutdown(), -ENOENT when the pod cgroup is gone (only FINISHED with EVICT_GONE is
 * emitted), or another -errno when nothing could be done (FINISHED with EVICT_FAILED was emitted
 * so that the failure is logged).
 */
int evictor_start(evictor *ev, const evict_request *req);

/*
 * Takes over an eviction a previous evictd process recorded (inflight_load): nothing already sent
 * is sent again; the grace period ends at its original deadline (at once when it has passed). A
 * pod whose cgroup is gone or empty finishes as done. Emits EVICT_EVENT_RESUMED (then maybe
 * ESCALATED/FINISHED). Returns 0, -EALREADY, -EINVAL, -ESHUTDOWN or -ENOMEM.
 */
int evictor_resume(evictor *ev, const inflight_record *rec);

/*
 * The API server refused this eviction while it still runs (eviction-api = eviction): the pod's
 * failure count and retry time (CLOCK_MONOTONIC) are recorded with it at once, so that a restart
 * before it ends keeps the refusal. Returns 0, -ENOENT (not in flight) or -EINVAL.
 */
int evictor_note_refusal(evictor *ev, const char *uid, unsigned failures, uint64_t retry_mono_usec);

bool evictor_contains(const evictor *ev, const char *uid);
unsigned evictor_count(const evictor *ev);

/* Sum of expected_reclaim of evictions in flight for this signal (all signals when NULL). */
int64_t evictor_pending_reclaim(const evictor *ev, const char *signal);

/* Calls fn for every eviction in flight, oldest first. */
void evictor_foreach(const evictor *ev, void (*fn)(const evict_info *info, void *userdata),
                     void *userdata);

/*
 * Stopping the daemon must not leave a pod half-evicted (SIGTERMed but never killed): every pod
 * still in its grace period is escalated to cgroup.kill now, commands keep their timeout, and no
 * new eviction is accepted. Returns the number still in flight; the caller keeps the loop running
 * until evictor_count() drops to 0.
 */
unsigned evictor_shutdown(evictor *ev);

const char *evict_phase_to_string(evict_phase p);
const char *evict_outcome_to_string(evict_outcome o);
