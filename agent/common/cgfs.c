/* SPDX-License-Identifier: MIT */
#include "cgfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int cgfs_open_file(int dirfd, const char *name)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Without openat2 (Linux < 5.6): one openat(O_NOFOLLOW) per component. */
static int open_dir_walk(int root_fd, const char *path)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	int fd;

	if (*p == '/') {
		if (root_fd != AT_FDCWD)
			return -EXDEV;
		fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	} else
		fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	while (*p) {
		size_t n;
		int next;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0)
			break;
		if (n > NAME_MAX) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			close(fd);
			return -EXDEV;
		}
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
		close(fd);
		if (next < 0)
			return -errno;
		fd = next;
	}
	return fd;
}

int cgfs_open_dir_beneath(int root_fd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (!path || !*path)
		return -EINVAL;
	if (root_fd != AT_FDCWD)
		how.resolve |= RESOLVE_BENEATH;
	else if (path[0] != '/')
		return -EINVAL;
	fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	/* ENOSYS: old kernel; EPERM: a seccomp filter that does not know openat2 yet. */
	if (errno == ENOSYS || errno == EPERM)
		return open_dir_walk(root_fd, path);
	return -errno;
}

ssize_t cgfs_read(int dirfd, const char *name, char *buf, size_t size)
{
	int fd;
	ssize_t n;

	if (size < 2)
		return -EINVAL;
	fd = cgfs_open_file(dirfd, name);
	if (fd < 0)
		return fd;
	n = pread(fd, buf, size - 1, 0);
	if (n < 0) {
		n = -errno;
	} else if ((size_t)n == size - 1) {
		char c;
		/* Full buffer: only fine if the file really ends here. */
		if (pread(fd, &c, 1, n) > 0)
			n = -EFBIG;
	}
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, "max", 3) == 0 && (s[3] == '\n' || s[3] == '\0'))
		return -ERANGE;
	if (*s < '0' || *s > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end != '\0' && *end != '\n' && *end != ' ')
		return -EBADMSG;
	*ret = v;
	return 0;
}

int cgfs_read_u64(int dirfd, const char *name, uint64_t *ret)
{
	char buf[64];
	ssize_t n = cgfs_read(dirfd, name, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return parse_u64(buf, ret);
}

int cgfs_keyed_u64(const char *text, const char *key, uint64_t *ret)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l;) {
		if (strncmp(l, key, klen) == 0 && (l[klen] == ' ' || l[klen] == ':' || l[klen] == '\t')) {
			const char *v = l + klen + (l[klen] == ':');
			return parse_u64(v, ret);
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return -ENOENT;
}

static int psi_line(const char *text, const char *prefix, double *ret)
{
	const char *l = text;
	size_t n = strlen(prefix);

	while (l && *l) {
		if (strncmp(l, prefix, n) == 0) {
			const char *a = strstr(l, "avg10=");
			const char *eol = strchr(l, '\n');
			char *end;
			if (!a || (eol && a > eol))
				return -EBADMSG;
			errno = 0;
			double v = strtod(a + 6, &end);
			if (errno || end == a + 6 || v < 0 || v > 100)
				return -EBADMSG;
			*ret = v;
			return 0;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return -ENOENT;
}

int cgfs_psi_parse(const char *text, double *ret_some_avg10, double *ret_full_avg10)
{
	double some, full;
	int r = psi_line(text, "some ", &some);

	if (r < 0)
		return r;
	/* Older kernels have no "full" line for the system-wide cpu file; memory always has both. */
	r = psi_line(text, "full ", &full);
	if (r < 0)
		return r;
	*ret_some_avg10 = some;
	*ret_full_avg10 = full;
	return 0;
}
