/* SPDX-License-Identifier: MIT */
#include "inflight.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "jsonbuf.h"
#include "log.h"
#include "atomic-file.h"

#define RECORD_MAX_BYTES 16384

static const char *const phase_names[] = { "terminating", "killing", "exec" };

const char *inflight_phase_to_string(inflight_phase p)
{
	return (unsigned)p < 3 ? phase_names[p] : "unknown";
}

bool inflight_uid_valid(const char *uid)
{
	size_t n = uid ? strlen(uid) : 0;
	if (n == 0 || n >= sizeof(((inflight_record *)0)->uid))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = uid[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

/* The kernel's boot id: a record written before a reboot names processes that no longer exist. */
static int boot_id(char buf[static 40])
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t k = read(fd, buf, 39);
	int r = k < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	size_t n = (size_t)k;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return n > 0 ? 0 : -EBADMSG;
}

static int record_path(const char *dir, const char *uid, char *buf, size_t size)
{
	if (!inflight_uid_valid(uid))
		return -EINVAL;
	return snprintf(buf, size, "%s/%s.json", dir, uid) >= (int)size ? -ENAMETOOLONG : 0;
}

int inflight_save(const char *dir, const inflight_record *r)
{
	char path[PATH_MAX], boot[40];
	int k = record_path(dir, r->uid, path, sizeof(path));
	if (k < 0)
		return k;
	if (boot_id(boot) < 0)
		boot[0] = '\0'; /* no /proc: such a record is never resumed, see load */
	jsonbuf j;
	jb_init(&j, RECORD_MAX_BYTES);
	jb_begin_object(&j);
	jb_key(&j, "boot_id"), jb_string(&j, boot);
	jb_key(&j, "uid"), jb_string(&j, r->uid);
	jb_key(&j, "namespace"), jb_string(&j, r->namespace_);
	jb_key(&j, "name"), jb_string(&j, r->name);
	jb_key(&j, "cgroup"), jb_string(&j, r->cgroup);
	jb_key(&j, "signal"), jb_string(&j, r->signal);
	jb_key(&j, "hard"), jb_bool(&j, r->hard);
	jb_key(&j, "action"), jb_string(&j, r->exec ? "exec" : "kill");
	jb_key(&j, "priority"), jb_int(&j, r->priority);
	jb_key(&j, "grace_usec"), jb_uint(&j, r->grace_usec);
	jb_key(&j, "usage"), jb_int(&j, r->usage);
	jb_key(&j, "expected_reclaim"), jb_int(&j, r->expected_reclaim);
	jb_key(&j, "phase"), jb_string(&j, inflight_phase_to_string(r->phase));
	jb_key(&j, "started_realtime_usec"), jb_uint(&j, r->started_real_usec);
	jb_key(&j, "deadline_realtime_usec"), jb_uint(&j, r->deadline_real_usec);
	jb_end_object(&j);
	k = jb_error(&j);
	if (k == 0) {
		k = atomic_write_file(path, j.buf, j.len);
		if (k == -ENOENT && mkdir(dir, 0755) == 0)
			k = atomic_write_file(path, j.buf, j.len);
	}
	jb_free(&j);
	return k;
}

int inflight_remove(const char *dir, const char *uid)
{
	char path[PATH_MAX];
	int k = record_path(dir, uid, path, sizeof(path));
	if (k < 0)
		return k;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

static bool get_str(yajl_val root, const char *key, char *buf, size_t size)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_string);
	const char *s = YAJL_GET_STRING(v);
	if (!s || strlen(s) >= size)
		return false;
	memcpy(buf, s, strlen(s) + 1);
	return true;
}

static bool get_int(yajl_val root, const char *key, long long min, long long *ret)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_number);
	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < min)
		return false;
	*ret = YAJL_GET_INTEGER(v);
	return true;
}

static bool get_bool(yajl_val root, const char *key, bool *ret)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_any);
	if (!v || !(YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)))
		return false;
	*ret = YAJL_IS_TRUE(v);
	return true;
}

/* Returns NULL (record filled) or what is wrong. */
static const char *parse_record(const char *text, const char *boot, inflight_record *r)
{
	char err[128];
	yajl_val root = yajl_tree_parse(text, err, sizeof(err));
	if (!root)
		return "not valid JSON";
	const char *why = NULL;
	char rec_boot[40], phase[16], action[8];
	long long prio, grace, usage, reclaim, started, deadline;
	if (!get_str(root, "boot_id", rec_boot, sizeof(rec_boot)))
		why = "boot_id missing";
	else if (!boot[0] || strcmp(rec_boot, boot) != 0)
		why = "written before the last reboot";
	else if (!get_str(root, "uid", r->uid, sizeof(r->uid)) || !inflight_uid_valid(r->uid))
		why = "uid missing or invalid";
	else if (!get_str(root, "namespace", r->namespace_, sizeof(r->namespace_)) ||
	         !get_str(root, "name", r->name, sizeof(r->name)) ||
	         !get_str(root, "signal", r->signal, sizeof(r->signal)))
		why = "namespace, name or signal missing";
	else if (!get_str(root, "cgroup", r->cgroup, sizeof(r->cgroup)) || r->cgroup[0] != '/')
		why = "cgroup missing or not an absolute path";
	else if (!get_bool(root, "hard", &r->hard))
		why = "hard missing";
	else if (!get_str(root, "action", action, sizeof(action)) ||
	         (strcmp(action, "kill") != 0 && strcmp(action, "exec") != 0))
		why = "action missing or invalid";
	else if (!get_int(root, "priority", INT32_MIN, &prio) || prio > INT32_MAX ||
	         !get_int(root, "grace_usec", 0, &grace) || !get_int(root, "usage", -1, &usage) ||
	         !get_int(root, "expected_reclaim", -1, &reclaim) ||
	         !get_int(root, "started_realtime_usec", 0, &started) ||
	         !get_int(root, "deadline_realtime_usec", 0, &deadline))
		why = "a number is missing or out of range";
	else if (!get_str(root, "phase", phase, sizeof(phase)))
		why = "phase missing";
	else {
		why = "unknown phase";
		for (unsigned i = 0; i < 3; i++)
			if (strcmp(phase, phase_names[i]) == 0) {
				r->phase = (inflight_phase)i;
				why = NULL;
			}
	}
	if (!why) {
		r->exec = action[0] == 'e';
		r->priority = (int32_t)prio;
		r->grace_usec = (uint64_t)grace;
		r->usage = usage;
		r->expected_reclaim = reclaim;
		r->started_real_usec = (uint64_t)started;
		r->deadline_real_usec = (uint64_t)deadline;
	}
	yajl_tree_free(root);
	return why;
}

static const char *read_record(int dfd, const char *name, char *buf, size_t size)
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

int inflight_load(const char *dir, void (*fn)(const inflight_record *r, void *userdata), void *userdata)
{
	char boot[40];
	if (boot_id(boot) < 0)
		boot[0] = '\0';
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	char *text = malloc(RECORD_MAX_BYTES);
	inflight_record *r = malloc(sizeof(*r));
	int count = 0;
	if (!text || !r) {
		count = -ENOMEM;
		goto out;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (de->d_name[0] != '.' && strstr(de->d_name, ".json.")) {
			(void)unlinkat(dirfd(d), de->d_name, 0); /* the temporary file of an interrupted write */
			continue;
		}
		if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		memset(r, 0, sizeof(*r));
		const char *why = read_record(dirfd(d), de->d_name, text, RECORD_MAX_BYTES);
		if (!why)
			why = parse_record(text, boot, r);
		if (!why && (n - 5 != strlen(r->uid) || strncmp(de->d_name, r->uid, n - 5) != 0))
			why = "file name does not match its uid";
		if (why) {
			log_msg(LOG_WARNING, "In-flight eviction record %s/%s discarded: %s", dir, de->d_name, why);
			(void)unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		fn(r, userdata);
		count++;
	}
out:
	free(text);
	free(r);
	closedir(d);
	return count;
}
