/* SPDX-License-Identifier: MIT */
#include "journal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

static journal_target target = JOURNAL_STDERR;
static const char *identifier = "preemptd";
static int max_priority = LOG_INFO;

/* systemd connects our stderr to the journal and says so in $JOURNAL_STREAM (device:inode). */
static bool started_by_systemd(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void journal_setup(journal_target t, const char *ident)
{
	if (ident)
		identifier = ident;
	target = t == JOURNAL_AUTO ? (started_by_systemd() ? JOURNAL_ON : JOURNAL_STDERR) : t;
}

bool journal_is_journal(void)
{
	return target == JOURNAL_ON;
}

int journal_target_parse(const char *s, journal_target *ret)
{
	static const char *const names[] = { "auto", "journal", "stderr" };
	for (size_t i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (journal_target)i;
			return 0;
		}
	return -EINVAL;
}

void journal_set_max_priority(int prio)
{
	max_priority = prio;
}

int journal_max_priority(void)
{
	return max_priority;
}

void journal_entry_init(journal_entry *e, int priority, const char *message_id)
{
	*e = (journal_entry){ .priority = priority, .message_id = message_id };
}

void journal_entry_add(journal_entry *e, const char *key, const char *fmt, ...)
{
	size_t room = sizeof(e->buf) - e->used;
	char *at = e->buf + e->used;
	va_list ap;
	int k, v;

	if (e->n == JOURNAL_FIELDS_MAX || room < strlen(key) + 2)
		return;
	k = snprintf(at, room, "%s=", key);
	va_start(ap, fmt);
	v = vsnprintf(at + k, room - (size_t)k, fmt, ap);
	va_end(ap);
	if (v < 0)
		return;
	size_t len = (size_t)k + ((size_t)v < room - (size_t)k ? (size_t)v : room - (size_t)k - 1);
	e->start[e->n] = e->used;
	e->size[e->n++] = len;
	e->used += len + 1;
}

/* One line, one write(2): lines of concurrent writers never interleave. */
static void to_stderr(const char *msg)
{
	char line[4096];
	int n = snprintf(line, sizeof(line), "%s: %s\n", identifier, msg);

	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	(void)!write(STDERR_FILENO, line, (size_t)n);
}

static void send_entry(journal_entry *e, const char *msg)
{
	char prio[16], ident[64], msgid[64], message[4096 + 8];
	struct iovec iov[JOURNAL_FIELDS_MAX + 4];
	size_t n = 0;

	if (e->priority > max_priority)
		return;
	if (target != JOURNAL_ON) {
		to_stderr(msg);
		return;
	}
	snprintf(message, sizeof(message), "MESSAGE=%s", msg);
	snprintf(prio, sizeof(prio), "PRIORITY=%d", e->priority);
	snprintf(ident, sizeof(ident), "SYSLOG_IDENTIFIER=%s", identifier);
	iov[n++] = (struct iovec){ message, strlen(message) };
	iov[n++] = (struct iovec){ prio, strlen(prio) };
	iov[n++] = (struct iovec){ ident, strlen(ident) };
	if (e->message_id) {
		snprintf(msgid, sizeof(msgid), "MESSAGE_ID=%s", e->message_id);
		iov[n++] = (struct iovec){ msgid, strlen(msgid) };
	}
	for (size_t i = 0; i < e->n; i++)
		iov[n++] = (struct iovec){ e->buf + e->start[i], e->size[i] };
	/* the journal gone (journald restarting): the line is not lost */
	if (sd_journal_sendv(iov, (int)n) < 0)
		to_stderr(msg);
}

void journal_entry_send(journal_entry *e, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	send_entry(e, msg);
}

void journal_msg(int priority, const char *fmt, ...)
{
	journal_entry e;
	char msg[4096];
	va_list ap;

	journal_entry_init(&e, priority, NULL);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	send_entry(&e, msg);
}
