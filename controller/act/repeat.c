/* SPDX-License-Identifier: MIT */
#include "repeat.h"

#include <stdio.h>
#include <string.h>

bool repeat_tell(repeat *r, const char *key, uint64_t now_usec, char *suffix, size_t size)
{
	if (!r->active || strncmp(r->key, key, sizeof(r->key) - 1) != 0) {
		snprintf(r->key, sizeof(r->key), "%s", key);
		r->active = true;
		r->told_usec = now_usec;
		r->untold = 0;
		snprintf(suffix, size, "; the same again is told at most once a minute");
		return true;
	}
	if (now_usec - r->told_usec < REPEAT_EVERY_USEC) {
		r->untold++;
		return false;
	}
	snprintf(suffix, size, " (%u more like it in the last minute)", r->untold);
	r->told_usec = now_usec;
	r->untold = 0;
	return true;
}

unsigned repeat_end(repeat *r)
{
	unsigned n = r->active ? r->untold : 0;

	r->active = false;
	r->untold = 0;
	return n;
}
