/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Replacing a file atomically: written to a temporary file in the same directory, then rename()d
 * over the old one, so a reader never sees a half-written file. Every file the node programs leave
 * for others to read (status.json, the metrics file, in-flight records) goes through here.
 */

#include <stddef.h>

/* Writes text (len bytes) to path atomically, mode 0644. Returns 0 or -errno. */
int atomic_write_file(const char *path, const char *text, size_t len);
/* The same for a path in dir, creating dir (its last component, 0755) when it is missing. */
int atomic_write_file_in(const char *dir, const char *path, const char *text, size_t len);

/* Writes all n bytes to fd, retrying short writes and EINTR. Returns 0 or -errno. */
int atomic_write_all(int fd, const char *p, size_t n);
