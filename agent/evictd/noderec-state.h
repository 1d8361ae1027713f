/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What node-level reclaim (runtime.h) remembers across evictd's restarts, in
 * <run-directory>/node-reclaim.json:
 *   - since when each disk signal has counted the kubelet's pending reclaim, so that a restart
 *     (an upgrade, a crash and Restart=on-failure, a kill -9) does not start the kubelet's container
 *     GC period again: pods are spared for that period from the first count, however many times
 *     evictd restarts within it;
 *   - each image's history (first seen, last used), so that a restart neither makes every image too
 *     young for image-minimum-gc-age again nor forgets which were used last. The runtime's listing
 *     carries no time for an image, so this history is evictd's own, as the kubelet's is its own.
 * Replaced atomically (atomic-file.h) when either changes — at start and while a disk threshold is
 * met, never on an idle node — and read once at start.
 *
 * Times are CLOCK_MONOTONIC, the same clock for every process of one boot. A file that cannot be
 * read, is malformed, holds a time later than now or was written in another boot is logged once
 * with what is wrong and removed: node-level reclaim starts afresh, as if the file had never been
 * (every image first seen now, nothing pending yet). A file of a later version is read for the
 * keys this version knows (later versions only add keys).
 */

#include <stddef.h>
#include <stdint.h>

#include "noderec.h"
#include "signals.h"

#define NODEREC_STATE_VERSION 1
#define NODEREC_STATE_FILE "node-reclaim.json"
/* Images beyond these are not written: after a restart they are first seen anew, younger than
 * they are, so never removed early (a CRI image id is "sha256:" and 64 hex digits, or the digits). */
#define NODEREC_STATE_MAX_IMAGES 2048
#define NODEREC_IMAGE_ID_MAX 256

typedef struct noderec_state {
	uint64_t pending_since[_SIGNAL_MAX]; /* 0: nothing pending for the signal */
	image_record *images;                /* sorted by id (strcmp), unique */
	size_t n_images;
} noderec_state;

/* Writes st to dir/NODEREC_STATE_FILE (dir created when missing). Returns 0 or -errno. */
int noderec_state_save(const char *dir, const noderec_state *st);

/*
 * Reads dir/NODEREC_STATE_FILE into st (owned by the caller: noderec_state_done). A missing file
 * gives an empty st; an unusable one is logged and removed and gives an empty st; temporary files
 * of an interrupted write are removed. Returns 0, or -ENOMEM (st empty).
 */
int noderec_state_load(const char *dir, uint64_t now_usec, noderec_state *st);

/*
 * Parses the file's text (boot: this boot's id; "" refuses every file). Returns NULL with st
 * filled (owned by the caller), or what is wrong (a static string) with st empty. For load and
 * the fuzzer.
 */
const char *noderec_state_parse(const char *text, const char *boot, uint64_t now_usec, noderec_state *st);

void noderec_state_done(noderec_state *st);

/* An id as it may be written: 1 to NODEREC_IMAGE_ID_MAX - 1 printable characters, no quote or backslash. */
bool noderec_image_id_valid(const char *id);
