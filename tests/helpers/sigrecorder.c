/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for a pod's process in eviction tests: joins a cgroup, then records every SIGTERM
 * (with its CLOCK_MONOTONIC time, so a benchmark can measure reaction latency) to a file.
 *
 *   sigrecorder [--cgroup DIR] [--ignore-term] FILE
 *
 * FILE gets "ready <pid>" once the process sits in its cgroup, then "TERM <usec>" per SIGTERM.
 * Without --ignore-term the process exits after recording; with it, it keeps running (a pod that
 * ignores SIGTERM and must be killed when its grace period ends).
 * Exit 77 when it cannot join the cgroup for want of privilege or cgroup v2 (EPERM, EACCES, EROFS,
 * ENOENT), 1 for any other reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int out_fd = -1;
static volatile sig_atomic_t ignore_term;

/* async-signal-safe: clock_gettime, write, _exit */
static void on_term(int sig)
{
	(void)sig;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	unsigned long long us = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
	char buf[48] = "TERM ";
	char digits[24];
	int n = 0;
	do {
		digits[n++] = (char)('0' + us % 10);
		us /= 10;
	} while (us);
	size_t l = 5;
	while (n)
		buf[l++] = digits[--n];
	buf[l++] = '\n';
	(void)!write(out_fd, buf, l);
	if (!ignore_term)
		_exit(0);
}

int main(int argc, char **argv)
{
	const char *cgroup = NULL, *file = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--cgroup") == 0 && i + 1 < argc)
			cgroup = argv[++i];
		else if (strcmp(argv[i], "--ignore-term") == 0)
			ignore_term = 1;
		else
			file = argv[i];
	}
	if (!file) {
		fprintf(stderr, "usage: sigrecorder [--cgroup DIR] [--ignore-term] FILE\n");
		return 2;
	}
	out_fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		perror(file);
		return 1;
	}
	struct sigaction sa = { .sa_handler = on_term };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (cgroup) {
		char p[4096];
		snprintf(p, sizeof(p), "%s/cgroup.procs", cgroup);
		int fd = open(p, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			int e = errno;
			perror(p);
			/* 77: this machine cannot do it (no root, no writable cgroup v2); anything else,
			 * EBUSY say, is a failure the test must not take for a skip */
			return e == EPERM || e == EACCES || e == EROFS || e == ENOENT ? 77 : 1;
		}
		close(fd);
	}
	char ready[48];
	int n = snprintf(ready, sizeof(ready), "ready %d\n", (int)getpid());
	(void)!write(out_fd, ready, (size_t)n);
	for (;;)
		pause();
}
