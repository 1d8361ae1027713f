/* SPDX-License-Identifier: MIT */
/* Helpers shared by libpreempt's source files. Nothing here is exported. */
#ifndef PP_INTERNAL_H
#define PP_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "preempt.h"

#define PP_ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* Fills err (if given) and returns r, so that failures read "return pp_fail(err, -EINVAL, ...)". */
__attribute__((format(printf, 3, 4))) static inline int pp_fail(pp_err *err, int r, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return r;
}

/* Times and durations come from the caller (simulated clocks may sit anywhere in int64, options
 * may be INT64_MAX = "never"): deadlines saturate at the ends of the range instead of overflowing. */
static inline int64_t pp__sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline bool pp__has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* qsort()'s comparison for an array of C strings: strcmp order. */
static inline int pp__strptr_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#endif
