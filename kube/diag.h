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

#include <stdbool.h>
#include <stddef.h>
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
	/* no FILE:LINE: prefix: the input is a stream (an API watch) where lines mean nothing, and the
	 * message names the object (KIND/NS/NAME: field: what) */
	bool bare;
	/* the input as a whole cannot be read as a cluster (empty, a List without kind, a YAML List
	 * cut short): a usage error (status 2), not a problem inside a cluster */
	bool unusable;
	/* diag_open_buffer's */
	char *buf;
	size_t size;
} diag;

void diag_init(diag *d, FILE *out);
/* "... and N more problems (not shown)" when messages were held back; then counts afresh. */
void diag_flush(diag *d);

/*
 * For programs that log rather than print: messages go into buf (bounded; what does not fit is
 * cut) until diag_take_line() hands them over. Returns 0 or -ENOMEM. diag_close_buffer() after.
 */
int diag_open_buffer(diag *d, char *buf, size_t size);
/* The messages since the last call as one line (newlines become ";"), "" when none; the buffer
 * and the counts start afresh. */
const char *diag_take_line(diag *d);
void diag_close_buffer(diag *d);
/* Several message lines as one journal line: trailing blanks cut, inner newlines become ';'. */
void diag_one_line(char *s);

/* object may be NULL; loc may be NULL. */
__attribute__((format(printf, 4, 5)))
void diag_error(diag *d, const struct diag_loc *loc, const char *object, const char *fmt, ...);
__attribute__((format(printf, 4, 5)))
void diag_warn(diag *d, const struct diag_loc *loc, const char *object, const char *fmt, ...);

#endif
