/* SPDX-License-Identifier: MIT */
#include "json.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when it is invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp, min;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8 */
	if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

int json_write_string_n(FILE *f, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;

		switch (c) {
		case '"': fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\b': fputs("\\b", f); i++; continue;
		case '\f': fputs("\\f", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		len = utf8_len(s + i, n - i);
		if (len == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		/* U+2028/U+2029 are valid JSON but break JavaScript consumers: escape them too. */
		if (len == 3 && s[i] == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
			fprintf(f, "\\u%04x", s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
			i += 3;
			continue;
		}
		fwrite(s + i, 1, len, f);
		i += len;
	}
	fputc('"', f);
	return ferror(f) ? -EIO : 0;
}

int json_write_string(FILE *f, const char *s)
{
	return json_write_string_n(f, s ? s : "", s ? strlen(s) : 0);
}
