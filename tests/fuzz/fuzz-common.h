/* SPDX-License-Identifier: MIT */
/* Helpers shared by the fuzz targets (also compiled into the gcc replay tests). */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A broken invariant is a finding: print where and why, then abort so that libFuzzer saves the
 * input (and the replay test fails).
 */
#define FUZZ_CHECK(cond, ...)                                                                   \
	do {                                                                                    \
		if (!(cond)) {                                                                  \
			fprintf(stderr, "%s:%d: invariant broken: ", __FILE__, __LINE__);       \
			fprintf(stderr, __VA_ARGS__);                                           \
			fputc('\n', stderr);                                                    \
			abort();                                                                \
		}                                                                               \
	} while (0)
#define FUZZ_ASSERT(cond) FUZZ_CHECK(cond, "%s", #cond)

/* The input as a NUL-terminated string (embedded NULs simply end it early). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return NULL;
	if (size)
		memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* Messages written to memory, so that a target can check that every error was printed. */
struct fuzz_out {
	char *buf;
	size_t len;
	FILE *f;
};

static inline FILE *fuzz_out_open(struct fuzz_out *o)
{
	memset(o, 0, sizeof(*o));
	return o->f = open_memstream(&o->buf, &o->len);
}

/* Closes and frees; returns how many bytes were written. */
static inline size_t fuzz_out_close(struct fuzz_out *o)
{
	fclose(o->f);
	free(o->buf);
	return o->len;
}

/* Where targets that need files keep them: $FUZZ_TMPDIR (the replay tests set a private one). */
static inline const char *fuzz_tmpdir(void)
{
	const char *d = getenv("FUZZ_TMPDIR");
	return d && *d ? d : "/tmp";
}

/* buf = a directory of this process under fuzz_tmpdir() for a target's files, made when missing. */
static inline void fuzz_private_dir(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/fuzz-%s.%d", fuzz_tmpdir(), name, (int)getpid());
	FUZZ_ASSERT(mkdir(buf, 0755) == 0 || errno == EEXIST);
}

/* What a target wrote, read back whole into buf (NUL-terminated; it must fit). */
static inline void fuzz_read_back(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	FUZZ_ASSERT(fd >= 0);
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	FUZZ_ASSERT(n > 0 && n < (ssize_t)size - 1);
	buf[n] = '\0';
}

#endif
