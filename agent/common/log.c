/* SPDX-License-Identifier: MIT */
#include "log.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MESSAGE_MAX 1536
/* One stderr line: the message and every field, with room for the separators. */
#define LINE_MAX_BYTES (64 + MESSAGE_MAX + LOG_FIELDS_MAX * (LOG_FIELD_SIZE + 1) + 4)
_Static_assert(LINE_MAX_BYTES <= LOGGING_LINE_MAX, "an evictd line fits the log core's");

static const char *log_identifier = "evictd";
static bool style_applied;

static void apply_style(void)
{
	logging_set_style(&(logging_style){
		.identifier = log_identifier,
		.stderr_priority = true,
		.auto_probes_socket = true,
		.line_max = LINE_MAX_BYTES,
	});
	style_applied = true;
}

void log_setup(logging_target t)
{
	apply_style();
	logging_setup(t);
}

void log_set_identifier(const char *ident)
{
	log_identifier = ident;
	apply_style();
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

static void send_entry(const log_entry *e, const char *message)
{
	struct iovec fields[LOG_FIELDS_MAX];

	if (!style_applied)
		apply_style();
	for (size_t i = 0; i < e->n; i++)
		fields[i] = (struct iovec){ (void *)e->fields[i], strlen(e->fields[i]) };
	logging_send(e->priority, e->message_id, message, fields, e->n);
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

const char *log_format_bytes(int64_t v, char *buf, size_t size)
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
