/* SPDX-License-Identifier: MIT */
/*
 * The one log core of both programs: where entries go (the journal or stderr, chosen once from
 * --log-target and $JOURNAL_STREAM), the priority limit, the journal's native protocol (never
 * blocking: an entry journald cannot take now goes to stderr, with its fields, and is counted),
 * and the stderr line (one write(2) per entry, so lines of several writers never interleave).
 *
 * Each program keeps only its vocabulary over it: its MESSAGE_IDs, its fields and its entry
 * builder (agent/common/log.h for evictd and evictd-kube, controller/report/journal.h for
 * preemptd). Those differ in what callers build, not in where entries go.
 */
#ifndef BASE_LOGGING_H
#define BASE_LOGGING_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

typedef enum logging_target {
	LOGGING_AUTO = 0,
	LOGGING_JOURNAL,
	LOGGING_STDERR,
} logging_target;

#define LOGGING_JOURNAL_SOCKET "/run/systemd/journal/socket"
/* The longest stderr line any program asks for (newline included). */
#define LOGGING_LINE_MAX 16384

/* What differs between the programs' logs, set once before logging_setup(). */
typedef struct logging_style {
	const char *identifier;   /* SYSLOG_IDENTIFIER and the stderr prefix (a static string) */
	bool stderr_priority;     /* "ident: warning: message" rather than "ident: message" */
	bool auto_probes_socket;  /* auto: also the journal when stderr is no terminal and the socket is there */
	size_t line_max;          /* bytes of one stderr line, newline included (<= LOGGING_LINE_MAX) */
	bool keep_newlines;       /* a message's newlines stay (a block for a person: preemptd's --verbose
	                           * explanation); otherwise they become spaces, one entry one line */
} logging_style;

void logging_set_style(const logging_style *style);
/* auto: the journal when $JOURNAL_STREAM is our stderr's device:inode (started by systemd; a
 * child of a unit inherits the variable with another stderr), or as the style's probe says. */
void logging_setup(logging_target t);
logging_target logging_get_target(void);
/* $JOURNAL_STREAM names our stderr. */
bool logging_journal_stream_is_stderr(void);
/* "auto", "journal", "stderr"; -EINVAL otherwise. */
int logging_target_parse(const char *s, logging_target *ret);

/* Entries above this syslog priority are dropped (default LOG_INFO). */
void logging_set_max_priority(int prio);
int logging_max_priority(void);
bool logging_priority_shown(int prio);
/* "error", "warning", ...; "info" for what is no syslog priority. */
const char *logging_priority_name(int prio);

/* Where journal entries are sent (tests); NULL: LOGGING_JOURNAL_SOCKET. */
void logging_set_journal_socket(const char *path);
/* Journal entries not delivered (written to stderr instead) and not reported yet. */
unsigned long logging_journal_dropped(void);
/* Sends the pending "N journal entries dropped" entry if the journal takes it now. */
void logging_flush_dropped(void);

/*
 * Renders the stderr line of an entry into line (size bytes, at least 2): the prefix, the
 * message, and with_fields the fields ("KEY=value") the message does not already say, in
 * brackets; newlines become spaces (unless the style keeps them) and the line always ends in one. Returns its length.
 */
size_t logging_render_line(char *line, size_t size, int priority, const char *message,
                           const struct iovec *fields, size_t n_fields, bool with_fields);

/* Sends one entry: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, MESSAGE_ID (unless NULL) and the
 * fields ("KEY=value"; a value may hold newlines), to the target; nothing above the limit. */
void logging_send(int priority, const char *message_id, const char *message,
                  const struct iovec *fields, size_t n_fields);

#endif
