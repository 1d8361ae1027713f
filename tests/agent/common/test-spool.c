/* SPDX-License-Identifier: MIT */
/*
 * The eviction spool's bound (spool-max): with more records than it allows, the oldest undelivered
 * ones are dropped, each with a log line naming it, and the newest are kept; names sort in the
 * order of the evictions (what evictd-kube delivers them by); records are 0644. Quantities in
 * records are canonical, as the API server prints them. A pod name with a byte that is not UTF-8
 * still gives a record evictd-kube's parser (yajl's, UTF-8 checked) takes, the byte as U+FFFD: a
 * raw byte made the record unreadable, and evictd-kube dropped the report.
 */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "agent-test.h"
#include "log.h"
#include "spool.h"

AGENT_TEST_TMPDIR("spool")

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.json names in dir, sorted; returns how many (at most max). */
static size_t list_records(const char *dir, char names[][128], size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;
	char *ptrs[64];

	assert_non_null(d);
	while ((de = readdir(d)) && n < max) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		snprintf(names[n++], 128, "%s", de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		ptrs[i] = names[i];
	qsort(ptrs, n, sizeof(*ptrs), name_cmp);
	char sorted[64][128];
	for (size_t i = 0; i < n; i++)
		snprintf(sorted[i], 128, "%s", ptrs[i]);
	for (size_t i = 0; i < n; i++)
		memcpy(names[i], sorted[i], 128);
	return n;
}

static int write_one(int dirfd, unsigned max, const char *uid, uint64_t started)
{
	pod_info pod = { 0 };
	char why[256] = "";
	snprintf(pod.uid, sizeof(pod.uid), "%s", uid);
	pod.namespace_ = (char *)"default";
	pod.name = (char *)uid;
	pod.priority = 10;
	spool_eviction ev = { .pod = &pod, .signal = "memory.available", .hard = true, .threshold = 100 << 20,
	                      .observed = 80 << 20, .usage = -1, .started_real_usec = started };
	int r = spool_write_eviction(dirfd, max, &ev, why, sizeof(why));
	if (r < 0)
		fprintf(stderr, "spool_write_eviction: %s\n", why);
	return r;
}

static void test_spool_max_drops_oldest_and_logs(void **state)
{
	char dir[300], errpath[320], names[64][128];
	(void)state;
	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);

	/* stderr into a file, to read the log lines back */
	int saved = dup(STDERR_FILENO);
	int efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(saved >= 0 && efd >= 0);
	assert_int_equal(dup2(efd, STDERR_FILENO), STDERR_FILENO);
	/* written out of order on purpose: the order is the start time in the name, not the write */
	static const struct { const char *uid; uint64_t started; } recs[] = {
		{ "uid-b", 2000002 }, { "uid-a", 1000001 }, { "uid-c", 3000003 }, { "uid-d", 4000004 }, { "uid-e", 5000005 },
	};
	int rs[5];
	size_t counts[5];
	for (size_t i = 0; i < 5; i++) {
		rs[i] = write_one(dirfd, 3, recs[i].uid, recs[i].started);
		counts[i] = list_records(dir, names, 64);
	}
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	close(efd);
	/* never more than spool-max on disk: 1, 2, 3, then 3 and 3 */
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(rs[i], 0);
		assert_int_equal(counts[i], i < 3 ? i + 1 : 3);
	}

	/* at most spool-max = 3 records: the three newest, named so that they sort oldest first */
	size_t n = list_records(dir, names, 64);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "00000000000003000003-uid-c.json");
	assert_string_equal(names[1], "00000000000004000004-uid-d.json");
	assert_string_equal(names[2], "00000000000005000005-uid-e.json");

	/* each drop logged once, naming the dropped record, oldest first */
	FILE *f = fopen(errpath, "r");
	char line[1024];
	int dropped_a = 0, dropped_b = 0, drops = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "Eviction spool full (3 records): dropped the oldest undelivered report"))
			continue;
		drops++;
		if (strstr(line, "00000000000001000001-uid-a.json"))
			dropped_a = drops;
		if (strstr(line, "00000000000002000002-uid-b.json"))
			dropped_b = drops;
	}
	fclose(f);
	assert_int_equal(drops, 2);
	assert_int_equal(dropped_a, 1);
	assert_int_equal(dropped_b, 2);

	/* records are root-readable text for evictd-kube: 0644 whatever the umask */
	struct stat st;
	assert_int_equal(fstatat(dirfd, names[2], &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	close(dirfd);
}

static void test_spool_below_max_keeps_all(void **state)
{
	char dir[300], names[64][128];
	(void)state;
	snprintf(dir, sizeof(dir), "%s/spool2", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	for (unsigned i = 0; i < 3; i++) {
		char uid[16];
		snprintf(uid, sizeof(uid), "uid-%u", i);
		assert_int_equal(write_one(dirfd, 3, uid, 100 + i), 0);
	}
	/* exactly spool-max records: none dropped */
	assert_int_equal(list_records(dir, names, 64), 3);
	assert_string_equal(names[0], "00000000000000000100-uid-0.json");
	close(dirfd);
}

static void test_quantity(void **state)
{
	char b[32];
	(void)state;
	assert_string_equal(spool_quantity(100 << 20, b, sizeof(b)), "100Mi");
	assert_string_equal(spool_quantity(1288490188, b, sizeof(b)), "1288490188");
	assert_string_equal(spool_quantity(1258291LL * 1024, b, sizeof(b)), "1258291Ki");
	assert_string_equal(spool_quantity(0, b, sizeof(b)), "0");
	assert_string_equal(spool_quantity(-(50 << 20), b, sizeof(b)), "-50Mi");
	assert_string_equal(spool_quantity(1LL << 30, b, sizeof(b)), "1Gi");
}

static void test_record_with_invalid_utf8_is_readable(void **state)
{
	char dir[300], path[420], buf[16384], perr[256];
	char why[256] = "";
	pod_info pod = { 0 };
	(void)state;
	snprintf(dir, sizeof(dir), "%s/spool3", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	snprintf(pod.uid, sizeof(pod.uid), "uid-bad");
	pod.namespace_ = (char *)"default";
	pod.name = (char *)"web-\xff-0";
	spool_eviction ev = { .pod = &pod, .signal = "memory.available", .hard = true, .threshold = 100 << 20,
	                      .observed = 80 << 20, .usage = -1, .started_real_usec = 777 };
	assert_int_equal(spool_write_eviction(dirfd, 3, &ev, why, sizeof(why)), 0);
	close(dirfd);

	/* read back as evictd-kube's load_record does */
	snprintf(path, sizeof(path), "%s/00000000000000000777-uid-bad.json", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	yajl_val v = yajl_tree_parse(buf, perr, sizeof(perr));
	if (!v)
		fprintf(stderr, "record not read: %s\n", perr);
	assert_non_null(v);
	const char *name_path[] = { "name", NULL };
	yajl_val name = yajl_tree_get(v, name_path, yajl_t_string);
	assert_non_null(name);
	assert_string_equal(YAJL_GET_STRING(name), "web-\xef\xbf\xbd-0");
	yajl_tree_free(v);
}

int main(void)
{
	log_setup(LOGGING_STDERR);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spool_max_drops_oldest_and_logs),
		cmocka_unit_test(test_spool_below_max_keeps_all),
		cmocka_unit_test(test_quantity),
		cmocka_unit_test(test_record_with_invalid_utf8_is_readable),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
