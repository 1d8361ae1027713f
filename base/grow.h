/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Growing an array as elements are appended: capacity doubles (from 16, or from the first
 * capacity given), so n appends cost O(n) copies. The one helper for agent/, controller/, kube/
 * and cri/. lib/ keeps its own pp__grow: libpreempt depends on libc alone and ships on its own
 * (a .so and a .a with a pkg-config file), so it must not link this layer.
 */

#include <stddef.h>

/*
 * Makes *array hold at least need elements of elem_size bytes. 0 when it does (already, or after
 * a realloc: *array and *capacity updated), -ENOMEM when the allocation fails or need * elem_size
 * does not fit in a size_t (then *array and *capacity are as they were: the caller still owns
 * and frees *array). grow_array_slow is their out-of-line half: call grow_array or
 * grow_array_from, which have checked that need > *capacity before they call it.
 */
int grow_array_slow(void **array, size_t *capacity, size_t need, size_t elem_size, size_t first);
/* Inline, so that an append with room left costs one comparison, not a call: the decoders grow
 * their buffers a byte or an element at a time. */
static inline int grow_array(void **array, size_t *capacity, size_t need, size_t elem_size)
{
	return need <= *capacity ? 0 : grow_array_slow(array, capacity, need, elem_size, 16);
}
/* The same, the first allocation first elements (or need when more): where a typical size is
 * known (a pod list, a 4 KiB answer), the small steps are skipped. */
static inline int grow_array_from(void **array, size_t *capacity, size_t need, size_t elem_size, size_t first)
{
	return need <= *capacity ? 0 : grow_array_slow(array, capacity, need, elem_size, first);
}

/* The same for a typed pointer: GROW_ARRAY(&pods, &n_alloc, n + 1). */
#define GROW_ARRAY(array_ptr, capacity_ptr, need)                                                  \
	grow_array((void **)(array_ptr), (capacity_ptr), (need), sizeof(**(array_ptr)))
#define GROW_ARRAY_FROM(array_ptr, capacity_ptr, need, first)                                      \
	grow_array_from((void **)(array_ptr), (capacity_ptr), (need), sizeof(**(array_ptr)), (first))
