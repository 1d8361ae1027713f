/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The same failure again and again (a Lease the Role does not allow, a write the API server
 * refuses for every pod alike): its first line is written, then at most one line a minute sums up
 * the repeats, as the lists' and watches' retries are told (controller/watch). A different failure,
 * or a success, starts over.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REPEAT_EVERY_USEC (60 * UINT64_C(1000000))

typedef struct repeat {
	char key[160];
	bool active;
	uint64_t told_usec; /* when its last line was written */
	unsigned untold;    /* repeats since */
} repeat;

/* A failure identified by key at now_usec (monotonic): false when its line is not to be written;
 * true with suffix[] to end it with ("" for a first line; the count of repeats otherwise). */
bool repeat_tell(repeat *r, const char *key, uint64_t now_usec, char *suffix, size_t size);
/* It went well: the repeats not told yet, and forget the failure. */
unsigned repeat_end(repeat *r);
