/* SPDX-License-Identifier: MIT */
/* status.json: atomic replacement, printing, history ring, JSON escaping and the size cap. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jsonw.h"
#include "status-file.h"
#include "scratch.h"

static void test_json_escapes_and_structure(void **state)
{
	(void)state;
	jsonbuf j;
	jb_init(&j, 4096);
	jb_begin_object(&j);
	jb_key(&j, "pod"), jb_string(&j, "ns/\"we\\b\"\n\x01");
	jb_key(&j, "n"), jb_int(&j, -5);
	jb_key(&j, "list");
	jb_begin_array(&j);
	jb_uint(&j, 18446744073709551615ULL);
	jb_bool(&j, true);
	jb_null(&j);
	jb_begin_object(&j);
	jb_end_object(&j);
	jb_end_array(&j);
	jb_key(&j, "none"), jb_string(&j, NULL);
	jb_end_object(&j);
	assert_int_equal(jb_error(&j), 0);
	assert_string_equal(j.buf, "{\"pod\":\"ns/\\\"we\\\\b\\\"\\n\\u0001\",\"n\":-5,"
	                           "\"list\":[18446744073709551615,true,null,{}],\"none\":null}");
	jb_free(&j);
}

static void test_json_cap_is_an_error_not_a_truncation(void **state)
{
	(void)state;
	jsonbuf j;
	jb_init(&j, 64);
	jb_begin_array(&j);
	for (int i = 0; i < 100; i++)
		jb_string(&j, "0123456789");
	jb_end_array(&j);
	assert_int_equal(jb_error(&j), -E2BIG);
	assert_true(j.len < 64);
	jb_free(&j);
}

static void test_atomic_write_replaces_and_prints(void **state)
{
	(void)state;
	char dir[100];
	scratch_template(dir, sizeof(dir), "evictd-status");
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/status.json", dir);
	assert_int_equal(status_print(path, STDOUT_FILENO), -ENOENT);
	assert_int_equal(atomic_write_file(path, "{\"a\":1}\n", 8), 0);
	/* a reader holding the old file keeps seeing it whole while it is replaced */
	int old = open(path, O_RDONLY);
	assert_true(old >= 0);
	assert_int_equal(atomic_write_file(path, "{\"b\":22}\n", 9), 0);
	char buf[32] = "";
	assert_int_equal(read(old, buf, sizeof(buf)), 8);
	assert_string_equal(buf, "{\"a\":1}\n");
	close(old);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 9);
	assert_int_equal(st.st_mode & 0777, 0644);

	char out[128];
	snprintf(out, sizeof(out), "%s/out", dir);
	int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(status_print(path, ofd), 0);
	close(ofd);
	FILE *f = fopen(out, "r");
	memset(buf, 0, sizeof(buf));
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "{\"b\":22}\n");
	/* no temporary files left behind */
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "test $(ls %s | wc -l) -eq 2", dir);
	assert_int_equal(system(cmd), 0);
	/* a directory that does not exist: an error, nothing written */
	assert_int_equal(atomic_write_file("/nonexistent-dir/status.json", "x", 1), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_history_keeps_the_newest(void **state)
{
	(void)state;
	status_history h = { 0 };
	assert_null(status_history_get(&h, 0));
	for (int i = 0; i < STATUS_HISTORY + 5; i++) {
		status_decision d = { .realtime_usec = (uint64_t)i };
		snprintf(d.pod, sizeof(d.pod), "ns/p%d", i);
		status_history_add(&h, &d);
	}
	assert_int_equal(h.count, STATUS_HISTORY);
	assert_string_equal(status_history_get(&h, 0)->pod, "ns/p36");
	assert_string_equal(status_history_get(&h, STATUS_HISTORY - 1)->pod, "ns/p5");
	assert_null(status_history_get(&h, STATUS_HISTORY));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_escapes_and_structure),
		cmocka_unit_test(test_json_cap_is_an_error_not_a_truncation),
		cmocka_unit_test(test_atomic_write_replaces_and_prints),
		cmocka_unit_test(test_history_keeps_the_newest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
