/* SPDX-License-Identifier: MIT */
/*
 * grow_array (base/grow.c): what every hand-grown array of the daemons now relies on. An append
 * loop must keep its elements, and a size that does not fit in a size_t must be refused with
 * -ENOMEM and the array left as it was (a wrapped multiplication would hand back a buffer far
 * smaller than asked, and the caller would write past it).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "grow.h"

static void test_appends_keep_their_elements(void **state)
{
	int *a = NULL;
	size_t cap = 0;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(GROW_ARRAY(&a, &cap, (size_t)i + 1), 0);
		assert_true(cap >= (size_t)i + 1);
		a[i] = i;
	}
	for (int i = 0; i < 1000; i++)
		assert_int_equal(a[i], i);
	/* doubling from 16: 1000 appends end in 1024 slots, not one realloc per element */
	assert_int_equal(cap, 1024);
	free(a);
}

static void test_enough_room_changes_nothing(void **state)
{
	int *a = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(GROW_ARRAY(&a, &cap, 3), 0);
	assert_int_equal(cap, 16);
	before = a;
	assert_int_equal(GROW_ARRAY(&a, &cap, 16), 0);
	assert_ptr_equal(a, before);
	assert_int_equal(cap, 16);
	free(a);
}

static void test_first_capacity(void **state)
{
	char *a = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(GROW_ARRAY_FROM(&a, &cap, 1, 4096), 0);
	assert_int_equal(cap, 4096);
	assert_int_equal(GROW_ARRAY_FROM(&a, &cap, 4097, 4096), 0);
	assert_int_equal(cap, 8192);
	free(a);
	a = NULL;
	cap = 0;
	/* more than the first capacity at once: the first allocation holds it */
	assert_int_equal(GROW_ARRAY_FROM(&a, &cap, 100, 64), 0);
	assert_int_equal(cap, 128);
	free(a);
}

static void test_overflowing_size_is_refused(void **state)
{
	uint64_t *a = NULL, *before;
	size_t cap = 0;

	(void)state;
	assert_int_equal(GROW_ARRAY(&a, &cap, 2), 0);
	a[0] = 7;
	before = a;
	/* need * 8 wraps around: must not allocate (need * 8) mod 2^64 bytes */
	assert_int_equal(GROW_ARRAY(&a, &cap, SIZE_MAX / sizeof(*a) + 2), -ENOMEM);
	assert_ptr_equal(a, before);
	assert_int_equal(cap, 16);
	assert_int_equal(a[0], 7);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_appends_keep_their_elements),
		cmocka_unit_test(test_enough_room_changes_nothing),
		cmocka_unit_test(test_first_capacity),
		cmocka_unit_test(test_overflowing_size_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
