/* SPDX-License-Identifier: MIT */
/*
 * The CRI client (cri/client.c) against the stand-in runtime (tests/cri/cri-standin.py: real
 * gRPC, real CRI messages; a test double, not containerd): a full listing decoded with every
 * field evictd uses, log paths asked once per container, RemoveImage, and the faults a runtime
 * can show — slow (the deadline ends the call while the loop keeps running), refusing, absent,
 * garbage, oversized, a non-OK status, an answer that breaks the decoder's rules.
 * Skipped (77) when no python3 here imports grpc (python3-grpcio).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cri.h"
#include "scratch.h"

static char dir[256], sock[320], state_path[320], log_path[320];
static pid_t standin = -1;

static uint64_t now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void write_state(const char *json)
{
	char tmp[400];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", state_path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(json, f);
	fclose(f);
	assert_int_equal(rename(tmp, state_path), 0);
}

static void stop_standin(void)
{
	if (standin > 0) {
		/* bounded: a stand-in stuck on its way out must fail no test and hang none */
		bool reaped = false;
		kill(standin, SIGTERM);
		for (int i = 0; i < 100 && !reaped; i++) {
			reaped = waitpid(standin, NULL, WNOHANG) == standin;
			if (!reaped)
				usleep(50000);
		}
		if (!reaped) {
			kill(standin, SIGKILL);
			waitpid(standin, NULL, 0);
		}
	}
	standin = -1;
	unlink(sock);
}

/* Starts the stand-in with option opt (NULL, --refuse: bound, not listening; --hang: never answering). */
static void start_standin_with(const char *opt)
{
	static const char script[] =
		"for p in python3 /usr/bin/python3; do $p -c 'import grpc' 2>/dev/null && exec $p \"$@\"; done; exit 77";

	stop_standin();
	unlink(log_path);
	standin = fork();
	assert_true(standin >= 0);
	if (standin == 0) {
		execl("/bin/sh", "sh", "-c", script, "sh", "tests/cri/cri-standin.py", "--socket", sock, "--state",
		      state_path, "--log", log_path, opt, NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		struct stat st;
		int status;
		if (stat(sock, &st) == 0) {
			usleep(opt ? 50000 : 0); /* bound before it listens */
			return;
		}
		if (waitpid(standin, &status, WNOHANG) == standin) {
			standin = -1;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
				printf("# SKIP: no python3 with grpc (python3-grpcio)\n");
				exit(77);
			}
			fail_msg("the stand-in exited (status %d)", status);
		}
		usleep(50000);
	}
	fail_msg("the stand-in did not create %s", sock);
}

static void start_standin(bool refuse)
{
	start_standin_with(refuse ? "--refuse" : NULL);
}

typedef struct result {
	bool done;
	int error;
	cri_listing *l;
	char why[512];
	unsigned ticks; /* a 20 ms timer on the same loop: the loop was never blocked */
} result;

static void on_list(int error, cri_listing *l, const char *why, void *userdata)
{
	result *r = userdata;
	r->done = true;
	r->error = error;
	r->l = l;
	snprintf(r->why, sizeof(r->why), "%s", why);
}

static void on_text(int error, const char *text, void *userdata)
{
	result *r = userdata;
	r->done = true;
	r->error = error;
	snprintf(r->why, sizeof(r->why), "%s", text);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	result *r = userdata;
	r->ticks++;
	sd_event_source_set_time(s, usec + 20000);
	return 0;
}

typedef int (*start_fn)(cri_client *c, result *r, const char *arg);

static int start_list(cri_client *c, result *r, const char *arg)
{
	(void)arg;
	return cri_client_list(c, CRI_LIST_ALL, on_list, r);
}

static int start_remove(cri_client *c, result *r, const char *arg)
{
	return cri_client_remove_image(c, arg, on_text, r);
}

static int start_version(cri_client *c, result *r, const char *arg)
{
	(void)arg;
	return cri_client_version(c, on_text, r);
}

/* A client kept over several operations, with the loop it runs on. */
typedef struct session {
	sd_event *e;
	cri_client *c;
} session;

static void session_end(session *s)
{
	cri_client_free(s->c);
	sd_event_unref(s->e);
	*s = (session){ 0 };
}

/* Runs one operation on keep's loop and client (made on first use), else a fresh pair. */
static result run_op(session *keep, uint64_t timeout_usec, size_t max_message, start_fn fn, const char *arg,
                     uint64_t *elapsed_usec)
{
	session fresh = { 0 }, *s = keep ? keep : &fresh;
	sd_event_source *tick = NULL;
	cri_client_opts o = { .timeout_usec = timeout_usec, .max_message = max_message };
	result r = { 0 };
	uint64_t t0 = now_usec();

	if (!s->e) {
		assert_int_equal(sd_event_new(&s->e), 0);
		assert_int_equal(cri_client_new(s->e, sock, &o, &s->c), 0);
	}
	sd_event *e = s->e;
	cri_client *c = s->c;
	assert_int_equal(sd_event_add_time_relative(e, &tick, CLOCK_MONOTONIC, 20000, 1, on_tick, &r), 0);
	sd_event_source_set_enabled(tick, SD_EVENT_ON);
	assert_int_equal(fn(c, &r, arg), 0);
	/* a call that never ends fails the test rather than hanging it */
	while (!r.done) {
		assert_true(sd_event_run(e, 1000000) >= 0);
		if (now_usec() - t0 > 30000000)
			fail_msg("the operation did not end within 30 s (deadline %" PRIu64 " µs)", timeout_usec);
	}
	if (r.error < 0)
		printf("# %s\n", r.why);
	if (elapsed_usec)
		*elapsed_usec = now_usec() - t0;
	sd_event_source_disable_unref(tick);
	if (!keep)
		session_end(&fresh);
	return r;
}

static unsigned calls_logged(const char *method)
{
	char line[4096], want[96];
	unsigned n = 0;
	FILE *f = fopen(log_path, "r");

	snprintf(want, sizeof(want), "\"method\": \"%s\"", method);
	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, want) != NULL;
	if (f)
		fclose(f);
	return n;
}

static const char full_state[] =
	"{\"version\": {\"runtime_name\": \"standin\", \"runtime_version\": \"9.9\"},"
	" \"image_filesystems\": [{\"mountpoint\": \"/var/lib/containerd/snap\", \"used_bytes\": 5000, \"inodes_used\": 50}],"
	" \"images\": [{\"id\": \"sha256:aaa\", \"tags\": [\"localhost/a:1\", \"localhost/a:latest\"], \"size\": 1000},"
	"             {\"id\": \"sha256:ppp\", \"tags\": [\"localhost/pause:1\"], \"size\": 10, \"pinned\": true}],"
	" \"sandboxes\": [{\"id\": \"s1\", \"uid\": \"uid-web\", \"name\": \"web\", \"namespace\": \"default\"},"
	"               {\"id\": \"s0\", \"uid\": \"uid-old\", \"name\": \"old\", \"namespace\": \"default\", \"state\": \"NOTREADY\"}],"
	" \"containers\": [{\"id\": \"c2\", \"sandbox\": \"s1\", \"name\": \"app\", \"image_ref\": \"sha256:aaa\","
	"                   \"writable_bytes\": 4096, \"writable_inodes\": 7, \"log_path\": \"/var/log/pods/default_web_uid-web/app/1.log\","
	"                   \"attempt\": 1},"
	"                  {\"id\": \"c1\", \"sandbox\": \"s1\", \"name\": \"app\", \"image_ref\": \"sha256:aaa\", \"state\": \"EXITED\","
	"                   \"log_path\": \"/var/log/pods/default_web_uid-web/app/0.log\"},"
	"                  {\"id\": \"c0\", \"sandbox\": \"s0\", \"name\": \"side\", \"image_id\": \"sha256:bbb\", \"image_ref\": \"x\","
	"                   \"state\": \"CREATED\"}]}";

static void test_full_listing(void **state)
{
	session c = { 0 };
	result r;

	(void)state;
	write_state(full_state);
	start_standin(false);
	r = run_op(&c, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, 0);
	cri_listing *l = r.l;
	assert_int_equal(l->n_image_fs, 1);
	assert_string_equal(l->image_fs[0].mountpoint, "/var/lib/containerd/snap");
	assert_true(l->image_fs[0].has_used);
	assert_int_equal(l->image_fs[0].used_bytes, 5000);
	assert_int_equal(l->n_container_fs, 0);
	assert_int_equal(l->n_images, 2);
	assert_string_equal(l->images[0].id, "sha256:aaa");
	assert_int_equal(l->images[0].n_tags, 2);
	assert_string_equal(l->images[0].tags[1], "localhost/a:latest");
	assert_int_equal(l->images[0].size, 1000);
	assert_false(l->images[0].pinned);
	assert_true(l->images[1].pinned);
	assert_int_equal(l->n_sandboxes, 2);
	assert_true(l->sandboxes[0].ready);
	assert_false(l->sandboxes[1].ready);
	assert_string_equal(l->sandboxes[1].uid, "uid-old");
	assert_int_equal(l->n_containers, 3);
	/* sorted by id; labels give the pod; image_id wins over image_ref */
	assert_string_equal(l->containers[0].id, "c0");
	assert_string_equal(l->containers[0].image_id, "sha256:bbb");
	assert_int_equal(l->containers[0].state, CRI_CREATED);
	assert_string_equal(l->containers[0].pod_uid, "uid-old");
	cri_container *k = cri_listing_container(l, "c2");
	assert_non_null(k);
	assert_int_equal(k->state, CRI_RUNNING);
	assert_int_equal(k->attempt, 1);
	assert_true(k->has_rootfs);
	assert_int_equal(k->rootfs_bytes, 4096);
	assert_int_equal(k->rootfs_inodes, 7);
	assert_string_equal(k->log_path, "/var/log/pods/default_web_uid-web/app/1.log");
	assert_string_equal(cri_listing_container(l, "c1")->log_path, "/var/log/pods/default_web_uid-web/app/0.log");
	assert_false(cri_listing_container(l, "c1")->has_rootfs);
	assert_string_equal(cri_listing_container(l, "c0")->log_path, "");
	cri_listing_free(l);
	free(l);
	assert_int_equal(calls_logged("ContainerStatus"), 3);

	/* a second listing asks no log path again: a container's never changes */
	r = run_op(&c, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, 0);
	assert_string_equal(cri_listing_container(r.l, "c2")->log_path, "/var/log/pods/default_web_uid-web/app/1.log");
	cri_listing_free(r.l);
	free(r.l);
	assert_int_equal(calls_logged("ContainerStatus"), 3);
	assert_int_equal(calls_logged("ListContainers"), 2);
	session_end(&c);

	r = run_op(NULL, 5000000, 0, start_version, NULL, NULL);
	assert_int_equal(r.error, 0);
	assert_string_equal(r.why, "standin 9.9 (CRI v1)");
}

static void test_remove_image(void **state)
{
	char file[400], buf[8192];
	result r;
	FILE *f;

	(void)state;
	snprintf(file, sizeof(file), "%s/layer", dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs("x", f);
	fclose(f);
	snprintf(buf, sizeof(buf),
	         "{\"images\": [{\"id\": \"sha256:aaa\", \"size\": 1, \"file\": \"%s\"}, {\"id\": \"sha256:bbb\", \"size\": 2}]}",
	         file);
	write_state(buf);
	start_standin(false);
	r = run_op(NULL, 5000000, 0, start_remove, "sha256:aaa", NULL);
	assert_int_equal(r.error, 0);
	assert_int_equal(access(file, F_OK), -1);
	r = run_op(NULL, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.l->n_images, 1);
	assert_string_equal(r.l->images[0].id, "sha256:bbb");
	cri_listing_free(r.l);
	free(r.l);
	/* removing what is not there is fine, as the CRI says */
	r = run_op(NULL, 5000000, 0, start_remove, "sha256:zzz", NULL);
	assert_int_equal(r.error, 0);
}

static void test_slow_runtime(void **state)
{
	uint64_t elapsed;
	result r;

	(void)state;
	write_state("{\"faults\": {\"*\": {\"delay\": 3}}}");
	start_standin(false);
	r = run_op(NULL, 300000, 0, start_list, NULL, &elapsed);
	assert_int_equal(r.error, -ETIMEDOUT);
	assert_non_null(strstr(r.why, "deadline exceeded"));
	/* the deadline, not the runtime, ended it; and the loop went on meanwhile */
	assert_true(elapsed < 2000000);
	assert_true(r.ticks >= 5);
}

/*
 * Twelve containers whose ContainerStatus answers in 0.6 s each, 4 at a time, the deadline 1 s:
 * every call would meet its own deadline, the listing (3 rounds, 1.8 s) does not meet its. The
 * log paths it got are kept: the next listing asks only for the others.
 */
static void test_listing_deadline(void **state)
{
	char buf[8192];
	size_t o;
	session c = { 0 };
	unsigned known = 0, total = 0, before;
	result r;

	(void)state;
	o = (size_t)snprintf(buf, sizeof(buf), "{\"containers\": [");
	for (int i = 0; i < 12; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s{\"id\": \"c%02d\", \"log_path\": \"/var/log/pods/p/c/%d.log\"}",
		                      i ? ", " : "", i, i);
	snprintf(buf + o, sizeof(buf) - o, "], \"faults\": {\"ContainerStatus\": {\"delay\": 0.6}}}");
	write_state(buf);
	start_standin(false);
	r = run_op(&c, 1000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, -ETIMEDOUT);
	assert_non_null(strstr(r.why, "runtime-request-timeout"));
	assert_non_null(strstr(r.why, "ContainerStatus"));
	const char *k = strrchr(r.why, ';');
	assert_non_null(k);
	assert_int_equal(sscanf(k, "; %u of %u log paths known", &known, &total), 2);
	assert_int_equal(total, 12);
	assert_true(known < 12);

	/* the runtime is quick again: only the log paths not got before are asked */
	snprintf(buf + o, sizeof(buf) - o, "]}");
	write_state(buf);
	before = calls_logged("ContainerStatus");
	r = run_op(&c, 1000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.l->n_containers, 12);
	for (size_t i = 0; i < 12; i++)
		assert_non_null(strstr(r.l->containers[i].log_path, "/var/log/pods/p/c/"));
	cri_listing_free(r.l);
	free(r.l);
	printf("# %u log paths kept, %u asked again\n", known, calls_logged("ContainerStatus") - before);
	assert_int_equal(calls_logged("ContainerStatus") - before, 12 - known);
	session_end(&c);
}

/*
 * A runtime that accepts and never answers, ignoring grpc-timeout (a stuck handler): every call
 * ends by evictd's own deadline (curl's, and the listing's), not never.
 */
static void test_hanging_runtime(void **state)
{
	uint64_t elapsed;
	result r;

	(void)state;
	write_state("{}");
	start_standin_with("--hang");
	r = run_op(NULL, 300000, 0, start_version, NULL, &elapsed);
	assert_int_equal(r.error, -ETIMEDOUT);
	assert_true(elapsed < 10000000);
	r = run_op(NULL, 300000, 0, start_remove, "sha256:aaa", &elapsed);
	assert_int_equal(r.error, -ETIMEDOUT);
	r = run_op(NULL, 300000, 0, start_list, NULL, &elapsed);
	assert_int_equal(r.error, -ETIMEDOUT);
	assert_true(r.ticks >= 5);
}

static void test_refusing_and_absent(void **state)
{
	result r;

	(void)state;
	write_state("{}");
	start_standin(true);
	r = run_op(NULL, 1000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, -ECONNREFUSED);
	stop_standin();
	r = run_op(NULL, 1000000, 0, start_version, NULL, NULL);
	assert_int_equal(r.error, -ENOENT);
	assert_non_null(strstr(r.why, "No such file or directory"));
}

static void test_garbage_and_status(void **state)
{
	result r;

	(void)state;
	write_state("{\"faults\": {\"ListImages\": {\"garbage\": 40}}}");
	start_standin(false);
	r = run_op(NULL, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, -EBADMSG);
	assert_string_equal(r.why, "ListImages: answer refused: not a valid ListImagesResponse message (40 bytes)");
	assert_null(r.l);

	write_state("{\"faults\": {\"ListContainers\": {\"status\": 13, \"message\": \"boom\"}}}");
	r = run_op(NULL, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, -EREMOTEIO);
	assert_string_equal(r.why, "ListContainers: INTERNAL (13): boom");
}

static void test_oversize(void **state)
{
	result r;

	(void)state;
	write_state("{\"images\": [{\"id\": \"sha256:a\", \"size\": 1}], \"faults\": {\"ListImages\": {\"oversize\": 300000}}}");
	start_standin(false);
	/* within the bound: the unknown padding field is skipped, the answer is used */
	r = run_op(NULL, 5000000, 400000, start_list, NULL, NULL);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.l->n_images, 1);
	cri_listing_free(r.l);
	free(r.l);
	/* beyond it: refused without keeping more than the bound */
	r = run_op(NULL, 5000000, 100000, start_list, NULL, NULL);
	assert_int_equal(r.error, -EFBIG);
	assert_non_null(strstr(r.why, "ListImages: answer larger than 100000 bytes"));
}

static void test_strict_decoding(void **state)
{
	result r;

	(void)state;
	start_standin(false);
	write_state("{\"containers\": [{\"id\": \"c\\u0001\", \"sandbox\": \"s\"}]}");
	r = run_op(NULL, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, -EBADMSG);
	assert_string_equal(r.why, "ListContainers: answer refused: container 0: id is empty, too long or not printable");
	write_state("{\"containers\": [{\"id\": \"c\"}, {\"id\": \"c\"}]}");
	r = run_op(NULL, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, -EBADMSG);
	assert_string_equal(r.why, "ListContainers: answer refused: container c listed twice");
	write_state("{\"containers\": [{\"id\": \"c\", \"log_path\": \"/var/log/../../etc/shadow\"}]}");
	r = run_op(NULL, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, -EBADMSG);
	assert_string_equal(r.why, "ContainerStatus: answer refused: log path is not a clean absolute path");
	write_state("{\"images\": [{\"id\": \"sha256:a\", \"size\": 18446744073709551615}]}");
	r = run_op(NULL, 5000000, 0, start_list, NULL, NULL);
	assert_int_equal(r.error, -EBADMSG);
	assert_string_equal(r.why, "ListImages: answer refused: image sha256:a: size beyond 2^63");
}

static int setup(void **state)
{
	(void)state;
	scratch_template(dir, sizeof(dir), "evictd-cri");
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/cri.sock", dir);
	snprintf(state_path, sizeof(state_path), "%s/state.json", dir);
	snprintf(log_path, sizeof(log_path), "%s/calls.jsonl", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[400];
	(void)state;
	stop_standin();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_listing), cmocka_unit_test(test_remove_image),
		cmocka_unit_test(test_slow_runtime), cmocka_unit_test(test_refusing_and_absent),
		cmocka_unit_test(test_garbage_and_status), cmocka_unit_test(test_oversize),
		cmocka_unit_test(test_strict_decoding), cmocka_unit_test(test_listing_deadline),
		cmocka_unit_test(test_hanging_runtime),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
