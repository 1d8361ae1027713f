/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

/*
 * A small JSON writer for status.json: appends to a growable buffer with a hard cap, so a
 * pathological state can never make the daemon allocate without bound. Errors are sticky
 * (checked once at the end with jb_error).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct jsonbuf {
	char *buf;
	size_t len, cap, max;
	int error;   /* first -errno, sticky */
	bool comma;  /* a value precedes in the current container */
} jsonbuf;

void jb_init(jsonbuf *j, size_t max);
void jb_free(jsonbuf *j);
int jb_error(const jsonbuf *j);

void jb_begin_object(jsonbuf *j);
void jb_end_object(jsonbuf *j);
void jb_begin_array(jsonbuf *j);
void jb_end_array(jsonbuf *j);
/* Object member key; the value call follows. */
void jb_key(jsonbuf *j, const char *key);
void jb_string(jsonbuf *j, const char *s); /* NULL → null */
void jb_int(jsonbuf *j, int64_t v);
void jb_uint(jsonbuf *j, uint64_t v);
void jb_bool(jsonbuf *j, bool v);
void jb_null(jsonbuf *j);

/* s as a JSON string, quoted and escaped, written to f (for output that streams rather than buffers). */
void json_string(FILE *f, const char *s);
