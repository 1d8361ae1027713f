/* SPDX-License-Identifier: MIT */
#include "answer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kstream.h"

struct one {
	void (*fn)(void *userdata, const kval *obj);
	void *userdata;
	int items;
};

static int on_item(void *userdata, const kval *obj)
{
	struct one *o = userdata;

	if (o->items++ == 0)
		o->fn(o->userdata, obj);
	return 0;
}

int answer_object(const char *body, size_t len, void (*fn)(void *userdata, const kval *obj), void *userdata)
{
	struct one o = { fn, userdata, 0 };
	kstream *s = NULL;
	diag d;
	int r;

	if (!body || !len)
		return -EINVAL;
	diag_init(&d, NULL);
	if (!(d.out = fopen("/dev/null", "we")))
		return -ENOMEM;
	r = kstream_new(&s, KSTREAM_JSON, "answer", &d, on_item, &o);
	if (r >= 0) {
		kstream_set_limits(s, 1u << 20, 1u << 20);
		r = kstream_feed(s, body, len);
		if (r >= 0)
			r = kstream_end(s);
	}
	kstream_free(s);
	fclose(d.out);
	if (r == -ENOMEM)
		return r;
	return r < 0 || o.items != 1 ? -EINVAL : 0;
}

struct fields {
	char *rv, *msg;
	size_t rv_size, msg_size;
};

static void copy(const kval *v, char *dst, size_t size)
{
	if (dst && kval_type_of(v) == KVAL_STRING)
		snprintf(dst, size, "%s", kval_str(v));
}

static void read_fields(void *userdata, const kval *obj)
{
	struct fields *f = userdata;

	if (kval_type_of(obj) != KVAL_MAP)
		return;
	copy(kval_get(kval_get(obj, "metadata"), "resourceVersion"), f->rv, f->rv_size);
	copy(kval_get(obj, "message"), f->msg, f->msg_size);
}

int answer_read(const char *body, size_t len, char *rv, size_t rv_size, char *msg, size_t msg_size)
{
	struct fields f = { rv, msg, rv_size, msg_size };

	if (rv && rv_size)
		rv[0] = '\0';
	if (msg && msg_size)
		msg[0] = '\0';
	return answer_object(body, len, read_fields, &f);
}
