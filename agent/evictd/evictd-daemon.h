/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * evictd as a service: the sd-event loop that watches the node (polling timer, faster near a
 * threshold; PSI triggers; inotify on cgroup.events/memory.events), decides (scan + thresholds +
 * ranking, see the other agent/ modules) and acts (evictor.h), and speaks systemd's protocol:
 * READY=1, STATUS=, WATCHDOG=1, RELOADING=1 around SIGHUP, STOPPING=1 on SIGTERM.
 */

#include <stdbool.h>

#include "config.h"

typedef struct daemon_options {
	const char *config_path;    /* NULL: EVICTD_CONFIG_PATH */
	bool config_must_exist;     /* an explicit --config */
	config_overrides overrides; /* command-line settings, re-applied after every reload */
	const char *status_file;    /* NULL: the configuration's status-file */
} daemon_options;

/* Runs until SIGTERM/SIGINT. Returns the process exit status (0 clean, 1 startup failure). */
int daemon_run(const daemon_options *o);
