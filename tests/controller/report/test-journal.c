/* preemptd's log (controller/report/journal.c): an entry's fields as the journal receives them
 * (KEY=value, cut to fit, at most JOURNAL_FIELDS_MAX), the journal chosen only when systemd's
 * $JOURNAL_STREAM names our stderr, and outside the journal one line per message on stderr
 * ("IDENT: message", cut long lines still end in a newline), entries above the priority limit
 * dropped. The target names are the log core's (tests/base/test-logging.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "journal.h"
#include "stderr-capture.h"

static const char *field(const journal_entry *e, size_t i, char *buf, size_t size)
{
	assert_true(i < e->n);
	assert_true(e->size[i] < size);
	memcpy(buf, e->buf + e->start[i], e->size[i]);
	buf[e->size[i]] = '\0';
	return buf;
}

static void test_entry_fields(void **state)
{
	(void)state;
	journal_entry e;
	char buf[JOURNAL_ENTRY_BYTES + 1];

	journal_entry_init(&e, LOG_NOTICE, MSGID_PREEMPTION);
	journal_entry_add(&e, FIELD_POD, "%s/%s", "default", "web-0");
	journal_entry_add(&e, FIELD_NODE, "%s", "n1");
	journal_entry_add(&e, FIELD_PRIORITY, "%d", -5);
	assert_int_equal(e.priority, LOG_NOTICE);
	assert_string_equal(e.message_id, MSGID_PREEMPTION);
	assert_int_equal(e.n, 3);
	assert_string_equal(field(&e, 0, buf, sizeof(buf)), "PREEMPTD_POD=default/web-0");
	assert_string_equal(field(&e, 1, buf, sizeof(buf)), "PREEMPTD_NODE=n1");
	assert_string_equal(field(&e, 2, buf, sizeof(buf)), "PREEMPTD_PRIORITY=-5");
}

/* A value longer than the entry has room for is cut, not dropped, and nothing is written past
 * the entry; fields past JOURNAL_FIELDS_MAX are left out. */
static void test_entry_limits(void **state)
{
	(void)state;
	journal_entry e;
	char buf[JOURNAL_ENTRY_BYTES + 1];
	char *big = malloc(JOURNAL_ENTRY_BYTES * 2);

	assert_non_null(big);
	memset(big, 'v', JOURNAL_ENTRY_BYTES * 2 - 1);
	big[JOURNAL_ENTRY_BYTES * 2 - 1] = '\0';
	journal_entry_init(&e, LOG_INFO, NULL);
	journal_entry_add(&e, FIELD_POD, "%s", "default/p");
	journal_entry_add(&e, FIELD_REASON, "%s", big);
	assert_int_equal(e.n, 2);
	field(&e, 1, buf, sizeof(buf));
	assert_memory_equal(buf, "PREEMPTD_REASON=vvv", 19);
	assert_true(e.used <= sizeof(e.buf));
	assert_int_equal(e.size[1], sizeof(e.buf) - e.start[1] - 1);
	assert_string_equal(field(&e, 0, buf, sizeof(buf)), "PREEMPTD_POD=default/p");
	/* full: a further field does not fit */
	journal_entry_add(&e, FIELD_NODE, "%s", "n1");
	assert_int_equal(e.n, 2);
	free(big);

	journal_entry_init(&e, LOG_INFO, NULL);
	for (int i = 0; i < JOURNAL_FIELDS_MAX + 3; i++)
		journal_entry_add(&e, FIELD_VICTIM, "default/v%d", i);
	assert_int_equal(e.n, JOURNAL_FIELDS_MAX);
	assert_string_equal(field(&e, JOURNAL_FIELDS_MAX - 1, buf, sizeof(buf)), "PREEMPTD_VICTIM=default/v15");
}

/* auto: the journal only when $JOURNAL_STREAM is the device:inode of our own stderr (a child of
 * a unit inherits the variable with another stderr). */
static void test_auto_target(void **state)
{
	(void)state;
	struct stderr_capture c;
	struct stat st;
	char stream[64];

	stderr_capture_start(&c);
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	unsetenv("JOURNAL_STREAM");
	journal_setup(LOGGING_AUTO, "t");
	assert_false((logging_get_target() == LOGGING_JOURNAL));
	snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino + 1);
	setenv("JOURNAL_STREAM", stream, 1);
	journal_setup(LOGGING_AUTO, "t");
	assert_false((logging_get_target() == LOGGING_JOURNAL));
	snprintf(stream, sizeof(stream), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", stream, 1);
	journal_setup(LOGGING_AUTO, "t");
	assert_true((logging_get_target() == LOGGING_JOURNAL));
	unsetenv("JOURNAL_STREAM");
	journal_setup(LOGGING_STDERR, "t");
	assert_false((logging_get_target() == LOGGING_JOURNAL));
	free(stderr_capture_end(&c));
}

static void test_stderr_lines_and_priority(void **state)
{
	(void)state;
	struct stderr_capture c;
	journal_entry e;
	char *text;

	journal_setup(LOGGING_STDERR, "preemptd-test");
	logging_set_max_priority(LOG_INFO);
	stderr_capture_start(&c);
	journal_msg(LOG_WARNING, "watch restarted after %d s", 5);
	journal_msg(LOG_DEBUG, "not shown at LOG_INFO");
	journal_entry_init(&e, LOG_NOTICE, MSGID_POD_BOUND);
	journal_entry_add(&e, FIELD_POD, "default/p");
	journal_entry_send(&e, "pod %s bound to %s", "default/p", "n1");
	logging_set_max_priority(LOG_DEBUG);
	journal_msg(LOG_DEBUG, "shown at LOG_DEBUG");
	logging_set_max_priority(LOG_INFO);
	text = stderr_capture_end(&c);
	assert_string_equal(text, "preemptd-test: watch restarted after 5 s\n"
	                          "preemptd-test: pod default/p bound to n1\n"
	                          "preemptd-test: shown at LOG_DEBUG\n");
	free(text);
}

/* A message longer than a line holds is cut, and the cut line still ends the line. */
static void test_long_line_cut(void **state)
{
	(void)state;
	struct stderr_capture c;
	char *long_msg = malloc(6000), *text;

	assert_non_null(long_msg);
	memset(long_msg, 'm', 5999);
	long_msg[5999] = '\0';
	journal_setup(LOGGING_STDERR, "preemptd-test");
	stderr_capture_start(&c);
	journal_msg(LOG_ERR, "%s", long_msg);
	journal_msg(LOG_ERR, "next");
	text = stderr_capture_end(&c);
	char *nl = strchr(text, '\n');
	assert_non_null(nl);
	assert_true(nl - text < 4096);
	assert_memory_equal(text, "preemptd-test: mmm", 18);
	assert_string_equal(nl + 1, "preemptd-test: next\n");
	free(text);
	free(long_msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_fields),
		cmocka_unit_test(test_entry_limits),
		cmocka_unit_test(test_auto_target),
		cmocka_unit_test(test_stderr_lines_and_priority),
		cmocka_unit_test(test_long_line_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
