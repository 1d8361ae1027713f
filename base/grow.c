/* SPDX-License-Identifier: MIT */
#include "grow.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int grow_array_slow(void **array, size_t *capacity, size_t need, size_t elem_size, size_t first)
{
	size_t n = *capacity ? *capacity : first ? first : 1;
	void *p;

	/* grow_array and grow_array_from call this only once the array has proved too small */
	assert(need > *capacity);
	if (elem_size == 0 || need > SIZE_MAX / elem_size)
		return -ENOMEM;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : n * 2;
	/* doubling may overshoot what fits: settle for exactly what was asked */
	if (n > SIZE_MAX / elem_size)
		n = need;
	p = realloc(*array, n * elem_size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*capacity = n;
	return 0;
}
