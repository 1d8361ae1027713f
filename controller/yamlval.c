/* SPDX-License-Identifier: MIT */
#include "yamlval.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preempt.h"

enum scalar_kind { SK_STRING, SK_NULL, SK_BOOL, SK_INT, SK_FLOAT };

/* YAML 1.2 core schema resolution of a plain scalar; quoted/block scalars are strings. */
static enum scalar_kind classify(struct fy_node *n, const char *s, size_t len)
{
	if (fy_node_get_style(n) != FYNS_PLAIN)
		return SK_STRING;
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(s, lit, len) == 0)
	if (len == 0 || IS("~") || IS("null") || IS("Null") || IS("NULL"))
		return SK_NULL;
	if (IS("true") || IS("True") || IS("TRUE") || IS("false") || IS("False") || IS("FALSE"))
		return SK_BOOL;
	if (IS(".inf") || IS(".Inf") || IS(".INF") || IS("-.inf") || IS("+.inf") || IS(".nan") ||
	    IS(".NaN") || IS(".NAN"))
		return SK_FLOAT;
#undef IS
	size_t i = 0;
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
		for (i = 2; i < len; i++)
			if (!(s[1] == 'x' ? strchr("0123456789abcdefABCDEF", s[i]) != NULL
			                  : (s[i] >= '0' && s[i] <= '7')))
				return SK_STRING;
		return SK_INT;
	}
	if (s[i] == '+' || s[i] == '-')
		i++;
	size_t digits = 0, frac = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	bool is_float = false;
	if (i < len && s[i] == '.') {
		is_float = true;
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			frac++;
	}
	if (digits + frac == 0)
		return SK_STRING;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = 0;
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			e++;
		if (!e)
			return SK_STRING;
		is_float = true;
	}
	if (i != len)
		return SK_STRING;
	return is_float ? SK_FLOAT : SK_INT;
}

static const char *kind_name(struct fy_node *n)
{
	size_t len;
	const char *s;

	switch (fy_node_get_type(n)) {
	case FYNT_MAPPING:
		return "an object";
	case FYNT_SEQUENCE:
		return "a list";
	default:
		s = fy_node_get_scalar(n, &len);
		switch (classify(n, s ? s : "", s ? len : 0)) {
		case SK_NULL: return "null";
		case SK_BOOL: return "a boolean";
		case SK_INT:
		case SK_FLOAT: return "a number";
		default: return "a string";
		}
	}
}

int yv_line(struct fy_node *n)
{
	for (int depth = 0; n && depth < 64; depth++) {
		void *it = NULL;
		switch (fy_node_get_type(n)) {
		case FYNT_SCALAR: {
			struct fy_token *t = fy_node_get_scalar_token(n);
			const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
			return m ? m->line + 1 : 0;
		}
		case FYNT_MAPPING: {
			struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
			n = p ? fy_node_pair_key(p) : NULL;
			break;
		}
		case FYNT_SEQUENCE:
			n = fy_node_sequence_iterate(n, &it);
			break;
		default:
			return 0;
		}
	}
	return 0;
}

static size_t push(yv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t push(yv *v, const char *fmt, ...)
{
	size_t mark = v->plen;
	va_list ap;

	if (v->plen < sizeof(v->path) - 1) {
		va_start(ap, fmt);
		int r = vsnprintf(v->path + v->plen, sizeof(v->path) - v->plen, fmt, ap);
		va_end(ap);
		if (r > 0)
			v->plen += (size_t)r;
		if (v->plen >= sizeof(v->path))
			v->plen = sizeof(v->path) - 1; /* truncated path: still names the start */
	}
	return mark;
}

size_t yv_push_key(yv *v, const char *key)
{
	/* Keys with dots or odd characters (labels, resource names) keep their spelling. */
	return push(v, v->plen ? ".%s" : "%s", key);
}

size_t yv_push_index(yv *v, size_t i)
{
	return push(v, "[%zu]", i);
}

void yv_pop(yv *v, size_t mark)
{
	if (mark <= v->plen) {
		v->plen = mark;
		v->path[mark] = '\0';
	}
}

static void report(yv *v, bool warning, struct fy_node *n, const char *fmt, va_list ap)
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

void yv_error(yv *v, struct fy_node *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(v, false, n, fmt, ap);
	va_end(ap);
}

void yv_warn(yv *v, struct fy_node *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(v, true, n, fmt, ap);
	va_end(ap);
}

void *yv_calloc(yv *v, size_t n, size_t size)
{
	void *p = ctl_arena_calloc(v->arena, n, size);
	if (!p)
		v->oom = true;
	return p;
}

bool yv_is_null(struct fy_node *n)
{
	size_t len;
	const char *s;

	if (!n)
		return true;
	if (fy_node_get_type(n) != FYNT_SCALAR)
		return false;
	s = fy_node_get_scalar(n, &len);
	return classify(n, s ? s : "", s ? len : 0) == SK_NULL;
}

bool yv_is_int(struct fy_node *n)
{
	size_t len;
	const char *s;

	if (!n || fy_node_get_type(n) != FYNT_SCALAR)
		return false;
	s = fy_node_get_scalar(n, &len);
	return classify(n, s ? s : "", s ? len : 0) == SK_INT;
}

struct fy_node *yv_get(struct fy_node *map, const char *key)
{
	struct fy_node *n;

	if (!map || fy_node_get_type(map) != FYNT_MAPPING)
		return NULL;
	n = fy_node_mapping_lookup_value_by_simple_key(map, key, strlen(key));
	return yv_is_null(n) ? NULL : n;
}

bool yv_expect_map(yv *v, struct fy_node *n)
{
	if (fy_node_get_type(n) == FYNT_MAPPING)
		return true;
	yv_error(v, n, "expected an object, got %s", kind_name(n));
	return false;
}

bool yv_expect_seq(yv *v, struct fy_node *n)
{
	if (fy_node_get_type(n) == FYNT_SEQUENCE)
		return true;
	yv_error(v, n, "expected a list, got %s", kind_name(n));
	return false;
}

/* The scalar's text, or NULL (error reported) when n is not a scalar. */
static const char *scalar(yv *v, struct fy_node *n, size_t *len, enum scalar_kind *kind,
                          const char *want)
{
	const char *s;

	if (fy_node_get_type(n) != FYNT_SCALAR) {
		yv_error(v, n, "expected %s, got %s", want, kind_name(n));
		return NULL;
	}
	s = fy_node_get_scalar(n, len);
	if (!s) {
		s = "";
		*len = 0;
	}
	*kind = classify(n, s, *len);
	return s;
}

int yv_node_string(yv *v, struct fy_node *n, const char **ret)
{
	enum scalar_kind k;
	size_t len;
	const char *s = scalar(v, n, &len, &k, "a string");

	if (!s)
		return -1;
	if (k != SK_STRING) {
		yv_error(v, n, "expected a string, got %s (quote it)", kind_name(n));
		return -1;
	}
	if (memchr(s, '\0', len)) {
		yv_error(v, n, "string contains a NUL character");
		return -1;
	}
	char *c = ctl_arena_strndup(v->arena, s, len);
	if (!c) {
		v->oom = true;
		return -1;
	}
	*ret = c;
	return 0;
}

#define FIELD_BEGIN(required)                                         \
	struct fy_node *n = yv_get(map, key);                         \
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

int yv_string(yv *v, struct fy_node *map, const char *key, bool required, const char **ret)
{
	FIELD_BEGIN(required);
	if (yv_node_string(v, n, ret) < 0)
		result = -1;
	FIELD_END();
}

static int parse_int(yv *v, struct fy_node *n, int64_t min, int64_t max, int64_t *ret)
{
	enum scalar_kind k;
	size_t len;
	const char *s = scalar(v, n, &len, &k, "an integer");
	char buf[32];

	if (!s)
		return -1;
	if (k != SK_INT || len >= sizeof(buf) || (len > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o'))) {
		if (k == SK_STRING || k == SK_BOOL)
			yv_error(v, n, "expected an integer, got %s", kind_name(n));
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

int yv_int32(yv *v, struct fy_node *map, const char *key, bool required, int32_t *ret)
{
	int64_t x;
	FIELD_BEGIN(required);
	if (parse_int(v, n, INT32_MIN, INT32_MAX, &x) < 0)
		result = -1;
	else
		*ret = (int32_t)x;
	FIELD_END();
}

int yv_int64(yv *v, struct fy_node *map, const char *key, int64_t *ret)
{
	FIELD_BEGIN(false);
	if (parse_int(v, n, INT64_MIN, INT64_MAX, ret) < 0)
		result = -1;
	FIELD_END();
}

int yv_bool(yv *v, struct fy_node *map, const char *key, bool *ret)
{
	enum scalar_kind k;
	size_t len;
	FIELD_BEGIN(false);
	const char *s = scalar(v, n, &len, &k, "a boolean");
	if (!s) {
		result = -1;
	} else if (k != SK_BOOL) {
		yv_error(v, n, "expected a boolean, got %s", kind_name(n));
		result = -1;
	} else {
		*ret = s[0] == 't' || s[0] == 'T';
	}
	FIELD_END();
}

int yv_time(yv *v, struct fy_node *map, const char *key, int64_t *ret_ns)
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
typedef int kv_decode_fn(yv *v, const char *key, struct fy_node *k, struct fy_node *val, const char **ret);

static int kv_map(yv *v, struct fy_node *map, const char *key, kv_decode_fn *decode, struct k8s_map *ret)
{
	FIELD_BEGIN(false);
	if (!yv_expect_map(v, n)) {
		result = -1;
	} else {
		size_t count = (size_t)fy_node_mapping_item_count(n), i = 0;
		struct k8s_kv *kv = yv_calloc(v, count, sizeof(*kv));
		void *it = NULL;
		struct fy_node_pair *p;

		if (!kv)
			result = -1;
		while (kv && (p = fy_node_mapping_iterate(n, &it))) {
			struct fy_node *k = fy_node_pair_key(p), *val = fy_node_pair_value(p);
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

static int string_value(yv *v, const char *key, struct fy_node *k, struct fy_node *val, const char **ret)
{
	(void)key;
	(void)k;
	*ret = "";
	/* null values decode to "" in Go's map[string]string */
	return !yv_is_null(val) && yv_node_string(v, val, ret) < 0 ? -1 : 0;
}

int yv_string_map(yv *v, struct fy_node *map, const char *key, struct k8s_map *ret)
{
	return kv_map(v, map, key, string_value, ret);
}

int yv_string_list(yv *v, struct fy_node *map, const char *key, size_t *ret_n, const char ***ret)
{
	FIELD_BEGIN(false);
	if (!yv_expect_seq(v, n)) {
		result = -1;
	} else {
		size_t count = (size_t)fy_node_sequence_item_count(n), i = 0;
		const char **list = yv_calloc(v, count, sizeof(*list));
		void *it = NULL;
		struct fy_node *e;

		if (!list)
			result = -1;
		while (list && (e = fy_node_sequence_iterate(n, &it))) {
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
	char *c = ctl_arena_strndup(v->arena, s, len);
	if (!c)
		v->oom = true;
	return c;
}

static int quantity_value(yv *v, const char *name, struct fy_node *k, struct fy_node *val, const char **ret)
{
	const char *q, *raw;
	enum scalar_kind sk;
	size_t len;
	int64_t x;
	pp_err err;

	if (!val || yv_is_null(val)) {
		yv_error(v, val ? val : k, "missing quantity");
		return -1;
	}
	if ((raw = scalar(v, val, &len, &sk, "a quantity")) == NULL)
		return -1;
	if (sk == SK_BOOL) {
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

int yv_rlist(yv *v, struct fy_node *map, const char *key, k8s_rlist *ret)
{
	return kv_map(v, map, key, quantity_value, ret);
}
