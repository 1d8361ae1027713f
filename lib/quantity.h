/* SPDX-License-Identifier: MIT */
/* resource.Quantity's text, parsed exactly (quantity.c). Nothing here is exported. */
#ifndef PP_QUANTITY_H
#define PP_QUANTITY_H

#include "preempt.h"

/* Exact quantity in 10^-9 units (rounded up away from zero, as the API server does). */
int pp__quantity_parse_nano(const char *s, __int128 *ret, pp_err *err);

#endif
