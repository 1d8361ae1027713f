/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* clock (CLOCK_MONOTONIC, CLOCK_REALTIME) in microseconds. */
static inline uint64_t ktime_usec(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

/* t as the API server writes a metav1.Time: "2006-01-02T15:04:05Z" (UTC, seconds). */
static inline void ktime_rfc3339(time_t t, char *buf, size_t size)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
