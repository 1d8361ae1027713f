/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The one JSON writer of this tree, on yajl's generator: evictd's status file, spool records,
 * in-flight and node-reclaim state and stdout reports (the jb_* calls), and kube/'s Kubernetes
 * request bodies (jsonw_gen_string, on a generator of their own). What yajl lacks is added here
 * once: a hard bound on the output's size, so a pathological state can never make a daemon
 * allocate without bound, and no document lost to a byte that is not UTF-8 (it becomes U+FFFD;
 * yajl alone refuses the string, and yajl's parser on the reading side refuses the document).
 *
 * Errors are sticky: the first -errno is kept, every later call does nothing, and jb_error says
 * it once at the end. -E2BIG when the bound would be passed, -ENOMEM, -EINVAL for a call out of
 * place (a value where a key is due). After an error buf is NULL and len 0: a partial document is
 * never offered as a complete one.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yajl/yajl_gen.h>

typedef struct jsonbuf {
	char *buf;   /* the text so far, NUL-terminated; owned by gen; NULL after an error */
	size_t len;
	size_t max;  /* the bound: len stays below it */
	int error;   /* first -errno, sticky */
	yajl_gen gen;
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

/* s as a JSON string (NULL as ""), quoted, escaped and repaired as above, written to f: for
 * output that streams rather than buffers. */
void json_string(FILE *f, const char *s);

/*
 * The string step both uses share, for a caller that drives its own generator g: s (NULL → null)
 * repaired to UTF-8 and appended, unless the output would then reach max bytes. Returns 0,
 * -E2BIG (nothing appended), -ENOMEM or -EINVAL (yajl refused the call in this state).
 */
int jsonw_gen_string(yajl_gen g, size_t max, const char *s);


/*
 * s (len bytes; NUL bytes are allowed and written as \u0000) as a JSON string literal written to
 * f, in ASCII-safe form for output a person or any script reads line by line: every control
 * character and DEL as a \u escape, U+2028 and U+2029 too (JSON allows them raw, but JavaScript
 * and tools built on it take them for line ends), each byte that starts no UTF-8 sequence as
 * \ufffd (the same bytes the repair above replaces). Returns 0, or -EIO when f has failed.
 */
int jsonw_fput_string_n(FILE *f, const char *s, size_t len);
/* The same for a NUL-terminated s (NULL as ""). */
int jsonw_fput_string(FILE *f, const char *s);
