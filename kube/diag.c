/* SPDX-License-Identifier: MIT */
#include "diag.h"

#include <stdarg.h>
#include <stdbool.h>

void diag_init(diag *d, FILE *out)
{
	d->out = out;
	d->nerrors = d->nwarnings = 0;
	d->max_shown = DIAG_SHOWN_MAX;
	d->shown = d->hidden = 0;
}

void diag_flush(diag *d)
{
	if (d->hidden)
		fprintf(d->out ? d->out : stderr, "preemptctl: \xe2\x80\xa6 and %u more %s (not shown)\n", d->hidden,
		        d->hidden == 1 ? "message" : "messages");
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
	if (loc && loc->file) {
		fputs(loc->file, f);
		if (loc->line > 0)
			fprintf(f, ":%d", loc->line);
		if (loc->line > 0 && loc->column > 0)
			fprintf(f, ":%d", loc->column);
		fputs(": ", f);
	} else {
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
