/* SPDX-License-Identifier: MIT */
#include "journal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

/* The stderr line as preemptd always wrote it, message and prefix cut at 4 KiB. */
#define LINE_MAX_BYTES 4096

static const char *identifier = "preemptd";
static bool style_applied;

static void apply_style(void)
{
	logging_set_style(&(logging_style){
		.identifier = identifier,
		.stderr_priority = false,
		.auto_probes_socket = false,
		.line_max = LINE_MAX_BYTES,
		.keep_newlines = true, /* --verbose's "Why pod ..." block reads as preemptctl --explain's */
	});
	style_applied = true;
}

void journal_setup(logging_target t, const char *ident)
{
	if (ident)
		identifier = ident;
	apply_style();
	logging_setup(t);
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

static void send_entry(journal_entry *e, const char *msg)
{
	struct iovec fields[JOURNAL_FIELDS_MAX];

	if (!style_applied)
		apply_style();
	for (size_t i = 0; i < e->n; i++)
		fields[i] = (struct iovec){ e->buf + e->start[i], e->size[i] };
	logging_send(e->priority, e->message_id, msg, fields, e->n);
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
