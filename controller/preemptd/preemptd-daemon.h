/* SPDX-License-Identifier: MIT */
/*
 * preemptd's event loop: the watch feeding the model, scheduling cycles while activeQ has pods
 * and this instance may write, decisions handed to the act stage, the Lease, the queue's timers
 * (backoffs, the 5-minute flush), the HTTP endpoints, SIGTERM.
 */
#ifndef CTL_DAEMON_H
#define CTL_DAEMON_H

#include <systemd/sd-event.h>

#include "preemptd-config.h"
#include "http.h"
#include "kubeconfig.h"

typedef struct preemptd preemptd;

/* token_dir: the in-cluster service account directory whose token is re-read, or NULL. */
int preemptd_new(sd_event *e, const preemptd_config *cfg, kube_client *client, const char *token_dir,
                 preemptd **ret);
preemptd *preemptd_free(preemptd *d);
/* Runs until SIGTERM/SIGINT; the Lease is released on the way out. */
int preemptd_run(preemptd *d);

#endif
