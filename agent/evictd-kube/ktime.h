/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* t as the API server writes a metav1.Time: "2006-01-02T15:04:05Z" (UTC, seconds). */
static inline void ktime_rfc3339(time_t t, char *buf, size_t size)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
