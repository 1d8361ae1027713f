/* SPDX-License-Identifier: MIT */
/* PSI triggers: window rounding, checked trigger writes, refusal to write into non-kernel files. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "psi-trigger.h"
#include "scratch.h"

static void test_window_rounds_up_to_2s_multiples(void **state)
{
	(void)state;
	assert_int_equal(psi_window_round(0), 2000000);
	assert_int_equal(psi_window_round(500000), 2000000);
	assert_int_equal(psi_window_round(2000000), 2000000);
	assert_int_equal(psi_window_round(2000001), 4000000);
	assert_int_equal(psi_window_round(10000000), 10000000);
}

static void test_fixture_files_are_never_written(void **state)
{
	(void)state;
	char dir[100];
	scratch_template(dir, sizeof(dir), "evictd-psi");
	assert_non_null(mkdtemp(dir));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	const char *text = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
	int fd = openat(dfd, "memory.pressure", O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(psi_trigger_open(dfd, "memory.pressure", "some", 150000, 2000000), -EMEDIUMTYPE);
	char buf[128] = "";
	fd = openat(dfd, "memory.pressure", O_RDONLY);
	assert_true(read(fd, buf, sizeof(buf)) > 0);
	close(fd);
	assert_string_equal(buf, text); /* untouched */
	assert_int_equal(psi_trigger_open(dfd, "absent", "some", 1, 2000000), -ENOENT);
	assert_int_equal(psi_trigger_open(dfd, "memory.pressure", "most", 1, 2000000), -EINVAL);
	assert_int_equal(psi_trigger_open(dfd, "memory.pressure", "some", 3000000, 2000000), -EINVAL);
	close(dfd);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_real_trigger_is_registered_and_quiet(void **state)
{
	(void)state;
	int proc = open("/proc", O_RDONLY | O_DIRECTORY);
	int fd = psi_trigger_open(proc, "pressure/memory", "some", 150000, 2000000);
	if (fd == -ENOENT || fd == -EOPNOTSUPP) {
		close(proc);
		print_message("# skip PSI trigger: no PSI on this kernel (%s)\n", strerror(-fd));
		skip();
	}
	assert_true(fd >= 0);
	/* a registered trigger does not report an error at once (a failed write would: POLLERR) */
	struct pollfd p = { .fd = fd, .events = POLLPRI };
	int r = poll(&p, 1, 0);
	assert_true(r == 0 || !(p.revents & POLLERR));
	close(fd);
	close(proc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_rounds_up_to_2s_multiples),
		cmocka_unit_test(test_fixture_files_are_never_written),
		cmocka_unit_test(test_real_trigger_is_registered_and_quiet),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
