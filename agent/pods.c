/* SPDX-License-Identifier: MIT */
#include "pods.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool uid_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
	       c == '_' || c == '.';
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t m = strlen(suffix);
	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

int pod_parse_path(const char *cgroup, char uid[POD_UID_MAX], pod_qos *ret_qos)
{
	const char *last = strrchr(cgroup, '/');
	const char *start;
	size_t len;
	bool systemd;
	pod_qos qos = QOS_UNKNOWN;

	last = last ? last + 1 : cgroup;
	len = strlen(last);
	systemd = ends_with(last, len, ".slice");
	if (ends_with(last, len, ".slice") || ends_with(last, len, ".scope"))
		len -= 6;
	else if (ends_with(last, len, ".service"))
		len -= 8;

	/* The kubelet names pod cgroups "pod<uid>" (cgroupfs) or "kubepods[-qos]-pod<uid_>" (systemd). */
	start = last;
	for (const char *p = last; p + 3 <= last + len; p++)
		if (strncmp(p, "pod", 3) == 0 && (p == last || p[-1] == '-') && p + 3 < last + len)
			start = p + 3;
	bool kubelet = start != last;
	len -= (size_t)(start - last);
	if (len == 0 || len >= POD_UID_MAX || start[0] == '.')
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (!uid_char_ok(start[i]))
			return -EINVAL;
		/* systemd escaping: the kubelet writes '-' of the UID as '_' in slice names */
		uid[i] = systemd && kubelet && start[i] == '_' ? '-' : start[i];
	}
	uid[len] = '\0';

	if (kubelet) {
		if (strstr(cgroup, "besteffort"))
			qos = QOS_BESTEFFORT;
		else if (strstr(cgroup, "burstable"))
			qos = QOS_BURSTABLE;
		else
			qos = QOS_GUARANTEED; /* Guaranteed pods sit directly under kubepods */
	}
	*ret_qos = qos;
	return 0;
}

/* glob() treats the root as a pattern too: escape it. */
static int escape_glob(const char *s, char *out, size_t size)
{
	size_t o = 0;
	for (; *s; s++) {
		if (strchr("*?[]\\", *s)) {
			if (o + 1 >= size)
				return -ENAMETOOLONG;
			out[o++] = '\\';
		}
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		out[o++] = *s;
	}
	out[o] = '\0';
	return 0;
}

static int cmp_pod(const void *a, const void *b)
{
	return strcmp(((const pod_info *)a)->cgroup, ((const pod_info *)b)->cgroup);
}

int pods_discover(const char *root, char *const *patterns, pod_info **ret, size_t *ret_n)
{
	char eroot[PATH_MAX], pat[PATH_MAX * 2];
	glob_t g = { 0 };
	size_t rootlen = strlen(root);
	pod_info *pods = NULL;
	size_t n = 0, kept = 0;
	int flags = GLOB_NOSORT | GLOB_ONLYDIR;
	int r;

	while (rootlen > 1 && root[rootlen - 1] == '/')
		rootlen--;
	if (rootlen >= sizeof(eroot) / 2)
		return -ENAMETOOLONG;
	memcpy(pat, root, rootlen);
	pat[rootlen] = '\0';
	r = escape_glob(pat, eroot, sizeof(eroot));
	if (r < 0)
		return r;
	for (char *const *p = patterns; p && *p; p++) {
		snprintf(pat, sizeof(pat), "%s/%s", eroot, *p);
		r = glob(pat, flags, NULL, &g);
		if (r == GLOB_NOSPACE) {
			globfree(&g);
			return -ENOMEM;
		}
		if (r == 0 || r == GLOB_NOMATCH)
			flags |= GLOB_APPEND;
	}
	if (!(flags & GLOB_APPEND)) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	pods = calloc(g.gl_pathc ? g.gl_pathc : 1, sizeof(*pods));
	if (!pods) {
		globfree(&g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *rel = g.gl_pathv[i] + rootlen;
		while (*rel == '/')
			rel++;
		pod_info *pi = &pods[n];
		if (!*rel || pod_parse_path(rel, pi->uid, &pi->qos) < 0)
			continue;
		pi->cgroup = strdup(rel);
		if (!pi->cgroup) {
			for (size_t j = 0; j < n; j++)
				free(pods[j].cgroup);
			free(pods);
			globfree(&g);
			return -ENOMEM;
		}
		n++;
	}
	globfree(&g);
	qsort(pods, n, sizeof(*pods), cmp_pod);
	/* Drop duplicates (overlapping patterns) and cgroups nested in an earlier match. */
	for (size_t i = 0; i < n; i++) {
		if (kept > 0) {
			const char *prev = pods[kept - 1].cgroup;
			size_t pl = strlen(prev);
			if (strcmp(prev, pods[i].cgroup) == 0 ||
			    (strncmp(prev, pods[i].cgroup, pl) == 0 && pods[i].cgroup[pl] == '/')) {
				free(pods[i].cgroup);
				continue;
			}
		}
		pods[kept++] = pods[i];
	}
	*ret = pods;
	*ret_n = kept;
	return 0;
}
