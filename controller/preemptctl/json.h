/* SPDX-License-Identifier: MIT */
/* The small JSON output preemptctl needs: one object per decision, strings escaped per RFC 8259. */
#ifndef CTL_JSON_H
#define CTL_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * Writes s as a JSON string literal (quotes included). Control characters, '"' and '\\' are
 * escaped; bytes that are not valid UTF-8 are replaced by U+FFFD so that the output always
 * parses. Returns 0, or -EIO when writing fails.
 */
int json_write_string(FILE *f, const char *s);
/* The same over len bytes (s may contain NUL bytes, written as \u0000). */
int json_write_string_n(FILE *f, const char *s, size_t len);

#endif
