/* SPDX-License-Identifier: MIT */
#include "kexec-async.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* How often the plugin's end is polled when the kernel has no pidfd (before Linux 5.3). */
#define REAP_POLL_USEC 20000

struct kube_exec_job {
	sd_event *event;
	kube_exec *x;
	pid_t pid;
	int out_fd, pidfd;
	sd_event_source *out_src, *end_src, *deadline_src;
	kube_exec_output out;
	int read_r; /* 0 or how reading its output failed (why[] says it) */
	char why[300];
	bool out_done, exited;
	int status;
	kube_exec_done_fn done;
	void *userdata;
};

static void job_close_output(kube_exec_job *j)
{
	j->out_src = sd_event_source_disable_unref(j->out_src);
	if (j->out_fd >= 0)
		close(j->out_fd);
	j->out_fd = -1;
	j->out_done = true;
}

kube_exec_job *kube_exec_job_free(kube_exec_job *j)
{
	if (!j)
		return NULL;
	job_close_output(j);
	j->end_src = sd_event_source_disable_unref(j->end_src);
	j->deadline_src = sd_event_source_disable_unref(j->deadline_src);
	if (!j->exited && j->pid > 0) {
		/* SIGKILL is not refused: the wait is for the kernel, not for the plugin */
		kill(j->pid, SIGKILL);
		while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
			;
	}
	if (j->pidfd >= 0)
		close(j->pidfd);
	kube_exec_output_done(&j->out);
	kube_exec_unref(j->x);
	sd_event_unref(j->event);
	free(j);
	return NULL;
}

static void job_maybe_finish(kube_exec_job *j)
{
	kube_exec_cred cred;
	char err[600] = "";
	int r;

	if (!j->out_done || !j->exited)
		return;
	r = kube_exec_finish(j->x, j->read_r, j->why, j->status, &j->out, &cred, err, sizeof(err));
	j->done(r, &cred, err, j->userdata);
	if (r == 0)
		kube_exec_cred_done(&cred); /* what the callback did not take */
	kube_exec_job_free(j);
}

/* A read failure or too much output: the plugin's answer is lost anyway, so it ends now. */
static void job_fail(kube_exec_job *j, int r)
{
	if (!j->read_r)
		j->read_r = r;
	job_close_output(j);
	if (!j->exited)
		kill(j->pid, SIGKILL);
}

static int on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	kube_exec_job *j = userdata;

	(void)s;
	(void)revents;
	/* a bounded number of reads per wake-up: a chatty plugin shares the loop */
	for (int i = 0; i < 16; i++) {
		int r = kube_exec_output_read(&j->out, fd, j->why, sizeof(j->why));
		if (r == -EAGAIN)
			return 0;
		if (r < 0) {
			job_fail(j, r);
			break;
		}
		if (r == 0) {
			job_close_output(j);
			break;
		}
	}
	job_maybe_finish(j);
	return 0;
}

static void job_reap(kube_exec_job *j)
{
	pid_t p = waitpid(j->pid, &j->status, WNOHANG);

	if (p == 0 || (p < 0 && errno == EINTR))
		return;
	if (p < 0)
		j->status = 0; /* ECHILD: someone else reaped it; what it printed decides */
	j->exited = true;
	j->end_src = sd_event_source_disable_unref(j->end_src);
	job_maybe_finish(j);
}

static int on_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	(void)s;
	(void)fd;
	(void)revents;
	job_reap(userdata);
	return 0;
}

static int on_reap_poll(sd_event_source *s, uint64_t usec, void *userdata)
{
	kube_exec_job *j = userdata;

	(void)sd_event_source_set_time(s, usec + REAP_POLL_USEC);
	(void)sd_event_source_set_enabled(s, SD_EVENT_ON);
	job_reap(j);
	return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	kube_exec_job *j = userdata;

	(void)s;
	(void)usec;
	if (!j->read_r) {
		j->read_r = -ETIMEDOUT;
		snprintf(j->why, sizeof(j->why), "gave no answer within %d s: killed", KUBE_EXEC_DEADLINE_MS / 1000);
	}
	job_close_output(j);
	if (!j->exited)
		kill(j->pid, SIGKILL);
	job_maybe_finish(j);
	return 0;
}

int kube_exec_start(sd_event *e, kube_exec *x, kube_exec_done_fn done, void *userdata, kube_exec_job **ret,
                    char *err, size_t err_size)
{
	kube_exec_job *j = calloc(1, sizeof(*j));
	uint64_t now;
	int r;

	if (!j) {
		snprintf(err, err_size, "%s: out of memory", x->where);
		return -ENOMEM;
	}
	j->event = sd_event_ref(e);
	j->x = kube_exec_ref(x);
	j->out_fd = j->pidfd = -1;
	j->done = done;
	j->userdata = userdata;
	r = kube_exec_spawn(x, &j->pid, &j->out_fd, err, err_size);
	if (r < 0) {
		j->exited = true; /* nothing to reap */
		kube_exec_job_free(j);
		return r;
	}
	if (fcntl(j->out_fd, F_SETFL, O_NONBLOCK) < 0 ||
	    (r = sd_event_add_io(e, &j->out_src, j->out_fd, EPOLLIN, on_output, j)) < 0)
		goto fail;
	(void)sd_event_source_set_description(j->out_src, "kube-exec-output");
	j->pidfd = (int)syscall(SYS_pidfd_open, j->pid, 0);
	if (j->pidfd >= 0)
		r = sd_event_add_io(e, &j->end_src, j->pidfd, EPOLLIN, on_pidfd, j);
	else if ((r = sd_event_now(e, CLOCK_MONOTONIC, &now)) >= 0)
		r = sd_event_add_time(e, &j->end_src, CLOCK_MONOTONIC, now + REAP_POLL_USEC, 0, on_reap_poll, j);
	if (r < 0 || (r = sd_event_now(e, CLOCK_MONOTONIC, &now)) < 0 ||
	    (r = sd_event_add_time(e, &j->deadline_src, CLOCK_MONOTONIC, now + (uint64_t)KUBE_EXEC_DEADLINE_MS * 1000,
	                           0, on_deadline, j)) < 0)
		goto fail;
	(void)sd_event_source_set_description(j->deadline_src, "kube-exec-deadline");
	*ret = j;
	return 0;
fail:
	if (r >= 0)
		r = -errno;
	snprintf(err, err_size, "%s: cannot watch exec plugin \"%s\": %s", x->where, x->argv[0], strerror(-r));
	kube_exec_job_free(j);
	return r;
}
