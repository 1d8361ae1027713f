/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the `exec` action's argv (agent/common/exec-argv.c). The input is split on NUL
 * bytes: four placeholder values (namespace, name, uid, grace), then the configured argv entries.
 * Invariants (the security property of issue 7): one output entry per configured entry, never
 * more — a value with spaces, quotes or shell syntax stays inside its entry; an entry that is
 * exactly one placeholder becomes exactly that value; nothing is ever truncated silently.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exec-argv.h"
#include "fuzz-common.h"

/* fuzz-links: agent lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EA_MAX_ARGS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* size + 1 NULs so that every piece is terminated. */
	char *buf = calloc(1, size + 6);
	const char *piece[4 + EA_MAX_ARGS];
	char *argv[EA_MAX_ARGS + 1];
	size_t n = 0, argc = 0;
	char **out = NULL;
	const char *bad = NULL;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	for (char *p = buf; n < 4 + EA_MAX_ARGS && p <= buf + size; p += strlen(p) + 1)
		piece[n++] = p;
	if (n < 5) {
		free(buf);
		return 0;
	}
	exec_vars vars = { .namespace_ = piece[0], .name = piece[1], .uid = piece[2], .grace = piece[3] };
	for (size_t i = 4; i < n; i++)
		argv[argc++] = (char *)piece[i];
	argv[argc] = NULL;

	int v = exec_argv_validate(argv, &bad);
	FUZZ_ASSERT(v == 0 || v == -EINVAL);
	if (v < 0)
		FUZZ_ASSERT(bad != NULL);
	int r = exec_argv_expand(argv, &vars, &out);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -E2BIG, "expand: %d", r);
	if (r == 0) {
		size_t k = 0;
		for (; out[k]; k++) {
			FUZZ_ASSERT(k < argc);
			FUZZ_ASSERT(strlen(out[k]) <= EXEC_ARG_MAX);
			static const char *const names[] = { "{namespace}", "{name}", "{uid}", "{grace}" };
			const char *vals[] = { vars.namespace_, vars.name, vars.uid, vars.grace };
			for (size_t j = 0; j < 4; j++)
				if (strcmp(argv[k], names[j]) == 0)
					FUZZ_CHECK(strcmp(out[k], vals[j]) == 0, "entry %zu: %s -> \"%s\", want \"%s\"", k,
					           names[j], out[k], vals[j]);
			if (!strchr(argv[k], '{') && !strstr(argv[k], "}}")) /* "}}" is an escaped "}" */
				FUZZ_CHECK(strcmp(out[k], argv[k]) == 0, "entry %zu without placeholders changed", k);
		}
		FUZZ_CHECK(k == argc, "%zu entries became %zu", argc, k);
	}
	exec_argv_free(out);
	free(buf);
	return 0;
}
