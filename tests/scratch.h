/* SPDX-License-Identifier: MIT */
/*
 * Scratch paths and names for the C tests, by which scripts/run-tests.sh tells what a test left
 * behind: files under $TMPDIR, the directory it gives each run (/tmp when a test runs by hand);
 * cgroups named with the run's id.
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

/* The test run's id (EVICTD_TEST_RUN), in the name of every cgroup a test creates. */
static inline const char *test_run_id(void)
{
	const char *r = getenv("EVICTD_TEST_RUN");
	return r && r[0] ? r : "norun";
}
