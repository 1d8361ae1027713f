/* --shadow's transport (controller/act/transport-readonly.c): a GET reaches the API server's
 * transport underneath; a write of any verb is refused before it leaves (-EROFS), nothing reaches
 * the transport underneath, and the refusal is counted; the wrapper owns and frees what it wraps. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "journal.h"
#include "transport.h"

struct inner {
	transport t;
	unsigned started, cancelled;
	const char *last_method;
	bool *freed;
};

static int inner_start(transport *t, const transport_request *rq, transport_done_fn done, void *userdata,
                       void **ret_handle)
{
	struct inner *in = (struct inner *)t;
	(void)done;
	(void)userdata;
	in->started++;
	in->last_method = rq->method;
	*ret_handle = in;
	return 0;
}

static void inner_cancel(transport *t, void *handle)
{
	(void)handle;
	((struct inner *)t)->cancelled++;
}

static void inner_free(transport *t)
{
	*((struct inner *)t)->freed = true;
}

static void done(void *userdata, const transport_answer *a)
{
	(void)userdata;
	(void)a;
	fail_msg("no answer comes from a refused or a fake call");
}

static void test_reads_pass_writes_do_not(void **state)
{
	(void)state;
	bool freed = false;
	struct inner in = { .t = { .start = inner_start, .cancel = inner_cancel, .free = inner_free }, .freed = &freed };
	transport *ro = NULL;
	void *h = NULL;

	journal_setup(LOGGING_STDERR, "test-transport-readonly");
	assert_int_equal(transport_readonly_new(&in.t, &ro), 0);
	transport_request get = { .method = "GET", .path = "/api/v1/pods" };
	assert_int_equal(ro->start(ro, &get, done, NULL, &h), 0);
	assert_int_equal(in.started, 1);
	assert_ptr_equal(h, &in);
	ro->cancel(ro, h);
	assert_int_equal(in.cancelled, 1);

	static const char *const writes[] = { "POST", "PUT", "PATCH", "DELETE", NULL };
	for (size_t i = 0; i < 5; i++) {
		transport_request w = { .method = writes[i], .path = "/api/v1/namespaces/default/pods/p/binding",
			                .body = "{}" };
		h = NULL;
		assert_int_equal(ro->start(ro, &w, done, NULL, &h), -EROFS);
		assert_null(h);
	}
	assert_int_equal(in.started, 1); /* nothing but the GET went through */
	assert_int_equal(transport_readonly_refused(ro), 5);
	assert_int_equal(transport_readonly_refused(&in.t), 0); /* another transport refuses nothing */
	ro->free(ro);
	assert_true(freed);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_pass_writes_do_not),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
