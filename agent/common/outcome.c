/* SPDX-License-Identifier: MIT */
#include "outcome.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int refuse_record(char *why, size_t size, const char *what)
{
	snprintf(why, size, "%s", what);
	return -EBADMSG;
}

/* One "key=value\n" line at *p: value into out (bounded); advances *p. */
static bool take_line(const char **p, const char *end, const char *key, char *out, size_t out_size)
{
	size_t kl = strlen(key);
	const char *s = *p;
	if ((size_t)(end - s) <= kl || memcmp(s, key, kl) != 0 || s[kl] != '=')
		return false;
	s += kl + 1;
	const char *nl = memchr(s, '\n', (size_t)(end - s));
	/* a NUL would cut the value short of what the file says (found by tests/fuzz/fuzz-outcome.c) */
	if (!nl || nl == s || (size_t)(nl - s) >= out_size || memchr(s, '\0', (size_t)(nl - s)))
		return false;
	memcpy(out, s, (size_t)(nl - s));
	out[nl - s] = '\0';
	*p = nl + 1;
	return true;
}

static bool uid_ok(const char *u)
{
	size_t n = strlen(u);
	if (n == 0 || n > 63)
		return false;
	for (; *u; u++)
		if (!((*u >= 'a' && *u <= 'z') || (*u >= 'A' && *u <= 'Z') || (*u >= '0' && *u <= '9') || *u == '-' ||
		      *u == '_'))
			return false;
	return true;
}

int outcome_parse(const char *buf, size_t len, outcome_record *ret, char *why, size_t why_size)
{
	const char *p = buf, *end = buf + len;
	char uid[64], outcome[16], status[8];

	if (len > OUTCOME_MAX)
		return refuse_record(why, why_size, "longer than OUTCOME_MAX (160) bytes");
	if (!take_line(&p, end, "uid", uid, sizeof(uid)) || !uid_ok(uid))
		return refuse_record(why, why_size, "line 1 is not uid=<pod uid>");
	if (!take_line(&p, end, "outcome", outcome, sizeof(outcome)) || strcmp(outcome, "refused") != 0)
		return refuse_record(why, why_size, "line 2 is not outcome=refused");
	if (!take_line(&p, end, "status", status, sizeof(status)) || strlen(status) != 3 ||
	    status[0] < '4' || status[0] > '5' || status[1] < '0' || status[1] > '9' || status[2] < '0' || status[2] > '9')
		return refuse_record(why, why_size, "line 3 is not status=<HTTP status 400-599>");
	if (p != end)
		return refuse_record(why, why_size, "unexpected bytes after line 3");
	snprintf(ret->uid, sizeof(ret->uid), "%s", uid);
	ret->status = atoi(status);
	return 0;
}

int outcome_write(int dirfd, const char *uid, int status)
{
	char name[96], tmp[112], text[OUTCOME_MAX + 1];
	int n, fd, r = 0;

	if (!uid_ok(uid) || status < 400 || status > 599)
		return -EINVAL;
	snprintf(name, sizeof(name), "%s.outcome", uid);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	n = snprintf(text, sizeof(text), "uid=%s\noutcome=refused\nstatus=%d\n", uid, status);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0 || write(fd, text, (size_t)n) != n)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dirfd, tmp, 0);
	return r;
}

int outcome_take(int dirfd, const char *name, outcome_record *ret, char *why, size_t why_size)
{
	char buf[OUTCOME_MAX + 1];
	struct stat st;
	ssize_t n;
	int r;

	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		snprintf(why, why_size, "%s", strerror(errno));
		if (r == -ELOOP)
			(void)unlinkat(dirfd, name, 0);
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(why, why_size, "%s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		r = -EPERM;
		snprintf(why, why_size, "not a regular file");
	} else if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		r = -EPERM;
		snprintf(why, why_size, "not trusted (owner %u, mode %04o; must be root's, not group/world-writable)",
		         (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	} else if ((n = read(fd, buf, sizeof(buf))) < 0) {
		r = -errno;
		snprintf(why, why_size, "%s", strerror(errno));
	} else
		r = outcome_parse(buf, (size_t)n, ret, why, why_size);
	close(fd);
	(void)unlinkat(dirfd, name, 0);
	return r;
}
