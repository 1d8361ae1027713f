/* SPDX-License-Identifier: MIT */
/*
 * Problems found in the input, printed as they are found and counted, so that `check` can
 * report every one of them and `preempt` can refuse to decide on a broken cluster.
 *
 *   FILE:LINE: OBJECT: FIELD: message          (errors; FILE:LINE:COLUMN: for byte-level ones)
 *   FILE:LINE: warning: OBJECT: message        (warnings)
 */
#ifndef KUBE_DIAG_H
#define KUBE_DIAG_H

#include <stdio.h>

struct diag_loc {
	const char *file; /* NULL: no location */
	int line;         /* 1-based; 0: unknown */
	int column;       /* 1-based, in characters; 0: unknown (printed only with a line) */
};

/* Messages printed at most: a hostile input (3 million empty objects) must not turn into hundreds
 * of megabytes of text. The rest are counted, and diag_flush() says how many. */
#define DIAG_SHOWN_MAX 100

typedef struct diag {
	FILE *out;
	unsigned nerrors, nwarnings;
	unsigned max_shown; /* 0: no limit */
	unsigned shown, hidden;
} diag;

void diag_init(diag *d, FILE *out);
/* "... and N more problems (not shown)" when messages were held back; then counts afresh. */
void diag_flush(diag *d);

/* object may be NULL; loc may be NULL. */
__attribute__((format(printf, 4, 5)))
void diag_error(diag *d, const struct diag_loc *loc, const char *object, const char *fmt, ...);
__attribute__((format(printf, 4, 5)))
void diag_warn(diag *d, const struct diag_loc *loc, const char *object, const char *fmt, ...);

#endif
