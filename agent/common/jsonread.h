/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Reading evictd's own records back strictly (victim records, node-level reclaim's state): a
 * bounded read of a regular file of ours, then typed members of a yajl tree. Each getter is false
 * when the member is missing or of another type, and then leaves its output as it was.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

/*
 * Reads name (relative to dfd; not a symlink, a regular file owned by this user) into buf, at most
 * size - 1 bytes, NUL-terminated. Returns NULL, or what is wrong (a static string).
 */
const char *json_read_own_file(int dfd, const char *name, char *buf, size_t size);

yajl_val json_member(yajl_val obj, const char *key);
/* A string shorter than size, copied. */
bool json_get_str(yajl_val obj, const char *key, char *buf, size_t size);
/* An integer of at least min. */
bool json_get_int(yajl_val obj, const char *key, long long min, long long *ret);
/* An integer, or null (*known = false, *ret = 0). */
bool json_get_int_or_null(yajl_val obj, const char *key, int64_t *ret, bool *known);
bool json_get_bool(yajl_val obj, const char *key, bool *ret);
