/* SPDX-License-Identifier: MIT */
/*
 * Quantities as the API server keeps them for its messages (resource.Quantity in
 * apimachinery/pkg/api/resource/quantity.go): the exact value, the format the quantity was written
 * in (DecimalSI "500m", BinarySI "1Gi", DecimalExponent "1e3"), and the text itself when
 * ParseQuantity reuses it — so that "requested: requests.memory=1.500Gi" style messages come out
 * byte for byte as kube-apiserver prints them. And resource lists (ResourceList) of them, with
 * the quota package's arithmetic (quota.Add, Mask, maxResourceList).
 * Nothing here is exported.
 */
#ifndef PP_QTY_H
#define PP_QTY_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"

enum pp_qfmt {
	PP_QFMT_DECIMAL_SI = 0,
	PP_QFMT_BINARY_SI = 1,
	PP_QFMT_DECIMAL_EXPONENT = 2,
};

struct pp_qty {
	__int128 nano;  /* the value in 10^-9 units, rounded up as ParseQuantity rounds */
	uint8_t format; /* enum pp_qfmt */
	char *text;     /* owned: what String() returns as is (the parsed text), or NULL: canonical */
};

/* ParseQuantity. -EINVAL malformed, -ERANGE beyond int64 units (the library's limit). */
int pp__qty_parse(const char *s, struct pp_qty *ret, pp_err *err);
/* An integer in DecimalSI, as resource.NewQuantity(v, DecimalSI): no text. */
struct pp_qty pp__qty_int(int64_t v);
void pp__qty_done(struct pp_qty *q);
/* DeepCopy (keeps the text). -ENOMEM. */
int pp__qty_copy(struct pp_qty *dst, const struct pp_qty *src);
/* Quantity.Add: q += y; a zero q takes y's format; the text is dropped. */
void pp__qty_add(struct pp_qty *q, const struct pp_qty *y);
static inline int pp__qty_cmp(const struct pp_qty *a, const struct pp_qty *b)
{
	return a->nano < b->nano ? -1 : a->nano > b->nano;
}
/* Quantity.String() into buf (snprintf semantics: the length it needs). */
size_t pp__qty_format(const struct pp_qty *q, char *buf, size_t size);

/* A ResourceList in first-insertion order; names are owned copies. */
struct pp_rentry {
	char *name;
	struct pp_qty q;
};
struct pp_rlist {
	struct pp_rentry *v;
	size_t n, cap;
};

void pp__rlist_done(struct pp_rlist *l);
struct pp_rentry *pp__rlist_find(const struct pp_rlist *l, const char *name);
/* list[name] = copy of q. -ENOMEM. */
int pp__rlist_set(struct pp_rlist *l, const char *name, const struct pp_qty *q);
/* addResourceList: a copy when absent, else Add. */
int pp__rlist_add(struct pp_rlist *l, const char *name, const struct pp_qty *q);
/* maxResourceList: a copy when absent or strictly greater. */
int pp__rlist_max(struct pp_rlist *l, const char *name, const struct pp_qty *q);
/* Whole-list forms of the three. */
int pp__rlist_add_all(struct pp_rlist *l, const struct pp_rlist *other);
int pp__rlist_max_all(struct pp_rlist *l, const struct pp_rlist *other);
int pp__rlist_copy(struct pp_rlist *dst, const struct pp_rlist *src);
/* Parses name/quantity pairs (duplicates: -EINVAL); err names field[name]. */
int pp__rlist_parse(struct pp_rlist *l, const pp_quantity_kv *kv, size_t n, const char *field, pp_err *err);

/*
 * The quota admission plugin's prettyPrint: "name=value" pairs sorted by name, joined by ",",
 * over the entries whose names pass keep (NULL: all). Returns a malloc'd string or NULL (ENOMEM).
 */
char *pp__rlist_print(const struct pp_rlist *l, bool (*keep)(const char *name, const void *ud), const void *ud);

#endif
