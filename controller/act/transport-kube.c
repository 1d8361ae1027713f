/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "transport.h"

struct kube_transport {
	transport t;
	kube_multi *m;
};

struct pending {
	transport_done_fn done;
	void *userdata;
};

static void call_done(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                      void *userdata)
{
	struct pending *p = userdata;
	transport_answer a = { .error = error, .status = status, .body = body, .len = len,
	                       .retry_after_s = kube_call_retry_after(call), .msg = msg };

	p->done(p->userdata, &a);
	free(p);
}

static int kt_start(transport *t, const transport_request *rq, transport_done_fn done, void *userdata,
                    void **ret_handle)
{
	struct kube_transport *kt = (struct kube_transport *)t;
	struct pending *p = malloc(sizeof(*p));
	kube_call *call = NULL;
	int r;

	if (!p)
		return -ENOMEM;
	*p = (struct pending){ done, userdata };
	kube_call_opts o = { .method = rq->method, .path = rq->path, .body = rq->body, .content_type = rq->content_type,
	                     .timeout_ms = rq->timeout_ms, .max_body = 1u << 20, .done = call_done, .userdata = p };
	r = kube_multi_start(kt->m, &o, &call);
	if (r < 0) {
		free(p);
		return r;
	}
	*ret_handle = call;
	return 0;
}

static void kt_cancel(transport *t, void *handle)
{
	struct kube_transport *kt = (struct kube_transport *)t;
	kube_call *call = handle;

	/* kube_call_cancel frees the call, not what its userdata points at */
	if (call) {
		struct pending *p = kube_call_userdata(call);
		kube_call_cancel(kt->m, call);
		free(p);
	}
}

static void kt_free(transport *t)
{
	free(t);
}

int transport_kube_new(kube_multi *m, transport **ret)
{
	struct kube_transport *kt = calloc(1, sizeof(*kt));

	if (!kt)
		return -ENOMEM;
	kt->t = (transport){ .start = kt_start, .cancel = kt_cancel, .free = kt_free };
	kt->m = m;
	*ret = &kt->t;
	return 0;
}
