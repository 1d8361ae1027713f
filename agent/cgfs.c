/* SPDX-License-Identifier: MIT */
#include "cgfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ssize_t cgfs_read(int dirfd, const char *name, char *buf, size_t size)
{
	int fd;
	ssize_t n;

	if (size < 2)
		return -EINVAL;
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -errno;
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
