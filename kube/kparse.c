/* SPDX-License-Identifier: MIT */
/* Problems found while parsing, reported against the input's name and line. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "kparse.h"

int kp_error(kparse *s, uint32_t line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_error(s->d, &(struct diag_loc){ .file = s->name, .line = line > INT32_MAX ? 0 : (int)line }, NULL,
	           "%s", msg);
	return -EINVAL;
}
