/* SPDX-License-Identifier: MIT */
#include "cgdiscover.h"

#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgfs.h"

const char *cg_mode_name(cg_mode m)
{
	static const char *const n[] = { "unified", "hybrid", "legacy", "absent", "directory" };
	return m <= CG_MODE_DIRECTORY ? n[m] : "?";
}

static bool fs_is(const char *path, long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && (long)sf.f_type == magic;
}

static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

static void read_controllers(cg_info *ci)
{
	int fd = open(ci->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ci->controllers[0] = '\0';
	if (fd >= 0) {
		if (cgfs_read(fd, "cgroup.controllers", ci->controllers, sizeof(ci->controllers)) < 0)
			ci->controllers[0] = '\0';
		close(fd);
	}
	ci->controllers[strcspn(ci->controllers, "\n")] = '\0';
	ci->memory = has_word(ci->controllers, "memory");
	ci->cpu = has_word(ci->controllers, "cpu");
	ci->pids = has_word(ci->controllers, "pids");
	ci->io = has_word(ci->controllers, "io");
}

/* libcgroup lists one entry per controller of each mount; the v2 one is the cgroup2 filesystem. */
static int find_with_libcgroup(char *root, size_t size)
{
	struct cgroup_mount_point mp;
	void *h = NULL;
	int r;

	r = cgroup_init();
	if (r != 0)
		return -ENODEV;
	r = cgroup_get_controller_begin(&h, &mp);
	while (r == 0) {
		if (fs_is(mp.path, CGROUP2_SUPER_MAGIC)) {
			snprintf(root, size, "%s", mp.path);
			cgroup_get_controller_end(&h);
			return 0;
		}
		r = cgroup_get_controller_next(&h, &mp);
	}
	cgroup_get_controller_end(&h);
	return -ENOENT;
}

/*
 * Fallback: the first cgroup2 mount in mountinfo (field after " - " is the fs type) that statfs()
 * confirms (a path over-mounted since is not it). Also tells whether any v1 hierarchy is mounted.
 * Mount points with spaces are escaped (\040) by the kernel and are not unescaped here: such a
 * cgroup2 mount fails the statfs() check and is not used.
 */
static int find_in_mountinfo(char *root, size_t size, bool *ret_any_v1)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int r = -ENOENT;

	*ret_any_v1 = false;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64];
		const char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 || sscanf(sep + 3, "%63s", fstype) != 1)
			continue;
		if (strcmp(fstype, "cgroup") == 0)
			*ret_any_v1 = true;
		else if (strcmp(fstype, "cgroup2") == 0 && r < 0 && fs_is(mnt, CGROUP2_SUPER_MAGIC)) {
			snprintf(root, size, "%s", mnt);
			r = 0;
		}
	}
	fclose(f);
	return r;
}

int cg_discover(const char *configured_root, cg_info *ret)
{
	cg_info ci = { 0 };
	bool any_v1 = false;
	char found[PATH_MAX] = "";

	if (configured_root) {
		char canon[PATH_MAX];
		if (access(configured_root, R_OK | X_OK) < 0)
			return -errno;
		/*
		 * Canonical: pod paths are later opened with no symlink allowed anywhere (evictor), so
		 * symlinks the operator put in the configured path are resolved once, here.
		 */
		if (!realpath(configured_root, canon))
			return -errno;
		snprintf(ci.root, sizeof(ci.root), "%s", canon);
		ci.found_by = "configuration";
		if (!fs_is(configured_root, CGROUP2_SUPER_MAGIC))
			ci.mode = CG_MODE_DIRECTORY;
		else
			ci.mode = fs_is("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC) ? CG_MODE_UNIFIED : CG_MODE_HYBRID;
		read_controllers(&ci);
		*ret = ci;
		return 0;
	}

	char from_mountinfo[PATH_MAX] = "";
	bool in_mountinfo = find_in_mountinfo(from_mountinfo, sizeof(from_mountinfo), &any_v1) == 0;

	if (find_with_libcgroup(found, sizeof(found)) == 0)
		ci.found_by = "libcgroup";
	else if (in_mountinfo) {
		snprintf(found, sizeof(found), "%s", from_mountinfo);
		ci.found_by = "mountinfo (libcgroup declined)";
	} else
		ci.found_by = "mountinfo";

	if (found[0]) {
		snprintf(ci.root, sizeof(ci.root), "%s", found);
		/* hybrid: some controller (typically memory) is still on a v1 hierarchy */
		ci.mode = any_v1 ? CG_MODE_HYBRID : CG_MODE_UNIFIED;
		read_controllers(&ci);
	} else
		ci.mode = any_v1 ? CG_MODE_LEGACY : CG_MODE_ABSENT;
	*ret = ci;
	return 0;
}
