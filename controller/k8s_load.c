/* SPDX-License-Identifier: MIT */
/*
 * Files -> objects: libfyaml parses YAML (every document of a multi-document stream) and JSON
 * (a JSON text is a YAML 1.2 document); syntax errors come back with file and line. Input reaches
 * libfyaml only from memory, after k8s_input.c bounded and validated it.
 */
#include <errno.h>
#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s.h"
#include "k8s_decode.h"
#include "k8s_input.h"

void k8s_cluster_init(k8s_cluster *c)
{
	memset(c, 0, sizeof(*c));
}

void k8s_cluster_done(k8s_cluster *c)
{
	free(c->classes);
	free(c->nodes);
	free(c->pods);
	free(c->pdbs);
	free(c->rejected_classes);
	ctl_arena_free(&c->arena);
	memset(c, 0, sizeof(*c));
}

/* Nodes that aliases may add when expanded: a manifest needs few; "billion laughs" needs billions. */
#define ALIAS_EXPANSION_MAX 100000
#define ALIAS_DEPTH_MAX 128

/* Walks n, counting the nodes reached through aliases against *budget (work <= size + budget).
 * Returns the number of aliases seen, or -1 once the budget or depth is exhausted. */
static long alias_walk(struct fy_node *n, bool via_alias, long *budget, int depth)
{
	long aliases = 0, r;
	void *it = NULL;

	if (!n)
		return 0;
	if (depth > ALIAS_DEPTH_MAX)
		return -1;
	if (via_alias && --*budget < 0)
		return -1;
	if (fy_node_is_alias(n)) {
		r = alias_walk(fy_node_resolve_alias(n), true, budget, depth + 1);
		return r < 0 ? -1 : r + 1;
	}
	switch (fy_node_get_type(n)) {
	case FYNT_SEQUENCE: {
		struct fy_node *e;
		while ((e = fy_node_sequence_iterate(n, &it))) {
			if ((r = alias_walk(e, via_alias, budget, depth + 1)) < 0)
				return -1;
			aliases += r;
		}
		break;
	}
	case FYNT_MAPPING: {
		struct fy_node_pair *p;
		while ((p = fy_node_mapping_iterate(n, &it))) {
			if ((r = alias_walk(fy_node_pair_key(p), via_alias, budget, depth + 1)) < 0 ||
			    (aliases += r, r = alias_walk(fy_node_pair_value(p), via_alias, budget, depth + 1)) < 0)
				return -1;
			aliases += r;
		}
		break;
	}
	default:
		break;
	}
	return aliases;
}

/* Expands aliases and merge keys ("<<: *base") in place, refusing exponential expansions. */
static int resolve_aliases(struct fy_document *doc, const char *file, diag *d)
{
	struct fy_node *root = fy_document_root(doc);
	long budget = ALIAS_EXPANSION_MAX;
	long n = alias_walk(root, false, &budget, 0);

	if (n < 0) {
		diag_error(d, &(struct diag_loc){ .file = file }, NULL,
		           "YAML aliases expand to more than %d nodes (or nest too deeply), refusing the document",
		           ALIAS_EXPANSION_MAX);
		return -EINVAL;
	}
	if (n > 0 && fy_document_resolve(doc) != 0) {
		diag_error(d, &(struct diag_loc){ .file = file }, NULL, "cannot resolve YAML aliases");
		return -EINVAL;
	}
	return 0;
}

static int load(k8s_cluster *c, const char *name, const char *text, size_t len, diag *d)
{
	struct fy_diag_cfg dcfg;
	struct fy_diag *fdiag = NULL;
	struct fy_parser *parser = NULL;
	struct fy_document *doc;
	const char *file;
	int r = 0;

	/* Locations outlive the parse: objects keep them for later messages. */
	file = ctl_arena_strdup(&c->arena, name);
	if (!file)
		return -ENOMEM;
	if (k8s_input_check_utf8(file, text, len, d) < 0)
		return -EINVAL;

	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	dcfg.colorize = false;
	fdiag = fy_diag_create(&dcfg);
	if (!fdiag)
		return -ENOMEM;
	fy_diag_set_collect_errors(fdiag, true);

	/* JSON is parsed as the YAML 1.2 it is: one parser, one set of messages for both */
	struct fy_parse_cfg cfg = {
		.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_DISABLE_ACCELERATORS,
		.diag = fdiag,
	};
	parser = fy_parser_create(&cfg);
	if (!parser) {
		r = -ENOMEM;
		goto out;
	}
	if (fy_parser_set_string(parser, text, len) != 0) {
		diag_error(d, &(struct diag_loc){ .file = file }, NULL, "cannot read input");
		r = -EIO;
		goto out;
	}

	while ((doc = fy_parse_load_document(parser))) {
		int k = resolve_aliases(doc, file, d);
		if (k == 0)
			k = k8s_decode_object(c, d, file, fy_document_root(doc), 0);
		fy_parse_document_destroy(parser, doc);
		if (k == -ENOMEM) {
			r = k;
			goto out;
		}
		if (k < 0)
			r = -EINVAL;
	}

	if (fy_parser_get_stream_error(parser)) {
		void *it = NULL;
		struct fy_diag_error *e;
		unsigned n = 0;
		while ((e = fy_diag_errors_iterate(fdiag, &it))) {
			if (e->type < FYET_ERROR)
				continue;
			diag_error(d, &(struct diag_loc){ .file = file, .line = e->line > 0 ? e->line : 0 }, NULL,
			           "syntax error: %s", e->msg);
			n++;
		}
		if (!n)
			diag_error(d, &(struct diag_loc){ .file = file }, NULL, "syntax error");
		r = -EINVAL;
	}
out:
	fy_parser_destroy(parser);
	fy_diag_destroy(fdiag);
	return r;
}

int k8s_load_file(k8s_cluster *c, const char *path, diag *d)
{
	bool is_stdin = strcmp(path, "-") == 0;
	FILE *fp = is_stdin ? stdin : fopen(path, "re");
	const char *name = is_stdin ? "<stdin>" : path;
	char *text = NULL;
	size_t len = 0;
	int r;

	if (!fp) {
		r = -errno;
		diag_error(d, NULL, NULL, "%s: %s", path, strerror(-r));
		return r;
	}
	r = k8s_input_read(fp, name, K8S_INPUT_MAX, &text, &len, d);
	if (!is_stdin)
		fclose(fp);
	if (r == 0)
		r = load(c, name, text, len, d);
	free(text);
	if (r == -ENOMEM)
		diag_error(d, NULL, NULL, "%s: out of memory", path);
	return r;
}

int k8s_load_string(k8s_cluster *c, const char *name, const char *text, size_t len, diag *d)
{
	return load(c, name, text, len, d);
}

const struct k8s_pod *k8s_cluster_find_pod(const k8s_cluster *c, const char *namespace_, const char *name)
{
	for (size_t i = 0; i < c->npods; i++)
		if (strcmp(c->pods[i].namespace_, namespace_) == 0 && strcmp(c->pods[i].name, name) == 0)
			return &c->pods[i];
	return NULL;
}

bool k8s_class_rejected(const k8s_cluster *c, const char *name)
{
	for (size_t i = 0; name && i < c->nrejected_classes; i++)
		if (strcmp(c->rejected_classes[i], name) == 0)
			return true;
	return false;
}

int k8s_pod_label(const struct k8s_pod *p, char *buf, size_t size)
{
	int r = snprintf(buf, size, "pods/%s/%s", p->namespace_, p->name);
	return r < 0 || (size_t)r >= size ? -ENAMETOOLONG : 0;
}
