/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Whether evictd runs, as evictd-kube can tell from outside: it has no capability, may not trace
 * evictd and sees only its own processes in /proc, so it judges by what evictd leaves for readers:
 *   - its status file ([agent] status-file, root-owned): evictd's pid, its state ("running", and
 *     "stopping" from the moment it received SIGTERM: an orderly stop), updated_usec and
 *     heartbeat_usec (the longest evictd goes without rewriting the file while it runs);
 *   - a pidfd on that pid (pidfd_open needs no privilege): readable the moment the process ends,
 *     however it ends (SIGKILL, a crash), so a death without a word is seen at once;
 *   - inotify on the status file's directory: every rewrite (a rename into place) is a heartbeat,
 *     and a new evictd's first status is seen at once.
 * A status file that says "running" and is not rewritten for 3/2 × heartbeat_usec (60 s with the
 * default interval) is overdue: evictd is stuck, or gone where its pid cannot be watched (another
 * PID namespace). The rewrites are timed on CLOCK_MONOTONIC as evictd-kube sees them, so a step of
 * the wall clock neither hides nor fakes one; the wall clock only seeds the age of the file found
 * at start.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "condparse.h"

typedef enum evictd_liveness {
	EVICTD_NEVER_SEEN, /* no status file (evictd has not run since /run was emptied), or not root's */
	EVICTD_RUNNING,
	EVICTD_STOPPED,    /* its last status says "stopping": an orderly stop */
	EVICTD_EXITED,     /* its process ended while its status said "running": SIGKILL, a crash */
	EVICTD_OVERDUE,    /* its status says "running" but has not been rewritten in time */
} evictd_liveness;

typedef struct liveness_view {
	evictd_liveness state;
	pid_t pid;                  /* the status file's, 0 when none */
	bool dry_run;               /* evictd reports no conditions in dry-run mode */
	uint64_t updated_real_usec; /* the status file's updated_usec (CLOCK_REALTIME), 0 when none */
	uint64_t overdue_usec;      /* how long without a rewrite makes it overdue */
	char conditions[128];       /* the conditions it lists as holding, space-separated */
} liveness_view;

typedef struct liveness liveness;
/* A change of state or pid. */
typedef void (*liveness_changed_fn)(void *userdata);

int liveness_new(sd_event *e, const char *status_path, liveness_changed_fn changed, void *userdata,
                 liveness **ret);
liveness *liveness_free(liveness *l);

/* Reads the status file again now and returns what it says (changed is not called for this). */
const liveness_view *liveness_check(liveness *l);
/* The status file's path, for messages. */
const char *liveness_path(const liveness *l);
/* Whether the status file lists condition (e.g. "MemoryPressure") as holding. */
bool liveness_lists(const liveness_view *v, const char *condition);
/* "running", "stopped", ... */
const char *liveness_name(evictd_liveness s);
