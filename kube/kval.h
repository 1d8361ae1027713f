/* SPDX-License-Identifier: MIT */
/*
 * One JSON or YAML value as a small read-only tree, with the source line of every node: what the
 * streaming readers (kstream.h) hand out, one Kubernetes object at a time. The tree lives in an
 * arena owned by the stream and is valid only during the item callback that receives it.
 *
 * Scalars keep their source text (NUL-terminated; numbers as written, so that "1.5e3" stays
 * "1.5e3" for a quantity) and a type resolved as Kubernetes' decoders do: JSON by its grammar,
 * YAML plain scalars by the YAML 1.2 core schema (`1` is an integer, `true` a boolean, `~` and
 * an empty value null), quoted and block scalars are strings. Mapping keys are values too (YAML
 * allows non-string keys; decoders reject them where Kubernetes does). Duplicate keys never
 * reach a tree (the reader rejects the object), YAML aliases are resolved (shared subtrees) and
 * merge keys ("<<: *base") applied.
 */
#ifndef KUBE_KVAL_H
#define KUBE_KVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum kval_type {
	KVAL_NULL,
	KVAL_BOOL,
	KVAL_INT,
	KVAL_FLOAT,
	KVAL_STRING,
	KVAL_MAP,
	KVAL_SEQ,
} kval_type;

#define KVAL_F_PLAIN 0x01 /* a YAML plain scalar (unquoted); JSON scalars other than strings */

typedef struct kval {
	uint8_t type;  /* kval_type */
	uint8_t flags; /* KVAL_F_* */
	uint32_t line; /* 1-based; a collection: the line of its first key/element (0: unknown) */
	uint32_t n;    /* scalar: text length; sequence: elements; mapping: pairs */
	union {
		const char *s;                /* scalar text, NUL-terminated */
		const struct kval *const *v;  /* seq: v[i]; map: v[2i] key, v[2i+1] value */
	} u;
} kval;

/* Every accessor takes NULL as "absent". */
static inline kval_type kval_type_of(const kval *v) { return v ? (kval_type)v->type : KVAL_NULL; }
static inline unsigned kval_line(const kval *v) { return v ? v->line : 0; }
static inline bool kval_is_scalar(const kval *v) { return v && v->type < KVAL_MAP; }
/* Scalar text ("" for NULL input; NULL for collections). May contain NULs: see kval_len. */
static inline const char *kval_str(const kval *v) { return !v ? "" : v->type < KVAL_MAP ? v->u.s : NULL; }
static inline size_t kval_len(const kval *v) { return v && v->type < KVAL_MAP ? v->n : 0; }
/* Elements of a sequence, pairs of a mapping, 0 otherwise. */
static inline size_t kval_count(const kval *v) { return v && v->type >= KVAL_MAP ? v->n : 0; }
static inline const kval *kval_at(const kval *seq, size_t i)
{
	return seq && seq->type == KVAL_SEQ && i < seq->n ? seq->u.v[i] : NULL;
}
static inline const kval *kval_key_at(const kval *map, size_t i)
{
	return map && map->type == KVAL_MAP && i < map->n ? map->u.v[2 * i] : NULL;
}
static inline const kval *kval_val_at(const kval *map, size_t i)
{
	return map && map->type == KVAL_MAP && i < map->n ? map->u.v[2 * i + 1] : NULL;
}

/* The value of a string key of a mapping (NULL when absent or map is not a mapping); a null
 * value is returned as a KVAL_NULL node. Linear in the mapping's size. */
const kval *kval_get(const kval *map, const char *key);

/* A boolean scalar's value. */
static inline bool kval_bool(const kval *v) { return v && v->type == KVAL_BOOL && (v->u.s[0] == 't' || v->u.s[0] == 'T'); }

/* "an object", "a list", "a string", "a number", "a boolean", "null": for messages. */
const char *kval_kind_name(const kval *v);

#endif
