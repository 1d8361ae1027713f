/* SPDX-License-Identifier: MIT */
#include "jsonw.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Length of the UTF-8 sequence at s (at most n bytes), or 0 when it is not one: overlong forms,
 * surrogates and code points past U+10FFFF are not (Go's utf8.DecodeRune rejects the same, and
 * so does yajl's validating parser that reads the spool back). */
static size_t jsonw_utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;
		else if (s[0] == 0xed)
			hi = 0x9f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;
		else if (s[0] == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* s with each byte that starts no UTF-8 sequence replaced by U+FFFD (malloc'ed), or NULL when s
 * is UTF-8 already (*oom tells the two NULLs apart). */
static char *jsonw_utf8_repaired(const char *s, size_t n, bool *oom)
{
	size_t i = 0, l;
	char *out, *o;

	*oom = false;
	/* ASCII, nearly every string of a body or a record, is UTF-8 eight bytes at a time (the
	 * scan is every string's cost: preemptd writes some fifty per binding) */
	for (uint64_t w; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		if (w & UINT64_C(0x8080808080808080))
			break;
	}
	while (i < n && (unsigned char)s[i] < 0x80)
		i++;
	while (i < n && (l = jsonw_utf8_seq((const unsigned char *)s + i, n - i)))
		i += l;
	if (i == n)
		return NULL;
	out = malloc(n * 3 + 1); /* each bad byte grows to three */
	if (!out) {
		*oom = true;
		return NULL;
	}
	memcpy(out, s, i);
	o = out + i;
	while (i < n) {
		l = jsonw_utf8_seq((const unsigned char *)s + i, n - i);
		if (l) {
			memcpy(o, s + i, l);
			o += l;
			i += l;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	*o = '\0';
	return out;
}

/* What s takes once yajl has quoted and escaped it (yajl_string_encode's rules). */
static size_t jsonw_quoted_len(const char *s, size_t n)
{
	size_t len = 2;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': case '\\': case '\b': case '\f': case '\n': case '\r': case '\t':
			len += 2;
			break;
		default:
			len += c < 0x20 ? 6 : 1;
		}
	}
	return len;
}

static size_t jsonw_gen_size(yajl_gen g)
{
	const unsigned char *buf;
	size_t len = 0;
	(void)yajl_gen_get_buf(g, &buf, &len);
	return len;
}

static int jsonw_status(yajl_gen_status s)
{
	switch (s) {
	case yajl_gen_status_ok:
		return 0;
	case yajl_gen_invalid_string:
		return -EILSEQ;
	case yajl_max_depth_exceeded:
		return -E2BIG;
	case yajl_gen_keys_must_be_strings:
	case yajl_gen_in_error_state:
	case yajl_gen_generation_complete:
		return -EINVAL;
	default:
		return -ENOMEM;
	}
}

int jsonw_gen_string(yajl_gen g, size_t max, const char *s)
{
	char *fixed;
	size_t n;
	bool oom;
	int r;

	if (!s) {
		if (jsonw_gen_size(g) + 5 > max) /* separator and "null" */
			return -E2BIG;
		return jsonw_status(yajl_gen_null(g));
	}
	n = strlen(s);
	if (n > max) /* before the repair below grows it threefold */
		return -E2BIG;
	fixed = jsonw_utf8_repaired(s, n, &oom);
	if (oom)
		return -ENOMEM;
	if (fixed) {
		s = fixed;
		n = strlen(fixed);
	}
	/* checked before the generator's buffer grows; +1 for the separator before it. A string that
	 * fits even if every byte took yajl's longest escape (6) is not measured: the bodies' strings
	 * are short, and measuring each cost preemptd's loop a tenth of its speed. */
	size_t used = jsonw_gen_size(g);
	if (used + 6 * n + 3 > max && used + jsonw_quoted_len(s, n) + 1 > max)
		r = -E2BIG;
	else
		r = jsonw_status(yajl_gen_string(g, (const unsigned char *)s, n));
	if (fixed)
		free(fixed);
	return r;
}

void jb_init(jsonbuf *j, size_t max)
{
	*j = (jsonbuf){ .max = max, .gen = yajl_gen_alloc(NULL) };
	if (!j->gen) {
		j->error = -ENOMEM;
		return;
	}
	/* yajl_gen_validate_utf8 is left off: every string is repaired to UTF-8 before yajl sees it
	 * (jsonw_gen_string), and a second check of the same bytes cost a tenth of a body */
}

void jb_free(jsonbuf *j)
{
	if (j->gen)
		yajl_gen_free(j->gen);
	*j = (jsonbuf){ 0 };
}

int jb_error(const jsonbuf *j)
{
	return j->error;
}

/* Records the outcome of one step: the text so far, or the first error (and no text). */
static void jb_after(jsonbuf *j, int r)
{
	const unsigned char *buf;
	size_t len;

	if (!r && yajl_gen_get_buf(j->gen, &buf, &len) != yajl_gen_status_ok)
		r = -ENOMEM;
	if (!r && len >= j->max)
		r = -E2BIG;
	if (r) {
		j->error = r;
		j->buf = NULL;
		j->len = 0;
		return;
	}
	j->buf = (char *)buf;
	j->len = len;
}

/* Whether a token of n bytes (and a separator before it) still fits below the bound. */
static bool jb_fits(jsonbuf *j, size_t n)
{
	if (j->error)
		return false;
	if (j->len + 1 + n >= j->max) {
		jb_after(j, -E2BIG);
		return false;
	}
	return true;
}

void jb_begin_object(jsonbuf *j)
{
	if (jb_fits(j, 1))
		jb_after(j, jsonw_status(yajl_gen_map_open(j->gen)));
}

void jb_end_object(jsonbuf *j)
{
	if (jb_fits(j, 1))
		jb_after(j, jsonw_status(yajl_gen_map_close(j->gen)));
}

void jb_begin_array(jsonbuf *j)
{
	if (jb_fits(j, 1))
		jb_after(j, jsonw_status(yajl_gen_array_open(j->gen)));
}

void jb_end_array(jsonbuf *j)
{
	if (jb_fits(j, 1))
		jb_after(j, jsonw_status(yajl_gen_array_close(j->gen)));
}

void jb_key(jsonbuf *j, const char *key)
{
	jb_string(j, key ? key : "");
}

void jb_string(jsonbuf *j, const char *s)
{
	/* max - 1: jsonw_gen_string allows output up to its bound, jb_* keep len below it */
	if (!j->error)
		jb_after(j, jsonw_gen_string(j->gen, j->max - 1, s));
}

void jb_int(jsonbuf *j, int64_t v)
{
	if (jb_fits(j, 20))
		jb_after(j, jsonw_status(yajl_gen_integer(j->gen, (long long)v)));
}

void jb_uint(jsonbuf *j, uint64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof(b), "%" PRIu64, v);

	/* yajl's integer is signed: the digits go through as a number token */
	if (jb_fits(j, (size_t)n))
		jb_after(j, jsonw_status(yajl_gen_number(j->gen, b, (size_t)n)));
}

void jb_bool(jsonbuf *j, bool v)
{
	if (jb_fits(j, 5))
		jb_after(j, jsonw_status(yajl_gen_bool(j->gen, v)));
}

void jb_null(jsonbuf *j)
{
	if (jb_fits(j, 4))
		jb_after(j, jsonw_status(yajl_gen_null(j->gen)));
}

/* Bound for one streamed string: far above any name or reason evictd prints. */
#define JSON_STRING_MAX (1u << 20)

void json_string(FILE *f, const char *s)
{
	jsonbuf j;

	jb_init(&j, JSON_STRING_MAX);
	jb_string(&j, s ? s : "");
	if (!jb_error(&j))
		fwrite(j.buf, 1, j.len, f);
	else
		fputs("\"\"", f); /* the surrounding document stays valid */
	jb_free(&j);
}

int jsonw_fput_string_n(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;

		switch (c) {
		case '"': fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\b': fputs("\\b", f); i++; continue;
		case '\f': fputs("\\f", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		len = jsonw_utf8_seq(s + i, n - i);
		if (len == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (len == 3 && s[i] == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
			fprintf(f, "\\u%04x", s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
			i += 3;
			continue;
		}
		fwrite(s + i, 1, len, f);
		i += len;
	}
	fputc('"', f);
	return ferror(f) ? -EIO : 0;
}

int jsonw_fput_string(FILE *f, const char *s)
{
	return jsonw_fput_string_n(f, s ? s : "", s ? strlen(s) : 0);
}
