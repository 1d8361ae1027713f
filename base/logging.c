/* SPDX-License-Identifier: MIT */
#include "logging.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

/* A program is one process with one log; a library would not keep this (libpreempt does not). */
static logging_target current_target = LOGGING_STDERR;
static int max_priority = LOG_INFO;
static logging_style current_style = { .identifier = "evictd", .stderr_priority = true, .line_max = LOGGING_LINE_MAX };
static const char *journal_path = LOGGING_JOURNAL_SOCKET;
static int journal_fd = -1;
/* Entries journald did not take (they went to stderr); reported once the socket accepts again. */
static unsigned long journal_dropped;
static unsigned long stderr_lost; /* entries neither destination took (both stalled) */

/* More fields than any program's entry holds; the rest would be left out. */
#define FIELDS_MAX 32

void logging_set_style(const logging_style *s)
{
	current_style = *s;
	if (current_style.line_max < 2 || current_style.line_max > LOGGING_LINE_MAX)
		current_style.line_max = LOGGING_LINE_MAX;
}

bool logging_journal_stream_is_stderr(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void logging_setup(logging_target t)
{
	struct stat st;

	if (t != LOGGING_AUTO) {
		current_target = t;
		return;
	}
	if (logging_journal_stream_is_stderr() ||
	    (current_style.auto_probes_socket && !isatty(STDERR_FILENO) && stat(journal_path, &st) == 0 && S_ISSOCK(st.st_mode)))
		current_target = LOGGING_JOURNAL;
	else
		current_target = LOGGING_STDERR;
}

logging_target logging_get_target(void)
{
	return current_target;
}

int logging_target_parse(const char *s, logging_target *ret)
{
	static const char *const names[] = { "auto", "journal", "stderr" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (logging_target)i;
			return 0;
		}
	return -EINVAL;
}

void logging_set_max_priority(int prio)
{
	max_priority = prio;
}

int logging_max_priority(void)
{
	return max_priority;
}

bool logging_priority_shown(int prio)
{
	return prio <= max_priority;
}

const char *logging_priority_name(int p)
{
	static const char *const n[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug" };
	return p >= 0 && p <= 7 ? n[p] : "info";
}

void logging_set_journal_socket(const char *path)
{
	journal_path = path ? path : LOGGING_JOURNAL_SOCKET;
}

unsigned long logging_journal_dropped(void)
{
	return journal_dropped;
}

/*
 * The journal's native protocol (systemd.io/JOURNAL_NATIVE_PROTOCOL), sent by hand instead of
 * sd_journal_sendv(): libsystemd's socket blocks in sendmsg() when journald stops reading (its
 * receive queue full), which would stop a daemon's work with it. Here every datagram is sent
 * with MSG_DONTWAIT; an entry journald cannot take now goes to stderr and is counted.
 * Returns 0, -EAGAIN (journald busy) or another -errno (no journal, entry too large, ...).
 */
static int journal_send(const char *message, int priority, const char *message_id,
                        const struct iovec *fields, size_t n_fields)
{
	char prio[16], id[64], ident[64];
	uint8_t le[FIELDS_MAX + 1][8];
	struct iovec iov[4 * (FIELDS_MAX + 1) + 4];
	size_t n = 0;

	if (journal_fd < 0) {
		journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (journal_fd < 0)
			return -errno;
		/* Entries are a few KiB; a larger send buffer only queues more that journald is not reading. */
	}
	/* MESSAGE may hold newlines (a command's stderr tail): the binary-safe form, length first. */
	uint64_t msg_len = strlen(message);
	for (int i = 0; i < 8; i++)
		le[0][i] = (uint8_t)(msg_len >> (8 * i));
	iov[n++] = (struct iovec){ "MESSAGE\n", 8 };
	iov[n++] = (struct iovec){ le[0], 8 };
	iov[n++] = (struct iovec){ (void *)message, msg_len };
	iov[n++] = (struct iovec){ "\n", 1 };
	int k = snprintf(prio, sizeof(prio), "PRIORITY=%d\n", priority);
	iov[n++] = (struct iovec){ prio, (size_t)k };
	k = snprintf(ident, sizeof(ident), "SYSLOG_IDENTIFIER=%.40s\n", current_style.identifier);
	iov[n++] = (struct iovec){ ident, (size_t)k };
	if (message_id) {
		k = snprintf(id, sizeof(id), "MESSAGE_ID=%.40s\n", message_id);
		iov[n++] = (struct iovec){ id, (size_t)k };
	}
	for (size_t i = 0; i < n_fields && i < FIELDS_MAX; i++) {
		const char *f = fields[i].iov_base;
		const char *eq = memchr(f, '=', fields[i].iov_len);
		if (!eq)
			continue;
		if (!memchr(f, '\n', fields[i].iov_len)) {
			iov[n++] = fields[i];
			iov[n++] = (struct iovec){ "\n", 1 };
			continue;
		}
		/* A value with newlines: the binary-safe form (KEY, newline, length, value). */
		uint64_t len = fields[i].iov_len - (size_t)(eq + 1 - f);
		for (int b = 0; b < 8; b++)
			le[i + 1][b] = (uint8_t)(len >> (8 * b));
		iov[n++] = (struct iovec){ (void *)f, (size_t)(eq - f) };
		iov[n++] = (struct iovec){ "\n", 1 };
		iov[n++] = (struct iovec){ le[i + 1], 8 };
		iov[n++] = (struct iovec){ (void *)(eq + 1), len };
		iov[n++] = (struct iovec){ "\n", 1 };
	}
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(journal_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, journal_path, strlen(journal_path) + 1);
	struct msghdr mh = {
		.msg_name = &sa,
		.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(journal_path) + 1),
		.msg_iov = iov,
		.msg_iovlen = n,
	};
	if (sendmsg(journal_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
		return 0;
	int r = -errno;
	return r == -EWOULDBLOCK || r == -ENOBUFS ? -EAGAIN : r;
}

/*
 * One write(2) per line: stdio writes a line in pieces, and two processes sharing stderr (a
 * forked child, a wrapper) then interleave inside each other's lines.
 *
 * Without blocking for good where stderr is itself a pipe or stream that nobody reads (journald's
 * stdout stream while the journal is stuck): a full pipe gets STDERR_WAIT_MSEC to drain (a slow
 * reader loses nothing); after that the reader counts as stuck and lines are dropped (counted)
 * at once, until one goes through again.
 */
#define STDERR_WAIT_MSEC 100
static bool stderr_stuck;

static ssize_t write_nowait(const char *buf, size_t len, bool *nowait_pipe)
{
	ssize_t w = send(STDERR_FILENO, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (w >= 0 || errno != ENOTSOCK)
		return w;
	if (*nowait_pipe) {
		struct iovec v = { (void *)buf, len };
		w = pwritev2(STDERR_FILENO, &v, 1, -1, RWF_NOWAIT);
		if (w >= 0 || (errno != EOPNOTSUPP && errno != EINVAL))
			return w;
		*nowait_pipe = false; /* a kernel without RWF_NOWAIT on pipes */
	}
	return write(STDERR_FILENO, buf, len);
}

static void write_stderr(const char *buf, size_t len)
{
	struct stat st;
	bool nowait_pipe = fstat(STDERR_FILENO, &st) == 0 && S_ISFIFO(st.st_mode);

	while (len > 0) {
		ssize_t w = write_nowait(buf, len, &nowait_pipe);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN && !stderr_stuck) {
			struct pollfd pfd = { .fd = STDERR_FILENO, .events = POLLOUT };
			if (poll(&pfd, 1, STDERR_WAIT_MSEC) > 0)
				continue;
			stderr_stuck = true;
		}
		if (w < 0) {
			stderr_lost++; /* the reader is stuck too: the entry is lost, not the daemon */
			return;
		}
		stderr_stuck = false;
		buf += w;
		len -= (size_t)w;
	}
}

/*
 * with_fields: only for an entry the journal did not take (journald busy or gone), where the line
 * is all that is left of the entry; on a terminal or a log file the message says it, for a
 * person, and "[EVICTD_CONFIG_LINE=2]" after it says nothing more (the journal keeps its fields).
 */
size_t logging_render_line(char *line, size_t size, int priority, const char *message,
                           const struct iovec *fields, size_t n_fields, bool with_fields)
{
	size_t l = 0;

#define LINE_APPEND(...) do { \
		if (l < size) { \
			int k_ = snprintf(line + l, size - l, __VA_ARGS__); \
			l += k_ < 0 ? 0 : (size_t)k_; \
		} \
	} while (0)
	if (current_style.stderr_priority)
		LINE_APPEND("%s: %s: %s", current_style.identifier, logging_priority_name(priority), message);
	else
		LINE_APPEND("%s: %s", current_style.identifier, message);
	/* Fields the message already says (the reason, the signal name) would only double the line. */
	bool any = false;
	for (size_t i = 0; with_fields && i < n_fields; i++) {
		const char *f = fields[i].iov_base;
		int flen = fields[i].iov_len > 4096 ? 4096 : (int)fields[i].iov_len;
		const char *v = memchr(f, '=', (size_t)flen);
		char value[4097];
		if (v) {
			size_t vl = (size_t)(f + flen - (v + 1));
			memcpy(value, v + 1, vl);
			value[vl] = '\0';
			if (vl > 2 && strstr(message, value))
				continue;
		}
		LINE_APPEND("%s%.*s", any ? " " : " [", flen, f);
		any = true;
	}
	if (any)
		LINE_APPEND("]");
#undef LINE_APPEND
	if (l > size - 2)
		l = size - 2; /* cut, but always end the line */
	for (size_t i = 0; i < l && !current_style.keep_newlines; i++)
		if (line[i] == '\n')
			line[i] = ' '; /* one entry, one line: a multi-line message would look like several */
	line[l++] = '\n';
	return l;
}

static void stderr_line(int priority, const char *message, const struct iovec *fields, size_t n_fields, bool with_fields)
{
	char line[LOGGING_LINE_MAX];
	size_t l = logging_render_line(line, current_style.line_max, priority, message, fields, n_fields, with_fields);

	write_stderr(line, l);
}

/* Reports the entries journald missed, once it accepts entries again. */
static int journal_report_dropped(void)
{
	if (!journal_dropped)
		return 0;
	char msg[200];
	snprintf(msg, sizeof(msg), "%lu journal entries dropped (journald was not reading); they were written to stderr%s",
	         journal_dropped, stderr_lost ? ", where some were lost too (stderr blocked)" : "");
	int r = journal_send(msg, LOG_WARNING, NULL, NULL, 0);
	if (r == 0)
		journal_dropped = stderr_lost = 0;
	return r;
}

void logging_flush_dropped(void)
{
	if (current_target == LOGGING_JOURNAL)
		(void)journal_report_dropped();
}

void logging_send(int priority, const char *message_id, const char *message,
                  const struct iovec *fields, size_t n_fields)
{
	if (!logging_priority_shown(priority))
		return;
	if (current_target == LOGGING_JOURNAL) {
		int r = journal_report_dropped();
		if (r == 0)
			r = journal_send(message, priority, message_id, fields, n_fields);
		if (r == 0)
			return;
		/* Busy, gone or refused: do not lose the decision, nor what the journal would have kept. */
		journal_dropped++;
		stderr_line(priority, message, fields, n_fields, true);
		return;
	}
	stderr_line(priority, message, fields, n_fields, false);
}
