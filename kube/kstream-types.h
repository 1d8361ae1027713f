/* SPDX-License-Identifier: MIT */
/* The stream's input formats and bounds (kstream.h), apart so that the parse state below the
 * stream front (kparse.h) can use them without reaching up to the front. */
#ifndef KUBE_KSTREAM_TYPES_H
#define KUBE_KSTREAM_TYPES_H

#include <stddef.h>

typedef enum kstream_format {
	KSTREAM_AUTO,
	KSTREAM_JSON,
	KSTREAM_YAML,
} kstream_format;

/* Bounds (defaults; see kstream_set_limits). */
#define KSTREAM_DEPTH_MAX 64                    /* nesting of one top-level value */
#define KSTREAM_ITEM_MAX ((size_t)64 << 20)     /* bytes of one object's tree */
#define KSTREAM_TOTAL_MAX ((size_t)256 << 20)   /* input bytes; 0 = unbounded (watch streams) */
#define KSTREAM_ALIAS_NODES_MAX 100000          /* nodes added by YAML aliases in one object */

#endif
