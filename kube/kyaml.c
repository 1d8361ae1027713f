/* SPDX-License-Identifier: MIT */
/*
 * YAML through libfyaml's event parser (fy_parser_parse): no document tree, so neither the
 * document's memory nor its per-mapping duplicate-key scan (O(n²) with accelerators off) nor its
 * alias resolution (a heap overflow on a five-byte alias in 0.7.12, tests/fuzz/FINDINGS.md) is involved.
 * libfyaml pulls its input through a callback: first the bytes kept in ybuf, then (reading a
 * descriptor) the rest, each chunk through the gate first.
 */
#include <errno.h>
#include <libfyaml.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kparse.h"

/* YAML 1.2 core schema resolution of a plain scalar (quoted and block scalars are strings). */
static kval_type classify(const char *s, size_t len)
{
#define IS(lit) (len == sizeof(lit) - 1 && memcmp(s, lit, len) == 0)
	if (len == 0 || IS("~") || IS("null") || IS("Null") || IS("NULL"))
		return KVAL_NULL;
	if (IS("true") || IS("True") || IS("TRUE") || IS("false") || IS("False") || IS("FALSE"))
		return KVAL_BOOL;
	if (IS(".inf") || IS(".Inf") || IS(".INF") || IS("-.inf") || IS("+.inf") || IS(".nan") ||
	    IS(".NaN") || IS(".NAN"))
		return KVAL_FLOAT;
#undef IS
	size_t i = 0;
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o')) {
		for (i = 2; i < len; i++)
			if (!(s[1] == 'x' ? strchr("0123456789abcdefABCDEF", s[i]) != NULL && s[i]
			                  : (s[i] >= '0' && s[i] <= '7')))
				return KVAL_STRING;
		return KVAL_INT;
	}
	if (s[i] == '+' || s[i] == '-')
		i++;
	size_t digits = 0, frac = 0;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	bool is_float = false;
	if (i < len && s[i] == '.') {
		is_float = true;
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			frac++;
	}
	if (digits + frac == 0)
		return KVAL_STRING;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = 0;
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			e++;
		if (!e)
			return KVAL_STRING;
		is_float = true;
	}
	if (i != len)
		return KVAL_STRING;
	return is_float ? KVAL_FLOAT : KVAL_INT;
}

static ssize_t input(void *user, void *buf, size_t count)
{
	kparse *s = user;

	if (s->err)
		return -1;
	if (s->yoff < s->ylen) {
		size_t n = s->ylen - s->yoff < count ? s->ylen - s->yoff : count;
		memcpy(buf, s->ybuf + s->yoff, n);
		s->yoff += n;
		return (ssize_t)n;
	}
	if (s->fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(s->fd, buf, count);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			s->err = -errno;
			diag_error(s->d, NULL, NULL, "%s: %s", s->name, strerror(errno));
			return -1;
		}
		if (n == 0)
			return (s->err = k8s_gate_end(&s->gate)) < 0 ? -1 : 0;
		if ((s->err = k8s_gate_feed(&s->gate, buf, (size_t)n)) < 0)
			return -1;
		return n;
	}
}

static uint32_t line_of(struct fy_event *ev)
{
	const struct fy_mark *m = fy_event_start_mark(ev);
	return m && m->line >= 0 ? (uint32_t)m->line + 1 : 0;
}

static const char *token_text(struct fy_token *t, size_t *len)
{
	const char *p = t ? fy_token_get_text(t, len) : NULL;
	if (!p)
		*len = 0;
	return p;
}

static int event(kparse *s, struct fy_event *ev)
{
	const char *text, *anchor;
	size_t len, alen;

	switch (ev->type) {
	case FYET_SCALAR:
		text = token_text(ev->scalar.value, &len);
		anchor = token_text(ev->scalar.anchor, &alen);
		if (!text)
			text = "";
		if (fy_token_scalar_style(ev->scalar.value) == FYSS_PLAIN)
			return kb_scalar(s, classify(text, len), KVAL_F_PLAIN, text, len, line_of(ev), anchor, alen);
		return kb_scalar(s, KVAL_STRING, 0, text, len, line_of(ev), anchor, alen);
	case FYET_MAPPING_START:
		anchor = token_text(ev->mapping_start.anchor, &alen);
		return kb_begin(s, KVAL_MAP, line_of(ev), anchor, alen);
	case FYET_SEQUENCE_START:
		anchor = token_text(ev->sequence_start.anchor, &alen);
		return kb_begin(s, KVAL_SEQ, line_of(ev), anchor, alen);
	case FYET_MAPPING_END:
	case FYET_SEQUENCE_END:
		return kb_end(s);
	case FYET_ALIAS:
		text = token_text(ev->alias.anchor, &len);
		return kb_alias(s, text ? text : "", len, line_of(ev));
	case FYET_DOCUMENT_END:
		kb_document_end(s);
		return 0;
	default:
		return 0;
	}
}

int kyaml_run(kparse *s)
{
	struct fy_diag_cfg dcfg;
	struct fy_diag *fdiag;
	struct fy_parser *parser = NULL;
	struct fy_event *ev;
	int r = 0;

	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	dcfg.colorize = false;
	fdiag = fy_diag_create(&dcfg);
	if (!fdiag)
		return s->err = -ENOMEM;
	fy_diag_set_collect_errors(fdiag, true);

	struct fy_parse_cfg cfg = {
		.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_DISABLE_ACCELERATORS,
		.diag = fdiag,
	};
	parser = fy_parser_create(&cfg);
	if (!parser || fy_parser_set_input_callback(parser, s, input) != 0) {
		r = s->err = -ENOMEM;
		goto out;
	}
	while ((ev = fy_parser_parse(parser))) {
		r = event(s, ev);
		fy_parser_event_free(parser, ev);
		if (s->err)
			break;
	}
	if (s->err) {
		r = s->err;
		goto out;
	}
	if (fy_parser_get_stream_error(parser)) {
		void *it = NULL;
		struct fy_diag_error *e;
		unsigned n = 0;
		while ((e = fy_diag_errors_iterate(fdiag, &it))) {
			if (e->type < FYET_ERROR)
				continue;
			diag_error(s->d, &(struct diag_loc){ .file = s->name, .line = e->line > 0 ? e->line : 0 }, NULL,
			           "syntax error: %s", e->msg);
			n++;
		}
		if (!n)
			diag_error(s->d, &(struct diag_loc){ .file = s->name }, NULL, "syntax error");
		r = s->err = -EINVAL;
	} else if (kb_in_value(s)) {
		kp_error(s, 0, "truncated input");
		r = s->err = -EINVAL;
	}
out:
	fy_parser_destroy(parser);
	fy_diag_destroy(fdiag);
	return r;
}
