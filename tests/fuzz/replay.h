/* SPDX-License-Identifier: MIT */
/*
 * Replays saved fuzz inputs through a fuzz target built by the normal (gcc, optionally
 * SANITIZE=1) build, as part of `make check`: every file of tests/fuzz/regressions/<target>/
 * (inputs that once crashed or broke an invariant) and tests/fuzz/corpus/<target>/ (the seeds).
 * Each input runs in a child process so that a crash or an invariant abort names its file.
 */
#ifndef FUZZ_REPLAY_H
#define FUZZ_REPLAY_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "scratch.h"

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

static int replay_read(const char *path, uint8_t **ret, size_t *ret_size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 24)) {
		close(fd);
		return -EINVAL;
	}
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	*ret = buf;
	*ret_size = got;
	return 0;
}

/* Runs fn on every file in dir; returns how many ran, or fails the current cmocka test. */
static int replay_dir(const char *dir, fuzz_fn fn)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort), ran = 0;

	if (n < 0)
		return 0; /* no saved inputs for this target (yet) */
	for (int i = 0; i < n; i++) {
		char path[4096];
		uint8_t *data = NULL;
		size_t size = 0;
		if (names[i]->d_name[0] == '.')
			goto next;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (replay_read(path, &data, &size) < 0)
			goto next;
		fflush(NULL);
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			fn(data, size);
			_exit(0);
		}
		free(data);
		int status = 0;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fail_msg("replaying %s: %s %d", path, WIFSIGNALED(status) ? "killed by signal" : "exit",
			         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		ran++;
	next:
		free(names[i]);
	}
	free(names);
	return ran;
}

/* Replays regressions and seeds of one target; at least one input must exist. */
static void replay_target(const char *target, fuzz_fn fn)
{
	char dir[512];
	const char *top = getenv("FUZZ_INPUTS") ? getenv("FUZZ_INPUTS") : "tests/fuzz";
	int ran = 0;

	snprintf(dir, sizeof(dir), "%s/regressions/%s", top, target);
	ran += replay_dir(dir, fn);
	snprintf(dir, sizeof(dir), "%s/corpus/%s", top, target);
	ran += replay_dir(dir, fn);
	if (ran == 0)
		fail_msg("no saved inputs for fuzz target %s under %s (run from the source tree)", target, top);
	print_message("# %s: %d inputs replayed\n", target, ran);
}

/*
 * cmocka group setup and teardown: the targets keep their files in a private $FUZZ_TMPDIR (under
 * the run's $TMPDIR, see scratch.h; forked replays each make a subdirectory), removed at the end.
 */
static char replay_tmpdir[100];

static inline int replay_group_setup(void **state)
{
	(void)state;
	if (!mkdtemp(scratch_template(replay_tmpdir, sizeof(replay_tmpdir), "evictd-fuzz-replay")))
		return -1;
	return setenv("FUZZ_TMPDIR", replay_tmpdir, 1);
}

static inline int replay_group_teardown(void **state)
{
	char cmd[160];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", replay_tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
