/* SPDX-License-Identifier: MIT */
/*
 * Typed access to kval trees (kval.h) with Kubernetes' JSON decoding rules: a string field takes a
 * quoted or plain non-numeric scalar, an integer field a plain integer, null counts as absent.
 * Each decoding step appends to a field path ("spec.containers[0].resources.requests.cpu") so
 * that every error names the object and the field.
 */
#ifndef KUBE_YAMLVAL_H
#define KUBE_YAMLVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "karena.h"
#include "diag.h"
#include "k8s.h"
#include "kval.h"

#define YV_PATH_MAX 512
#define YV_OBJECT_MAX K8S_LABEL_MAX

typedef struct yv {
	karena *arena;
	diag *diag;
	const char *file;
	char object[YV_OBJECT_MAX]; /* "pods/default/web-1" */
	char path[YV_PATH_MAX];
	size_t plen;
	unsigned errors; /* in the current object */
	bool oom;
} yv;

/* 1-based line of a node (of its first scalar for collections), 0 when unknown. */
int yv_line(const kval *n);

/* Path handling: push returns a mark to pop back to. */
size_t yv_push_key(yv *v, const char *key);
size_t yv_push_index(yv *v, size_t i);
void yv_pop(yv *v, size_t mark);

/* Reports an error at node n (may be NULL) for the current object and path. */
__attribute__((format(printf, 3, 4))) void yv_error(yv *v, const kval *n, const char *fmt, ...);
__attribute__((format(printf, 3, 4))) void yv_warn(yv *v, const kval *n, const char *fmt, ...);

bool yv_is_null(const kval *n);
/* Whether n is a plain scalar that YAML/JSON read as an integer (not a string). */
bool yv_is_int(const kval *n);
/* Member of a mapping; NULL when absent or null. */
const kval *yv_get(const kval *map, const char *key);

/* Kind checks (report and return false on mismatch). */
bool yv_expect_map(yv *v, const kval *n);
bool yv_expect_seq(yv *v, const kval *n);

/*
 * Field readers. "key" is looked up in map and pushed on the path while reading. Return 1 when
 * the value was read, 0 when absent (null), -1 on error (reported). required: report absence.
 */
int yv_string(yv *v, const kval *map, const char *key, bool required, const char **ret);
int yv_int32(yv *v, const kval *map, const char *key, bool required, int32_t *ret);
int yv_int64(yv *v, const kval *map, const char *key, int64_t *ret);
int yv_bool(yv *v, const kval *map, const char *key, bool *ret);
int yv_time(yv *v, const kval *map, const char *key, int64_t *ret_ns);

/* The scalar at n as a string (the current path names it). -1 on error. */
int yv_node_string(yv *v, const kval *n, const char **ret);

/* map[string]string. */
int yv_string_map(yv *v, const kval *map, const char *key, struct k8s_map *ret);
/* []string */
int yv_string_list(yv *v, const kval *map, const char *key, size_t *ret_n, const char ***ret);
/* ResourceList: values validated as non-negative quantities (cpu in milli). */
int yv_rlist(yv *v, const kval *map, const char *key, k8s_rlist *ret);

/*
 * A list field: fn is called for every element (a mapping; elem points at its slot of an array
 * of elem_size-sized elements) with the index pushed on the path. Returns 1 read, 0 absent, -1 on
 * error (reported; the other elements are still decoded).
 */
typedef int (*yv_elem_fn)(yv *v, const kval *e, void *elem);
int yv_list(yv *v, const kval *map, const char *key, size_t elem_size, size_t *ret_n, void **ret, yv_elem_fn fn);
/* A sub-object: the mapping, with key pushed (pop with *mark), or NULL when absent or not a
 * mapping (*bad set, reported). */
const kval *yv_sub(yv *v, const kval *map, const char *key, size_t *mark, bool *bad);

/* Allocation helpers that flag out-of-memory on v. */
void *yv_calloc(yv *v, size_t n, size_t size);

#endif
