/* SPDX-License-Identifier: MIT */
/* Helpers shared by the agent tests: fixture paths, temp trees, a loaded configuration. */
#pragma once

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "scratch.h"

/* tests/fixtures/cgroup/<layout>/<part>, absolute (the binaries run from the source tree). */
static inline const char *fixture(const char *layout, const char *part, char *buf, size_t size)
{
	const char *base = getenv("EVICTD_FIXTURES");
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "%s/%s/%s", base ? base : "tests/fixtures/cgroup", layout, part);
	if (!realpath(rel, buf) || strlen(buf) >= size) {
		fprintf(stderr, "fixture %s missing (run the tests from the source tree)\n", rel);
		abort();
	}
	return buf;
}

/*
 * Skips the running test (cmocka's skip() does not return) unless it runs as root; the reason is
 * printed next to cmocka's "# SKIP" line, where scripts/run-tests.sh shows it.
 */
static inline void skip_unless_root(const char *test, const char *why)
{
	if (geteuid() == 0)
		return;
	print_message("# skip %s: needs root: %s\n", test, why);
	skip();
}

/*
 * `static char tmpdir[256]` plus cmocka group setup/teardown functions that create it as
 * $TMPDIR/evictd-test-NAME-XXXXXX (scratch.h) and remove it with everything in it.
 */
#define AGENT_TEST_TMPDIR(name)                                                              \
	static char tmpdir[256];                                                             \
	static int setup(void **state)                                                       \
	{                                                                                    \
		(void)state;                                                                 \
		scratch_template(tmpdir, sizeof(tmpdir), "evictd-test-" name);             \
		return mkdtemp(tmpdir) ? 0 : -1;                                             \
	}                                                                                    \
	static int teardown(void **state)                                                    \
	{                                                                                    \
		char cmd[PATH_MAX + 16];                                                     \
		(void)state;                                                                 \
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);                           \
		return system(cmd) == 0 ? 0 : -1;                                            \
	}

static inline void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		abort();
	}
	fputs(text, f);
	fclose(f);
}

/* Loads a configuration from text; aborts the test with the message if it is rejected. */
static inline evictd_config *config_from(const char *text)
{
	evictd_config *c = NULL;
	config_error err;
	if (config_load_string(text, "test.conf", &c, &err) < 0) {
		fprintf(stderr, "unexpected config error: %s\n", err.text);
		abort();
	}
	return c;
}
