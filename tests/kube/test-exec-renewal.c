/*
 * preemptd's exec plugin renewal (kexec-async.h, http.h): the plugin run on an sd-event loop
 * answers a credential, a failure or too much output as kube_exec_run does; a 401 to a call that
 * went out with the credential before the last renewal does not make the new one stale (one
 * plugin run for a burst of refused calls, not one per call that comes back).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "http.h"
#include "kexec-async.h"
#include "kubeconfig.h"

struct result {
	bool called;
	int r;
	char token[64];
	char err[600];
};

static void on_done(int r, kube_exec_cred *cred, const char *err, void *userdata)
{
	struct result *res = userdata;

	res->called = true;
	res->r = r;
	snprintf(res->err, sizeof(res->err), "%s", err);
	if (r == 0 && cred->token)
		snprintf(res->token, sizeof(res->token), "%s", cred->token);
}

/* A plugin that is a shell script (tests only: the daemon never runs a shell itself). */
static kube_exec plugin(const char *script, char **argv)
{
	argv[0] = (char *)"/bin/sh";
	argv[1] = (char *)"-c";
	argv[2] = (char *)script;
	argv[3] = NULL;
	return (kube_exec){ .n_ref = 1, .api_version = (char *)"client.authentication.k8s.io/v1", .argv = argv,
		            .exec_info = (char *)"KUBERNETES_EXEC_INFO={}", .where = (char *)"test: user \"u\"" };
}

static void run_plugin(const char *script, struct result *res)
{
	char *argv[4], err[600] = "";
	kube_exec x = plugin(script, argv);
	kube_exec_job *job = NULL;
	sd_event *e = NULL;

	*res = (struct result){ 0 };
	assert_int_equal(sd_event_new(&e), 0);
	assert_int_equal(kube_exec_start(e, &x, on_done, res, &job, err, sizeof(err)), 0);
	/* the loop turns until the job is done; no exit is asked for: stop once it was called */
	for (int i = 0; i < 2000 && !res->called; i++)
		assert_true(sd_event_run(e, 10000) >= 0);
	assert_true(res->called);
	assert_int_equal(x.n_ref, 1); /* the job let go of the plugin */
	sd_event_unref(e);
}

static void test_async_token(void **state)
{
	struct result res;

	(void)state;
	run_plugin("echo '{\"kind\": \"ExecCredential\", \"apiVersion\": \"client.authentication.k8s.io/v1\", "
	           "\"status\": {\"token\": \"tok-1\"}}'",
	           &res);
	assert_int_equal(res.r, 0);
	assert_string_equal(res.token, "tok-1");
}

static void test_async_failures(void **state)
{
	struct result res;

	(void)state;
	run_plugin("exit 3", &res);
	assert_int_equal(res.r, -EIO);
	assert_string_equal(res.err, "test: user \"u\": exec plugin \"/bin/sh\" exited with status 3 (its messages are above)");
	/* more than it may print: killed, not read to the end */
	run_plugin("while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done", &res);
	assert_int_equal(res.r, -EFBIG);
	assert_non_null(strstr(res.err, "printed more than 262144 bytes"));
	run_plugin("echo '{\"kind\": \"Secret\"}'", &res);
	assert_int_equal(res.r, -EINVAL);
	assert_non_null(strstr(res.err, "printed kind \"Secret\", not ExecCredential"));
}

static void test_refused_before_renewal(void **state)
{
	char *argv[4];
	kube_exec x = plugin("true", argv);
	struct timespec ts;
	kube_config cfg = { .server = (char *)"https://127.0.0.1:1", .exec = &x };
	kube_client *c = NULL;
	kube_exec_cred cred = { 0 };
	unsigned old_gen;

	(void)state;
	clock_gettime(CLOCK_REALTIME, &ts);
	cfg.expiry_ns = ((int64_t)ts.tv_sec + 3600) * 1000000000;
	assert_int_equal(kube_client_new(&cfg, NULL, &c), 0);
	assert_true(kube_client_credential_valid(c));
	assert_false(kube_client_renewal_due(c)); /* an hour's credential, just obtained */
	old_gen = kube_client_credential_gen(c);
	kube_client_credential_rejected_gen(c, old_gen);
	assert_false(kube_client_credential_valid(c));
	assert_true(kube_client_renewal_due(c));
	cred.token = strdup("tok-2");
	cred.expiry_ns = cfg.expiry_ns;
	kube_client_set_credential(c, &cred);
	assert_true(kube_client_credential_valid(c));
	/* a call that went out with the refused token comes back 401 after the renewal */
	kube_client_credential_rejected_gen(c, old_gen);
	assert_true(kube_client_credential_valid(c));
	assert_false(kube_client_renewal_due(c));
	/* one that went out with the new one does make it stale */
	kube_client_credential_rejected_gen(c, kube_client_credential_gen(c));
	assert_false(kube_client_credential_valid(c));
	kube_client_free(c);
	assert_int_equal(x.n_ref, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_async_token),
		cmocka_unit_test(test_async_failures),
		cmocka_unit_test(test_refused_before_renewal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
