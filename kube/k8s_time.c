/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "k8s.h"

static int digits(const char **p, int n, int *ret)
{
	int x = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -EINVAL;
		x = x * 10 + (**p - '0');
	}
	*ret = x;
	return 0;
}

static int expect(const char **p, const char *any)
{
	if (!**p || !strchr(any, **p))
		return -EINVAL;
	(*p)++;
	return 0;
}

static bool leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 for a proleptic Gregorian date (no timegm: it depends on TZ handling). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* RFC 3339 as Go's time.RFC3339(Nano) reads it: date 'T' time, optional fraction, Z or offset. */
int k8s_parse_time(const char *s, int64_t *ret_ns)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int Y, M, D, h, m, sec, oh = 0, om = 0, sign = 0;
	int64_t frac = 0;
	const char *p = s;

	if (!s)
		return -EINVAL;
	if (digits(&p, 4, &Y) < 0 || expect(&p, "-") < 0 || digits(&p, 2, &M) < 0 ||
	    expect(&p, "-") < 0 || digits(&p, 2, &D) < 0 || expect(&p, "Tt") < 0 ||
	    digits(&p, 2, &h) < 0 || expect(&p, ":") < 0 || digits(&p, 2, &m) < 0 ||
	    expect(&p, ":") < 0 || digits(&p, 2, &sec) < 0)
		return -EINVAL;
	if (*p == '.') {
		int n = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, n++)
			if (n < 9)
				frac = frac * 10 + (*p - '0');
		if (n == 0)
			return -EINVAL;
		for (; n < 9; n++)
			frac *= 10;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '-' ? -1 : 1;
		if (digits(&p, 2, &oh) < 0 || expect(&p, ":") < 0 || digits(&p, 2, &om) < 0 ||
		    oh > 23 || om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] + (M == 2 && leap(Y)) || h > 23 || m > 59 ||
	    sec > 59)
		return -EINVAL;

	int64_t t = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec;
	t -= sign * (oh * 3600 + om * 60);
	/* nanoseconds in int64 reach 1677..2262, ample for pod timestamps */
	if (t >= INT64_MAX / 1000000000 || t <= INT64_MIN / 1000000000)
		return -ERANGE;
	*ret_ns = t * 1000000000 + frac;
	return 0;
}
