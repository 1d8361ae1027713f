/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The `exec` action's command line: placeholders are substituted inside each configured argv
 * entry, so a pod name can never become two arguments or a shell word — there is no shell.
 */

#include <stddef.h>

/* What a placeholder can stand for. Every string must be non-NULL (use "" for unknown). */
typedef struct exec_vars {
	const char *namespace_; /* {namespace} */
	const char *name;       /* {name} */
	const char *uid;        /* {uid} */
	const char *grace;      /* {grace}: whole seconds, e.g. "30" */
} exec_vars;

/* Longest argv entry after substitution; longer is refused rather than truncated. */
#define EXEC_ARG_MAX 4096

/*
 * Checks a configured argv: argv[0] must be an absolute path (no PATH search in a daemon), every
 * '{' must open a known placeholder ("{{" is a literal '{'). On error returns -EINVAL and, when
 * ret_bad is non-NULL, points it at the offending entry.
 */
int exec_argv_validate(char *const *argv, const char **ret_bad);

/*
 * Builds the argv to execute: a NULL-terminated array of new strings, one per configured entry.
 * Returns 0, -EINVAL (unknown placeholder), -E2BIG (entry too long) or -ENOMEM.
 */
int exec_argv_expand(char *const *argv, const exec_vars *vars, char ***ret_argv);

/* Frees what exec_argv_expand() returned; NULL is fine. Returns NULL. */
char **exec_argv_free(char **argv);
