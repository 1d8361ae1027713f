/* SPDX-License-Identifier: MIT */
/*
 * JSON through yajl's SAX parser: every callback becomes a builder event with its source line.
 * yajl reports the offset it reached in the chunk it is parsing; a cursor counts the newlines up
 * to it, so lines cost one pass over the input in all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "kparse.h"

#define ONES UINT64_C(0x0101010101010101)
#define LOW7 UINT64_C(0x7f7f7f7f7f7f7f7f)

/* Tokens are a few bytes apart: 8 bytes a step beats a memchr call (or a byte loop) per token. */
static inline uint64_t count_newlines(const unsigned char *p, size_t n)
{
	uint64_t count = 0, x;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&x, p + i, 8);
		x ^= ONES * '\n';
		count += flagged_bytes(~(((x & LOW7) + LOW7) | x | LOW7));
	}
	for (; i < n; i++)
		count += p[i] == '\n';
	return count;
}

/* Line of the byte yajl has just consumed. */
static uint32_t line_now(kparse *s)
{
	size_t off = yajl_get_bytes_consumed(s->yajl);

	if (off > s->chunk_len)
		off = s->chunk_len;
	if (off > 0)
		off--; /* the token's last byte, not the one after it */
	if (off > s->cur_off) {
		s->cur_line += count_newlines(s->chunk + s->cur_off, off - s->cur_off);
		s->cur_off = off;
	}
	return s->cur_line > UINT32_MAX ? 0 : (uint32_t)s->cur_line;
}

static int on_null(void *ctx)
{
	kparse *s = ctx;
	return kb_scalar(s, KVAL_NULL, KVAL_F_PLAIN, "null", 4, line_now(s), NULL, 0) == 0;
}

static int on_bool(void *ctx, int b)
{
	kparse *s = ctx;
	return kb_scalar(s, KVAL_BOOL, KVAL_F_PLAIN, b ? "true" : "false", b ? 4 : 5, line_now(s), NULL, 0) == 0;
}

static int on_number(void *ctx, const char *num, size_t len)
{
	kparse *s = ctx;
	kval_type t = memchr(num, '.', len) || memchr(num, 'e', len) || memchr(num, 'E', len) ? KVAL_FLOAT : KVAL_INT;
	return kb_scalar(s, t, KVAL_F_PLAIN, num, len, line_now(s), NULL, 0) == 0;
}

static int on_string(void *ctx, const unsigned char *str, size_t len)
{
	kparse *s = ctx;
	return kb_scalar(s, KVAL_STRING, 0, (const char *)str, len, line_now(s), NULL, 0) == 0;
}

static int on_start_map(void *ctx)
{
	kparse *s = ctx;
	return kb_begin(s, KVAL_MAP, line_now(s), NULL, 0) == 0;
}

static int on_start_array(void *ctx)
{
	kparse *s = ctx;
	return kb_begin(s, KVAL_SEQ, line_now(s), NULL, 0) == 0;
}

static int on_end(void *ctx)
{
	return kb_end(ctx) == 0;
}

static const yajl_callbacks callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_bool,
	.yajl_number = on_number,
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_string,
	.yajl_end_map = on_end,
	.yajl_start_array = on_start_array,
	.yajl_end_array = on_end,
};

int kjson_new(kparse *s)
{
	s->yajl = yajl_alloc(&callbacks, NULL, s);
	if (!s->yajl)
		return -ENOMEM;
	/* several top-level values: watch streams, concatenated dumps */
	yajl_config(s->yajl, yajl_allow_multiple_values, 1);
	/* the gate checked UTF-8 already */
	yajl_config(s->yajl, yajl_dont_validate_strings, 1);
	s->cur_line = 1;
	return 0;
}

void kjson_free(kparse *s)
{
	if (s->yajl)
		yajl_free(s->yajl);
	s->yajl = NULL;
}

bool kjson_may_fall_back(const kparse *s)
{
	/* nothing delivered and nothing said: the input may be flow YAML ({kind: Pod}) */
	return s->keeping && s->nitems == 0 && s->d->nerrors + s->d->nwarnings == s->diag_mark;
}

/* yajl's message without its "parse error: " prefix, trailing blanks and period. */
static void syntax_error(kparse *s, uint32_t line)
{
	unsigned char *e = yajl_get_error(s->yajl, 0, NULL, 0);
	const char *m = e ? (const char *)e : "invalid JSON";
	size_t n;

	if (!strncmp(m, "parse error: ", 13))
		m += 13;
	else if (!strncmp(m, "lexical error: ", 15))
		m += 15;
	n = strlen(m);
	while (n && (m[n - 1] == '\n' || m[n - 1] == ' ' || m[n - 1] == '.'))
		n--;
	if (kjson_may_fall_back(s))
		goto out; /* the YAML reader will have its say */
	diag_error(s->d, &(struct diag_loc){ .file = s->name, .line = (int)line }, NULL, "syntax error: %.*s",
	           (int)n, m);
out:
	if (e)
		yajl_free_error(s->yajl, e);
}

int kjson_feed(kparse *s, const unsigned char *buf, size_t len)
{
	yajl_status st;

	s->chunk = buf;
	s->chunk_len = len;
	s->cur_off = 0;
	st = yajl_parse(s->yajl, buf, len);
	if (st == yajl_status_client_canceled) {
		s->chunk = NULL;
		return s->err ? s->err : -EINVAL;
	}
	if (st == yajl_status_error) {
		/* yajl stops at the end of the last good token: the error is at the next non-blank byte
		 * (whatever the chunking) */
		size_t off = yajl_get_bytes_consumed(s->yajl);
		if (off > len)
			off = len;
		if (off > s->cur_off) {
			s->cur_line += count_newlines(buf + s->cur_off, off - s->cur_off);
			s->cur_off = off;
		}
		for (; off < len && (buf[off] == ' ' || buf[off] == '\t' || buf[off] == '\r' || buf[off] == '\n'); off++)
			s->cur_line += buf[off] == '\n';
		syntax_error(s, s->cur_line > UINT32_MAX ? 0 : (uint32_t)s->cur_line);
		s->chunk = NULL;
		return s->err = -EINVAL;
	}
	/* the rest of the chunk's lines, so that the next chunk starts at the right one */
	if (s->cur_off < len) {
		s->cur_line += count_newlines(buf + s->cur_off, len - s->cur_off);
		s->cur_off = len;
	}
	s->last_line = s->cur_line;
	if (len && buf[len - 1] == '\n' && s->last_line > 1)
		s->last_line--;
	s->chunk = NULL;
	return s->err;
}

int kjson_end(kparse *s)
{
	yajl_status st;

	if (!s->yajl)
		return 0;
	s->chunk = (const unsigned char *)"";
	s->chunk_len = 0;
	s->cur_off = 0;
	st = yajl_complete_parse(s->yajl);
	s->chunk = NULL;
	if (st == yajl_status_client_canceled)
		return s->err ? s->err : -EINVAL;
	if (st == yajl_status_error) {
		syntax_error(s, s->last_line > UINT32_MAX ? 0 : (uint32_t)s->last_line);
		return s->err = -EINVAL;
	}
	return s->err;
}
