/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: resource.Quantity (Value and MilliValue) and Go duration parsing.
 *
 * Besides "no crash, no UB", every accepted quantity is checked against an exact reference
 * computed here with a small bignum, written independently of lib/quantity.c, so that a silently
 * wrong rounding is a finding too, not only a crash. The reference only judges inputs whose
 * numeric part it can represent (<= 36 significant digits, the library's documented limit).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preempt.h"
#include "quantity.h" /* pp__quantity_parse_nano */
#include "qty.h"      /* pp__qty_parse, pp__qty_format */
#include "fuzz-common.h"

/* fuzz-links: lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Little-endian base-2^32 bignum, large enough for 10^36 * 2^60 * 1000 * 10^40. */
#define LIMBS 16
struct big {
	uint32_t l[LIMBS];
};

static void big_mul(struct big *b, uint32_t m)
{
	uint64_t carry = 0;
	for (int i = 0; i < LIMBS; i++) {
		uint64_t t = (uint64_t)b->l[i] * m + carry;
		b->l[i] = (uint32_t)t;
		carry = t >> 32;
	}
	FUZZ_ASSERT(carry == 0);
}

static void big_add(struct big *b, uint32_t a)
{
	uint64_t carry = a;
	for (int i = 0; i < LIMBS && carry; i++) {
		uint64_t t = (uint64_t)b->l[i] + carry;
		b->l[i] = (uint32_t)t;
		carry = t >> 32;
	}
}

/* b = ceil(b / d) */
static void big_ceil_div(struct big *b, uint32_t d)
{
	uint64_t rem = 0;
	for (int i = LIMBS - 1; i >= 0; i--) {
		uint64_t cur = (rem << 32) | b->l[i];
		b->l[i] = (uint32_t)(cur / d);
		rem = cur % d;
	}
	if (rem)
		big_add(b, 1);
}

static bool big_is_one(const struct big *b)
{
	for (int i = 1; i < LIMBS; i++)
		if (b->l[i])
			return false;
	return b->l[0] == 1;
}

static bool big_is_zero(const struct big *b)
{
	for (int i = 0; i < LIMBS; i++)
		if (b->l[i])
			return false;
	return true;
}

/* Value if it fits in int64, else false. */
static bool big_to_i64(const struct big *b, int64_t *ret)
{
	for (int i = 2; i < LIMBS; i++)
		if (b->l[i])
			return false;
	uint64_t v = ((uint64_t)b->l[1] << 32) | b->l[0];
	if (v > (uint64_t)INT64_MAX)
		return false;
	*ret = (int64_t)v;
	return true;
}

static bool big_to_u128(const struct big *b, unsigned __int128 *ret)
{
	for (int i = 4; i < LIMBS; i++)
		if (b->l[i])
			return false;
	unsigned __int128 v = 0;
	for (int i = 3; i >= 0; i--)
		v = (v << 32) | b->l[i];
	*ret = v;
	return true;
}

enum ref_result { REF_UNJUDGED, REF_VALUE, REF_RANGE };

/*
 * Reference for a string the library accepted (or rejected with -ERANGE): ceil(|x| * scale).
 * The grammar is assumed valid (the library already accepted it); only the arithmetic is redone.
 */
static enum ref_result reference_big(const char *s, unsigned scale, struct big *ret_big);

static enum ref_result reference(const char *s, unsigned scale, int64_t *ret)
{
	struct big b;
	enum ref_result r = reference_big(s, scale, &b);
	if (r != REF_VALUE)
		return r;
	return big_to_i64(&b, ret) ? REF_VALUE : REF_RANGE;
}

static enum ref_result reference_big(const char *s, unsigned scale, struct big *ret_big)
{
	static const struct { const char *name; int e10, e2; } sfx[] = {
		{ "", 0, 0 },    { "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },  { "k", 3, 0 },
		{ "M", 6, 0 },   { "G", 9, 0 },   { "T", 12, 0 },  { "P", 15, 0 },  { "E", 18, 0 },
		{ "Ki", 0, 10 }, { "Mi", 0, 20 }, { "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 },
		{ "Ei", 0, 60 },
	};
	struct big b = { { 0 } };
	const char *p = s;
	int sig = 0, e10 = 0, e2 = 0;
	bool point = false, found = false;

	if (*p == '+' || *p == '-')
		p++;
	for (; (*p >= '0' && *p <= '9') || *p == '.'; p++) {
		if (*p == '.') {
			point = true;
			continue;
		}
		if (point)
			e10--;
		if (sig == 0 && *p == '0')
			continue;
		if (++sig > 36)
			return REF_UNJUDGED;
		big_mul(&b, 10);
		big_add(&b, (uint32_t)(*p - '0'));
	}
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (strcmp(p, sfx[i].name) == 0) {
			e10 += sfx[i].e10;
			e2 = sfx[i].e2;
			found = true;
			break;
		}
	if (!found) {
		if (*p != 'e' && *p != 'E')
			return REF_UNJUDGED;
		p++;
		bool neg = false;
		long e = 0;
		if (*p == '+' || *p == '-')
			neg = *p++ == '-';
		for (; *p >= '0' && *p <= '9'; p++)
			if (e < 1000000)
				e = e * 10 + (*p - '0');
		if (*p)
			return REF_UNJUDGED;
		e10 += (int)(neg ? -e : e);
	}
	if (big_is_zero(&b)) {
		*ret_big = b;
		return REF_VALUE;
	}
	for (int i = 0; i < e2; i++)
		big_mul(&b, 2);
	big_mul(&b, scale);
	if (e10 > 40)
		return REF_RANGE; /* >= 10^40: beyond int64 and 2^126 */
	for (; e10 > 0; e10--)
		big_mul(&b, 10);
	/* Nested ceilings equal one ceiling for positive integers: ceil(ceil(a/10)/10) = ceil(a/100). */
	for (; e10 < 0 && !big_is_one(&b); e10++)
		big_ceil_div(&b, 10);
	*ret_big = b;
	return REF_VALUE;
}

/* The internal exact form (10^-9 units) used for summing requests. */
static void check_nano(const char *s)
{
	__int128 v = 7;
	int64_t units;
	struct big b;
	int r = pp__quantity_parse_nano(s, &v, NULL);

	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ERANGE);
		FUZZ_ASSERT(v == 7);
		/* Documented: whatever Value() accepts, the nano form holds. */
		FUZZ_CHECK(r == -EINVAL || pp_quantity_parse(s, &units, NULL) < 0,
		           "nano(\"%s\") = -ERANGE but Value() = %lld", s, (long long)units);
		return;
	}
	if (reference_big(s, 1000000000, &b) != REF_VALUE)
		return;
	unsigned __int128 want;
	FUZZ_CHECK(big_to_u128(&b, &want) && want <= ((unsigned __int128)1 << 126), "nano(\"%s\") accepted, exact value exceeds 2^126", s);
	unsigned __int128 got = v < 0 ? (unsigned __int128)-v : (unsigned __int128)v;
	FUZZ_CHECK(got == want, "nano(\"%s\") = %llu*2^64+%llu, exact %llu*2^64+%llu", s,
	           (unsigned long long)(got >> 64), (unsigned long long)got, (unsigned long long)(want >> 64),
	           (unsigned long long)want);
}

static void check_quantity(const char *s, unsigned scale)
{
	int64_t v = INT64_MIN + 7;
	pp_err err = { "" };
	int r = scale == 1 ? pp_quantity_parse(s, &v, &err) : pp_quantity_parse_milli(s, &v, &err);

	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ERANGE);
		FUZZ_ASSERT(v == INT64_MIN + 7);           /* out-param untouched on failure */
		FUZZ_ASSERT(memchr(err.msg, 0, sizeof(err.msg)) && err.msg[0]);
	} else {
		FUZZ_ASSERT(r == 0);
		FUZZ_ASSERT(v != INT64_MIN);
	}
	if (r == 0 || r == -ERANGE) {
		int64_t want = 0;
		enum ref_result rr = reference(s, scale, &want);
		if (rr == REF_VALUE && r == 0)
			FUZZ_CHECK(v == (s[0] == '-' ? -want : want), "quantity \"%s\" scale %u: got %lld, exact %lld", s,
			           scale, (long long)v, (long long)want);
		else if (rr == REF_VALUE)
			FUZZ_CHECK(false, "quantity \"%s\" scale %u: -ERANGE, exact %lld fits", s, scale,
			           (long long)want);
		else if (rr == REF_RANGE)
			FUZZ_CHECK(r == -ERANGE, "quantity \"%s\" scale %u: got %lld, exact value overflows", s,
			           scale, (long long)v);
	}
}

static char *formatted(const struct pp_qty *q)
{
	size_t n = pp__qty_format(q, NULL, 0);
	char *buf = malloc(n + 1);
	if (buf)
		pp__qty_format(q, buf, n + 1);
	return buf;
}

static void check_formatted(const char *s)
{
	__int128 v;
	struct pp_qty q, back;
	int r = pp__qty_parse(s, &q, NULL);

	if (pp__quantity_parse_nano(s, &v, NULL) < 0) {
		FUZZ_CHECK(r < 0, "qty(\"%s\") accepted what the quantity parser refuses", s);
		return;
	}
	FUZZ_CHECK(r == 0 || r == -ENOMEM, "qty(\"%s\") = %d, the quantity parses", s, r);
	if (r < 0)
		return;
	FUZZ_ASSERT(q.nano == v);
	char *a = formatted(&q), *b = NULL;
	if (a && q.text)
		FUZZ_CHECK(strcmp(a, s) == 0, "qty(\"%s\") kept its text but prints \"%s\"", s, a);
	if (a && (r = pp__qty_parse(a, &back, NULL)) == 0) {
		FUZZ_CHECK(back.nano == q.nano, "\"%s\" prints \"%s\", another value", s, a);
		b = formatted(&back);
		FUZZ_CHECK(!b || strcmp(a, b) == 0, "\"%s\" prints \"%s\", which prints \"%s\"", s, a, b);
		pp__qty_done(&back);
	} else if (a) {
		FUZZ_CHECK(r == -ENOMEM, "\"%s\" prints \"%s\", which does not parse (%d)", s, a, r);
	}
	free(a);
	free(b);
	pp__qty_done(&q);
}

static void check_duration(const char *s)
{
	int64_t v = -7;
	pp_err err = { "" };
	int r = pp_duration_parse(s, &v, &err);

	if (r < 0) {
		FUZZ_ASSERT(r == -EINVAL || r == -ERANGE);
		FUZZ_ASSERT(v == -7);
		FUZZ_ASSERT(memchr(err.msg, 0, sizeof(err.msg)) && err.msg[0]);
	} else {
		FUZZ_ASSERT(r == 0 && v >= 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_strndup(data, size);
	if (!s)
		return 0;
	check_quantity(s, 1);
	check_quantity(s, 1000);
	check_nano(s);
	check_formatted(s);
	check_duration(s);
	free(s);
	return 0;
}
