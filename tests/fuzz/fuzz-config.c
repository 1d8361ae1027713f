/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: evictd's configuration, as whole files with drop-ins. The input is split on
 * lines "%%" into the main file and drop-ins; one piece goes through config_load_string(), more
 * are written to a private directory (evictd.conf + evictd.conf.d/NN.conf) and loaded with
 * config_load(), the daemon's path, then reloaded over a default configuration.
 * Invariants: an error names a file and says what is wrong; a failed reload leaves the running
 * configuration untouched; a loaded configuration is internally consistent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fuzz-common.h"

/* fuzz-links: agent lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CFG_MAX_PIECES 8

static char cfg_dir[256], cfg_main_path[300], cfg_dropin_dir[300];

static void cfg_setup_dir(void)
{
	if (cfg_dir[0])
		return;
	snprintf(cfg_dir, sizeof(cfg_dir), "%s/fuzz-config.%d", fuzz_tmpdir(), (int)getpid());
	snprintf(cfg_main_path, sizeof(cfg_main_path), "%s/evictd.conf", cfg_dir);
	snprintf(cfg_dropin_dir, sizeof(cfg_dropin_dir), "%s/evictd.conf.d", cfg_dir);
	FUZZ_ASSERT(mkdir(cfg_dir, 0700) == 0 || errno == EEXIST);
	FUZZ_ASSERT(mkdir(cfg_dropin_dir, 0700) == 0 || errno == EEXIST);
}

static void cfg_write_file(const char *path, const char *s, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(write(fd, s, n) == (ssize_t)n);
	close(fd);
}

static void cfg_check_config(const evictd_config *c)
{
	FUZZ_ASSERT(c->pcset != NULL);
	FUZZ_ASSERT(pp_pcset_count(c->pcset) == c->n_classes + 2);
	for (size_t i = 0; i < c->n_classes; i++)
		FUZZ_ASSERT(pp_pcset_find(c->pcset, c->classes[i].name) != NULL);
	FUZZ_ASSERT(c->interval_usec > 0);
	if (c->action == ACTION_EXEC)
		FUZZ_ASSERT(c->exec_argv && c->exec_argv[0] && c->exec_argv[0][0]);
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		const threshold_value *t[] = { &c->hard[s], &c->soft[s], &c->min_reclaim[s] };
		for (size_t k = 0; k < 3; k++)
			if (t[k]->set && t[k]->percent)
				FUZZ_CHECK(t[k]->fraction >= 0 && t[k]->fraction <= 1, "signal %d: fraction %f", s,
				           (double)t[k]->fraction);
			else if (t[k]->set)
				FUZZ_CHECK(t[k]->quantity >= 0, "signal %d: quantity %lld", s, (long long)t[k]->quantity);
		(void)config_threshold_resolve_signal((evictd_signal)s, &c->hard[s], INT64_MAX);
		(void)config_threshold_resolve_signal((evictd_signal)s, &c->soft[s], 0);
	}
}

static void cfg_check_error(int r, const config_error *err)
{
	FUZZ_ASSERT(r < 0);
	FUZZ_CHECK(err->msg[0] && memchr(err->msg, 0, sizeof(err->msg)), "error %d without a message", r);
	FUZZ_ASSERT(memchr(err->text, 0, sizeof(err->text)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size);
	const char *piece[CFG_MAX_PIECES];
	size_t len[CFG_MAX_PIECES], n = 0;
	evictd_config *c = NULL;
	config_error err;
	int r;

	if (!text)
		return 0;
	for (char *p = text; n < CFG_MAX_PIECES;) {
		char *sep = strstr(p, "\n%%\n");
		piece[n] = p;
		len[n++] = sep ? (size_t)(sep - p) + 1 : strlen(p);
		if (!sep)
			break;
		p = sep + 4;
	}

	if (n == 1) {
		memset(&err, 0, sizeof(err));
		r = config_load_string(text, "fuzz.conf", &c, &err);
		if (r == 0) {
			cfg_check_config(c);
			config_free(c);
		} else
			cfg_check_error(r, &err);
		free(text);
		return 0;
	}

	cfg_setup_dir();
	cfg_write_file(cfg_main_path, piece[0], len[0]);
	for (size_t i = 1; i < CFG_MAX_PIECES; i++) {
		char path[320];
		snprintf(path, sizeof(path), "%s/%02zu.conf", cfg_dropin_dir, i);
		if (i < n)
			cfg_write_file(path, piece[i], len[i]);
		else
			unlink(path);
	}
	memset(&err, 0, sizeof(err));
	r = config_load(cfg_main_path, true, &c, &err);
	if (r == 0) {
		cfg_check_config(c);
		config_free(c);
	} else {
		cfg_check_error(r, &err);
		FUZZ_CHECK(strstr(err.text, cfg_dir) || !err.file[0], "error does not name the file: %s", err.text);
	}

	/* Reload over a running default configuration: all or nothing. */
	evictd_config *cur = NULL, *before;
	FUZZ_ASSERT(config_new_default(&cur) == 0);
	before = cur;
	uint64_t interval = cur->interval_usec;
	memset(&err, 0, sizeof(err));
	r = config_reload(&cur, cfg_main_path, true, NULL, &err);
	if (r < 0) {
		FUZZ_ASSERT(cur == before && cur->interval_usec == interval);
		cfg_check_error(r, &err);
	} else
		cfg_check_config(cur);
	config_free(cur);
	free(text);
	return 0;
}
