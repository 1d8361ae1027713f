/* SPDX-License-Identifier: MIT */
/*
 * Scratch paths for the C tests: under $TMPDIR, the directory scripts/run-tests.sh gives each run
 * so that it can tell what a test left behind (/tmp when a test runs by hand).
 */
#pragma once

#include <stdio.h>
#include <stdlib.h>

/* buf = "$TMPDIR/<name>-XXXXXX", a template for mkdtemp() or mkstemp(). */
static inline char *scratch_template(char *buf, size_t size, const char *name)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, size, "%s/%s-XXXXXX", t && t[0] == '/' ? t : "/tmp", name);
	return buf;
}
