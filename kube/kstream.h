/* SPDX-License-Identifier: MIT */
/*
 * Streaming reader of Kubernetes JSON and YAML: bytes in (any chunking), one object out at a time
 * as a kval tree, built, passed to the callback and freed before the next — so that memory stays
 * bounded by the largest object, not the input.
 *
 * Items: a top-level mapping with an "items" sequence (a `List`, `PodList`... — kubectl and the
 * API server print "items" before "kind" or after it) yields each element of "items" as one item;
 * any other top-level value is one item (a single object, a watch event
 * {"type":"ADDED","object":{...}}, one document of a multi-document YAML stream). JSON input may
 * hold several concatenated top-level values (watch streams).
 *
 * JSON is read by yajl's SAX parser, YAML by libfyaml's event parser. KSTREAM_AUTO picks JSON when
 * the first non-blank byte is '{' or '[' — and falls back to YAML (flow YAML such as
 * `{kind: Pod}` starts the same way) if the JSON reader fails before delivering any item.
 *
 * Every byte is checked as it arrives: well-formed UTF-8, no NUL byte, the total size; every
 * value: nesting depth, object size, duplicate keys; YAML aliases resolve within one object and
 * within an expansion budget. Problems are reported through the diag as FILE:LINE[:COLUMN]: ...
 * (FILE is the name given: a file name or a URL). Byte-level and syntax errors end the stream;
 * a duplicate key drops that one object and goes on, so that `check` reports every problem.
 *
 * YAML through kstream_feed() is buffered up to kstream_end() (libfyaml pulls its input);
 * kstream_read_fd() streams both formats.
 */
#ifndef KUBE_KSTREAM_H
#define KUBE_KSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "kstream-types.h"
#include "kval.h"


typedef struct kstream kstream;

/* Called for every item; the tree is valid only during the call. A negative return aborts the
 * stream: kstream_feed/kstream_end then return it. */
typedef int (*kstream_item_fn)(void *userdata, const kval *item);

/* name is copied; d must outlive the stream. */
int kstream_new(kstream **ret, kstream_format fmt, const char *name, diag *d, kstream_item_fn fn,
                void *userdata);
/* total_max 0 = unbounded. */
void kstream_set_limits(kstream *s, size_t total_max, size_t item_max);

/*
 * Pushes len bytes. 0, -EINVAL (bad input: reported, the stream is dead), -ENOMEM, or the
 * callback's negative return.
 */
int kstream_feed(kstream *s, const void *buf, size_t len);
/* End of input: flushes; a truncated value is an error. Same returns. */
int kstream_end(kstream *s);
/* Reads fd to its end in 64 KiB chunks and ends the stream. Read errors are reported too. */
int kstream_read_fd(kstream *s, int fd);
kstream *kstream_free(kstream *s);

/* The name given at creation (stable for the stream's life: locations may point to it). */
const char *kstream_name(const kstream *s);
/* The format in use (KSTREAM_AUTO until decided). */
kstream_format kstream_format_of(const kstream *s);
/* Items delivered so far. */
uint64_t kstream_items(const kstream *s);
/* Top-level values read so far (a List is one): 0 at the end means the input held nothing. */
uint64_t kstream_values(const kstream *s);

/* The last top-level List's metadata.resourceVersion / metadata.continue, once seen (the API
 * server prints metadata before items, kubectl after). NULL when absent. */
const char *kstream_list_resource_version(const kstream *s);
const char *kstream_list_continue(const kstream *s);

#endif
