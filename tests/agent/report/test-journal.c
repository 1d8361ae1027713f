/* SPDX-License-Identifier: MIT */
/*
 * Journal entries captured from the socket, without journald: in a private mount namespace a
 * tmpfs goes over /run/systemd and the test binds /run/systemd/journal/socket itself, then parses
 * the native protocol ("KEY=value\n" or "KEY\n" + le64 length + bytes + "\n").
 */
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "agent-test.h"
#include "decide.h"
#include "events.h"
#include "log.h"
#include "stderr-capture.h"

#define Mi (1LL << 20)

static int sock = -1;

typedef struct entry {
	size_t n;
	char key[48][64];
	char val[48][1024];
} entry;

static const char *field(const entry *e, const char *key)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->key[i], key) == 0)
			return e->val[i];
	return NULL;
}

static void parse(const char *buf, size_t n, entry *e)
{
	size_t i = 0;
	e->n = 0;
	while (i < n && e->n < 48) {
		const char *nl = memchr(buf + i, '\n', n - i);
		const char *eq = memchr(buf + i, '=', n - i);
		assert_non_null(nl);
		if (eq && eq < nl) {
			snprintf(e->key[e->n], 64, "%.*s", (int)(eq - buf - i), buf + i);
			snprintf(e->val[e->n], 1024, "%.*s", (int)(nl - eq - 1), eq + 1);
			i = (size_t)(nl - buf) + 1;
		} else {
			uint64_t len;
			snprintf(e->key[e->n], 64, "%.*s", (int)(nl - buf - i), buf + i);
			i = (size_t)(nl - buf) + 1;
			assert_true(i + 8 <= n);
			memcpy(&len, buf + i, 8); /* little endian on every machine this runs on */
			i += 8;
			assert_true(i + len + 1 <= n);
			snprintf(e->val[e->n], 1024, "%.*s", (int)len, buf + i);
			i += len + 1;
		}
		e->n++;
	}
}

/* Receives the next entry (fails the test when none arrived). */
static void next_entry(entry *e)
{
	static char buf[65536];
	ssize_t n = recv(sock, buf, sizeof(buf), MSG_DONTWAIT);
	if (n <= 0)
		fail_msg("no journal entry arrived");
	parse(buf, (size_t)n, e);
}

static void assert_no_more(void)
{
	char b[16];
	assert_true(recv(sock, b, sizeof(b), MSG_DONTWAIT) < 0);
}

static int setup_namespace(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *where = access("/run/systemd", F_OK) == 0 ? "/run/systemd" : "/run";

	if (unshare(CLONE_NEWNS) < 0)
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || mount("tmpfs", where, "tmpfs", 0, "mode=0755") < 0)
		return -errno;
	mkdir("/run/systemd", 0755);
	mkdir("/run/systemd/journal", 0755);
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/run/systemd/journal/socket");
	if (sock < 0 || bind(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	int big = 1 << 20;
	setsockopt(sock, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	return 0;
}

static void test_auto_target_picks_the_socket(void **state)
{
	(void)state;
	/* stderr is not a terminal under the test runner; with a tty, auto prefers stderr */
	if (isatty(STDERR_FILENO)) {
		print_message("# skip auto target: stderr is a terminal here (the runner gives a pipe)\n");
		skip();
		return;
	}
	log_setup(LOGGING_AUTO);
	assert_int_equal(logging_get_target(), LOGGING_JOURNAL);
}

static void test_decision_entries(void **state)
{
	evictd_config *c = config_from("[agent]\ndry-run = yes\n");
	snapshot s = { 0 };
	threshold_state st = { 0 };
	decision d;
	entry e;
	(void)state;

	log_setup(LOGGING_JOURNAL);
	pod_info pods[2] = { 0 };
	pods[0] = (pod_info){ .cgroup = "kubepods/burstable/podw", .namespace_ = "default", .name = "web-1",
		              .priority = 0, .has_memory = true, .working_set = 1229 * Mi, .memory_request = 512 * Mi,
		              .has_pids = true, .pids = 12, .termination_grace_usec = 30 * USEC_PER_SEC };
	snprintf(pods[0].uid, sizeof(pods[0].uid), "uid-w");
	pods[1] = (pod_info){ .cgroup = "kubepods/podd", .namespace_ = "prod", .name = "db-0", .priority = 1000,
		              .has_memory = true, .working_set = 10 * Mi, .memory_request = 1024 * Mi };
	snprintf(pods[1].uid, sizeof(pods[1].uid), "uid-d");
	s.pods = pods;
	s.n_pods = 2;
	for (int i = 0; i < _SIGNAL_MAX; i++)
		s.node.s[i] = (signal_obs){ .known = true, .available = 1LL << 40, .capacity = 1LL << 41 };
	s.node.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = true, .available = 80 * Mi, .capacity = 8LL << 30 };
	s.node.s[SIGNAL_MEMORY_SOME] = s.node.s[SIGNAL_MEMORY_FULL] = (signal_obs){ .known = true, .capacity = 10000 };

	decide_input in = { .snap = &s, .cfg = c, .now_usec = 5 * USEC_PER_SEC };
	assert_int_equal(decide_evictions(&in, &st, &d), 0);
	events_log_decision(&d, &s, c);

	next_entry(&e);
	assert_string_equal(field(&e, "MESSAGE_ID"), MSGID_THRESHOLD_MET);
	assert_string_equal(field(&e, "EVICTD_SIGNAL"), "memory.available");
	assert_string_equal(field(&e, "EVICTD_THRESHOLD_KIND"), "hard");
	assert_string_equal(field(&e, "EVICTD_OBSERVED"), "83886080");
	assert_string_equal(field(&e, "EVICTD_THRESHOLD"), "104857600");
	assert_string_equal(field(&e, "PRIORITY"), "4");
	assert_string_equal(field(&e, "MESSAGE"), "Threshold met: memory.available 80Mi < 100Mi (hard)");

	next_entry(&e);
	assert_string_equal(field(&e, "MESSAGE_ID"), MSGID_CONDITION_CHANGED);
	assert_string_equal(field(&e, "EVICTD_CONDITION"), "MemoryPressure");
	assert_string_equal(field(&e, "EVICTD_CONDITION_STATUS"), "True");
	assert_string_equal(field(&e, "MESSAGE"), "Node condition MemoryPressure is now True");

	next_entry(&e);
	assert_string_equal(field(&e, "MESSAGE_ID"), MSGID_POD_CHOSEN);
	assert_string_equal(field(&e, "EVICTD_POD"), "default/web-1");
	assert_string_equal(field(&e, "EVICTD_POD_UID"), "uid-w");
	assert_string_equal(field(&e, "EVICTD_NAMESPACE"), "default");
	assert_string_equal(field(&e, "EVICTD_PRIORITY"), "0");
	assert_string_equal(field(&e, "EVICTD_SIGNAL"), "memory.available");
	assert_string_equal(field(&e, "EVICTD_OBSERVED"), "83886080");
	assert_string_equal(field(&e, "EVICTD_THRESHOLD"), "104857600");
	assert_string_equal(field(&e, "EVICTD_USAGE_BYTES"), "1288699904");
	assert_string_equal(field(&e, "EVICTD_REQUEST_BYTES"), "536870912");
	assert_string_equal(field(&e, "EVICTD_RANK"), "1");
	assert_string_equal(field(&e, "EVICTD_GRACE_SEC"), "0");
	assert_string_equal(field(&e, "EVICTD_DRY_RUN"), "1");
	assert_string_equal(field(&e, "EVICTD_CGROUP"), "/kubepods/burstable/podw");
	assert_string_equal(field(&e, "MESSAGE"),
	                    "Would evict default/web-1 (priority 0): memory.available 80Mi < 100Mi; "
	                    "working set 1.2Gi exceeds request 512Mi (dry run)");
	assert_no_more();
	decide_decision_free(&d);

	/* recovered: threshold cleared; condition stays (transition period) -> one entry */
	s.node.s[SIGNAL_MEMORY_AVAILABLE].available = 2LL << 30;
	in.now_usec = 6 * USEC_PER_SEC;
	assert_int_equal(decide_evictions(&in, &st, &d), 0);
	events_log_decision(&d, &s, c);
	next_entry(&e);
	assert_string_equal(field(&e, "MESSAGE_ID"), MSGID_THRESHOLD_CLEARED);
	assert_string_equal(field(&e, "EVICTD_OBSERVED"), "2147483648");
	assert_string_equal(field(&e, "PRIORITY"), "5");
	assert_no_more();
	decide_decision_free(&d);
	config_free(c);
}

static void test_config_rejected_and_unavailable_entries(void **state)
{
	evictd_config *c = NULL;
	config_error err;
	node_signals n = { 0 };
	signal_report_state rs = { 0 };
	entry e;
	(void)state;

	log_setup(LOGGING_JOURNAL);
	assert_true(config_load_string("[agent]\n\ninterval = soon\n", "/etc/evictd/evictd.conf.d/50-x.conf", &c, &err) < 0);
	events_log_config_rejected(&err, "keeping the running configuration");
	next_entry(&e);
	assert_string_equal(field(&e, "MESSAGE_ID"), MSGID_CONFIG_REJECTED);
	assert_string_equal(field(&e, "EVICTD_CONFIG_FILE"), "/etc/evictd/evictd.conf.d/50-x.conf");
	assert_string_equal(field(&e, "EVICTD_CONFIG_LINE"), "3");
	assert_string_equal(field(&e, "PRIORITY"), "3");
	assert_non_null(strstr(field(&e, "MESSAGE"), "50-x.conf:3: interval: invalid duration \"soon\""));
	assert_non_null(strstr(field(&e, "MESSAGE"), "keeping the running configuration"));

	/* one entry per unavailable signal at startup, then only on change */
	for (int i = 0; i < _SIGNAL_MAX; i++)
		n.s[i].known = true;
	n.s[SIGNAL_MEMORY_AVAILABLE] = (signal_obs){ .known = false, .reason = "the memory controller is not on cgroup v2" };
	events_log_signal_availability(&n, &rs);
	next_entry(&e);
	assert_string_equal(field(&e, "MESSAGE_ID"), MSGID_SIGNAL_UNAVAILABLE);
	assert_string_equal(field(&e, "EVICTD_SIGNAL"), "memory.available");
	assert_string_equal(field(&e, "MESSAGE"), "Signal memory.available unavailable: the memory controller is not on cgroup v2");
	assert_no_more();
	events_log_signal_availability(&n, &rs);
	assert_no_more();
}

/*
 * journald stalled: its socket is never read and fills up. Logging must neither block (that
 * would stop monitoring) nor lose the entries: they go to stderr, and once the socket drains one
 * entry reports how many the journal missed.
 */
static void test_full_journal_socket_never_blocks(void **state)
{
	const char *path = "/run/systemd/journal/stalled";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stderr_capture cap;
	char last[64];
	entry e;
	(void)state;

	int stalled = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	assert_int_equal(bind(stalled, (struct sockaddr *)&sa, sizeof(sa)), 0);
	int small = 4096;
	setsockopt(stalled, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));

	logging_set_journal_socket(path);
	log_setup(LOGGING_JOURNAL);
	stderr_capture_start(&cap);
	/* A blocking send would hang here for good: the alarm turns that into a failure. */
	alarm(30);
	int i;
	for (i = 0; i < 100000 && logging_journal_dropped() < 5; i++)
		log_msg(LOG_WARNING, "entry %d of a flood", i);
	alarm(0);
	char *text = stderr_capture_end(&cap);
	unsigned long dropped = logging_journal_dropped();
	assert_int_equal(dropped, 5);
	snprintf(last, sizeof(last), "evictd: warning: entry %d of a flood\n", i - 1);
	assert_non_null(strstr(text, last));
	/* exactly the dropped entries went to stderr, each on its own line */
	int lines = 0;
	for (const char *q = text; (q = strchr(q, '\n')); q++)
		lines++;
	assert_int_equal(lines, 5);

	/* journald catches up: the next entry is preceded by the report */
	char buf[65536];
	while (recv(stalled, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	log_msg(LOG_NOTICE, "after the stall");
	ssize_t n = recv(stalled, buf, sizeof(buf), MSG_DONTWAIT);
	assert_true(n > 0);
	parse(buf, (size_t)n, &e);
	assert_string_equal(field(&e, "MESSAGE"),
	                    "5 journal entries dropped (journald was not reading); they were written to stderr");
	assert_string_equal(field(&e, "PRIORITY"), "4");
	assert_string_equal(field(&e, "SYSLOG_IDENTIFIER"), "evictd");
	n = recv(stalled, buf, sizeof(buf), MSG_DONTWAIT);
	assert_true(n > 0);
	parse(buf, (size_t)n, &e);
	assert_string_equal(field(&e, "MESSAGE"), "after the stall");
	assert_int_equal(logging_journal_dropped(), 0);

	logging_set_journal_socket(NULL);
	close(stalled);
	unlink(path);
	free(text);
}

/*
 * On a terminal (or a log file) a line is the message, for a person: the journal's fields stay in
 * the journal (issue 29: "... unknown suffix "Q" [EVICTD_CONFIG_LINE=2]"). An entry the journal
 * cannot take keeps them on its stderr line: there the line is all that is left of the entry.
 */
static void test_stderr_lines_carry_no_fields(void **state)
{
	struct stderr_capture cap;
	char *text;
	(void)state;

	log_setup(LOGGING_STDERR);
	stderr_capture_start(&cap);
	log_entry e;
	log_entry_init(&e, LOG_ERR, MSGID_CONFIG_REJECTED);
	log_entry_add(&e, FIELD_CONFIG_FILE, "/etc/evictd/evictd.conf");
	log_entry_add(&e, FIELD_CONFIG_LINE, "2");
	log_entry_send(&e, "Configuration rejected, not starting: /etc/evictd/evictd.conf:2: unknown suffix \"Q\"");
	text = stderr_capture_end(&cap);
	assert_string_equal(text, "evictd: error: Configuration rejected, not starting: "
	                          "/etc/evictd/evictd.conf:2: unknown suffix \"Q\"\n");
	free(text);

	/* no journal to take it: the fields go with the line */
	logging_set_journal_socket("/run/evictd-test-no-such-journal-socket");
	log_setup(LOGGING_JOURNAL);
	stderr_capture_start(&cap);
	log_entry_init(&e, LOG_ERR, MSGID_CONFIG_REJECTED);
	log_entry_add(&e, FIELD_CONFIG_LINE, "2");
	log_entry_send(&e, "Configuration rejected");
	text = stderr_capture_end(&cap);
	assert_string_equal(text, "evictd: error: Configuration rejected [EVICTD_CONFIG_LINE=2]\n");
	free(text);
	logging_set_journal_socket(NULL);
}

/* A MESSAGE with a newline (a command's stderr tail) uses the binary-safe form, intact. */
static void test_multiline_message(void **state)
{
	entry e;
	(void)state;

	log_setup(LOGGING_JOURNAL);
	log_msg(LOG_ERR, "k8s-evict failed:\nerror: pods \"x\" not found");
	next_entry(&e);
	assert_string_equal(field(&e, "MESSAGE"), "k8s-evict failed:\nerror: pods \"x\" not found");
	assert_no_more();
}

/*
 * Two processes sharing stderr (the daemon and a forked child) must never cut into each other's
 * lines: each line is one write(2) (stats-stderr-interleave in tests/fuzz/FINDINGS.md).
 */
static void test_stderr_lines_do_not_interleave(void **state)
{
	int p[2];
	(void)state;

	assert_int_equal(pipe(p), 0);
	log_setup(LOGGING_STDERR);
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		assert_true(kids[k] >= 0);
		if (kids[k] == 0) {
			close(p[0]);
			dup2(p[1], STDERR_FILENO);
			for (int i = 0; i < 3000; i++) {
				log_entry le;
				log_entry_init(&le, LOG_WARNING, MSGID_POD_CHOSEN);
				log_entry_add(&le, FIELD_POD, "ns/pod-%d", k);
				log_entry_add(&le, FIELD_RANK, "r%d", i);
				/* as long as such a line was with its fields (the reader keeps up: no line is
				 * dropped for a stuck reader) */
				log_entry_send(&le, "writer %d line %d rank r%d %030d", k, i, i, 0);
			}
			_exit(0);
		}
	}
	close(p[1]);
	FILE *f = fdopen(p[0], "r");
	char line[4096];
	int count[2] = { 0, 0 };
	while (fgets(line, sizeof(line), f)) {
		int k, i, r;
		char zeros[400];
		if (sscanf(line, "evictd: warning: writer %d line %d rank r%d %399s", &k, &i, &r, zeros) != 4 ||
		    k < 0 || k > 1 || i != r || strlen(zeros) != 30 || strspn(zeros, "0") != 30)
			fail_msg("garbled line: %s", line);
		count[k]++;
	}
	fclose(f);
	for (int k = 0; k < 2; k++)
		waitpid(kids[k], NULL, 0);
	assert_int_equal(count[0], 3000);
	assert_int_equal(count[1], 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_target_picks_the_socket),
		cmocka_unit_test(test_decision_entries),
		cmocka_unit_test(test_config_rejected_and_unavailable_entries),
		cmocka_unit_test(test_full_journal_socket_never_blocks),
		cmocka_unit_test(test_multiline_message),
		cmocka_unit_test(test_stderr_lines_do_not_interleave),
		cmocka_unit_test(test_stderr_lines_carry_no_fields),
	};
	int r = setup_namespace();
	if (r < 0) {
		printf("skipped: cannot capture the journal socket (private mount namespace: %s)\n", strerror(-r));
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
