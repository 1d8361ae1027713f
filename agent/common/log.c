/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

/* The agent is one process with one log; a library would not keep this (libpreempt does not). */
static log_target target = LOG_TARGET_STDERR;
static int max_priority = LOG_INFO;
static const char *journal_path = LOG_JOURNAL_SOCKET;
static int journal_fd = -1;
static const char *log_identifier = "evictd";
/* Entries journald did not take (they went to stderr); reported once the socket accepts again. */
static unsigned long journal_dropped;
static unsigned long stderr_lost; /* entries neither destination took (both stalled) */

#define MESSAGE_MAX 1536
/* One stderr line: the message and every field, with room for the separators. */
#define LINE_MAX_BYTES (64 + MESSAGE_MAX + LOG_FIELDS_MAX * (LOG_FIELD_SIZE + 1) + 4)

static bool journal_stream_is_stderr(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(log_target t)
{
	struct stat st;

	if (t != LOG_TARGET_AUTO) {
		target = t;
		return;
	}
	if (journal_stream_is_stderr() ||
	    (!isatty(STDERR_FILENO) && stat(journal_path, &st) == 0 && S_ISSOCK(st.st_mode)))
		target = LOG_TARGET_JOURNAL;
	else
		target = LOG_TARGET_STDERR;
}

void log_set_journal_socket(const char *path)
{
	journal_path = path ? path : LOG_JOURNAL_SOCKET;
}

log_target log_get_target(void)
{
	return target;
}

void log_set_max_priority(int prio)
{
	max_priority = prio;
}

unsigned long log_journal_dropped(void)
{
	return journal_dropped;
}

int log_target_from_string(const char *s, log_target *ret)
{
	if (strcmp(s, "auto") == 0)
		*ret = LOG_TARGET_AUTO;
	else if (strcmp(s, "journal") == 0)
		*ret = LOG_TARGET_JOURNAL;
	else if (strcmp(s, "stderr") == 0)
		*ret = LOG_TARGET_STDERR;
	else
		return -EINVAL;
	return 0;
}

void log_entry_init(log_entry *e, int priority, const char *message_id)
{
	e->priority = priority;
	e->message_id = message_id;
	e->n = 0;
}

void log_entry_add(log_entry *e, const char *key, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (e->n >= LOG_FIELDS_MAX)
		return;
	char *f = e->fields[e->n];
	k = snprintf(f, LOG_FIELD_SIZE, "%s=", key);
	if (k < 0 || k >= LOG_FIELD_SIZE)
		return;
	va_start(ap, fmt);
	int m = vsnprintf(f + k, LOG_FIELD_SIZE - (size_t)k, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	if ((size_t)k + (size_t)m >= LOG_FIELD_SIZE)
		memcpy(f + LOG_FIELD_SIZE - 4, "\xe2\x80\xa6", 4);
	/* A newline would end the field in the native protocol's simple form. */
	for (char *p = f; *p; p++)
		if (*p == '\n')
			*p = ' ';
	e->n++;
}

void log_set_identifier(const char *ident)
{
	log_identifier = ident;
}

static const char *prio_name(int p)
{
	static const char *const n[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug" };
	return p >= 0 && p <= 7 ? n[p] : "info";
}

/*
 * The journal's native protocol (systemd.io/JOURNAL_NATIVE_PROTOCOL), sent by hand instead of
 * sd_journal_sendv(): libsystemd's socket blocks in sendmsg() when journald stops reading (its
 * receive queue full), which would stop evictd's monitoring with it. Here every datagram is sent
 * with MSG_DONTWAIT; an entry journald cannot take now goes to stderr and is counted.
 * Returns 0, -EAGAIN (journald busy) or another -errno (no journal, entry too large, ...).
 */
static int journal_send(const char *message, int priority, const char *message_id, const log_entry *e)
{
	char prio[16], id[64], ident[64];
	uint64_t msg_len = strlen(message);
	uint8_t le[8];
	struct iovec iov[2 * LOG_FIELDS_MAX + 8]; /* each field: its text, then "\n" */
	size_t n = 0;

	if (journal_fd < 0) {
		journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (journal_fd < 0)
			return -errno;
		/* Entries are a few KiB; a larger send buffer only queues more that journald is not reading. */
	}
	/* MESSAGE may hold newlines (a command's stderr tail): the binary-safe form, length first. */
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(msg_len >> (8 * i));
	iov[n++] = (struct iovec){ "MESSAGE\n", 8 };
	iov[n++] = (struct iovec){ le, 8 };
	iov[n++] = (struct iovec){ (void *)message, msg_len };
	iov[n++] = (struct iovec){ "\n", 1 };
	int k = snprintf(prio, sizeof(prio), "PRIORITY=%d\n", priority);
	iov[n++] = (struct iovec){ prio, (size_t)k };
	k = snprintf(ident, sizeof(ident), "SYSLOG_IDENTIFIER=%.40s\n", log_identifier);
	iov[n++] = (struct iovec){ ident, (size_t)k };
	if (message_id) {
		k = snprintf(id, sizeof(id), "MESSAGE_ID=%.40s\n", message_id);
		iov[n++] = (struct iovec){ id, (size_t)k };
	}
	for (size_t i = 0; e && i < e->n; i++) {
		iov[n++] = (struct iovec){ (void *)e->fields[i], strlen(e->fields[i]) };
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
 * fields: only for an entry the journal did not take (journald busy or gone), where the line is
 * all that is left of the entry; on a terminal or a log file the message says it, for a person,
 * and "[EVICTD_CONFIG_LINE=2]" after it says nothing more (the journal keeps its fields).
 */
static void stderr_line(const log_entry *e, int priority, const char *message, bool fields)
{
	char line[LINE_MAX_BYTES];
	size_t l = 0;

#define APPEND(...) do { \
		if (l < sizeof(line)) { \
			int k_ = snprintf(line + l, sizeof(line) - l, __VA_ARGS__); \
			l += k_ < 0 ? 0 : (size_t)k_; \
		} \
	} while (0)
	/* One line per entry: the message, then (in place of the journal) the structured fields. */
	APPEND("%s: %s: %s", log_identifier, prio_name(priority), message);
	/* Fields the message already says (the reason, the signal name) would only double the line. */
	bool any = false;
	for (size_t i = 0; fields && e && i < e->n; i++) {
		const char *v = strchr(e->fields[i], '=');
		if (v && v[1] && strlen(v + 1) > 2 && strstr(message, v + 1))
			continue;
		APPEND("%s%s", any ? " " : " [", e->fields[i]);
		any = true;
	}
	if (any)
		APPEND("]");
#undef APPEND
	if (l > sizeof(line) - 2)
		l = sizeof(line) - 2; /* cut, but always end the line */
	for (size_t i = 0; i < l; i++)
		if (line[i] == '\n')
			line[i] = ' '; /* one entry, one line: a multi-line message would look like several */
	line[l++] = '\n';
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
	int r = journal_send(msg, LOG_WARNING, NULL, NULL);
	if (r == 0)
		journal_dropped = stderr_lost = 0;
	return r;
}

void log_flush_dropped(void)
{
	if (target == LOG_TARGET_JOURNAL)
		(void)journal_report_dropped();
}

static void send_entry(const log_entry *e, const char *message)
{
	if (e->priority > max_priority)
		return;
	if (target == LOG_TARGET_JOURNAL) {
		int r = journal_report_dropped();
		if (r == 0)
			r = journal_send(message, e->priority, e->message_id, e);
		if (r == 0)
			return;
		/* Busy, gone or refused: do not lose the decision, nor what the journal would have kept. */
		journal_dropped++;
		stderr_line(e, e->priority, message, true);
		return;
	}
	stderr_line(e, e->priority, message, false);
}

void log_entry_send(log_entry *e, const char *fmt, ...)
{
	char message[MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	send_entry(e, message);
}

void log_msg(int priority, const char *fmt, ...)
{
	char message[MESSAGE_MAX];
	log_entry e;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	log_entry_init(&e, priority, NULL);
	send_entry(&e, message);
}

void log_error_errno(int error, const char *fmt, ...)
{
	char message[512];
	va_list ap;

	/* The message, cut at 511 bytes, then ": strerror". */
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	log_msg(LOG_ERR, "%s: %s", message, strerror(error < 0 ? -error : error));
}

const char *format_bytes(int64_t v, char *buf, size_t size)
{
	static const char *const units[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	double d = (double)(v < 0 ? -v : v);
	size_t u = 0;

	while (d >= 1024 && u < 6) {
		d /= 1024;
		u++;
	}
	if (u == 0) {
		snprintf(buf, size, "%" PRId64, v);
		return buf;
	}
	/* Three significant digits: "1.49Gi < 1.5Gi" must not read "1.5Gi < 1.5Gi". */
	char num[32];
	snprintf(num, sizeof(num), "%.*f", d >= 100 ? 0 : d >= 10 ? 1 : 2, d);
	if (strchr(num, '.')) {
		char *end = num + strlen(num) - 1;
		while (*end == '0')
			*end-- = '\0';
		if (*end == '.')
			*end = '\0';
	}
	snprintf(buf, size, "%s%s%s", v < 0 ? "-" : "", num, units[u]);
	return buf;
}
