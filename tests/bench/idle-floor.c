/* SPDX-License-Identifier: MIT */
/*
 * The floor of idle cost on this machine: a loop that does nothing but wake once per period
 * (default 1 s) on epoll + timerfd, as an event loop's timer does. tests/bench/bench-idle.sh runs
 * it beside evictd and earlyoom so that every window shows what one wake-up a second costs here.
 *   idle-floor [PERIOD_MS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	if (ms <= 0) {
		fprintf(stderr, "idle-floor: PERIOD_MS must be positive\n");
		return 2;
	}
	int ep = epoll_create1(EPOLL_CLOEXEC), tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its = { .it_interval = { ms / 1000, (ms % 1000) * 1000000 },
	                          .it_value = { ms / 1000, (ms % 1000) * 1000000 } };
	struct epoll_event ev = { .events = EPOLLIN };
	if (ep < 0 || tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) < 0) {
		perror("idle-floor");
		return 1;
	}
	for (;;) {
		uint64_t n;
		if (epoll_wait(ep, &ev, 1, -1) == 1)
			(void)!read(tfd, &n, sizeof(n));
	}
}
