/* SPDX-License-Identifier: MIT */
#include "answer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kstream.h"

struct fields {
	char *rv, *msg;
	size_t rv_size, msg_size;
	int items;
};

static void copy(const kval *v, char *dst, size_t size)
{
	if (dst && kval_type_of(v) == KVAL_STRING)
		snprintf(dst, size, "%s", kval_str(v));
}

static int on_item(void *userdata, const kval *obj)
{
	struct fields *f = userdata;

	if (f->items++ || kval_type_of(obj) != KVAL_MAP)
		return 0;
	copy(kval_get(kval_get(obj, "metadata"), "resourceVersion"), f->rv, f->rv_size);
	copy(kval_get(obj, "message"), f->msg, f->msg_size);
	return 0;
}

int answer_read(const char *body, size_t len, char *rv, size_t rv_size, char *msg, size_t msg_size)
{
	struct fields f = { rv, msg, rv_size, msg_size, 0 };
	kstream *s = NULL;
	diag d;
	int r;

	if (rv && rv_size)
		rv[0] = '\0';
	if (msg && msg_size)
		msg[0] = '\0';
	if (!body || !len)
		return -EINVAL;
	diag_init(&d, NULL);
	/* the reader's complaints about a body that is not JSON are not the log's business */
	if (!(d.out = fopen("/dev/null", "we")))
		return -ENOMEM;
	r = kstream_new(&s, KSTREAM_JSON, "answer", &d, on_item, &f);
	if (r >= 0) {
		kstream_set_limits(s, 1u << 20, 1u << 20);
		r = kstream_feed(s, body, len);
		if (r >= 0)
			r = kstream_end(s);
	}
	kstream_free(s);
	fclose(d.out);
	return r < 0 || f.items != 1 ? -EINVAL : 0;
}
