/* SPDX-License-Identifier: MIT */
#include "pods.h"
#include "grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int cmp_pod(const void *a, const void *b)
{
	return strcmp(((const pod_info *)a)->cgroup, ((const pod_info *)b)->cgroup);
}

/*
 * glob(3) follows symlinks, so a pod or QoS directory that is a symlink would lead discovery out
 * of the cgroup root. This matcher walks the patterns component by component with openat/readdir
 * on directory fds, matches names with fnmatch (a leading '.' only matched explicitly, as glob
 * does), and never enters a symlink: such a match is reported to the caller instead.
 */
typedef struct walk {
	char *const *comps;
	size_t n_comps;
	char path[PATH_MAX];
	pod_info *pods;
	size_t n, cap;
	pods_symlink_cb cb;
	void *userdata;
} walk;

static int add_pod(walk *w)
{
	pod_info pi = { 0 };

	if (pod_parse_path(w->path, pi.uid, &pi.qos) < 0)
		return 0;
	if (GROW_ARRAY_FROM(&w->pods, &w->cap, w->n + 1, 64) < 0)
		return -ENOMEM;
	pi.cgroup = strdup(w->path);
	if (!pi.cgroup)
		return -ENOMEM;
	w->pods[w->n++] = pi;
	return 0;
}

static int walk_level(walk *w, int dirfd, size_t level);

/* Enters name (a match of component `level`) if it is a real directory. */
static int walk_into(walk *w, int dirfd, size_t level, const char *name, unsigned char d_type)
{
	size_t len = strlen(w->path);
	int r = 0;

	if (len + 1 + strlen(name) >= sizeof(w->path))
		return 0;
	snprintf(w->path + len, sizeof(w->path) - len, "%s%s", len ? "/" : "", name);
	if (d_type == DT_UNKNOWN) {
		struct stat st;
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto out;
		d_type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
	}
	if (d_type == DT_LNK) {
		if (w->cb)
			w->cb(w->path, w->userdata);
	} else if (d_type == DT_DIR) {
		if (level + 1 == w->n_comps)
			r = add_pod(w);
		else {
			int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
			if (fd >= 0) { /* else: removed meanwhile, or replaced by a symlink (ELOOP) */
				r = walk_level(w, fd, level + 1);
				close(fd);
			}
		}
	}
out:
	w->path[len] = '\0';
	return r;
}

static bool has_magic(const char *s)
{
	return strpbrk(s, "*?[\\") != NULL;
}

static int walk_level(walk *w, int dirfd, size_t level)
{
	const char *comp = w->comps[level];
	DIR *d;
	struct dirent *de;
	int fd, r = 0;

	if (strcmp(comp, "..") == 0)
		return 0; /* never above the root */
	if (!has_magic(comp))
		return walk_into(w, dirfd, level, comp, DT_UNKNOWN);
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return errno == ENOMEM ? -ENOMEM : 0;
	}
	while (r >= 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fnmatch(comp, de->d_name, FNM_PERIOD) == 0)
			r = walk_into(w, dirfd, level, de->d_name, de->d_type);
	}
	closedir(d);
	return r;
}

/* Splits a pattern into its non-empty components ("." dropped); returns their count. */
static size_t split_pattern(char *pat, char **comps, size_t max)
{
	size_t n = 0;
	for (char *save = NULL, *c = strtok_r(pat, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (n == max)
			return 0;
		comps[n++] = c;
	}
	return n;
}

int pods_discover(int root_fd, char *const *patterns, pods_symlink_cb cb, void *userdata, pod_info **ret,
                  size_t *ret_n)
{
	walk w = { .cb = cb, .userdata = userdata };
	size_t kept = 0;
	int r = 0;

	for (char *const *p = patterns; p && *p && r >= 0; p++) {
		char pat[PATH_MAX], *comps[PODS_PATTERN_MAX_DEPTH];
		if (snprintf(pat, sizeof(pat), "%s", *p) >= (int)sizeof(pat))
			continue;
		w.comps = comps;
		w.n_comps = split_pattern(pat, comps, PODS_PATTERN_MAX_DEPTH);
		w.path[0] = '\0';
		if (w.n_comps > 0)
			r = walk_level(&w, root_fd, 0);
	}
	if (r < 0) {
		for (size_t j = 0; j < w.n; j++)
			free(w.pods[j].cgroup);
		free(w.pods);
		return r;
	}
	if (w.n > 1)
		qsort(w.pods, w.n, sizeof(*w.pods), cmp_pod);
	/* Drop duplicates (overlapping patterns) and cgroups nested in an earlier match. */
	for (size_t i = 0; i < w.n; i++) {
		if (kept > 0) {
			const char *prev = w.pods[kept - 1].cgroup;
			size_t pl = strlen(prev);
			if (strcmp(prev, w.pods[i].cgroup) == 0 ||
			    (strncmp(prev, w.pods[i].cgroup, pl) == 0 && w.pods[i].cgroup[pl] == '/')) {
				free(w.pods[i].cgroup);
				continue;
			}
		}
		w.pods[kept++] = w.pods[i];
	}
	if (kept == 0) {
		free(w.pods);
		w.pods = NULL;
	}
	*ret = w.pods;
	*ret_n = kept;
	return 0;
}
