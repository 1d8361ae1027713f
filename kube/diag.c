/* SPDX-License-Identifier: MIT */
#include "diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

void diag_init(diag *d, FILE *out)
{
	d->out = out;
	d->nerrors = d->nwarnings = 0;
	d->max_shown = DIAG_SHOWN_MAX;
	d->shown = d->hidden = 0;
	d->bare = false;
	d->unusable = false;
	d->buf = NULL;
	d->size = 0;
}

void diag_flush(diag *d)
{
	if (d->hidden)
		fprintf(d->out ? d->out : stderr, "%s\xe2\x80\xa6 and %u more %s (not shown)\n",
		        d->buf ? "" : "preemptctl: ", d->hidden, d->hidden == 1 ? "message" : "messages");
	d->shown = d->hidden = 0;
}

static void emit(diag *d, bool warning, const struct diag_loc *loc, const char *object,
                 const char *fmt, va_list ap)
{
	FILE *f = d->out ? d->out : stderr;

	if (d->max_shown && d->shown >= d->max_shown) {
		d->hidden++;
		return;
	}
	d->shown++;
	if (d->bare) {
		/* the object names itself below */
	} else if (loc && loc->file) {
		fputs(loc->file, f);
		if (loc->line > 0)
			fprintf(f, ":%d", loc->line);
		if (loc->line > 0 && loc->column > 0)
			fprintf(f, ":%d", loc->column);
		fputs(": ", f);
	} else if (!d->buf) {
		/* a captured line goes into a daemon's own message, which names its program */
		fputs("preemptctl: ", f);
	}
	if (warning)
		fputs("warning: ", f);
	if (object)
		fprintf(f, "%s: ", object);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
}

void diag_error(diag *d, const struct diag_loc *loc, const char *object, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(d, false, loc, object, fmt, ap);
	va_end(ap);
	d->nerrors++;
}

void diag_warn(diag *d, const struct diag_loc *loc, const char *object, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(d, true, loc, object, fmt, ap);
	va_end(ap);
	d->nwarnings++;
}

int diag_open_buffer(diag *d, char *buf, size_t size)
{
	FILE *f = fmemopen(buf, size, "w");

	if (!f)
		return -ENOMEM;
	diag_init(d, f);
	d->buf = buf;
	d->size = size;
	buf[0] = '\0';
	return 0;
}

const char *diag_take_line(diag *d)
{
	long n;
	size_t end;

	if (!d->buf)
		return "";
	fflush(d->out);
	n = ftell(d->out);
	end = n > 0 ? (size_t)n : 0;
	d->buf[end < d->size ? end : d->size - 1] = '\0';
	rewind(d->out);
	d->nerrors = d->nwarnings = d->shown = d->hidden = 0;
	diag_one_line(d->buf);
	return d->buf;
}

void diag_close_buffer(diag *d)
{
	if (d->buf && d->out)
		fclose(d->out);
	d->out = NULL;
	d->buf = NULL;
}

void diag_one_line(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	for (char *nl; (nl = strchr(s, '\n'));)
		*nl = ';';
}
