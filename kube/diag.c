/* SPDX-License-Identifier: MIT */
#include "diag.h"

#include <stdarg.h>
#include <stdbool.h>

void diag_init(diag *d, FILE *out)
{
	d->out = out;
	d->nerrors = d->nwarnings = 0;
}

static void emit(diag *d, bool warning, const struct diag_loc *loc, const char *object,
                 const char *fmt, va_list ap)
{
	FILE *f = d->out ? d->out : stderr;

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
