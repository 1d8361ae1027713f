/* SPDX-License-Identifier: MIT */
#include "k8s_input.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int k8s_input_read(FILE *fp, const char *name, size_t max, char **out, size_t *len, diag *d)
{
	struct stat st;
	size_t cap = 64 * 1024, n = 0;
	char *buf;

	/* a regular file's size saves the regrowth copies (and reading a huge one); pipes grow */
	if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		if ((uintmax_t)st.st_size > max)
			goto too_big;
		cap = (size_t)st.st_size + 1;
	}
	if (cap > max)
		cap = max + 1;
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;

	for (;;) {
		if (n == cap) {
			if (cap > max) {
				free(buf);
				goto too_big;
			}
			/* one byte past max is enough to tell "too large" from "exactly max" */
			size_t ncap = cap > max / 2 ? max + 1 : cap * 2;
			char *nb = realloc(buf, ncap + 1);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0) {
			if (ferror(fp)) {
				int r = errno ? -errno : -EIO;
				free(buf);
				diag_error(d, NULL, NULL, "%s: %s", name, strerror(-r));
				return r;
			}
			break;
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;

too_big:
	diag_error(d, NULL, NULL, "%s: larger than %zu bytes, refusing to read it", name, max);
	return -EFBIG;
}

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 (RFC 3629 table 3-7). */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c < 0xc2)
		return 0; /* continuation byte or overlong 2-byte form */
	if (c < 0xe0)
		n = 2;
	else if (c < 0xf0) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c < 0xf5) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else
		return 0;
	if (avail < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

int k8s_input_check_utf8(const char *name, const char *s, size_t len, diag *d)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, line = 1, col = 1;

	while (i < len) {
		/* ASCII runs are the common case */
		if (p[i] < 0x80) {
			if (p[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
			i++;
			continue;
		}
		size_t n = utf8_seq(p + i, len - i);
		if (!n) {
			struct diag_loc loc = { .file = name,
			                        .line = line > INT_MAX ? 0 : (int)line,
			                        .column = col > INT_MAX ? 0 : (int)col };
			diag_error(d, &loc, NULL, "invalid UTF-8 (byte 0x%02x): Kubernetes objects are UTF-8 text",
			           p[i]);
			return -EILSEQ;
		}
		i += n;
		col++;
	}
	return 0;
}
