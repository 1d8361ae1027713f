/* SPDX-License-Identifier: MIT */
/*
 * One scratch directory for a cmocka test program whose cases write files (kubeconfigs, pod
 * descriptors): made under the run's $TMPDIR before the first case, emptied and removed after the
 * last, so that the run finds nothing left behind. Static: include it from one test file, after
 * <cmocka.h>, and pass scratch_dir_setup and scratch_dir_teardown to cmocka_run_group_tests.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"

static char scratch_dir[128];

/* The directory is named for the test program, for whoever finds one left. */
__attribute__((unused))
static int scratch_dir_setup(void **state)
{
	(void)state;
	return mkdtemp(scratch_template(scratch_dir, sizeof(scratch_dir), program_invocation_short_name)) ? 0 : -1;
}

__attribute__((unused))
static int scratch_dir_teardown(void **state)
{
	DIR *d = opendir(scratch_dir);
	struct dirent *de;
	(void)state;
	/* only files of ours, in our mkdtemp directory */
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			(void)unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	return rmdir(scratch_dir);
}

/* The scratch directory's file name, as a path (a buffer of its own, good until the next call). */
__attribute__((unused))
static const char *scratch_path(const char *name)
{
	static char p[512];
	snprintf(p, sizeof(p), "%s/%s", scratch_dir, name);
	return p;
}

/* Writes text to the scratch directory's file name, then gives it mode (after the write, so that
 * the umask cannot change it). */
__attribute__((unused))
static void scratch_put(const char *name, const char *text, mode_t mode)
{
	const char *p = scratch_path(name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, mode), 0);
}

