/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The descriptor directory evictd-kube owns ([kubernetes] descriptor-dir): one "<uid>.conf" per
 * pod bound to the node, written atomically (temporary file + rename, root 0644) only when its
 * content changes, removed when the pod is gone. evictd trusts it like pod-metadata-dir.
 */

#include <stdbool.h>
#include <stddef.h>

typedef struct descdir descdir;

/* Creates the directory (0755) when missing. Returns 0 or -errno. */
int descdir_open(const char *path, descdir **ret);
descdir *descdir_free(descdir *d);

/* Returns 1 written, 0 unchanged, -errno. */
int descdir_put(descdir *d, const char *uid, const char *text, size_t len);
/* Returns 1 removed, 0 none, -errno. */
int descdir_remove(descdir *d, const char *uid);

/*
 * After a relist: removes every descriptor whose uid keep() rejects (pods deleted while the
 * watch was down). Returns the number removed or -errno.
 */
int descdir_prune(descdir *d, bool (*keep)(const char *uid, void *userdata), void *userdata);

unsigned descdir_count(const descdir *d);
