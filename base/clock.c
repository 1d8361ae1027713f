/* SPDX-License-Identifier: MIT */
#include "clock.h"

uint64_t clock_id_usec(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * CLOCK_USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

int64_t clock_id_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * CLOCK_NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t clock_mono_usec(void)
{
	return clock_id_usec(CLOCK_MONOTONIC);
}

uint64_t clock_wall_usec(void)
{
	return clock_id_usec(CLOCK_REALTIME);
}

int64_t clock_mono_ns(void)
{
	return clock_id_ns(CLOCK_MONOTONIC);
}

int64_t clock_wall_ns(void)
{
	return clock_id_ns(CLOCK_REALTIME);
}
