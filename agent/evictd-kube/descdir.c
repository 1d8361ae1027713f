/* SPDX-License-Identifier: MIT */
#include "descdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DESC_MAX 16384

struct descdir {
	int fd;
	char *path;
};

int descdir_open(const char *path, descdir **ret)
{
	descdir *d;
	int fd;

	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(path))) {
		free(d);
		close(fd);
		return -ENOMEM;
	}
	d->fd = fd;
	*ret = d;
	return 0;
}

descdir *descdir_free(descdir *d)
{
	if (!d)
		return NULL;
	close(d->fd);
	free(d->path);
	free(d);
	return NULL;
}

static bool same_content(int dirfd, const char *name, const char *text, size_t len)
{
	char buf[DESC_MAX + 1];
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n >= 0 && (size_t)n == len && memcmp(buf, text, len) == 0;
}

int descdir_put(descdir *d, const char *uid, const char *text, size_t len)
{
	char name[128], tmp[140];
	int fd, r = 0;

	if (len > DESC_MAX)
		return -EFBIG;
	snprintf(name, sizeof(name), "%s.conf", uid);
	if (same_content(d->fd, name, text, len))
		return 0;
	snprintf(tmp, sizeof(tmp), ".tmp-%s", name);
	fd = openat(d->fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	(void)fchmod(fd, 0644); /* evictd refuses group/other-writable descriptors */
	for (size_t off = 0; off < len && r == 0;) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(d->fd, tmp, d->fd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(d->fd, tmp, 0);
		return r;
	}
	return 1;
}

int descdir_remove(descdir *d, const char *uid)
{
	char name[128];

	snprintf(name, sizeof(name), "%s.conf", uid);
	if (unlinkat(d->fd, name, 0) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 1;
}

static int walk(descdir *d, bool (*keep)(const char *uid, void *userdata), void *userdata, bool prune)
{
	int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int n = 0;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		char uid[128];
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || l >= sizeof(uid) || strcmp(de->d_name + l - 5, ".conf") != 0)
			continue;
		if (!prune) {
			n++;
			continue;
		}
		snprintf(uid, sizeof(uid), "%.*s", (int)(l - 5), de->d_name);
		if (!keep(uid, userdata) && unlinkat(d->fd, de->d_name, 0) == 0)
			n++;
	}
	closedir(dir);
	return n;
}

int descdir_prune(descdir *d, bool (*keep)(const char *uid, void *userdata), void *userdata)
{
	return walk(d, keep, userdata, true);
}

unsigned descdir_count(const descdir *d)
{
	int n = walk((descdir *)d, NULL, NULL, false);
	return n > 0 ? (unsigned)n : 0;
}
