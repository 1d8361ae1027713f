/* SPDX-License-Identifier: MIT */
#include "jsonbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jb_init(jsonbuf *j, size_t max)
{
	*j = (jsonbuf){ .max = max };
}

void jb_free(jsonbuf *j)
{
	free(j->buf);
	*j = (jsonbuf){ 0 };
}

int jb_error(const jsonbuf *j)
{
	return j->error;
}

static void put(jsonbuf *j, const char *s, size_t n)
{
	if (j->error)
		return;
	if (j->len + n + 1 > j->cap) {
		size_t cap = j->cap ? j->cap : 1024;
		while (cap < j->len + n + 1)
			cap *= 2;
		if (cap > j->max) {
			if (j->len + n + 1 > j->max) {
				j->error = -E2BIG;
				return;
			}
			cap = j->max;
		}
		char *b = realloc(j->buf, cap);
		if (!b) {
			j->error = -ENOMEM;
			return;
		}
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void puts_(jsonbuf *j, const char *s)
{
	put(j, s, strlen(s));
}

static void sep(jsonbuf *j)
{
	if (j->comma)
		put(j, ",", 1);
	j->comma = true;
}

void jb_begin_object(jsonbuf *j)
{
	sep(j);
	put(j, "{", 1);
	j->comma = false;
}

void jb_end_object(jsonbuf *j)
{
	put(j, "}", 1);
	j->comma = true;
}

void jb_begin_array(jsonbuf *j)
{
	sep(j);
	put(j, "[", 1);
	j->comma = false;
}

void jb_end_array(jsonbuf *j)
{
	put(j, "]", 1);
	j->comma = true;
}

static void quoted(jsonbuf *j, const char *s)
{
	put(j, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		switch (*p) {
		case '"':  puts_(j, "\\\""); break;
		case '\\': puts_(j, "\\\\"); break;
		case '\n': puts_(j, "\\n"); break;
		case '\t': puts_(j, "\\t"); break;
		case '\r': puts_(j, "\\r"); break;
		default:
			if (*p < 0x20) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				puts_(j, esc);
			} else
				put(j, (const char *)p, 1);
		}
	}
	put(j, "\"", 1);
}

void jb_key(jsonbuf *j, const char *key)
{
	sep(j);
	quoted(j, key);
	put(j, ":", 1);
	j->comma = false;
}

void jb_string(jsonbuf *j, const char *s)
{
	sep(j);
	if (s)
		quoted(j, s);
	else
		puts_(j, "null");
}

void jb_int(jsonbuf *j, int64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRId64, v);
	sep(j);
	puts_(j, b);
}

void jb_uint(jsonbuf *j, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRIu64, v);
	sep(j);
	puts_(j, b);
}

void jb_bool(jsonbuf *j, bool v)
{
	sep(j);
	puts_(j, v ? "true" : "false");
}

void jb_null(jsonbuf *j)
{
	sep(j);
	puts_(j, "null");
}

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}
