/* SPDX-License-Identifier: MIT */
/*
 * The parse state that the stream front (kstream.c) drives and the tree builder (kbuild.c) and the
 * two readers (kjson.c: yajl, kyaml.c: libfyaml events) share. It sits below all four, so that the
 * front calls down into the readers and the builder, and nothing calls back up into the front: a
 * reader reports through kp_error() here and hands values to the builder, which delivers items
 * through the callback the front stored. Not for users of kube/.
 */
#ifndef KUBE_KPARSE_H
#define KUBE_KPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "karena.h"
#include "k8s_input.h"
#include "diag.h"
#include "kstream-types.h"
#include "kval.h"

struct kframe {
	uint8_t type;  /* KVAL_MAP or KVAL_SEQ */
	bool items;    /* the top-level mapping's "items" sequence: its elements are items */
	bool merge;    /* a YAML merge key ("<<") was seen */
	uint32_t line; /* where it started */
	size_t start;  /* its first child in kids[] */
	const char *anchor;
	size_t anchor_len;
};

struct kanchor {
	const char *name;
	size_t len;
	const kval *v;
	bool in_item;
};

struct kbuild {
	karena header; /* top-level values (and a List's header) */
	karena item;   /* the List item being built */
	struct kframe frames[KSTREAM_DEPTH_MAX + 1];
	unsigned nframes;
	const kval **kids;
	size_t nkids, cap_kids;
	struct kanchor *anchors;
	size_t nanchors, cap_anchors;
	uint64_t alias_budget;
	bool bad;            /* the List item being built is dropped (duplicate key reported) */
	bool bad_top;        /* the same for the top-level value */
	bool kind_not_list;  /* the top-level mapping's kind came before items and is no List */
	bool split;          /* the top-level mapping's items are being streamed */
	const char *top_kind;
	char *pending_rv, *pending_continue;
	uint32_t *hash;      /* duplicate-key table, reused */
	size_t hash_cap, hash_alloc;
};

typedef struct kparse kparse;

struct kparse {
	char *name;
	diag *d;
	int (*fn)(void *userdata, const kval *item); /* kstream_item_fn */
	void *userdata;
	kstream_format fmt;
	bool yaml_buffered;   /* YAML bytes wait in ybuf for kstream_end */
	int err;
	bool ended;
	size_t item_max;
	uint64_t nitems;
	uint64_t nvalues;     /* top-level values read (a List counts once, however many items) */
	unsigned diag_mark;   /* d->nerrors + d->nwarnings when the stream started */
	k8s_gate gate;
	struct kbuild b;

	/* JSON */
	void *yajl;
	const unsigned char *chunk; /* the chunk yajl is parsing */
	size_t chunk_len, cur_off;
	uint64_t cur_line;          /* line at chunk[cur_off] */
	uint64_t last_line;         /* line of the last byte fed */
	bool keeping;               /* AUTO chose JSON: keep bytes until an item is out */
	char *keep;
	size_t nkeep, cap_keep;
	char *pre;                  /* AUTO: the blanks before the first byte that decides */
	size_t npre, cap_pre;

	/* YAML */
	char *ybuf;
	size_t ylen, ycap, yoff;
	int fd;                     /* kstream_read_fd: YAML pulls the rest from here */

	char *list_rv, *list_continue;
};

/* kbuild.c */
void kb_init(kparse *s);
void kb_done(kparse *s);
/* Back to "between top-level values" (after an error, or to re-read as YAML). */
void kb_reset(kparse *s);
int kb_scalar(kparse *s, kval_type t, uint8_t flags, const char *text, size_t len, uint32_t line,
              const char *anchor, size_t anchor_len);
int kb_begin(kparse *s, kval_type t, uint32_t line, const char *anchor, size_t anchor_len);
int kb_end(kparse *s);
int kb_alias(kparse *s, const char *name, size_t len, uint32_t line);
/* A YAML document ended: its anchors go. */
void kb_document_end(kparse *s);
bool kb_in_value(const kparse *s);

/* kparse.c: reports a problem at line of the input as FILE:LINE: and returns -EINVAL. */
__attribute__((format(printf, 3, 4))) int kp_error(kparse *s, uint32_t line, const char *fmt, ...);

/* kjson.c */
int kjson_new(kparse *s);
void kjson_free(kparse *s);
/* Parses a chunk (already through the gate). */
int kjson_feed(kparse *s, const unsigned char *buf, size_t len);
int kjson_end(kparse *s);
/* Whether a JSON failure may be retried as YAML. */
bool kjson_may_fall_back(const kparse *s);

/* kyaml.c: parses s->ybuf[yoff..], then (fd >= 0) the rest of fd through the gate. */
int kyaml_run(kparse *s);

#endif
