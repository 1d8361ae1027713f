/* SPDX-License-Identifier: MIT */
/*
 * Input files as the API server would accept them, checked before libfyaml sees a byte: read whole
 * into memory with a size bound, and valid UTF-8 only. libfyaml 0.7.12 loops forever scanning a
 * directive line ("%...") that holds an invalid UTF-8 sequence (tests/fuzz/FINDINGS.md,
 * k8s-libfyaml-hang); Kubernetes rejects such bytes anyway (JSON and YAML are UTF-8 text).
 */
#ifndef CTL_K8S_INPUT_H
#define CTL_K8S_INPUT_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"

/* Far above any real cluster dump (5000 nodes and 20,000 pods in kubectl's JSON is ~50 MiB). */
#define K8S_INPUT_MAX ((size_t)256 << 20)

/*
 * Reads fp to its end into a malloc'd, NUL-terminated buffer (*out, *len without the NUL).
 * More than max bytes: -EFBIG. Errors are reported through d, naming name.
 * Returns 0, -EFBIG, -ENOMEM or the read error.
 */
int k8s_input_read(FILE *fp, const char *name, size_t max, char **out, size_t *len, diag *d);

/*
 * 0 when s[0..len) is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points
 * above U+10FFFF); else -EILSEQ, reported through d as name:line:column (column in characters).
 */
int k8s_input_check_utf8(const char *name, const char *s, size_t len, diag *d);

#endif
