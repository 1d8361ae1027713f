/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the kubelet's configuration (a KubeletConfiguration, YAML or JSON) as evictd
 * reads it: kubelet_config_parse() on the input, then the whole path a daemon takes — the input
 * written as config.yaml, an evictd.conf naming it loaded with config_load_string(), the ordering
 * check and every setting formatted.
 * Invariants: a rejected file says where (file:line) and what; a broken kubelet file never fails
 * evictd's load (one warning instead); an accepted one gives thresholds that are valid values.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "kubelet-config.h"
#include "fuzz-common.h"

/* fuzz-links: agent lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char kc_dir[256], kc_path[300];

static void kc_setup(void)
{
	if (kc_dir[0])
		return;
	snprintf(kc_dir, sizeof(kc_dir), "%s/fuzz-kubelet-config.%d", fuzz_tmpdir(), (int)getpid());
	snprintf(kc_path, sizeof(kc_path), "%s/config.yaml", kc_dir);
	FUZZ_ASSERT(mkdir(kc_dir, 0700) == 0 || errno == EEXIST);
}

static void kc_row(const char *section, const char *key, const char *value, const char *origin, void *userdata)
{
	(void)userdata;
	FUZZ_CHECK(section && *section && key && *key && value && origin && *origin, "[%s] %s: empty", section, key);
}

static void kc_conflict(const kubelet_conflict *k, void *userdata)
{
	(void)userdata;
	FUZZ_CHECK(k->text[0] && k->evictd && k->kubelet, "empty conflict");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kubelet_config *k = NULL;
	config_error err;

	if (size > 256 * 1024)
		return 0;
	int r = kubelet_config_parse((const char *)data, size, "f.yaml", &k, &err);
	if (r < 0) {
		FUZZ_CHECK(r == -EINVAL || r == -ENOMEM, "unexpected %d", r);
		FUZZ_CHECK(strncmp(err.text, "f.yaml", 6) == 0 && err.msg[0], "error without file or message: %s", err.text);
	} else {
		for (int s = 0; s < _SIGNAL_MAX; s++) {
			const threshold_value *t = &k->hard[s];
			FUZZ_CHECK(!t->set || (t->percent ? t->fraction > 0 && t->fraction < 1 : t->quantity > 0),
			           "bad hard threshold for %d", s);
		}
		free(k);
	}

	kc_setup();
	int fd = open(kc_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(write(fd, data, size) == (ssize_t)size);
	close(fd);
	char text[512];
	snprintf(text, sizeof(text), "[kubernetes]\nkubelet-config = %s\n", kc_path);
	evictd_config *c = NULL;
	r = config_load_string(text, "evictd.conf", &c, &err);
	/* a kubelet file never fails evictd's load (a soft threshold without its grace period, the
	 * one cross-key rule it could break, is refused by the reader itself) */
	FUZZ_CHECK(r == 0 || r == -ENOMEM, "a kubelet file failed evictd's load: %s", err.text);
	if (r == 0) {
		FUZZ_CHECK(!(c->kubelet.path[0] && c->kubelet.warning[0]), "both read and warned about");
		int64_t caps[_SIGNAL_MAX];
		for (int i = 0; i < _SIGNAL_MAX; i++)
			caps[i] = (int64_t)1 << (20 + i);
		config_kubelet_conflicts(c, NULL, kc_conflict, NULL);
		config_kubelet_conflicts(c, caps, kc_conflict, NULL);
		config_foreach_setting(c, kc_row, NULL);
		config_free(c);
	}
	return 0;
}
