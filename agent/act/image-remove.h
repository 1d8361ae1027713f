/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Node-level reclaim's image step carried out: RemoveImage through the CRI, one image after the
 * other (a runtime under disk pressure is not made to delete many at once), each with the client's
 * deadline. The result tells how many went and what the runtime said they weighed.
 */

#include <stddef.h>
#include <stdint.h>

#include "cri.h"
#include "signals.h"

typedef struct image_removal image_removal;

typedef struct image_removal_result {
	evictd_signal signal;   /* the signal it was for */
	size_t n_removed, n_failed;
	int64_t bytes;          /* sizes of the removed images */
	char names[768];        /* "localhost/a:1, sha256:..." of the removed ones (cut with "…") */
	char why[384];          /* the first failure */
} image_removal_result;

typedef void (*image_removal_done_fn)(const image_removal_result *r, void *userdata);
/* One image the runtime did not remove (id, name as journaled, the runtime's status text), before done. */
typedef void (*image_removal_failed_fn)(const char *id, const char *name, const char *why, void *userdata);

/*
 * Starts removing images (ids, with names for the journal and sizes). failed (may be NULL) is
 * called for each image refused, and the next one is tried all the same (a runtime that refuses
 * one — CRI-O refuses an image a container holds — costs that image, not the rest); done is
 * called once, after the last; the removal frees itself after it. -ENOMEM, or -errno of the first
 * call's start.
 */
int image_removal_start(cri_client *c, const char *const *ids, const char *const *names, const int64_t *sizes,
                        size_t n, evictd_signal s, image_removal_failed_fn failed, image_removal_done_fn done,
                        void *userdata, image_removal **ret);
/* Ends it without calling done (shutdown, reload). */
void image_removal_cancel(image_removal *r);
