/* SPDX-License-Identifier: MIT */
#include "jsonread.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *json_read_own_file(int dfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return "cannot be opened";
	struct stat st;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return "not a regular file of ours";
	if ((size_t)n == size - 1)
		return "too large";
	buf[n] = '\0';
	return NULL;
}

yajl_val json_member(yajl_val obj, const char *key)
{
	const char *path[] = { key, NULL };
	return obj && YAJL_IS_OBJECT(obj) ? yajl_tree_get(obj, path, yajl_t_any) : NULL;
}

bool json_get_str(yajl_val obj, const char *key, char *buf, size_t size)
{
	yajl_val v = json_member(obj, key);
	const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
	if (!s || strlen(s) >= size)
		return false;
	memcpy(buf, s, strlen(s) + 1);
	return true;
}

bool json_get_int(yajl_val obj, const char *key, long long min, long long *ret)
{
	yajl_val v = json_member(obj, key);
	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < min)
		return false;
	*ret = YAJL_GET_INTEGER(v);
	return true;
}

bool json_get_int_or_null(yajl_val obj, const char *key, int64_t *ret, bool *known)
{
	yajl_val v = json_member(obj, key);
	if (v && YAJL_IS_NULL(v)) {
		*known = false;
		*ret = 0;
		return true;
	}
	long long x;
	if (!json_get_int(obj, key, LLONG_MIN, &x))
		return false;
	*ret = x;
	*known = true;
	return true;
}

bool json_get_bool(yajl_val obj, const char *key, bool *ret)
{
	yajl_val v = json_member(obj, key);
	if (!v || !(YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)))
		return false;
	*ret = YAJL_IS_TRUE(v);
	return true;
}
