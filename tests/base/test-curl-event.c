/* SPDX-License-Identifier: MIT */
/*
 * The libcurl-multi-on-sd-event adapter (base/curl-event.c) against real transfers: an HTTP
 * server on a Unix socket, served from the same sd-event loop (no thread, no child process), and
 * curl easy handles driven only by the adapter's io and timer sources. What the clients
 * (kube/kmulti.c, cri/grpc.c) rely on: every transfer ends exactly once in the done callback, with
 * the answer when one comes, with CURLE_OPERATION_TIMEDOUT when it does not (the timer source),
 * and several transfers at once each get theirs.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "curl-event.h"

#define TRANSFERS_MAX 4
#define ANSWER "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"

typedef struct {
	char body[64];
	size_t len;
	CURLcode result;
	long status;
	int done_calls;
} transfer;

typedef struct {
	sd_event *event;
	curl_event *ce;
	sd_event_source *listener;
	sd_event_source *guard; /* ends a run that hangs: a failure, not a stuck test */
	char dir[256], path[300];
	bool answer;            /* false: accept and read, never answer */
	int listen_fd;
	int open_fds[TRANSFERS_MAX];
	size_t n_open;
	transfer t[TRANSFERS_MAX];
	CURL *easy[TRANSFERS_MAX];
	size_t n, finished;
} fixture;

static int on_client(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	fixture *f = userdata;
	char buf[1024];
	ssize_t n;

	(void)revents;
	n = read(fd, buf, sizeof(buf));
	if (n > 0 && !f->answer)
		return 0;
	/* a request is a few hundred bytes: one read has its head */
	if (n > 0)
		assert_int_equal(write(fd, ANSWER, strlen(ANSWER)), (ssize_t)strlen(ANSWER));
	sd_event_source_disable_unref(s);
	close(fd);
	return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	fixture *f = userdata;
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	(void)s;
	(void)revents;
	if (c < 0)
		return 0;
	if (!f->answer) {
		/* kept open and silent until the test ends: the transfer must time out on its own */
		assert_true(f->n_open < TRANSFERS_MAX);
		f->open_fds[f->n_open++] = c;
	}
	assert_int_equal(sd_event_add_io(f->event, NULL, c, EPOLLIN, on_client, f), 0);
	return 0;
}

static int on_guard(sd_event_source *s, uint64_t usec, void *userdata)
{
	fixture *f = userdata;

	(void)s;
	(void)usec;
	return sd_event_exit(f->event, -ETIME);
}

static void on_done(CURL *easy, CURLcode result, void *userdata)
{
	fixture *f = userdata;
	transfer *t = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
	assert_non_null(t);
	t->done_calls++;
	t->result = result;
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &t->status);
	curl_multi_remove_handle(curl_event_multi(f->ce), easy);
	if (++f->finished == f->n)
		sd_event_exit(f->event, 0);
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	transfer *t = userdata;
	size_t n = size * nmemb;

	if (n > sizeof(t->body) - 1 - t->len)
		return 0;
	memcpy(t->body + t->len, ptr, n);
	t->len += n;
	return n;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *tmp = getenv("TMPDIR");

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "%s/curl-event.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/http.sock", f->dir);
	assert_true(strlen(f->path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	assert_true(f->listen_fd >= 0);
	assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->listen_fd, 16), 0);
	assert_int_equal(sd_event_new(&f->event), 0);
	assert_int_equal(sd_event_add_io(f->event, &f->listener, f->listen_fd, EPOLLIN, on_accept, f), 0);
	assert_int_equal(sd_event_add_time_relative(f->event, &f->guard, CLOCK_MONOTONIC, 10 * 1000000, 0, on_guard, f), 0);
	assert_int_equal(curl_event_new(f->event, "test", on_done, f, &f->ce), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	for (size_t i = 0; i < f->n; i++) {
		curl_multi_remove_handle(curl_event_multi(f->ce), f->easy[i]);
		curl_easy_cleanup(f->easy[i]);
	}
	curl_event_free(f->ce);
	for (size_t i = 0; i < f->n_open; i++)
		close(f->open_fds[i]);
	sd_event_source_disable_unref(f->listener);
	sd_event_source_disable_unref(f->guard);
	sd_event_unref(f->event);
	close(f->listen_fd);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void start(fixture *f, long timeout_ms)
{
	CURL *h = curl_easy_init();
	transfer *t = &f->t[f->n];

	assert_non_null(h);
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, f->path);
	curl_easy_setopt(h, CURLOPT_URL, "http://localhost/");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(h, CURLOPT_PRIVATE, t);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	assert_int_equal(curl_multi_add_handle(curl_event_multi(f->ce), h), CURLM_OK);
	f->easy[f->n++] = h;
}

static void test_answer_arrives_once(void **state)
{
	fixture *f = *state;

	f->answer = true;
	start(f, 5000);
	assert_int_equal(sd_event_loop(f->event), 0);
	assert_int_equal(f->t[0].done_calls, 1);
	assert_int_equal(f->t[0].result, CURLE_OK);
	assert_int_equal(f->t[0].status, 200);
	assert_int_equal(f->t[0].len, 5);
	assert_memory_equal(f->t[0].body, "hello", 5);
}

static void test_transfers_at_once_each_end(void **state)
{
	fixture *f = *state;

	f->answer = true;
	for (int i = 0; i < TRANSFERS_MAX; i++)
		start(f, 5000);
	assert_int_equal(sd_event_loop(f->event), 0);
	for (int i = 0; i < TRANSFERS_MAX; i++) {
		assert_int_equal(f->t[i].done_calls, 1);
		assert_int_equal(f->t[i].result, CURLE_OK);
		assert_memory_equal(f->t[i].body, "hello", 5);
	}
}

/* Only curl's timer can end this transfer: the server never answers and never closes. */
static void test_silent_server_times_out(void **state)
{
	fixture *f = *state;

	f->answer = false;
	start(f, 300);
	assert_int_equal(sd_event_loop(f->event), 0);
	assert_int_equal(f->t[0].done_calls, 1);
	assert_int_equal(f->t[0].result, CURLE_OPERATION_TIMEDOUT);
	assert_int_equal(f->t[0].len, 0);
}

static void test_free_without_transfers(void **state)
{
	fixture *f = *state;
	sd_event *e = NULL;
	curl_event *ce = NULL;

	(void)f;
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(curl_event_new(e, "kube-http", on_done, NULL, &ce), 0);
	assert_non_null(curl_event_multi(ce));
	assert_null(curl_event_free(ce));
	assert_null(curl_event_free(NULL));
	sd_event_unref(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_answer_arrives_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_transfers_at_once_each_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_server_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_without_transfers, setup, teardown),
	};
	int r;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return r;
}
