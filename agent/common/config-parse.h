/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The configuration parser's parts and what they share; private to agent/common/. Top to bottom
 * (each uses only those below it):
 *   config-load.c    the ini reader: inih over a line-counting reader, drop-ins, transactions
 *   config-kubelet.c the kubelet's values under what the files set (kubelet-margin), the
 *                    ordering check
 *   kubelet-config.c the kubelet's KubeletConfiguration and kubeadm flags file, read as plain data
 *   config-values.c  the value parsers, one handler per section, defaults, validation of the whole
 *   config-dump.c    every effective setting with its origin (--dump-config)
 *   config-keys.c    the table of every section and key
 *   config.c         the configuration as data: errors, freeing, resolving thresholds
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* inih cuts section and key names at 49 characters (MAX_SECTION/MAX_NAME = 50) without a word. */
#define INI_NAME_MAX 49
/* A configuration file larger than this is refused: DESIGN §5 needs a few KiB. */
#define CONFIG_FILE_MAX (1024 * 1024)

typedef struct parse_state {
	evictd_config *c;
	FILE *f;
	const char *text; /* config_load_string(): parse from memory instead of f */
	size_t text_off;
	const char *fname;
	unsigned lineno;
	unsigned bad_line;    /* first line the reader itself rejects */
	char bad_msg[128];
	bool indented;        /* the current line starts with whitespace: inih's continuation */
	char prev_section[64];
	char prev_name[64];
	char seen[64][100];   /* "section\nkey" seen in this file: duplicates are errors */
	size_t n_seen;
	bool hard_explicit[_SIGNAL_MAX];
	bool soft_explicit[_SIGNAL_MAX];
	bool min_reclaim_explicit[_SIGNAL_MAX];
	bool nodefs_explicit;
	bool pods_from_kubelet;   /* the kubelet's cgroup driver chose the pod globs */
	config_error *err;
} parse_state;

/* Records the first error of this parse; returns 0 so that inih counts the line as an error. */
int config_fail(parse_state *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sets err to "file:line: message" (or "file: message" when line is 0). */
void config_set_error(config_error *err, const char *file, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
char **config_strv_free(char **v);

/* config-keys.c */
/* The table's name for a section: "priority-class NAME" for every class section. */
const char *config_section_kind(const char *name, size_t n);
bool config_known_section(const char *name, size_t n);
bool config_known_key(const char *section, const char *name);
/* Keys whose value may continue on indented lines (inih's multi-line values). */
bool config_is_list_key(const char *section, const char *name);

/* config-kubelet.c: the kubelet's configuration under what the files set; never fails the load */
int config_merge_kubelet(parse_state *p);

/* config-values.c */
/* Records the first error of this parse; returns 0 so that inih counts the line as an error. */
int config_fail(parse_state *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int config_handle_agent(parse_state *p, const char *name, const char *v, bool continuation);
int config_handle_eviction(parse_state *p, const char *name, const char *v);
int config_handle_kubernetes(parse_state *p, const char *name, const char *v);
int config_handle_class(parse_state *p, const char *cname, const char *name, const char *v);
/* A threshold value (quantity or percentage) for sig, in section's syntax. Returns 1 or 0 (error). */
int config_parse_threshold(parse_state *p, const char *section, evictd_signal sig, const char *v,
                           bool min_reclaim, threshold_value *ret);
/* Records which name set a PSI hard threshold; both names set is an error (returns 0). */
int config_psi_name_used(parse_state *p, evictd_signal s, bool alias);
/* "90s", "1m30s". Returns 1 or 0 (error). */
int config_parse_duration_usec(parse_state *p, const char *key, const char *v, uint64_t *ret);
/* Cross-key checks and derived values once every file is read. */
int config_finalize(parse_state *p);
