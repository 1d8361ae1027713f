/* SPDX-License-Identifier: MIT */
#pragma once

/* What the service tells its readers (status-out.c): status.json and sd_notify STATUS=. */

#include <stdbool.h>

#include "evictd-state.h"

/* Rewrites status.json when something a reader cares about changed, else at most every
 * STATUS_IDLE_REFRESH_USEC; force: now. */
void status_write(evictd_daemon *d, bool force);
/* Sends STATUS= when its text changed. */
void status_notify(evictd_daemon *d);
