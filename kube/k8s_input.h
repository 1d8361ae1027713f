/* SPDX-License-Identifier: MIT */
/*
 * The byte gate every input passes before a parser sees it, chunk by chunk: well-formed UTF-8
 * (RFC 3629: no overlong forms, surrogates or code points above U+10FFFF), no NUL byte, and a
 * total size bound. Kubernetes rejects such bytes anyway (JSON and YAML are UTF-8 text), and the
 * parsers need the guarantee: libfyaml 0.7.12 loops forever scanning a directive line ("%...")
 * that holds an invalid UTF-8 sequence (tests/fuzz/FINDINGS.md, k8s-libfyaml-hang), and a NUL
 * used to end a document silently. Problems are reported as NAME:LINE:COLUMN (column in
 * characters). The scan is 8 bytes at a time on ASCII, so it costs little next to parsing.
 */
#ifndef KUBE_K8S_INPUT_H
#define KUBE_K8S_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"

/* Far above any real cluster dump (5000 nodes and 20,000 pods in kubectl's JSON is ~50 MiB). */
#define K8S_INPUT_MAX ((size_t)256 << 20)

typedef struct k8s_gate {
	const char *name;
	diag *d;
	size_t max;        /* 0: unbounded */
	uint64_t total;    /* bytes seen */
	uint64_t line;     /* 1-based line of the next byte */
	uint64_t col;      /* characters already on that line */
	unsigned char carry[4]; /* a UTF-8 sequence cut by the end of a chunk */
	unsigned ncarry, need;
	uint64_t carry_line, carry_col;
	int err;
} k8s_gate;

void k8s_gate_init(k8s_gate *g, const char *name, size_t max, diag *d);
/* 0, or -EILSEQ (bad byte), -EFBIG (too large): reported once; the gate then stays failed. */
int k8s_gate_feed(k8s_gate *g, const void *buf, size_t len);
/* End of input: a sequence cut by the end is an error. */
int k8s_gate_end(k8s_gate *g);

/* How many bytes of x have their high bit set, for words whose bytes are 0x80 or 0: a multiply
 * instead of popcount, which without -mpopcnt is a libgcc call (6% of a cluster load). */
static inline uint64_t flagged_bytes(uint64_t x)
{
	return ((x >> 7) * UINT64_C(0x0101010101010101)) >> 56;
}

/* Whole-buffer check (tests, strings): k8s_gate over s[0..len). */
int k8s_input_check_utf8(const char *name, const char *s, size_t len, diag *d);

#endif
