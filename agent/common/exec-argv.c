/* SPDX-License-Identifier: MIT */
#include "exec-argv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *lookup(const char *key, size_t len, const exec_vars *v)
{
	static const char *const names[] = { "namespace", "name", "uid", "grace" };
	const char *const vals[] = { v ? v->namespace_ : "", v ? v->name : "", v ? v->uid : "",
	                             v ? v->grace : "" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && memcmp(names[i], key, len) == 0)
			return vals[i] ? vals[i] : "";
	return NULL;
}

/* Expands one entry into out (size EXEC_ARG_MAX); vars NULL only validates. */
static int expand_one(const char *in, const exec_vars *vars, char *out)
{
	size_t o = 0;
	for (const char *p = in; *p;) {
		const char *piece;
		size_t plen;
		if (p[0] == '{' && p[1] == '{') {
			piece = "{", plen = 1, p += 2;
		} else if (p[0] == '}' && p[1] == '}') {
			piece = "}", plen = 1, p += 2;
		} else if (*p == '{') {
			const char *close = strchr(p, '}');
			if (!close)
				return -EINVAL;
			piece = lookup(p + 1, (size_t)(close - p - 1), vars);
			if (!piece)
				return -EINVAL;
			plen = strlen(piece);
			p = close + 1;
		} else {
			piece = p, plen = 1, p++;
		}
		if (o + plen >= EXEC_ARG_MAX)
			return -E2BIG;
		memcpy(out + o, piece, plen);
		o += plen;
	}
	out[o] = '\0';
	return 0;
}

int exec_argv_validate(char *const *argv, const char **ret_bad)
{
	if (!argv || !argv[0] || argv[0][0] != '/') {
		if (ret_bad)
			*ret_bad = argv ? argv[0] : NULL;
		return -EINVAL;
	}
	static const exec_vars probe = { "", "", "", "" };
	char buf[EXEC_ARG_MAX];
	for (size_t i = 0; argv[i]; i++)
		if (expand_one(argv[i], &probe, buf) < 0) {
			if (ret_bad)
				*ret_bad = argv[i];
			return -EINVAL;
		}
	return 0;
}

char **exec_argv_free(char **argv)
{
	if (argv)
		for (size_t i = 0; argv[i]; i++)
			free(argv[i]);
	free(argv);
	return NULL;
}

int exec_argv_expand(char *const *argv, const exec_vars *vars, char ***ret_argv)
{
	if (!argv || !argv[0] || !vars)
		return -EINVAL;
	size_t n = 0;
	while (argv[n])
		n++;
	char **out = calloc(n + 1, sizeof(*out));
	if (!out)
		return -ENOMEM;
	char buf[EXEC_ARG_MAX];
	for (size_t i = 0; i < n; i++) {
		int r = expand_one(argv[i], vars, buf);
		if (r < 0) {
			exec_argv_free(out);
			return r;
		}
		out[i] = strdup(buf);
		if (!out[i]) {
			exec_argv_free(out);
			return -ENOMEM;
		}
	}
	*ret_argv = out;
	return 0;
}
