/* SPDX-License-Identifier: MIT */
/*
 * stderr into an unlinked scratch file while a test reads what a log writer put there, for the
 * tests of the log core and of each program's logging over it. Static: include it from one test
 * file, after <cmocka.h>.
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"

struct stderr_capture {
	int saved; /* the real stderr, back at the end */
	int fd;
};

__attribute__((unused))
static void stderr_capture_start(struct stderr_capture *c)
{
	char path[128];

	c->fd = mkstemp(scratch_template(path, sizeof(path), "test-stderr"));
	assert_true(c->fd >= 0);
	unlink(path); /* nothing left behind, whatever happens */
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	assert_true(c->saved >= 0);
	assert_true(dup2(c->fd, STDERR_FILENO) >= 0);
}

/* Restores stderr; returns what was written (free it). */
__attribute__((unused))
static char *stderr_capture_end(struct stderr_capture *c)
{
	struct stat st;
	char *text;

	assert_true(dup2(c->saved, STDERR_FILENO) >= 0);
	close(c->saved);
	assert_int_equal(fstat(c->fd, &st), 0);
	text = calloc(1, (size_t)st.st_size + 1);
	assert_non_null(text);
	assert_int_equal(pread(c->fd, text, (size_t)st.st_size, 0), st.st_size);
	close(c->fd);
	return text;
}
