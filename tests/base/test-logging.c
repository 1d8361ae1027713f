/* SPDX-License-Identifier: MIT */
/*
 * The log core both programs write through (base/logging.c): where entries go (auto takes the
 * journal only when $JOURNAL_STREAM is our own stderr's device:inode, or, where the program's
 * style asks, when stderr is no terminal and the journal's socket is there), the priority limit,
 * the stderr line ("ident: warning: message" or "ident: message", one line, cut lines still ended)
 * and the entry journald receives (MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, MESSAGE_ID, the fields,
 * a value with newlines in the binary-safe form), or its stderr line with the fields when
 * journald is not there.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <cmocka.h>

#include "logging.h"
#include "stderr-capture.h"

#define NO_SOCKET "/run/evictd-test-no-such-journal-socket"

static void set_style(const char *ident, bool with_priority, bool probe, size_t line_max)
{
	logging_set_style(&(logging_style){
		.identifier = ident,
		.stderr_priority = with_priority,
		.auto_probes_socket = probe,
		.line_max = line_max,
	});
}

static void test_target_names(void **state)
{
	logging_target t;

	(void)state;
	assert_int_equal(logging_target_parse("auto", &t), 0);
	assert_int_equal(t, LOGGING_AUTO);
	assert_int_equal(logging_target_parse("journal", &t), 0);
	assert_int_equal(t, LOGGING_JOURNAL);
	assert_int_equal(logging_target_parse("stderr", &t), 0);
	assert_int_equal(t, LOGGING_STDERR);
	assert_int_equal(logging_target_parse("syslog", &t), -EINVAL);
	assert_int_equal(logging_target_parse("", &t), -EINVAL);
}

/* auto: the journal when $JOURNAL_STREAM is our stderr (systemd started us); a child of a unit
 * inherits the variable with another stderr, and must not send to the journal. */
static void test_auto_from_journal_stream(void **state)
{
	struct stderr_capture c;
	struct stat st;
	char stream[64];

	(void)state;
	set_style("t", true, false, LOGGING_LINE_MAX);
	logging_set_journal_socket(NO_SOCKET);
	stderr_capture_start(&c); /* stderr: a file, its device:inode known */
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	unsetenv("JOURNAL_STREAM");
	logging_setup(LOGGING_AUTO);
	assert_int_equal(logging_get_target(), LOGGING_STDERR);
	snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", stream, 1);
	assert_true(logging_journal_stream_is_stderr());
	logging_setup(LOGGING_AUTO);
	assert_int_equal(logging_get_target(), LOGGING_JOURNAL);
	snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", stream, 1);
	assert_false(logging_journal_stream_is_stderr());
	logging_setup(LOGGING_AUTO);
	assert_int_equal(logging_get_target(), LOGGING_STDERR);
	setenv("JOURNAL_STREAM", "garbage", 1);
	logging_setup(LOGGING_AUTO);
	assert_int_equal(logging_get_target(), LOGGING_STDERR);
	unsetenv("JOURNAL_STREAM");
	/* an explicit target is taken as it is */
	logging_setup(LOGGING_JOURNAL);
	assert_int_equal(logging_get_target(), LOGGING_JOURNAL);
	logging_setup(LOGGING_STDERR);
	free(stderr_capture_end(&c));
}

static int bind_socket(char *path, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(path, size, "/tmp/test-logging-%d.sock", (int)getpid());
	unlink(path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* The socket probe is the style's: with it, stderr no terminal and the socket there mean the
 * journal; without it (preemptd), only $JOURNAL_STREAM does. */
static void test_auto_socket_probe_is_the_styles(void **state)
{
	struct stderr_capture c;
	char path[108];
	int fd = bind_socket(path, sizeof(path));

	(void)state;
	unsetenv("JOURNAL_STREAM");
	logging_set_journal_socket(path);
	stderr_capture_start(&c); /* stderr: a file, no terminal */
	set_style("t", true, true, LOGGING_LINE_MAX);
	logging_setup(LOGGING_AUTO);
	assert_int_equal(logging_get_target(), LOGGING_JOURNAL);
	set_style("t", false, false, 4096);
	logging_setup(LOGGING_AUTO);
	assert_int_equal(logging_get_target(), LOGGING_STDERR);
	set_style("t", true, true, LOGGING_LINE_MAX);
	logging_set_journal_socket(NO_SOCKET);
	logging_setup(LOGGING_AUTO);
	assert_int_equal(logging_get_target(), LOGGING_STDERR);
	free(stderr_capture_end(&c));
	close(fd);
	unlink(path);
	logging_set_journal_socket(NULL);
}

static void test_priority_limit_and_line_format(void **state)
{
	struct stderr_capture c;
	char *text;

	(void)state;
	set_style("evictd", true, false, LOGGING_LINE_MAX);
	logging_setup(LOGGING_STDERR);
	logging_set_max_priority(LOG_INFO);
	assert_true(logging_priority_shown(LOG_INFO));
	assert_false(logging_priority_shown(LOG_DEBUG));
	stderr_capture_start(&c);
	logging_send(LOG_WARNING, NULL, "disk low", NULL, 0);
	logging_send(LOG_DEBUG, NULL, "not shown at LOG_INFO", NULL, 0);
	logging_send(LOG_ERR, "0123", "two\nlines", NULL, 0);
	logging_set_max_priority(LOG_DEBUG);
	logging_send(LOG_DEBUG, NULL, "shown at LOG_DEBUG", NULL, 0);
	logging_set_max_priority(LOG_INFO);
	set_style("preemptd", false, false, 4096);
	logging_send(LOG_NOTICE, NULL, "pod default/p bound", NULL, 0);
	text = stderr_capture_end(&c);
	assert_string_equal(text, "evictd: warning: disk low\n"
	                          "evictd: error: two lines\n"
	                          "evictd: debug: shown at LOG_DEBUG\n"
	                          "preemptd: pod default/p bound\n");
	free(text);
}

/* Fields on a stderr line only where the journal did not take the entry, those the message
 * already says left out; a line too long is cut to the style's bound and still ends. */
static void test_render_fields_and_cut(void **state)
{
	char line[64], *long_msg = malloc(6000);
	struct iovec f[2] = { { "EVICTD_SIGNAL=memory.available", 30 }, { "EVICTD_CONFIG_LINE=2", 20 } };
	size_t l;

	(void)state;
	assert_non_null(long_msg);
	set_style("evictd", true, false, LOGGING_LINE_MAX);
	l = logging_render_line(line, sizeof(line), LOG_ERR, "memory.available low", f, 2, true);
	assert_int_equal(l, strlen("evictd: error: memory.available low [EVICTD_CONFIG_LINE=2]\n"));
	assert_memory_equal(line, "evictd: error: memory.available low [EVICTD_CONFIG_LINE=2]\n", l);
	l = logging_render_line(line, sizeof(line), LOG_ERR, "memory.available low", f, 2, false);
	assert_memory_equal(line, "evictd: error: memory.available low\n", l);
	memset(long_msg, 'm', 5999);
	long_msg[5999] = '\0';
	l = logging_render_line(line, sizeof(line), LOG_ERR, long_msg, NULL, 0, false);
	assert_int_equal(l, sizeof(line) - 1);
	assert_int_equal(line[l - 1], '\n');
	assert_memory_equal(line, "evictd: error: mmm", 18);
	free(long_msg);
}

/* The datagram journald receives, and what is left of it on stderr when journald is not there. */
static void test_journal_entry_and_fallback(void **state)
{
	struct iovec f[2] = { { "EVICTD_POD=default/p", 20 }, { "PREEMPTD_EXPLANATION=a\nb", 24 } };
	char path[108], buf[4096], *text;
	struct stderr_capture c;
	int fd = bind_socket(path, sizeof(path));

	(void)state;
	set_style("evictd", true, false, LOGGING_LINE_MAX);
	logging_set_max_priority(LOG_INFO);
	logging_set_journal_socket(path);
	logging_setup(LOGGING_JOURNAL);
	logging_send(LOG_NOTICE, "f7c5f6af75cd48aeb357803bdd6de3c4", "pod chosen", f, 2);
	logging_send(LOG_DEBUG, NULL, "above the limit: not sent", NULL, 0);
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	static const char want[] = "MESSAGE\n\x0a\0\0\0\0\0\0\0pod chosen\n"
	                           "PRIORITY=5\nSYSLOG_IDENTIFIER=evictd\n"
	                           "MESSAGE_ID=f7c5f6af75cd48aeb357803bdd6de3c4\n"
	                           "EVICTD_POD=default/p\n"
	                           "PREEMPTD_EXPLANATION\n\x03\0\0\0\0\0\0\0a\nb\n";
	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(buf, want, sizeof(want) - 1);
	assert_int_equal(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), -1); /* the debug entry was not sent */
	close(fd);
	unlink(path);

	/* journald gone: the line keeps the fields, and the entry is counted as dropped */
	logging_set_journal_socket(NO_SOCKET);
	stderr_capture_start(&c);
	logging_send(LOG_NOTICE, NULL, "pod chosen", f, 1);
	text = stderr_capture_end(&c);
	assert_string_equal(text, "evictd: notice: pod chosen [EVICTD_POD=default/p]\n");
	assert_int_equal(logging_journal_dropped(), 1);
	free(text);
	logging_set_journal_socket(NULL);
	logging_setup(LOGGING_STDERR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_names),
		cmocka_unit_test(test_auto_from_journal_stream),
		cmocka_unit_test(test_auto_socket_probe_is_the_styles),
		cmocka_unit_test(test_priority_limit_and_line_format),
		cmocka_unit_test(test_render_fields_and_cut),
		cmocka_unit_test(test_journal_entry_and_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
