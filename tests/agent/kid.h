/* SPDX-License-Identifier: MIT */
/* Helpers shared by the eviction tests, whose child processes stand in for a pod's processes. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "scratch.h"

static inline uint64_t mono_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

/*
 * The child's life after fork: every signal unblocked (the test may have blocked some), SIGTERM
 * ignored when ignore_term (a pod ignoring it) and otherwise fatal, then waiting until killed.
 */
static inline _Noreturn void kid_wait_for_signals(bool ignore_term)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGTERM, ignore_term ? SIG_IGN : SIG_DFL);
	for (;;)
		pause();
}

/* A child not reaped yet and not dead: every signal these tests could misdirect is fatal to it. */
static inline bool kid_alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

/*
 * stderr (where evict_log writes when there is no journal) goes to an unlinked file until
 * log_capture_end(), which restores it and returns what was written. -1 on failure.
 */
static inline int log_capture_begin(int *saved)
{
	char path[100];
	scratch_template(path, sizeof(path), "evictd-log");
	*saved = -1;
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	*saved = dup(STDERR_FILENO);
	if (*saved < 0 || dup2(fd, STDERR_FILENO) != STDERR_FILENO) {
		if (*saved >= 0)
			close(*saved);
		close(fd);
		return -1;
	}
	return fd;
}

static inline ssize_t log_capture_end(int fd, int saved, char *buf, size_t size)
{
	dup2(saved, STDERR_FILENO);
	close(saved);
	ssize_t n = pread(fd, buf, size - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (n > 0) /* still visible in the test output */
		(void)!write(STDERR_FILENO, buf, (size_t)n);
	return n;
}
