/* SPDX-License-Identifier: MIT */
#include "yamlval.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preempt.h"
#include "kval.h"

int yv_line(const kval *n)
{
	return (int)kval_line(n);
}

/* Appends n bytes of s to the path (cut at its end: a truncated path still names the start). */
static void append(yv *v, const char *s, size_t n)
{
	size_t room = sizeof(v->path) - 1 - v->plen;
	if (n > room)
		n = room;
	memcpy(v->path + v->plen, s, n);
	v->plen += n;
	v->path[v->plen] = '\0';
}

/* Every field read pushes its key: plain copies, no printf (it was a tenth of a cluster load). */
size_t yv_push_key(yv *v, const char *key)
{
	size_t mark = v->plen;
	/* Keys with dots or odd characters (labels, resource names) keep their spelling. */
	if (v->plen)
		append(v, ".", 1);
	append(v, key, strlen(key));
	return mark;
}

size_t yv_push_index(yv *v, size_t i)
{
	char buf[24], *p = buf + sizeof(buf);
	size_t mark = v->plen;

	*--p = ']';
	do
		*--p = (char)('0' + i % 10);
	while ((i /= 10) > 0);
	*--p = '[';
	append(v, p, (size_t)(buf + sizeof(buf) - p));
	return mark;
}

void yv_pop(yv *v, size_t mark)
{
	if (mark <= v->plen) {
		v->plen = mark;
		v->path[mark] = '\0';
	}
}

static void report(yv *v, bool warning, const kval *n, const char *fmt, va_list ap)
{
	char msg[768];
	struct diag_loc loc = { .file = v->file, .line = yv_line(n) };

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (warning) {
		if (v->plen)
			diag_warn(v->diag, &loc, v->object[0] ? v->object : NULL, "%s: %s", v->path, msg);
		else
			diag_warn(v->diag, &loc, v->object[0] ? v->object : NULL, "%s", msg);
		return;
	}
	v->errors++;
	if (v->plen)
		diag_error(v->diag, &loc, v->object[0] ? v->object : NULL, "%s: %s", v->path, msg);
	else
		diag_error(v->diag, &loc, v->object[0] ? v->object : NULL, "%s", msg);
}

void yv_error(yv *v, const kval *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(v, false, n, fmt, ap);
	va_end(ap);
}

void yv_warn(yv *v, const kval *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(v, true, n, fmt, ap);
	va_end(ap);
}

void *yv_calloc(yv *v, size_t n, size_t size)
{
	void *p = karena_calloc(v->arena, n, size);
	if (!p)
		v->oom = true;
	return p;
}

bool yv_is_null(const kval *n)
{
	return kval_type_of(n) == KVAL_NULL;
}

bool yv_is_int(const kval *n)
{
	return kval_type_of(n) == KVAL_INT;
}

const kval *yv_get(const kval *map, const char *key)
{
	const kval *n = kval_get(map, key);
	return yv_is_null(n) ? NULL : n;
}

bool yv_expect_map(yv *v, const kval *n)
{
	if (kval_type_of(n) == KVAL_MAP)
		return true;
	yv_error(v, n, "expected an object, got %s", kval_kind_name(n));
	return false;
}

bool yv_expect_seq(yv *v, const kval *n)
{
	if (kval_type_of(n) == KVAL_SEQ)
		return true;
	yv_error(v, n, "expected a list, got %s", kval_kind_name(n));
	return false;
}

/* The scalar's text, or NULL (error reported) when n is not a scalar. */
static const char *scalar(yv *v, const kval *n, size_t *len, kval_type *kind, const char *want)
{
	if (!kval_is_scalar(n)) {
		yv_error(v, n, "expected %s, got %s", want, kval_kind_name(n));
		return NULL;
	}
	*len = kval_len(n);
	*kind = kval_type_of(n);
	return kval_str(n);
}

int yv_node_string(yv *v, const kval *n, const char **ret)
{
	kval_type k;
	size_t len;
	const char *s = scalar(v, n, &len, &k, "a string");

	if (!s)
		return -1;
	if (k != KVAL_STRING) {
		yv_error(v, n, "expected a string, got %s (quote it)", kval_kind_name(n));
		return -1;
	}
	if (memchr(s, '\0', len)) {
		yv_error(v, n, "string contains a NUL character");
		return -1;
	}
	char *c = karena_strndup(v->arena, s, len);
	if (!c) {
		v->oom = true;
		return -1;
	}
	*ret = c;
	return 0;
}

#define FIELD_BEGIN(required)                                         \
	const kval *n = yv_get(map, key);                         \
	size_t mark = yv_push_key(v, key);                            \
	int result = 1;                                               \
	if (!n) {                                                     \
		if (required)                                         \
			yv_error(v, map, "required field is missing"); \
		yv_pop(v, mark);                                      \
		return (required) ? -1 : 0;                           \
	}

#define FIELD_END()          \
	yv_pop(v, mark);     \
	return result;

int yv_string(yv *v, const kval *map, const char *key, bool required, const char **ret)
{
	FIELD_BEGIN(required);
	if (yv_node_string(v, n, ret) < 0)
		result = -1;
	FIELD_END();
}

static int parse_int(yv *v, const kval *n, int64_t min, int64_t max, int64_t *ret)
{
	kval_type k;
	size_t len;
	const char *s = scalar(v, n, &len, &k, "an integer");
	char buf[32];

	if (!s)
		return -1;
	if (k != KVAL_INT || len >= sizeof(buf) || (len > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o'))) {
		if (k == KVAL_STRING || k == KVAL_BOOL)
			yv_error(v, n, "expected an integer, got %s", kval_kind_name(n));
		else
			yv_error(v, n, "expected an integer, got \"%.*s\"", (int)(len > 40 ? 40 : len), s);
		return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	char *end;
	long long x = strtoll(buf, &end, 10);
	if (errno || *end || x < min || x > max) {
		yv_error(v, n, "%s is out of range [%" PRId64 ", %" PRId64 "]", buf, min, max);
		return -1;
	}
	*ret = x;
	return 0;
}

int yv_int32(yv *v, const kval *map, const char *key, bool required, int32_t *ret)
{
	int64_t x;
	FIELD_BEGIN(required);
	if (parse_int(v, n, INT32_MIN, INT32_MAX, &x) < 0)
		result = -1;
	else
		*ret = (int32_t)x;
	FIELD_END();
}

int yv_int64(yv *v, const kval *map, const char *key, int64_t *ret)
{
	FIELD_BEGIN(false);
	if (parse_int(v, n, INT64_MIN, INT64_MAX, ret) < 0)
		result = -1;
	FIELD_END();
}

int yv_bool(yv *v, const kval *map, const char *key, bool *ret)
{
	kval_type k;
	size_t len;
	FIELD_BEGIN(false);
	const char *s = scalar(v, n, &len, &k, "a boolean");
	if (!s) {
		result = -1;
	} else if (k != KVAL_BOOL) {
		yv_error(v, n, "expected a boolean, got %s", kval_kind_name(n));
		result = -1;
	} else {
		*ret = s[0] == 't' || s[0] == 'T';
	}
	FIELD_END();
}

int yv_time(yv *v, const kval *map, const char *key, int64_t *ret_ns)
{
	const char *s;
	FIELD_BEGIN(false);
	if (yv_node_string(v, n, &s) < 0) {
		result = -1;
	} else if (k8s_parse_time(s, ret_ns) < 0) {
		yv_error(v, n, "invalid timestamp \"%s\" (want RFC 3339, e.g. 2024-05-01T10:00:00Z)", s);
		result = -1;
	}
	FIELD_END();
}

/*
 * A mapping of string keys whose values decode(), called with the key pushed on the path, turns
 * into strings: 0 with *ret set, or -1 once it has reported why.
 */
typedef int kv_decode_fn(yv *v, const char *key, const kval *k, const kval *val, const char **ret);

static int kv_map(yv *v, const kval *map, const char *key, kv_decode_fn *decode, struct k8s_map *ret)
{
	FIELD_BEGIN(false);
	if (!yv_expect_map(v, n)) {
		result = -1;
	} else {
		size_t count = kval_count(n), i = 0;
		struct k8s_kv *kv = yv_calloc(v, count, sizeof(*kv));

		if (!kv)
			result = -1;
		for (size_t j = 0; kv && j < count; j++) {
			const kval *k = kval_key_at(n, j), *val = kval_val_at(n, j);
			const char *ks, *vs;
			if (!k || yv_node_string(v, k, &ks) < 0) {
				if (!k)
					yv_error(v, n, "null key");
				result = -1;
				continue;
			}
			size_t m2 = yv_push_key(v, ks);
			if (decode(v, ks, k, val, &vs) < 0)
				result = -1;
			else
				kv[i++] = (struct k8s_kv){ ks, vs };
			yv_pop(v, m2);
		}
		ret->n = i;
		ret->v = kv;
	}
	FIELD_END();
}

static int string_value(yv *v, const char *key, const kval *k, const kval *val, const char **ret)
{
	(void)key;
	(void)k;
	*ret = "";
	/* null values decode to "" in Go's map[string]string */
	return !yv_is_null(val) && yv_node_string(v, val, ret) < 0 ? -1 : 0;
}

int yv_string_map(yv *v, const kval *map, const char *key, struct k8s_map *ret)
{
	return kv_map(v, map, key, string_value, ret);
}

int yv_string_list(yv *v, const kval *map, const char *key, size_t *ret_n, const char ***ret)
{
	FIELD_BEGIN(false);
	if (!yv_expect_seq(v, n)) {
		result = -1;
	} else {
		size_t count = kval_count(n), i = 0;
		const char **list = yv_calloc(v, count, sizeof(*list));
		const kval *e;

		if (!list)
			result = -1;
		while (list && (e = kval_at(n, i))) {
			size_t m2 = yv_push_index(v, i);
			if (yv_node_string(v, e, &list[i]) < 0)
				result = -1;
			yv_pop(v, m2);
			i++;
		}
		*ret_n = list ? count : 0;
		*ret = list;
	}
	FIELD_END();
}

/* Quantity text as Go's JSON decoding sees it: surrounding blanks trimmed. */
static const char *trim(yv *v, const char *s, size_t len)
{
	while (len && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) {
		s++;
		len--;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	char *c = karena_strndup(v->arena, s, len);
	if (!c)
		v->oom = true;
	return c;
}

static int quantity_value(yv *v, const char *name, const kval *k, const kval *val, const char **ret)
{
	const char *q, *raw;
	kval_type sk;
	size_t len;
	int64_t x;
	pp_err err;

	if (!val || yv_is_null(val)) {
		yv_error(v, val ? val : k, "missing quantity");
		return -1;
	}
	if ((raw = scalar(v, val, &len, &sk, "a quantity")) == NULL)
		return -1;
	if (sk == KVAL_BOOL) {
		yv_error(v, val, "expected a quantity, got a boolean");
		return -1;
	}
	if (memchr(raw, '\0', len)) {
		yv_error(v, val, "quantity contains a NUL character");
		return -1;
	}
	if ((q = trim(v, raw, len)) == NULL)
		return -1;
	if ((strcmp(name, "cpu") == 0 ? pp_quantity_parse_milli(q, &x, &err) : pp_quantity_parse(q, &x, &err)) < 0) {
		yv_error(v, val, "%s", err.msg);
		return -1;
	}
	if (x < 0) {
		yv_error(v, val, "quantity \"%s\" must not be negative", q);
		return -1;
	}
	*ret = q;
	return 0;
}

int yv_rlist(yv *v, const kval *map, const char *key, k8s_rlist *ret)
{
	return kv_map(v, map, key, quantity_value, ret);
}

int yv_list(yv *v, const kval *map, const char *key, size_t elem_size, size_t *ret_n, void **ret,
            yv_elem_fn fn)
{
	const kval *n = yv_get(map, key), *e;
	size_t mark = yv_push_key(v, key), i = 0;
	int result = 0;

	if (!n)
		goto out;
	if (!yv_expect_seq(v, n)) {
		result = -1;
		goto out;
	}
	size_t count = kval_count(n);
	char *arr = yv_calloc(v, count, elem_size);
	if (!arr) {
		result = -1;
		goto out;
	}
	while ((e = kval_at(n, i))) {
		size_t m2 = yv_push_index(v, i);
		if (yv_is_null(e) || !yv_expect_map(v, e) || fn(v, e, arr + i * elem_size) < 0)
			result = -1;
		if (yv_is_null(e))
			yv_error(v, e, "null list element");
		yv_pop(v, m2);
		i++;
	}
	*ret_n = count;
	*ret = arr;
	if (result == 0)
		result = 1;
out:
	yv_pop(v, mark);
	return result;
}

const kval *yv_sub(yv *v, const kval *map, const char *key, size_t *mark, bool *bad)
{
	const kval *n = yv_get(map, key);
	if (!n)
		return NULL;
	*mark = yv_push_key(v, key);
	if (!yv_expect_map(v, n)) {
		*bad = true;
		yv_pop(v, *mark);
		return NULL;
	}
	return n;
}
