/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

/* The agent is one process with one log; a library would not keep this (libpreempt does not). */
static log_target target = LOG_TARGET_STDERR;
static int max_priority = LOG_INFO;

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
	    (!isatty(STDERR_FILENO) && stat("/run/systemd/journal/socket", &st) == 0 && S_ISSOCK(st.st_mode)))
		target = LOG_TARGET_JOURNAL;
	else
		target = LOG_TARGET_STDERR;
}

log_target log_get_target(void)
{
	return target;
}

void log_set_max_priority(int prio)
{
	max_priority = prio;
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

static const char *prio_name(int p)
{
	static const char *const n[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug" };
	return p >= 0 && p <= 7 ? n[p] : "info";
}

static void send_entry(log_entry *e, const char *message)
{
	char msg[2048], prio[16], id[64];
	struct iovec iov[LOG_FIELDS_MAX + 3];
	size_t n = 0;

	if (e->priority > max_priority)
		return;
	if (target == LOG_TARGET_JOURNAL) {
		snprintf(msg, sizeof(msg), "MESSAGE=%s", message);
		snprintf(prio, sizeof(prio), "PRIORITY=%d", e->priority);
		iov[n++] = (struct iovec){ msg, strlen(msg) };
		iov[n++] = (struct iovec){ prio, strlen(prio) };
		if (e->message_id) {
			snprintf(id, sizeof(id), "MESSAGE_ID=%s", e->message_id);
			iov[n++] = (struct iovec){ id, strlen(id) };
		}
		for (size_t i = 0; i < e->n; i++)
			iov[n++] = (struct iovec){ e->fields[i], strlen(e->fields[i]) };
		if (sd_journal_sendv(iov, (int)n) >= 0)
			return;
		/* The journal refused (not merely absent): do not lose the decision. */
	}
	/* One line per entry: the message, then the structured fields for grep and post-mortems. */
	flockfile(stderr);
	fprintf(stderr, "evictd: %s: %s", prio_name(e->priority), message);
	/* Fields the message already says (the reason, the signal name) would only double the line. */
	bool any = false;
	for (size_t i = 0; i < e->n; i++) {
		const char *v = strchr(e->fields[i], '=');
		if (v && v[1] && strlen(v + 1) > 2 && strstr(message, v + 1))
			continue;
		fputs(any ? " " : " [", stderr);
		fputs(e->fields[i], stderr);
		any = true;
	}
	if (any)
		fputc(']', stderr);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void log_entry_send(log_entry *e, const char *fmt, ...)
{
	char message[1536];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	send_entry(e, message);
}

void log_msg(int priority, const char *fmt, ...)
{
	char message[1536];
	log_entry e;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	log_entry_init(&e, priority, NULL);
	send_entry(&e, message);
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
	if (u == 0)
		snprintf(buf, size, "%" PRId64, v);
	else if (d >= 100 || d == (double)(int64_t)d)
		snprintf(buf, size, "%s%.0f%s", v < 0 ? "-" : "", d, units[u]);
	else
		snprintf(buf, size, "%s%.1f%s", v < 0 ? "-" : "", d, units[u]);
	return buf;
}
