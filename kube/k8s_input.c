/* SPDX-License-Identifier: MIT */
#include "k8s_input.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>

void k8s_gate_init(k8s_gate *g, const char *name, size_t max, diag *d)
{
	memset(g, 0, sizeof(*g));
	g->name = name;
	g->d = d;
	g->max = max;
	g->line = 1;
}

static int report_bad_byte(k8s_gate *g, uint64_t line, uint64_t col, unsigned char byte)
{
	struct diag_loc loc = { .file = g->name,
	                        .line = line > INT_MAX ? 0 : (int)line,
	                        .column = col + 1 > INT_MAX ? 0 : (int)(col + 1) };
	if (byte == 0)
		diag_error(g->d, &loc, NULL, "NUL byte: Kubernetes objects are UTF-8 text without NUL bytes");
	else
		diag_error(g->d, &loc, NULL, "invalid UTF-8 (byte 0x%02x): Kubernetes objects are UTF-8 text", byte);
	return g->err = -EILSEQ;
}

/* Length of the UTF-8 sequence starting with lead byte c (2..4), 0 if c cannot start one. */
static unsigned seq_len(unsigned char c)
{
	return c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
}

/* Whether byte i (1..) of a sequence led by c is allowed (RFC 3629 table 3-7). */
static bool cont_ok(unsigned char c, unsigned i, unsigned char b)
{
	unsigned char lo = 0x80, hi = 0xbf;
	if (i == 1) {
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
		else if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	}
	return b >= lo && b <= hi;
}

#define ONES UINT64_C(0x0101010101010101)
#define HIGH UINT64_C(0x8080808080808080)
#define LOW7 UINT64_C(0x7f7f7f7f7f7f7f7f)

/* 0x80 in every byte of x that is zero, exactly (no false positives). */
static inline uint64_t zero_bytes(uint64_t x)
{
	return ~(((x & LOW7) + LOW7) | x | LOW7);
}

int k8s_gate_feed(k8s_gate *g, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i = 0;

	if (g->err)
		return g->err;
	g->total += len;
	if (g->max && g->total > g->max) {
		diag_error(g->d, NULL, NULL, "%s: larger than %zu bytes, refusing to read it", g->name, g->max);
		return g->err = -EFBIG;
	}

	/* finish a sequence the previous chunk cut */
	while (g->ncarry && i < len) {
		if (!cont_ok(g->carry[0], g->ncarry, p[i]))
			return report_bad_byte(g, g->carry_line, g->carry_col, g->carry[0]);
		g->carry[g->ncarry++] = p[i++];
		if (g->ncarry == g->need)
			g->ncarry = 0;
	}

	while (i < len) {
		if (i + 8 <= len) {
			uint64_t x, special, nl;
			memcpy(&x, p + i, 8);
			special = (x & HIGH) | zero_bytes(x);
			if (!special) {
				nl = zero_bytes(x ^ (ONES * '\n'));
				if (nl) {
					g->line += flagged_bytes(nl);
					/* little endian: the last newline is the highest flagged byte */
					g->col = 7 - (unsigned)(63 - __builtin_clzll(nl)) / 8;
				} else {
					g->col += 8;
				}
				i += 8;
				continue;
			}
		}
		unsigned char c = p[i];
		if (c == '\n') {
			g->line++;
			g->col = 0;
			i++;
			continue;
		}
		if (c && c < 0x80) {
			g->col++;
			i++;
			continue;
		}
		if (c == 0)
			return report_bad_byte(g, g->line, g->col, 0);
		unsigned n = seq_len(c), k;
		if (!n)
			return report_bad_byte(g, g->line, g->col, c);
		for (k = 1; k < n && i + k < len; k++)
			if (!cont_ok(c, k, p[i + k]))
				return report_bad_byte(g, g->line, g->col, c);
		if (k < n) {
			/* cut by the end of the chunk: the next one completes it */
			g->carry_line = g->line;
			g->carry_col = g->col;
			memcpy(g->carry, p + i, k);
			g->ncarry = k;
			g->need = n;
			g->col++;
			return 0;
		}
		g->col++;
		i += n;
	}
	return 0;
}

int k8s_gate_end(k8s_gate *g)
{
	if (g->err)
		return g->err;
	if (g->ncarry)
		return report_bad_byte(g, g->carry_line, g->carry_col, g->carry[0]);
	return 0;
}

int k8s_input_check_utf8(const char *name, const char *s, size_t len, diag *d)
{
	k8s_gate g;
	int r;

	k8s_gate_init(&g, name, 0, d);
	r = k8s_gate_feed(&g, s, len);
	if (r == 0)
		r = k8s_gate_end(&g);
	return r;
}
