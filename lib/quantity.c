/* SPDX-License-Identifier: MIT */
/*
 * Kubernetes resource.Quantity and Go time.Duration parsing.
 *
 * A quantity is kept exactly as digits * 10^exp10 * 2^exp2 and rounded only once, when converted
 * to an integer — as Kubernetes does (the API server rounds to 10^-9 at parse time, which never
 * changes Value() or MilliValue(), so that step is not needed here).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "quantity.h"

typedef unsigned __int128 u128;

#define U128_MAX (~(u128)0)
/* Enough significant digits for any int64 result with a suffix; more is not a sensible quantity. */
#define MAX_SIGNIFICANT_DIGITS 36

struct decoded {
	bool negative;
	u128 digits;    /* significant digits as an integer */
	int exp10;      /* value = digits * 10^exp10 * 2^exp2 */
	int exp2;
};

static int decode(const char *s, struct decoded *ret, pp_err *err)
{
	struct decoded d = { 0 };
	const char *p = s;
	int ndigits = 0, frac = 0;
	bool seen_point = false;

	if (!s || !*s)
		return pp_fail(err, -EINVAL, "empty quantity");

	if (*p == '+' || *p == '-')
		d.negative = *p++ == '-';

	for (; (*p >= '0' && *p <= '9') || *p == '.'; p++) {
		if (*p == '.') {
			if (seen_point)
				return pp_fail(err, -EINVAL, "invalid quantity \"%s\": two decimal points", s);
			seen_point = true;
			continue;
		}
		if (seen_point)
			frac++;
		if (d.digits == 0 && *p == '0')
			continue; /* leading zeros carry no precision */
		if (++ndigits > MAX_SIGNIFICANT_DIGITS)
			return pp_fail(err, -ERANGE, "invalid quantity \"%s\": more than %d significant digits",
			               s, MAX_SIGNIFICANT_DIGITS);
		d.digits = d.digits * 10 + (u128)(*p - '0');
	}
	d.exp10 = -frac;

	/* Suffix: decimal SI, binary, or a (signed) decimal exponent. */
	static const struct { const char *name; int exp10, exp2; } suffixes[] = {
		{ "", 0, 0 },   { "n", -9, 0 }, { "u", -6, 0 }, { "m", -3, 0 },  { "k", 3, 0 },
		{ "M", 6, 0 },  { "G", 9, 0 },  { "T", 12, 0 }, { "P", 15, 0 },  { "E", 18, 0 },
		{ "Ki", 0, 10 }, { "Mi", 0, 20 }, { "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 },
		{ "Ei", 0, 60 },
	};
	for (size_t i = 0; i < PP_ELEMENTSOF(suffixes); i++)
		if (strcmp(p, suffixes[i].name) == 0) {
			d.exp10 += suffixes[i].exp10;
			d.exp2 = suffixes[i].exp2;
			*ret = d;
			return 0;
		}

	if ((*p == 'e' || *p == 'E') && p[1]) {
		const char *q = p + 1;
		bool neg = false;
		long e = 0;
		if (*q == '+' || *q == '-')
			neg = *q++ == '-';
		if (!*q)
			return pp_fail(err, -EINVAL, "invalid quantity \"%s\": exponent has no digits", s);
		for (; *q; q++) {
			if (*q < '0' || *q > '9')
				return pp_fail(err, -EINVAL, "invalid quantity \"%s\": bad exponent", s);
			if (e < 100000)
				e = e * 10 + (*q - '0');
		}
		d.exp10 += (int)(neg ? -e : e);
		*ret = d;
		return 0;
	}
	return pp_fail(err, -EINVAL, "invalid quantity \"%s\": unknown suffix \"%s\"", s, p);
}

static void wide_mul(uint64_t w[4], uint64_t m)
{
	u128 carry = 0;
	for (int i = 0; i < 4; i++) {
		u128 t = (u128)w[i] * m + carry;
		w[i] = (uint64_t)t;
		carry = t >> 64;
	}
}

/* w = ceil(w / 10) */
static void wide_ceil_div10(uint64_t w[4])
{
	u128 rem = 0;
	for (int i = 3; i >= 0; i--) {
		u128 cur = rem << 64 | w[i];
		w[i] = (uint64_t)(cur / 10);
		rem = cur % 10;
	}
	for (int i = 0; rem && i < 4; i++)
		rem = ++w[i] == 0;
}

/*
 * ceil(|value| * scale) into *ret, -ERANGE above limit (<= 2^126). Exact for every input decode()
 * accepts: digits * 2^exp2 * scale needs up to 120 + 60 + 30 bits, so it is kept in 256 bits, and a
 * negative decimal exponent is applied as repeated ceiling divisions by 10 (for positive integers
 * ceil(ceil(a / 10) / 10) = ceil(a / 100)), which cannot overflow and stops once the value is 1.
 */
static int scaled_ceil(const struct decoded *d, uint64_t scale, u128 limit, u128 *ret)
{
	uint64_t w[4] = { (uint64_t)d->digits, (uint64_t)(d->digits >> 64), 0, 0 };
	int e10 = d->exp10;

	if (d->digits == 0) {
		*ret = 0;
		return 0;
	}
	wide_mul(w, (uint64_t)1 << d->exp2);
	wide_mul(w, scale);
	for (; e10 > 0; e10--) {
		if (w[3] || w[2] || w[1] >> 60) /* >= 2^124: times 10 exceeds any limit */
			return -ERANGE;
		wide_mul(w, 10);
	}
	for (; e10 < 0 && (w[3] || w[2] || w[1] || w[0] > 1); e10++)
		wide_ceil_div10(w);
	if (w[3] || w[2] || ((u128)w[1] << 64 | w[0]) > limit)
		return -ERANGE;
	*ret = (u128)w[1] << 64 | w[0];
	return 0;
}

/* ceil(|value| * scale) into *ret; -ERANGE if it exceeds INT64_MAX. */
static int to_integer(const struct decoded *d, unsigned scale, int64_t *ret)
{
	u128 v;
	int r = scaled_ceil(d, scale, (u128)INT64_MAX, &v);
	if (r < 0)
		return r;
	*ret = (int64_t)v;
	return 0;
}

static int parse_scaled(const char *s, unsigned scale, int64_t *ret, pp_err *err)
{
	struct decoded d = { 0 };
	int64_t v;
	int r;

	r = decode(s, &d, err);
	if (r < 0)
		return r;
	r = to_integer(&d, scale, &v);
	if (r < 0)
		return pp_fail(err, r, "quantity \"%s\" is too large", s);
	*ret = d.negative ? -v : v;
	return 0;
}

/* The exact value rounded up (away from zero) to 10^-9, as the API server stores it, in nano-units.
 * Sums of these are exact, so per-pod rounding (§3.3) can happen once, after summing. */
int pp__quantity_parse_nano(const char *s, __int128 *ret, pp_err *err)
{
	struct decoded d = { 0 };
	int64_t hi;
	int r;

	r = decode(s, &d, err);
	if (r < 0)
		return r;
	/* The value in units must fit int64 (as Value() must); the nano value then fits in 127 bits. */
	r = to_integer(&d, 1, &hi);
	if (r < 0)
		return pp_fail(err, r, "quantity \"%s\" is too large", s);
	u128 q;
	r = scaled_ceil(&d, 1000000000, (u128)1 << 126, &q);
	if (r < 0)
		return pp_fail(err, r, "quantity \"%s\" is too large", s);
	*ret = d.negative ? -(__int128)q : (__int128)q;
	return 0;
}

int pp_quantity_parse(const char *s, int64_t *ret_value, pp_err *err)
{
	return parse_scaled(s, 1, ret_value, err);
}

int pp_quantity_parse_milli(const char *s, int64_t *ret_milli, pp_err *err)
{
	return parse_scaled(s, 1000, ret_milli, err);
}

/* Go's time.ParseDuration, without negative values. */
int pp_duration_parse(const char *s, int64_t *ret_nsec, pp_err *err)
{
	static const struct { const char *unit; int64_t nsec; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, { "\xce\xbcs", 1000 },
		{ "ms", 1000000 }, { "s", 1000000000 }, { "m", 60000000000 }, { "h", 3600000000000 },
	};
	const char *p = s;
	u128 total = 0;

	if (!s || !*s)
		return pp_fail(err, -EINVAL, "empty duration");
	if (*p == '-')
		return pp_fail(err, -EINVAL, "invalid duration \"%s\": negative", s);
	if (*p == '+')
		p++;
	if (strcmp(p, "0") == 0) {
		*ret_nsec = 0;
		return 0;
	}
	if (!*p)
		return pp_fail(err, -EINVAL, "invalid duration \"%s\"", s);

	while (*p) {
		u128 whole = 0, frac = 0, frac_scale = 1;
		bool any = false;
		for (; *p >= '0' && *p <= '9'; p++, any = true) {
			whole = whole * 10 + (u128)(*p - '0');
			if (whole > (u128)INT64_MAX)
				return pp_fail(err, -ERANGE, "invalid duration \"%s\": too large", s);
		}
		if (*p == '.') {
			p++;
			for (; *p >= '0' && *p <= '9'; p++, any = true)
				if (frac_scale < (u128)1e18) { /* digits past 10^-18 cannot matter */
					frac = frac * 10 + (u128)(*p - '0');
					frac_scale *= 10;
				}
		}
		if (!any)
			return pp_fail(err, -EINVAL, "invalid duration \"%s\": expected a number", s);

		size_t best = 0, best_len = 0;
		for (size_t i = 0; i < PP_ELEMENTSOF(units); i++) {
			size_t len = strlen(units[i].unit);
			if (strncmp(p, units[i].unit, len) == 0 && len > best_len) {
				best = i;
				best_len = len;
			}
		}
		if (best_len == 0)
			return pp_fail(err, -EINVAL,
			               "invalid duration \"%s\": missing or unknown unit (use ns, us, ms, s, m, h)", s);
		p += best_len;
		total += whole * (u128)units[best].nsec + frac * (u128)units[best].nsec / frac_scale;
		if (total > (u128)INT64_MAX)
			return pp_fail(err, -ERANGE, "invalid duration \"%s\": too large", s);
	}
	*ret_nsec = (int64_t)total;
	return 0;
}
