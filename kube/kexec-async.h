/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * An exec credential plugin run on an sd-event loop (preemptd): the loop keeps serving while it
 * runs. Its standard output is read as it comes (non-blocking, at most KUBE_EXEC_OUTPUT_MAX), its
 * end seen through a pidfd, and at KUBE_EXEC_DEADLINE_MS it is killed and reaped. The spawn and the
 * decoding are kube_exec_run's (kexec.c).
 */

#include <systemd/sd-event.h>

#include "kexec.h"

typedef struct kube_exec_job kube_exec_job;

/* The plugin ended: r 0 with *cred to take (kube_exec_cred_done when not kept), or -errno with err
 * one line as kube_exec_run's (-ETIMEDOUT: it was killed at the deadline). The job is freed after
 * the callback returns. */
typedef void (*kube_exec_done_fn)(int r, kube_exec_cred *cred, const char *err, void *userdata);

/* 0, or -errno with err[] (the plugin could not be started; done is not called). */
int kube_exec_start(sd_event *e, kube_exec *x, kube_exec_done_fn done, void *userdata, kube_exec_job **ret,
                    char *err, size_t err_size);
/* Kills the plugin if it still runs and reaps it; done is not called. */
kube_exec_job *kube_exec_job_free(kube_exec_job *j);
