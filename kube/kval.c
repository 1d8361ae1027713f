/* SPDX-License-Identifier: MIT */
#include "kval.h"

#include <string.h>

const kval *kval_get(const kval *map, const char *key)
{
	size_t len;

	if (!map || map->type != KVAL_MAP)
		return NULL;
	len = strlen(key);
	for (uint32_t i = 0; i < map->n; i++) {
		const kval *k = map->u.v[2 * i];
		if (k->type < KVAL_MAP && k->n == len && memcmp(k->u.s, key, len) == 0)
			return map->u.v[2 * i + 1];
	}
	return NULL;
}

const char *kval_kind_name(const kval *v)
{
	switch (kval_type_of(v)) {
	case KVAL_MAP: return "an object";
	case KVAL_SEQ: return "a list";
	case KVAL_NULL: return "null";
	case KVAL_BOOL: return "a boolean";
	case KVAL_INT:
	case KVAL_FLOAT: return "a number";
	default: return "a string";
	}
}
