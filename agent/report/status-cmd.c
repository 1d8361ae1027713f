/* SPDX-License-Identifier: MIT */
#include "status-cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "status-file.h"
#include "clock.h"

#define POLL_USEC 20000ULL

/* The whole file (at most STATUS_MAX_BYTES), NUL-terminated. Returns 0 or -errno. */
static int read_text(const char *path, char **ret, size_t *ret_len, struct stat *ret_st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (st.st_size > STATUS_MAX_BYTES) {
		close(fd);
		return -EFBIG;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t len = 0;
	int r = buf ? 0 : -ENOMEM;
	while (r == 0 && len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		else if (n == 0)
			break; /* replaced and truncated under us cannot happen (rename), but stay bounded */
		else
			len += (size_t)n;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	if (ret_st)
		*ret_st = st;
	return 0;
}

/* The value after the first top-level "key": (not one inside a string: preceded by a backslash). */
static const char *find_value(const char *text, const char *key)
{
	char pat[48];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (const char *s = strstr(text, pat); s; s = strstr(s + 1, pat))
		if (s == text || s[-1] != '\\')
			return s + strlen(pat);
	return NULL;
}

void status_summary_parse(const char *text, status_summary *ret)
{
	status_summary s = { .pid = -1 };
	const char *v;
	char *end;

	if ((v = find_value(text, "pid"))) {
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (!errno && end != v && x > 0)
			s.pid = x;
	}
	if ((v = find_value(text, "state")) && *v == '"') {
		size_t n = strcspn(v + 1, "\"\\");
		if (v[1 + n] == '"' && n < sizeof(s.state))
			memcpy(s.state, v + 1, n);
	}
	if ((v = find_value(text, "updated_usec"))) {
		errno = 0;
		unsigned long long x = strtoull(v, &end, 10);
		if (!errno && end != v)
			s.updated_usec = x;
	}
	*ret = s;
}

int status_pid_is_evictd(const char *proc_root, int64_t pid)
{
	char path[4096], comm[32];
	if (pid <= 0 || pid > INT32_MAX)
		return 0;
	snprintf(path, sizeof(path), "%s/%" PRId64 "/comm", proc_root ? proc_root : "/proc", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? 0 : -errno;
	ssize_t n = read(fd, comm, sizeof(comm) - 1);
	int r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r == -ESRCH ? 0 : r;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	/* A zombie or a pid reused by another program is not the daemon. */
	return strcmp(comm, "evictd") == 0;
}

static void format_age(uint64_t updated_usec, char *buf, size_t size)
{
	uint64_t now = clock_wall_usec();
	if (!updated_usec || updated_usec > now) {
		snprintf(buf, size, "at an unknown time");
		return;
	}
	uint64_t s = (now - updated_usec) / 1000000ULL;
	if (s < 120)
		snprintf(buf, size, "%" PRIu64 " s ago", s);
	else if (s < 7200)
		snprintf(buf, size, "%" PRIu64 " min ago", s / 60);
	else
		snprintf(buf, size, "%" PRIu64 " h ago", s / 3600);
}

/*
 * Why the daemon that wrote the file is not running, in words, or NULL when it is. A stopping
 * daemon counts as not running: it no longer decides anything.
 */
static const char *not_running_reason(const status_summary *s, const char *proc_root, char *buf, size_t size)
{
	char age[32];
	format_age(s->updated_usec, age, sizeof(age));
	if (s->pid < 0) {
		snprintf(buf, size, "no pid in the status file (written %s)", age);
		return buf;
	}
	int r = status_pid_is_evictd(proc_root, s->pid);
	if (r == 0) {
		bool exists = kill((pid_t)s->pid, 0) == 0 || errno == EPERM;
		snprintf(buf, size, "its pid %" PRId64 " %s (last update %s)", s->pid,
		         exists ? "now belongs to another program" : "has exited", age);
		return buf;
	}
	if (r > 0 && strcmp(s->state, "running") != 0) {
		snprintf(buf, size, "pid %" PRId64 " is %s (last update %s)", s->pid,
		         s->state[0] ? s->state : "in an unknown state", age);
		return buf;
	}
	return NULL; /* alive, or cannot be told (hidepid): the file speaks for itself */
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int status_command(const char *status_file, const char *proc_root)
{
	const char *path = status_file ? status_file : STATUS_FILE_DEFAULT;
	char *text = NULL, why[160];
	size_t len = 0;
	int r = read_text(path, &text, &len, NULL);

	if (r == -ENOENT) {
		fprintf(stderr, "evictd is not running: %s does not exist\n", path);
		return STATUS_EXIT_NOT_RUNNING;
	}
	if (r < 0) {
		fprintf(stderr, "evictd: %s: %s\n", path, strerror(-r));
		return EXIT_FAILURE;
	}
	status_summary s;
	status_summary_parse(text, &s);
	if (not_running_reason(&s, proc_root, why, sizeof(why))) {
		fprintf(stderr, "evictd is not running: %s; %s is stale\n", why, path);
		free(text);
		return STATUS_EXIT_NOT_RUNNING;
	}
	r = write_all(STDOUT_FILENO, text, len);
	if (r == 0 && (len == 0 || text[len - 1] != '\n'))
		r = write_all(STDOUT_FILENO, "\n", 1);
	free(text);
	if (r < 0) {
		fprintf(stderr, "evictd: writing the status: %s\n", strerror(-r));
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

/* The status file was rewritten (a new inode: it is replaced by rename) at or after since_usec. */
static bool rewritten_since(const char *path, ino_t old_ino, uint64_t since_usec)
{
	char *text = NULL;
	size_t len;
	struct stat st;
	if (read_text(path, &text, &len, &st) < 0)
		return false;
	status_summary s;
	status_summary_parse(text, &s);
	free(text);
	return st.st_ino != old_ino && s.updated_usec >= since_usec;
}

int status_cmd_reload(int64_t pid, const char *status_file, const char *proc_root, uint64_t timeout_usec)
{
	const char *path = status_file ? status_file : STATUS_FILE_DEFAULT;
	struct stat st = { 0 };
	char *text = NULL;
	size_t len;
	int r = read_text(path, &text, &len, &st);

	if (r < 0 && pid == 0) {
		fprintf(stderr, "evictd: cannot find the daemon's pid: %s: %s\n", path, strerror(-r));
		return STATUS_EXIT_NOT_RUNNING;
	}
	if (r == 0 && pid == 0) {
		status_summary s;
		status_summary_parse(text, &s);
		pid = s.pid;
	}
	free(text);
	r = status_pid_is_evictd(proc_root, pid);
	if (r <= 0) {
		fprintf(stderr, "evictd: pid %" PRId64 " is not a running evictd%s%s\n", pid,
		        r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
		return STATUS_EXIT_NOT_RUNNING;
	}
	uint64_t t0 = clock_wall_usec();
	if (kill((pid_t)pid, SIGHUP) < 0) {
		fprintf(stderr, "evictd: cannot signal pid %" PRId64 ": %s\n", pid, strerror(errno));
		return EXIT_FAILURE;
	}
	/* The daemon rewrites its status file once the reload is done (accepted or rejected). */
	for (uint64_t waited = 0; waited < timeout_usec; waited += POLL_USEC) {
		if (rewritten_since(path, st.st_ino, t0))
			return EXIT_SUCCESS;
		struct timespec ts = { 0, (long)POLL_USEC * 1000L };
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "evictd: sent SIGHUP to pid %" PRId64 "; %s not rewritten within %" PRIu64 " s\n", pid, path,
	        (uint64_t)(timeout_usec / 1000000U));
	return EXIT_SUCCESS;
}
