/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the streaming reader (kube/kstream) on its own — JSON through yajl, YAML
 * through libfyaml's events, the byte gate, List splitting, duplicate and merge keys, aliases —
 * fed once whole and once in pieces whose size the first input byte picks.
 * Invariants: a documented return only; a failure says why (a message was printed); every item
 * is a well-formed tree (walked in full, with lines); and chunking changes nothing: the same
 * return, the same items, the same messages — except after a bad byte (invalid UTF-8, NUL, too
 * large): the gate checks each chunk before it is parsed, so whole input stops there at once,
 * while input in pieces lets out the items before it, or meets a syntax error first. And a JSON
 * syntax error's line may differ by the blank lines around the bad byte: yajl reports where it
 * stopped, which is sometimes the end of the last good token, sometimes past the bad byte, and the
 * reader sees only the chunk at hand (messages are compared with syntax error lines masked).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kstream.h"
#include "fuzz-common.h"

/* fuzz-links: kube */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
	unsigned long items, nodes;
	unsigned long long sum; /* of lines and lengths: two runs must agree */
};

static void walk(struct seen *s, const kval *v, int depth)
{
	FUZZ_ASSERT(v != NULL && depth <= KSTREAM_DEPTH_MAX + 1);
	s->nodes++;
	s->sum += kval_line(v) * 31u + kval_type_of(v);
	if (kval_is_scalar(v)) {
		FUZZ_ASSERT(kval_str(v) != NULL && kval_str(v)[kval_len(v)] == '\0');
		s->sum += kval_len(v);
		return;
	}
	for (size_t i = 0; i < kval_count(v); i++) {
		if (kval_type_of(v) == KVAL_MAP) {
			walk(s, kval_key_at(v, i), depth + 1);
			walk(s, kval_val_at(v, i), depth + 1);
		} else {
			walk(s, kval_at(v, i), depth + 1);
		}
	}
}

static int on_item(void *userdata, const kval *item)
{
	struct seen *s = userdata;
	s->items++;
	/* aliases share subtrees: the walk is bounded by the expansion budget */
	walk(s, item, 0);
	return 0;
}

static int run(const uint8_t *data, size_t size, size_t chunk, struct seen *seen, char **msg, size_t *msglen)
{
	FILE *out = open_memstream(msg, msglen);
	kstream *s = NULL;
	diag d;
	int r;

	FUZZ_ASSERT(out != NULL);
	diag_init(&d, out);
	r = kstream_new(&s, KSTREAM_AUTO, "fuzz", &d, on_item, seen);
	FUZZ_ASSERT(r == 0);
	for (size_t off = 0; r == 0 && off < size; off += chunk)
		r = kstream_feed(s, data + off, size - off < chunk ? size - off : chunk);
	if (r == 0)
		r = kstream_end(s);
	kstream_free(s);
	fclose(out);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -EILSEQ || r == -EFBIG || r == -ENOMEM, "kstream: %d", r);
	FUZZ_CHECK(r == 0 || r == -ENOMEM || *msglen > 0, "failed with %d, nothing printed", r);
	return r;
}

/* "NAME:LINE: syntax error: ..." -> "NAME:#: syntax error: ...", in place; returns the length. */
static size_t mask_syntax_lines(char *m, size_t len)
{
	char *out = m, *line = m, *end = m + len;

	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *stop = nl ? nl + 1 : end;
		char *colon = memchr(line, ':', (size_t)(stop - line));
		char *colon2 = colon ? memchr(colon + 1, ':', (size_t)(stop - colon - 1)) : NULL;
		if (colon2 && (size_t)(stop - colon2) > 15 && !memcmp(colon2, ": syntax error:", 15)) {
			size_t head = (size_t)(colon - line) + 1;
			memmove(out, line, head);
			out[head] = '#';
			out += head + 1;
			line = colon2;
		}
		size_t rest = (size_t)(stop - line);
		memmove(out, line, rest);
		out += rest;
		line = stop;
	}
	return (size_t)(out - m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen a = { 0 }, b = { 0 };
	char *ma = NULL, *mb = NULL;
	size_t la = 0, lb = 0;
	size_t chunk;
	int ra, rb;

	if (size < 1)
		return 0;
	chunk = (size_t)data[0] % 64 + 1;
	data++;
	size--;
	ra = run(data, size, size ? size : 1, &a, &ma, &la);
	rb = run(data, size, chunk, &b, &mb, &lb);
	if (ra == -EILSEQ || ra == -EFBIG) {
		FUZZ_CHECK(rb != 0, "whole: %d, in %zu-byte chunks: accepted", ra, chunk);
	} else if (ra != -ENOMEM && rb != -ENOMEM) {
		FUZZ_CHECK(ra == rb, "whole: %d, in %zu-byte chunks: %d", ra, chunk, rb);
		FUZZ_CHECK((a.items == b.items && a.nodes == b.nodes && a.sum == b.sum),
		           "whole: %lu items %lu nodes, in %zu-byte chunks: %lu items %lu nodes (or other lines)",
		           a.items, a.nodes, chunk, b.items, b.nodes);
		size_t ka = mask_syntax_lines(ma, la), kb = mask_syntax_lines(mb, lb);
		FUZZ_CHECK(ka == kb && (ka == 0 || memcmp(ma, mb, ka) == 0), "messages differ:\n%.*s---\n%.*s", (int)ka,
		           ma, (int)kb, mb);
	}
	free(ma);
	free(mb);
	return 0;
}
