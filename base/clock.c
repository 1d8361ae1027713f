/* SPDX-License-Identifier: MIT */
#include "clock.h"

uint64_t clock_usec_on(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NOW_USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

int64_t clock_ns_on(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * NOW_NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t clock_mono_usec(void)
{
	return clock_usec_on(CLOCK_MONOTONIC);
}

uint64_t clock_wall_usec(void)
{
	return clock_usec_on(CLOCK_REALTIME);
}

int64_t clock_mono_ns(void)
{
	return clock_ns_on(CLOCK_MONOTONIC);
}

int64_t clock_wall_ns(void)
{
	return clock_ns_on(CLOCK_REALTIME);
}
