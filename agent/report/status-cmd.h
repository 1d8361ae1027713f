/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The operator's commands about a running daemon, answered from its status file and /proc:
 *   evictd --status          prints status.json if the daemon that wrote it is alive
 *   evictd --reload[=PID]    validates the configuration, sends SIGHUP, waits for the daemon to
 *                            have re-read it (the unit's ExecReload=, without /bin/kill)
 */

#include <stdbool.h>
#include <stdint.h>

/* Exit status of --status when no daemon runs (systemctl status uses 3 for "inactive"). */
#define STATUS_EXIT_NOT_RUNNING 3

typedef struct status_summary {
	int64_t pid;           /* -1: not in the file */
	char state[16];        /* "running", "stopping", "" */
	uint64_t updated_usec; /* CLOCK_REALTIME of the last write, 0: not in the file */
} status_summary;

/* Reads the top-level "pid", "state" and "updated_usec" of a status.json text. */
void status_summary_parse(const char *text, status_summary *ret);

/*
 * Whether pid is a live evictd, looked up under proc_root (NULL: /proc): 1 yes, 0 no (no such
 * process, or its comm is something else), -errno when it cannot be told.
 */
int status_pid_is_evictd(const char *proc_root, int64_t pid);

/* `evictd --status`: returns the exit status (0 running, STATUS_EXIT_NOT_RUNNING, 1 error). */
int status_command(const char *status_file, const char *proc_root);

/*
 * `evictd --reload[=PID]`: pid 0 takes the pid from the status file. Sends SIGHUP and waits up
 * to timeout_usec for the daemon to rewrite its status file. Returns the exit status.
 */
int status_cmd_reload(int64_t pid, const char *status_file, const char *proc_root, uint64_t timeout_usec);
