/* SPDX-License-Identifier: MIT */
#include "backoff.h"

#include <stdlib.h>

#define BACKOFF_MIN_USEC 500000ULL

uint64_t backoff_next(uint64_t *cur, uint64_t max)
{
	*cur = *cur ? *cur * 2 : BACKOFF_MIN_USEC;
	if (*cur > max)
		*cur = max;
	return *cur / 2 + (uint64_t)random() % (*cur / 2 + 1);
}
