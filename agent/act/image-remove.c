/* SPDX-License-Identifier: MIT */
#include "image-remove.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct image_removal {
	cri_client *client;
	char **ids, **names;
	int64_t *sizes;
	size_t n, next;
	bool cancelled, in_call;
	image_removal_result result;
	image_removal_done_fn done;
	image_removal_failed_fn failed;
	void *userdata;
};

static void removal_free(image_removal *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->ids[i]);
		free(r->names[i]);
	}
	free(r->ids);
	free(r->names);
	free(r->sizes);
	free(r);
}

static void add_name(image_removal_result *res, const char *name)
{
	size_t l = strlen(res->names);
	if (l + strlen(name) + 3 >= sizeof(res->names) - 4) {
		if (!strstr(res->names, "…"))
			snprintf(res->names + l, sizeof(res->names) - l, ", …");
		return;
	}
	snprintf(res->names + l, sizeof(res->names) - l, "%s%s", l ? ", " : "", name);
}

static void next_call(image_removal *r);

static void on_removed(int error, const char *text, void *userdata)
{
	image_removal *r = userdata;
	size_t i = r->next - 1;

	r->in_call = false;
	if (r->cancelled || error == -ECANCELED) { /* the client is going away: nobody waits */
		removal_free(r);
		return;
	}
	if (error < 0) {
		r->result.n_failed++;
		if (!r->result.why[0])
			snprintf(r->result.why, sizeof(r->result.why), "%s: %s", r->names[i], text);
		if (r->failed)
			r->failed(r->ids[i], r->names[i], text, r->userdata);
	} else {
		r->result.n_removed++;
		r->result.bytes += r->sizes[i];
		add_name(&r->result, r->names[i]);
	}
	next_call(r);
}

static void next_call(image_removal *r)
{
	while (r->next < r->n) {
		size_t i = r->next++;
		int e = cri_client_remove_image(r->client, r->ids[i], on_removed, r);
		if (e >= 0) {
			r->in_call = true;
			return;
		}
		r->result.n_failed++;
		if (!r->result.why[0])
			snprintf(r->result.why, sizeof(r->result.why), "%s: %s", r->names[i], strerror(-e));
		if (r->failed)
			r->failed(r->ids[i], r->names[i], strerror(-e), r->userdata);
	}
	r->done(&r->result, r->userdata);
	removal_free(r);
}

int image_removal_start(cri_client *c, const char *const *ids, const char *const *names, const int64_t *sizes,
                        size_t n, evictd_signal s, image_removal_failed_fn failed, image_removal_done_fn done,
                        void *userdata, image_removal **ret)
{
	image_removal *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->client = c;
	r->done = done;
	r->failed = failed;
	r->userdata = userdata;
	r->result.signal = s;
	r->ids = calloc(n ? n : 1, sizeof(char *));
	r->names = calloc(n ? n : 1, sizeof(char *));
	r->sizes = calloc(n ? n : 1, sizeof(int64_t));
	if (!r->ids || !r->names || !r->sizes) {
		removal_free(r);
		return -ENOMEM;
	}
	for (; r->n < n; r->n++) {
		r->ids[r->n] = strdup(ids[r->n]);
		r->names[r->n] = strdup(names[r->n]);
		r->sizes[r->n] = sizes[r->n];
		if (!r->ids[r->n] || !r->names[r->n]) {
			r->n++;
			removal_free(r);
			return -ENOMEM;
		}
	}
	int e = n ? cri_client_remove_image(c, r->ids[0], on_removed, r) : -EINVAL;
	if (e < 0) {
		removal_free(r);
		return e;
	}
	r->next = 1;
	r->in_call = true;
	if (ret)
		*ret = r;
	return 0;
}

void image_removal_cancel(image_removal *r)
{
	/* the call in flight ends (or is cancelled with the client) and frees it */
	if (r && r->in_call)
		r->cancelled = true;
	else if (r)
		removal_free(r);
}
