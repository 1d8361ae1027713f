/* SPDX-License-Identifier: MIT */
/*
 * Units of the Kubernetes link: kubeconfig parsing and refusals, the kubelet's eviction message
 * byte for byte, canonical quantities, Pod decoding into the descriptor (critical pods, the
 * scheduler's requests), and evictd reading that descriptor back (the extended keys).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backoff.h"
#include "kpod.h"
#include "kstream.h"
#include "kubeconfig.h"
#include "podmeta.h"
#include "spool.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/kube-units.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	(void)state;
	/* only files of ours, in our mkdtemp directory */
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			(void)unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	return rmdir(dir);
}

static void put(const char *name, const char *text, mode_t mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static int load(const char *name, kube_config **c, char *err, size_t size)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return kubeconfig_load(p, "the hint", c, err, size);
}

#define KC_HEAD "apiVersion: v1\nkind: Config\ncurrent-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\n" \
                "clusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443/\n    certificate-authority: pki/ca.crt\n"

static void test_kubeconfig_files(void **state)
{
	kube_config *c = NULL;
	char err[512];
	(void)state;

	put("ok.conf", KC_HEAD "users:\n- name: u\n  user:\n    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n"
	               "    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n", 0600);
	assert_int_equal(load("ok.conf", &c, err, sizeof(err)), 0);
	assert_string_equal(c->server, "https://10.0.0.1:6443");
	assert_non_null(strstr(c->ca.path, "/pki/ca.crt")); /* relative to the kubeconfig's directory */
	assert_true(strncmp(c->ca.path, dir, strlen(dir)) == 0);
	assert_string_equal(c->cert.path, "/var/lib/kubelet/pki/kubelet-client-current.pem");
	assert_null(c->token);
	c = kubeconfig_free(c);

	put("data.conf", "current-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
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

	put("exec.conf", KC_HEAD "users:\n- name: u\n  user:\n    exec: {command: aws}\n", 0600);
	assert_int_equal(load("exec.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "credential plugins (exec/auth-provider) are not supported"));
	assert_null(strchr(err, '\n'));

	put("open.conf", KC_HEAD "users:\n- name: u\n  user: {token: s3cr3t}\n", 0640);
	assert_int_equal(load("open.conf", &c, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "accessible by its group (mode 0640"));
	assert_null(strstr(err, "s3cr3t"));

	assert_int_equal(load("missing.conf", &c, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "missing.conf: no such file (the hint)"));

	put("insecure.conf", "current-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
	                     "  cluster: {server: 'https://h', insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\n",
	      0600);
	assert_int_equal(load("insecure.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "insecure-skip-tls-verify is refused"));

	put("http.conf", "current-context: k\ncontexts:\n- name: k\n  context: {cluster: c, user: u}\nclusters:\n- name: c\n"
	                 "  cluster: {server: 'http://h'}\nusers:\n- name: u\n  user: {token: t}\n", 0600);
	assert_int_equal(load("http.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "must be an https:// URL"));

	put("nocontext.conf", "contexts: []\n", 0600);
	assert_int_equal(load("nocontext.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "current-context is not set"));

	put("nouser.conf", KC_HEAD "users:\n- name: u\n  user: {}\n", 0600);
	assert_int_equal(load("nouser.conf", &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no client certificate and no token"));

	put("badyaml.conf", "current-context: [\n", 0600);
	assert_int_equal(load("badyaml.conf", &c, err, sizeof(err)), -EINVAL);
	assert_null(c);
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

static void test_message(void **state)
{
	pod_info p = { .memory_request = 512 << 20 };
	spool_container cs[] = {
		{ .name = "web", .usage = 1258291LL * 1024, .request = 512 << 20 },
		{ .name = "sidecar", .usage = 10 << 20, .request = 64 << 20 }, /* under its request: not named */
		{ .name = "log", .usage = 3 << 20, .request = -1 },              /* no request: "0" */
	};
	spool_eviction ev = { .pod = &p, .signal = "memory.available", .threshold = 100 << 20, .observed = 80 << 20,
		              .containers = cs, .n_containers = 3 };
	char m[1024];
	(void)state;
	assert_int_equal(spool_message(&ev, m, sizeof(m)), 0);
	assert_string_equal(m, "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. "
	                       "Container web was using 1258291Ki, request is 512Mi, has larger consumption of memory. "
	                       "Container log was using 3Mi, request is 0, has larger consumption of memory. ");
	ev.signal = "nodefs.available";
	ev.n_containers = 0;
	assert_int_equal(spool_message(&ev, m, sizeof(m)), 0);
	assert_string_equal(m, "The node was low on resource: ephemeral-storage. Threshold quantity: 100Mi, available: 80Mi. ");
	assert_string_equal(spool_signal_resource("pid.available"), "pids");
	assert_string_equal(spool_signal_resource("imagefs.inodesFree"), "inodes");
	assert_int_equal(spool_message(&ev, m, 20), -ENOBUFS);
}

static const char *POD_JSON =
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"shop\",\"uid\":\"u-1\","
	"\"resourceVersion\":\"42\",\"annotations\":{\"kubernetes.io/config.source\":\"api\"}},"
	"\"spec\":{\"nodeName\":\"n1\",\"priority\":1000,\"priorityClassName\":\"high\",\"preemptionPolicy\":\"Never\","
	"\"terminationGracePeriodSeconds\":45,\"overhead\":{\"memory\":\"10Mi\"},"
	"\"initContainers\":[{\"name\":\"init\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}},"
	"{\"name\":\"proxy\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":{\"memory\":\"100Mi\",\"cpu\":\"100m\"}}}],"
	"\"containers\":[{\"name\":\"web\",\"resources\":{\"requests\":{\"memory\":\"512Mi\",\"cpu\":\"250m\"}}}]},"
	"\"status\":{\"qosClass\":\"Burstable\",\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"web\","
	"\"containerID\":\"containerd://abc\"}]}}";

struct decoding {
	kpod *p;
	char *err;
	size_t err_size;
	int r;
	karena arena;
};

static int on_pod(void *userdata, const kval *item)
{
	struct decoding *dc = userdata;
	dc->r = kpod_decode(item, &dc->arena, "test", dc->p, dc->err, dc->err_size);
	karena_reset(&dc->arena);
	return 0;
}

/* A pod as evictd-kube gets it: JSON streamed through kstream in small chunks, then kpod_decode. */
static int decode_json(const char *json, kpod *p, char *err, size_t err_size)
{
	struct decoding dc = { p, err, err_size, -ENODATA, { 0 } };
	diag d;
	kstream *s;
	size_t len = strlen(json);

	diag_init(&d, NULL);
	assert_int_equal(kstream_new(&s, KSTREAM_JSON, "test", &d, on_pod, &dc), 0);
	for (size_t off = 0; off < len; off += 7)
		assert_int_equal(kstream_feed(s, json + off, len - off < 7 ? len - off : 7), 0);
	assert_int_equal(kstream_end(s), 0);
	kstream_free(s);
	karena_free(&dc.arena);
	return dc.r;
}

static void test_pod_decode(void **state)
{
	char err[256], text[4096];
	kpod p;
	(void)state;

	assert_int_equal(decode_json(POD_JSON, &p, err, sizeof(err)), 0);
	assert_string_equal(p.uid, "u-1");
	assert_true(p.has_priority);
	assert_int_equal(p.priority, 1000);
	assert_false(kpod_critical(&p));
	/* max(init 1Gi, sidecar 100Mi + web 512Mi) + overhead 10Mi, as the scheduler */
	assert_int_equal(p.req_memory, (1024LL + 10) << 20);
	assert_int_equal(p.req_cpu_milli, 350);
	assert_int_equal(p.n_containers, 1);
	assert_string_equal(p.containers[0].id, "containerd://abc");
	int n = kpod_descriptor(&p, text, sizeof(text));
	assert_true(n > 0);
	assert_non_null(strstr(text, "\npriority = 1000\n"));
	assert_non_null(strstr(text, "\n# priority-class: high\n")); /* not resolved again by evictd */
	assert_non_null(strstr(text, "\npreemption-policy = Never\n"));
	assert_non_null(strstr(text, "\ncritical = no\n"));
	assert_non_null(strstr(text, "\ntermination-grace-period = 45s\n"));
	assert_non_null(strstr(text, "\ncontainer = web containerd://abc memory=536870912 cpu=250m\n"));
}

/* What evictd-kube writes, evictd reads back: it trusts only root-owned descriptors. */
static void test_descriptor_read_back(void **state)
{
	char err[256], text[4096];
	kpod p;
	(void)state;

	if (geteuid() != 0) {
		print_message("# skip test_descriptor_read_back: needs root: evictd trusts only root-owned descriptors\n");
		skip();
	}
	assert_int_equal(decode_json(POD_JSON, &p, err, sizeof(err)), 0);
	assert_true(kpod_descriptor(&p, text, sizeof(text)) > 0);
	char path[256];
	snprintf(path, sizeof(path), "%s/u-1.conf", dir);
	put("u-1.conf", text, 0644);
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	pod_info pi = { .uid = "u-1" };
	char why[512] = "";
	int r = podmeta_apply_descriptor(fd, NULL, NULL, &pi, why, sizeof(why));
	if (r < 0)
		fail_msg("descriptor rejected: %s", why);
	assert_int_equal(r, 1);
	assert_int_equal(podmeta_defaults(-1, NULL, &pi), 0);
	assert_string_equal(pi.name, "web-1");
	assert_int_equal(pi.priority, 1000);
	assert_int_equal(pi.memory_request, (1024LL + 10) << 20);
	assert_int_equal(pi.qos, QOS_BURSTABLE);
	assert_false(pi.critical);
	assert_int_equal(pi.n_containers, 1);
	assert_int_equal(pi.containers[0].memory_request, 512 << 20);
	pod_info_done(&pi);

	/* a static pod of priority 0 is critical, in the descriptor and for evictd */
	put("u-1.conf", "[pod]\nuid = u-1\nname = etcd\npriority = 0\ncritical = yes\n", 0644);
	pod_info ps = { .uid = "u-1" };
	assert_int_equal(podmeta_apply_descriptor(fd, NULL, NULL, &ps, why, sizeof(why)), 1);
	assert_int_equal(podmeta_defaults(-1, NULL, &ps), 0);
	assert_true(ps.critical);
	pod_info_done(&ps);

	/* a descriptor naming another uid is refused */
	put("u-1.conf", "[pod]\nuid = u-2\nname = x\n", 0644);
	pod_info pb = { .uid = "u-1" };
	assert_int_equal(podmeta_apply_descriptor(fd, NULL, NULL, &pb, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "does not match the file name"));
	pod_info_done(&pb);
	close(fd);
	unlink(path);
}

static void test_pod_static_and_bad(void **state)
{
	char err[256];
	kpod p;
	(void)state;
	assert_int_equal(decode_json("{\"metadata\":{\"name\":\"etcd-n1\",\"namespace\":\"kube-system\",\"uid\":\"m-1\","
	                             "\"annotations\":{\"kubernetes.io/config.mirror\":\"x\"}},\"spec\":{\"priority\":0,"
	                             "\"containers\":[{\"name\":\"etcd\"}]}}", &p, err, sizeof(err)), 0);
	assert_true(kpod_critical(&p));
	assert_int_equal(decode_json("{\"metadata\":{\"name\":\"x\",\"uid\":\"../../etc\"},"
	                             "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a UID"));
	assert_int_equal(decode_json("{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"c\","
	                             "\"resources\":{\"requests\":{\"memory\":\"1x\"}}}]}}", &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid quantity"));
	/* the decoder's message names the source, the pod and the field */
	assert_non_null(strstr(err, "test:1: pods/default/x: spec.containers[0].resources.requests.memory"));
	/* an ERROR watch event's Status is not a pod */
	assert_int_equal(decode_json("{\"kind\":\"Status\",\"code\":410}", &p, err, sizeof(err)), -EMEDIUMTYPE);
	/* no namespace in the object: none in the descriptor (the decoder's "default" is not written) */
	char text[1024];
	assert_int_equal(decode_json("{\"metadata\":{\"name\":\"x\",\"uid\":\"u\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
	                             &p, err, sizeof(err)), 0);
	assert_true(kpod_descriptor(&p, text, sizeof(text)) > 0);
	assert_null(strstr(text, "namespace"));
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
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_kubeconfig_files), cmocka_unit_test(test_kubeconfig_refusals),
		cmocka_unit_test(test_base64),           cmocka_unit_test(test_quantity),
		cmocka_unit_test(test_message),          cmocka_unit_test(test_pod_decode),
		cmocka_unit_test(test_descriptor_read_back),
		cmocka_unit_test(test_pod_static_and_bad),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
