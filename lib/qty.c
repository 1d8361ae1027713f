/* SPDX-License-Identifier: MIT */
/*
 * resource.Quantity with its format and text, and ResourceLists of them (qty.h).
 *
 * The value comes from pp__quantity_parse_nano (the same parser as every other quantity of the
 * library); this file adds what only the API server's messages need: which of the three formats
 * the text was in, and whether ParseQuantity keeps the text (its fast path keeps "100m", "1.500"
 * and "3Ki" as written, drops "1000m", "0.5" and "8Ki" for the canonical "1", "500m", "8Ki").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "quantity.h"
#include "qty.h"

#define NANO ((__int128)1000000000)

struct scan {
	size_t num, denom; /* digit counts: integer part without leading zeros ("0" counts 1), fraction */
	const char *num_at;
	enum pp_qfmt format;
	int exponent; /* of the suffix: 10^exponent, or 2^exponent for BinarySI */
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The suffix as quantitySuffixer.interpret reads it. */
static int interpret(const char *suffix, struct scan *sc)
{
	static const struct {
		const char *s;
		int exp;
		enum pp_qfmt f;
	} table[] = {
		{ "", 0, PP_QFMT_DECIMAL_SI },  { "n", -9, PP_QFMT_DECIMAL_SI }, { "u", -6, PP_QFMT_DECIMAL_SI },
		{ "m", -3, PP_QFMT_DECIMAL_SI }, { "k", 3, PP_QFMT_DECIMAL_SI }, { "M", 6, PP_QFMT_DECIMAL_SI },
		{ "G", 9, PP_QFMT_DECIMAL_SI },  { "T", 12, PP_QFMT_DECIMAL_SI }, { "P", 15, PP_QFMT_DECIMAL_SI },
		{ "E", 18, PP_QFMT_DECIMAL_SI }, { "Ki", 10, PP_QFMT_BINARY_SI }, { "Mi", 20, PP_QFMT_BINARY_SI },
		{ "Gi", 30, PP_QFMT_BINARY_SI }, { "Ti", 40, PP_QFMT_BINARY_SI }, { "Pi", 50, PP_QFMT_BINARY_SI },
		{ "Ei", 60, PP_QFMT_BINARY_SI },
	};
	for (size_t i = 0; i < PP_ELEMENTSOF(table); i++)
		if (strcmp(suffix, table[i].s) == 0) {
			sc->exponent = table[i].exp;
			sc->format = table[i].f;
			return 0;
		}
	if ((suffix[0] == 'e' || suffix[0] == 'E') && suffix[1]) {
		const char *p = suffix + 1;
		bool neg = *p == '-';
		long e = 0;
		if (*p == '+' || *p == '-')
			p++;
		if (!*p)
			return -EINVAL;
		for (; *p; p++) {
			if (!is_digit(*p))
				return -EINVAL;
			if (e < 1000000) /* beyond, the value is out of range or rounds to 1n either way */
				e = e * 10 + (*p - '0');
		}
		sc->exponent = (int)(neg ? -e : e);
		sc->format = PP_QFMT_DECIMAL_EXPONENT;
		return 0;
	}
	return -EINVAL;
}

/* parseQuantityString: sign, leading zeros, integer digits, fraction, suffix. */
static int scan(const char *s, struct scan *sc)
{
	const char *p = s;

	memset(sc, 0, sizeof(*sc));
	if (*p == '+' || *p == '-')
		p++;
	while (*p == '0')
		p++;
	sc->num_at = p;
	while (is_digit(*p))
		p++;
	sc->num = (size_t)(p - sc->num_at);
	if (sc->num == 0) {
		sc->num_at = "0";
		sc->num = 1;
	}
	if (*p == '.') {
		const char *d = ++p;
		while (is_digit(*p))
			p++;
		sc->denom = (size_t)(p - d);
	}
	return interpret(p, sc);
}

/* Whether ParseQuantity keeps the text (its int64 fast path and its two "canonical" tests). */
static bool keeps_text(const char *s, const struct scan *sc)
{
	if (strcmp(s, "0") == 0)
		return true;
	if (sc->format == PP_QFMT_BINARY_SI) {
		if (sc->denom)
			return false;
		/* precision = 15 - len(num) - exponent*3/10 - 1 must not be negative */
		if ((long)sc->num + sc->exponent * 3 / 10 + 1 > 15)
			return false;
		int64_t v = strtoll(sc->num_at, NULL, 10); /* at most 11 digits here */
		return (v & 7) != 0 && sc->exponent % 10 == 0;
	}
	if (sc->num + sc->denom > 18)
		return false;
	int scale = sc->exponent - (int)sc->denom;
	if (scale < -9 || scale % 3 != 0 || sc->num_at[0] == '0')
		return false;
	/* shifted = num + denom must not end in "000" */
	char shifted[40];
	const char *frac = strchr(s, '.');
	snprintf(shifted, sizeof(shifted), "%.*s%.*s", (int)sc->num, sc->num_at, (int)sc->denom, frac ? frac + 1 : "");
	size_t n = strlen(shifted);
	return !(n >= 3 && strcmp(shifted + n - 3, "000") == 0);
}

int pp__qty_parse(const char *s, struct pp_qty *ret, pp_err *err)
{
	struct scan sc;
	__int128 nano;
	int r = pp__quantity_parse_nano(s, &nano, err);

	if (r < 0)
		return r;
	if (scan(s, &sc) < 0)
		return pp_fail(err, -EINVAL, "invalid quantity \"%s\"", s);
	struct pp_qty q = { .nano = nano, .format = (uint8_t)sc.format };
	/* ParseQuantity: a BinarySI amount strictly between 0 and 1 becomes DecimalSI */
	__int128 mag = nano < 0 ? -nano : nano;
	if (q.format == PP_QFMT_BINARY_SI && mag > 0 && mag < NANO)
		q.format = PP_QFMT_DECIMAL_SI;
	if (keeps_text(s, &sc) && !(q.text = strdup(s)))
		return -ENOMEM;
	*ret = q;
	return 0;
}

struct pp_qty pp__qty_int(int64_t v)
{
	return (struct pp_qty){ .nano = (__int128)v * NANO, .format = PP_QFMT_DECIMAL_SI };
}

void pp__qty_done(struct pp_qty *q)
{
	free(q->text);
	q->text = NULL;
}

int pp__qty_copy(struct pp_qty *dst, const struct pp_qty *src)
{
	struct pp_qty q = *src;
	if (src->text && !(q.text = strdup(src->text)))
		return -ENOMEM;
	*dst = q;
	return 0;
}

void pp__qty_add(struct pp_qty *q, const struct pp_qty *y)
{
	if (q->nano == 0)
		q->format = y->format;
	/* both are sums of int64-bounded quantities: 2^127 is out of reach */
	q->nano += y->nano;
	pp__qty_done(q);
}

/* Decimal digits of |v| into buf (no terminator); returns the count. */
static size_t digits(unsigned __int128 v, char *buf)
{
	char tmp[48];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	return n;
}

/* CanonicalizeBytes, including its quirks: a BinarySI value below 1024 or with a fraction is
 * printed as DecimalSI, and an exponent without a suffix of its format prints no suffix. */
size_t pp__qty_format(const struct pp_qty *q, char *buf, size_t size)
{
	static const char *const dec[] = { "n", "u", "m", "", "k", "M", "G", "T", "P", "E" }; /* 10^-9 .. 10^18 */
	static const char *const bin[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	char out[96], suffix[16] = "";
	size_t n = 0;

	if (q->text)
		return (size_t)snprintf(buf, size, "%s", q->text);
	if (q->nano == 0)
		return (size_t)snprintf(buf, size, "0");
	unsigned __int128 m = (unsigned __int128)(q->nano < 0 ? -q->nano : q->nano);
	enum pp_qfmt f = q->format;
	if (f == PP_QFMT_BINARY_SI && (m < (unsigned __int128)1024 * NANO || m % NANO))
		f = PP_QFMT_DECIMAL_SI;
	if (q->nano < 0)
		out[n++] = '-';
	if (f == PP_QFMT_BINARY_SI) {
		unsigned e = 0;
		m /= NANO;
		while (m >= 1024 && m % 1024 == 0) {
			m /= 1024;
			e++;
		}
		if (e < PP_ELEMENTSOF(bin))
			snprintf(suffix, sizeof(suffix), "%s", bin[e]);
	} else {
		int e = -9;
		while (m % 10 == 0) {
			m /= 10;
			e++;
		}
		switch (e % 3) { /* C's remainder has Go's sign rule */
		case 1:
		case -2:
			m *= 10;
			e -= 1;
			break;
		case 2:
		case -1:
			m *= 100;
			e -= 2;
			break;
		}
		if (f == PP_QFMT_DECIMAL_SI && e >= -9 && e <= 18)
			snprintf(suffix, sizeof(suffix), "%s", dec[(e + 9) / 3]);
		else if (f == PP_QFMT_DECIMAL_EXPONENT && e != 0)
			snprintf(suffix, sizeof(suffix), "e%d", e);
	}
	n += digits(m, out + n);
	out[n] = '\0';
	return (size_t)snprintf(buf, size, "%s%s", out, suffix);
}

/* --- resource lists ---------------------------------------------------------------------------- */

void pp__rlist_done(struct pp_rlist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		pp__qty_done(&l->v[i].q);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

struct pp_rentry *pp__rlist_find(const struct pp_rlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

static int append(struct pp_rlist *l, const char *name, const struct pp_qty *q)
{
	struct pp_rentry e = { 0 };
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct pp_rentry *v = reallocarray(l->v, cap, sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (!(e.name = strdup(name)) || pp__qty_copy(&e.q, q) < 0) {
		free(e.name);
		return -ENOMEM;
	}
	l->v[l->n++] = e;
	return 0;
}

int pp__rlist_set(struct pp_rlist *l, const char *name, const struct pp_qty *q)
{
	struct pp_rentry *e = pp__rlist_find(l, name);
	struct pp_qty c;
	if (!e)
		return append(l, name, q);
	if (pp__qty_copy(&c, q) < 0)
		return -ENOMEM;
	pp__qty_done(&e->q);
	e->q = c;
	return 0;
}

int pp__rlist_add(struct pp_rlist *l, const char *name, const struct pp_qty *q)
{
	struct pp_rentry *e = pp__rlist_find(l, name);
	if (!e)
		return append(l, name, q);
	pp__qty_add(&e->q, q);
	return 0;
}

int pp__rlist_max(struct pp_rlist *l, const char *name, const struct pp_qty *q)
{
	struct pp_rentry *e = pp__rlist_find(l, name);
	if (e && pp__qty_cmp(q, &e->q) <= 0)
		return 0;
	return pp__rlist_set(l, name, q);
}

int pp__rlist_add_all(struct pp_rlist *l, const struct pp_rlist *other)
{
	for (size_t i = 0; i < other->n; i++)
		if (pp__rlist_add(l, other->v[i].name, &other->v[i].q) < 0)
			return -ENOMEM;
	return 0;
}

int pp__rlist_max_all(struct pp_rlist *l, const struct pp_rlist *other)
{
	for (size_t i = 0; i < other->n; i++)
		if (pp__rlist_max(l, other->v[i].name, &other->v[i].q) < 0)
			return -ENOMEM;
	return 0;
}

int pp__rlist_copy(struct pp_rlist *dst, const struct pp_rlist *src)
{
	struct pp_rlist l = { 0 };
	for (size_t i = 0; i < src->n; i++)
		if (append(&l, src->v[i].name, &src->v[i].q) < 0) {
			pp__rlist_done(&l);
			return -ENOMEM;
		}
	*dst = l;
	return 0;
}

int pp__rlist_parse(struct pp_rlist *l, const pp_quantity_kv *kv, size_t n, const char *field, pp_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct pp_qty q;
		pp_err e;
		int r;
		if (!kv[i].name || !*kv[i].name)
			return pp_fail(err, -EINVAL, "%s: empty resource name", field);
		if (!kv[i].value)
			return pp_fail(err, -EINVAL, "%s[%.100s]: missing quantity", field, kv[i].name);
		if (pp__rlist_find(l, kv[i].name))
			return pp_fail(err, -EINVAL, "%s[%.100s]: listed twice", field, kv[i].name);
		if ((r = pp__qty_parse(kv[i].value, &q, &e)) < 0)
			return r == -ENOMEM ? r : pp_fail(err, r, "%s[%.100s]: %s", field, kv[i].name, e.msg);
		r = append(l, kv[i].name, &q);
		pp__qty_done(&q);
		if (r < 0)
			return r;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct pp_rentry *const *)a)->name, (*(const struct pp_rentry *const *)b)->name);
}

char *pp__rlist_print(const struct pp_rlist *l, bool (*keep)(const char *name, const void *ud), const void *ud)
{
	const struct pp_rentry **sorted = calloc(l->n ? l->n : 1, sizeof(*sorted));
	size_t k = 0, len = 1;
	char *s = NULL;

	if (!sorted)
		return NULL;
	for (size_t i = 0; i < l->n; i++)
		if (!keep || keep(l->v[i].name, ud)) {
			sorted[k++] = &l->v[i];
			len += strlen(l->v[i].name) + 2 + pp__qty_format(&l->v[i].q, NULL, 0);
		}
	qsort(sorted, k, sizeof(*sorted), by_name);
	if ((s = malloc(len))) {
		size_t at = 0;
		for (size_t i = 0; i < k; i++) {
			at += (size_t)snprintf(s + at, len - at, "%s%s=", i ? "," : "", sorted[i]->name);
			at += pp__qty_format(&sorted[i]->q, s + at, len - at);
		}
		s[at] = '\0';
	}
	free(sorted);
	return s;
}
