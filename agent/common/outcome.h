/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Eviction outcomes: evictd-kube → evictd, the way back of the spool (spool.h). When the API server
 * finally refuses an eviction evictd reported (a PodDisruptionBudget's 429 with eviction-api =
 * eviction, or a refusal that retrying will not change), evictd-kube writes one small file per pod
 * into "<spool-dir>.outcome": "<uid>.outcome", written to a temporary name and renamed, root 0644.
 * evictd reads it, lets the pod be (no further kill, retry back-off) and removes it.
 *
 * The channel is input from the less privileged side (evictd-kube holds the network and the
 * credentials), so it is parsed strictly: at most OUTCOME_MAX bytes, exactly these three lines in
 * this order, nothing else:
 *     uid=<pod uid: [A-Za-z0-9_-], 1-63>
 *     outcome=refused
 *     status=<HTTP status, 400-599>
 * and the file must be a regular file owned by root (or by evictd's own user) and not writable by
 * group or others.
 */

#include <stdbool.h>
#include <stddef.h>

#define OUTCOME_MAX 160
#define OUTCOME_DIR_SUFFIX ".outcome"

typedef struct outcome_record {
	char uid[64];
	int status; /* 429: a PodDisruptionBudget; others: a final refusal */
} outcome_record;

/* Parses a record (buf need not be NUL-terminated). Returns 0, or -EBADMSG with why[] set. */
int outcome_parse(const char *buf, size_t len, outcome_record *ret, char *why, size_t why_size);

/* Writes "<uid>.outcome" into dirfd atomically. Returns 0 or -errno. */
int outcome_write(int dirfd, const char *uid, int status);

/*
 * Reads, checks and removes "name" in dirfd (whatever the verdict: a bad record is not read
 * twice). Returns 0 with *ret filled, -EBADMSG/-EPERM with why[] set, or another -errno.
 */
int outcome_take(int dirfd, const char *name, outcome_record *ret, char *why, size_t why_size);
