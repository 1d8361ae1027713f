/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Small readers for cgroupfs and procfs files, all relative to a directory fd (openat + pread),
 * so that the same code reads the real hierarchy and fixture trees, and a cgroup renamed under us
 * cannot redirect a read.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Opens the file name directly under dirfd for reading: never follows a symlink (-ELOOP), never
 * blocks (O_NONBLOCK: a FIFO planted in a fixture or bind-mounted tree must not hang a scan), and
 * refuses anything but a regular file (-EINVAL). cgroupfs and procfs files are regular files.
 */
int cgfs_open_file(int dirfd, const char *name);

/*
 * Opens the directory path (relative, e.g. "kubepods.slice/x.slice") beneath root_fd without
 * following any symlink and without leaving root_fd ("..", absolute paths): openat2() with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS, or a component-by-component
 * O_NOFOLLOW walk on kernels without openat2. -ELOOP/-ENOTDIR when a component is a symlink,
 * -EXDEV when the path would leave the root. root_fd may be AT_FDCWD with an absolute path: the
 * whole path must then be free of symlinks (the caller passes a canonical cgroup root).
 */
int cgfs_open_dir_beneath(int root_fd, const char *path);

/*
 * Reads the file name under dirfd into buf (NUL-terminated). Returns the length, -EFBIG when the
 * file does not fit (nothing is silently cut), or -errno (-ENOENT: file or controller absent).
 */
ssize_t cgfs_read(int dirfd, const char *name, char *buf, size_t size);

/* A single unsigned integer file (memory.current, pids.current, ...). "max" gives -ERANGE. */
int cgfs_read_u64(int dirfd, const char *name, uint64_t *ret);

/* "key value" lines (memory.stat, cpu.stat, /proc/meminfo "Key: N kB"): -ENOENT when absent. */
int cgfs_keyed_u64(const char *text, const char *key, uint64_t *ret);

/* PSI "some avg10=… avg60=…" / "full avg10=…" text: avg10 values in percent. */
int cgfs_psi_parse(const char *text, double *ret_some_avg10, double *ret_full_avg10);
