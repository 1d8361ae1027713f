/* SPDX-License-Identifier: MIT */
/* Helpers shared by the eviction tests, whose child processes stand in for a pod's processes. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

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
