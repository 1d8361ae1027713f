/* SPDX-License-Identifier: MIT */
/* What preemptd reads from an API server's answer to a write: the object's resourceVersion, or a
 * Status's message — with kube/'s JSON reader, whatever the spacing and escaping. */
#ifndef CTL_ANSWER_H
#define CTL_ANSWER_H

#include <stddef.h>

#include "kval.h"

/* Reads body as exactly one JSON object and hands it to fn (valid during the call). 0, -EINVAL
 * (not one object: not JSON, several values, a syntax error), -ENOMEM. The reader's complaints
 * go nowhere: an API server's odd answer is the caller's to judge. */
int answer_object(const char *body, size_t len, void (*fn)(void *userdata, const kval *obj), void *userdata);

/* rv: metadata.resourceVersion ("" when none); msg: the top-level "message" ("" when none). Either
 * may be NULL. 0, or -EINVAL when the body is not one JSON object (both left ""). */
int answer_read(const char *body, size_t len, char *rv, size_t rv_size, char *msg, size_t msg_size);

#endif
