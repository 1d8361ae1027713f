/* SPDX-License-Identifier: MIT */
/*
 * kube/kubeconfig.c: a kubeconfig read as the node's client reads it (paths relative to the file,
 * *-data fields decoded, the server's trailing slash dropped) and its refusals in one line each
 * (exec plugins, a file others may read, plain http, insecure-skip-tls-verify, no context, no
 * credential, bad YAML); base64 as kubeconfigs write it. kube/backoff.c: the retry backoff.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backoff.h"
#include "kexec.h"
#include "kubeconfig.h"
#include "scratch-dir.h"

static int load(const char *name, kube_config **c, char *err, size_t size)
{
	return kubeconfig_load(scratch_path(name), "the hint", c, err, size);
}

#define KC_HEAD "apiVersion: v1\nkind: Config\ncurrent-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\n" \
                "clusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443/\n    certificate-authority: pki/ca.crt\n"

static void test_kubeconfig_files(void **state)
{
	kube_config *c = NULL;
	char err[512];
	(void)state;

	scratch_put("ok.conf", KC_HEAD "users:\n- name: u\n  user:\n    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n"
	                       "    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n", 0600);
	assert_int_equal(load("ok.conf", &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://10.0.0.1:6443");
	assert_non_null(strstr(c->ca.path, "/pki/ca.crt")); /* relative to the kubeconfig's directory */
	assert_true(strncmp(c->ca.path, scratch_dir, strlen(scratch_dir)) == 0);
	assert_string_equal(c->cert.path, "/var/lib/kubelet/pki/kubelet-client-current.pem");
	assert_null(c->token);
	c = kubeconfig_free(c);

	scratch_put("data.conf", "current-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
	                         "  cluster: {server: 'https://h', certificate-authority-data: aGVsbG8=}\nusers:\n- name: u\n"
	                         "  user: {token: s3cr3t}\n", 0600);
	assert_int_equal(load("data.conf", &c, err, sizeof(err)), 0);
	assert_int_equal(c->ca.len, 5);
	assert_memory_equal(c->ca.data, "hello", 5);
	assert_string_equal(c->token, "s3cr3t");
	c = kubeconfig_free(c);
}

static void test_kubeconfig_refusals(void **state)
{
	kube_config *c = NULL;
	char err[512];
	(void)state;

	scratch_put("exec.conf", KC_HEAD "users:\n- name: u\n  user:\n    exec: {command: aws}\n", 0600);
	assert_int_equal(load("exec.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "credential plugins (exec/auth-provider) are not supported"));
	assert_null(strchr(err, '\n'));

	scratch_put("open.conf", KC_HEAD "users:\n- name: u\n  user: {token: s3cr3t}\n", 0640);
	assert_int_equal(load("open.conf", &c, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "accessible by its group (mode 0640"));
	assert_null(strstr(err, "s3cr3t"));

	assert_int_equal(load("missing.conf", &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "missing.conf: no such file (the hint)"));

	scratch_put("insecure.conf", "current-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
	                             "  cluster: {server: 'https://h', insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\n",
	              0600);
	assert_int_equal(load("insecure.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "insecure-skip-tls-verify is refused"));

	scratch_put("http.conf", "current-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
	                         "  cluster: {server: 'http://h'}\nusers:\n- name: u\n  user: {token: t}\n", 0600);
	assert_int_equal(load("http.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "must be an https:// URL"));

	scratch_put("nocontext.conf", "contexts: []\n", 0600);
	assert_int_equal(load("nocontext.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "current-context is not set"));

	scratch_put("nouser.conf", KC_HEAD "users:\n- name: u\n  user: {}\n", 0600);
	assert_int_equal(load("nouser.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no client certificate and no token"));

	scratch_put("badyaml.conf", "current-context: [\n", 0600);
	assert_int_equal(load("badyaml.conf", &c, err, sizeof(err)), -EINVAL);
	assert_null(c);
}

/* What an exec plugin finds in KUBERNETES_EXEC_INFO: kubectl's ExecCredential, spec.cluster with
 * provideClusterInfo (the CA as base64, tls-server-name and proxy-url when set), JSON a plugin's
 * parser takes: a quote or a control character in a value escaped. */
static void test_exec_info(void **state)
{
	kube_config *c = NULL;
	char err[512], text[2048];
	(void)state;

	/* the plugin: cat of a credential, run at load */
	scratch_put("cred-v1.json", "{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
	                            "\"status\":{\"token\":\"t\"}}", 0600);
	snprintf(text, sizeof(text),
	         "current-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
	         "  cluster: {server: 'https://h:6443', certificate-authority-data: aGVsbG8=, tls-server-name: \"h\\\"\\x01\",\n"
	         "            proxy-url: 'http://proxy:3128'}\nusers:\n- name: u\n"
	         "  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/cat, args: ['%s'],\n"
	         "                interactiveMode: Never, provideClusterInfo: true}}\n",
	         scratch_path("cred-v1.json"));
	scratch_put("exec-info.conf", text, 0600);
	if (kubeconfig_load_as(scratch_path("exec-info.conf"), NULL, KUBECONFIG_CLUSTER_USER, &c, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_non_null(c->exec);
	assert_string_equal(c->exec->exec_info,
	                    "KUBERNETES_EXEC_INFO={\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1\","
	                    "\"spec\":{\"interactive\":false,\"cluster\":{\"server\":\"https://h:6443\","
	                    "\"tls-server-name\":\"h\\\"\\u0001\",\"certificate-authority-data\":\"aGVsbG8=\","
	                    "\"proxy-url\":\"http://proxy:3128\"}}}");
	c = kubeconfig_free(c);

	/* without provideClusterInfo, spec.interactive alone */
	scratch_put("cred-v1beta1.json", "{\"kind\":\"ExecCredential\",\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
	                                 "\"status\":{\"token\":\"t\"}}", 0600);
	snprintf(text, sizeof(text),
	         "current-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
	         "  cluster: {server: 'https://h'}\nusers:\n- name: u\n"
	         "  user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: /bin/cat, args: ['%s']}}\n",
	         scratch_path("cred-v1beta1.json"));
	scratch_put("exec-noinfo.conf", text, 0600);
	if (kubeconfig_load_as(scratch_path("exec-noinfo.conf"), NULL, KUBECONFIG_CLUSTER_USER, &c, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_string_equal(c->exec->exec_info,
	                    "KUBERNETES_EXEC_INFO={\"kind\":\"ExecCredential\","
	                    "\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"spec\":{\"interactive\":false}}");
	kubeconfig_free(c);
}

static void test_base64(void **state)
{
	unsigned char *out;
	size_t n;
	(void)state;
	assert_int_equal(kube_base64_decode("aGVs\nbG8gd29ybGQ=", 17, &out, &n), 0);
	assert_int_equal(n, 11);
	assert_memory_equal(out, "hello world", 11);
	free(out);
	assert_int_equal(kube_base64_decode("a$b=", 4, &out, &n), -EINVAL);
	assert_int_equal(kube_base64_decode("ab=c", 4, &out, &n), -EINVAL);
}

/*
 * The retry backoff: doubles from 500 ms up to the maximum and stays there, each delay within
 * [cur/2, cur] (the jitter), and starts again from 500 ms once reset. Any random() draw must
 * satisfy these bounds, so the seed does not matter; it is fixed anyway.
 */
static void test_backoff(void **state)
{
	(void)state;
	srandom(24);
	uint64_t cur = 0, max = 4000000, want = 500000;
	for (int i = 0; i < 12; i++) {
		uint64_t d = backoff_next(&cur, max);
		assert_int_equal(cur, want);
		assert_true(d >= cur / 2 && d <= cur);
		want = want * 2 > max ? max : want * 2;
	}
	assert_int_equal(cur, max); /* capped: the 12th is still the maximum */
	cur = 0;
	(void)backoff_next(&cur, max);
	assert_int_equal(cur, 500000); /* reset after a success */
	cur = 0;
	(void)backoff_next(&cur, 300000);
	assert_int_equal(cur, 300000); /* a maximum below the first step wins */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubeconfig_files),
		cmocka_unit_test(test_kubeconfig_refusals),
		cmocka_unit_test(test_exec_info),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_backoff),
	};
	return cmocka_run_group_tests(tests, scratch_dir_setup, scratch_dir_teardown);
}
