/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cri.h"
#include "grpc.h"

#define RUNTIME "/runtime.v1.RuntimeService/"
#define IMAGE "/runtime.v1.ImageService/"

typedef struct call_ctx call_ctx;

typedef struct log_cache_entry {
	char *id, *path;
} log_cache_entry;

/* One listing in progress. */
typedef struct listing_run {
	cri_listing l;
	unsigned what;
	unsigned in_flight;    /* calls started and not ended */
	uint8_t *stats;        /* ListContainerStats arrived before ListContainers: decoded after it */
	size_t stats_len;
	bool stats_pending;
	size_t next_status;    /* the next container whose log path is asked */
	uint64_t deadline;     /* CLOCK_MONOTONIC: the whole listing's, runtime-request-timeout after its start */
	sd_event_source *timer;
	call_ctx *calls;       /* in flight: what the deadline cancels */
	int error;
	char why[512];
	cri_list_fn done;
	void *userdata;
} listing_run;

struct cri_client {
	sd_event *event;
	grpc_channel *ch;
	cri_client_opts o;
	listing_run *run;
	log_cache_entry *logs; /* sorted by id: the last listing's containers */
	size_t n_logs;
	unsigned long calls;
	bool closing;          /* cri_client_free: calls end with -ECANCELED, nobody is told */
};

/* A call's context: which client, what for, and its own callback. */
struct call_ctx {
	cri_client *c;
	grpc_call *call;       /* a listing's: cancelled at its deadline */
	call_ctx *prev, *next;
	const char *method;
	size_t container;      /* ContainerStatus: the index in the run's listing */
	cri_text_fn text_done; /* Version, RemoveImage */
	cri_info_fn info_done; /* Status */
	void *userdata;
};

int cri_client_new(sd_event *e, const char *socket, const cri_client_opts *o, cri_client **ret)
{
	cri_client *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->o = *o;
	if (!c->o.max_message)
		c->o.max_message = CRI_MESSAGE_MAX;
	/*
	 * With the 5 list calls that may still run, this stays under grpc.c's connection bound:
	 * libcurl 7.88's queue of transfers waiting for a connection stalled a transfer mid-answer
	 * until its deadline (seen with 16 here: bench-cri), so no call ever waits in it.
	 */
	if (!c->o.status_parallel || c->o.status_parallel > 8)
		c->o.status_parallel = 4;
	r = grpc_channel_new(e, socket, "evictd-cri/1", &c->ch);
	if (r < 0) {
		free(c);
		return r;
	}
	c->event = sd_event_ref(e);
	*ret = c;
	return 0;
}

static void logs_free(cri_client *c)
{
	for (size_t i = 0; i < c->n_logs; i++) {
		free(c->logs[i].id);
		free(c->logs[i].path);
	}
	free(c->logs);
	c->logs = NULL;
	c->n_logs = 0;
}

static void run_free(listing_run *run)
{
	if (!run)
		return;
	sd_event_source_disable_unref(run->timer);
	cri_listing_free(&run->l);
	free(run->stats);
	free(run);
}

cri_client *cri_client_free(cri_client *c)
{
	if (!c)
		return NULL;
	c->closing = true;
	grpc_channel_free(c->ch); /* each call's end frees its context */
	run_free(c->run);
	logs_free(c);
	sd_event_unref(c->event);
	free(c);
	return NULL;
}

const char *cri_client_socket(const cri_client *c)
{
	return grpc_channel_socket(c->ch);
}

bool cri_client_listing(const cri_client *c)
{
	return c->run != NULL;
}

unsigned long cri_client_calls(const cri_client *c)
{
	return c->calls;
}

/* A call of the listing in progress ends by the listing's deadline; any other by its own. */
static int start(cri_client *c, const char *path, const uint8_t *req, size_t len, grpc_done_fn done, call_ctx *ctx,
                 bool listing)
{
	grpc_call_opts o = {
		.path = path,
		.request = req,
		.request_len = len,
		.timeout_usec = c->o.timeout_usec,
		.max_message = c->o.max_message,
		.done = done,
		.userdata = ctx,
	};
	uint64_t now;
	int r;

	if (listing) {
		r = sd_event_now(c->event, CLOCK_MONOTONIC, &now);
		if (r < 0)
			return r;
		if (now >= c->run->deadline)
			return -ETIMEDOUT;
		o.timeout_usec = c->run->deadline - now;
	}
	r = grpc_call_start(c->ch, &o, listing ? &ctx->call : NULL);
	if (r < 0)
		return r;
	c->calls++;
	if (listing) {
		ctx->next = c->run->calls;
		if (ctx->next)
			ctx->next->prev = ctx;
		c->run->calls = ctx;
		c->run->in_flight++;
	}
	return 0;
}

static void run_unlink(listing_run *run, call_ctx *ctx)
{
	if (ctx->prev)
		ctx->prev->next = ctx->next;
	else
		run->calls = ctx->next;
	if (ctx->next)
		ctx->next->prev = ctx->prev;
	ctx->prev = ctx->next = NULL;
	run->in_flight--;
}

/* --- single calls --------------------------------------------------------------------------- */

static void text_done(int error, long status, const uint8_t *msg, size_t len, const char *why, void *userdata)
{
	call_ctx *ctx = userdata;
	char text[512] = "", dwhy[256];

	(void)status;
	if (ctx->c->closing) {
		/* the caller frees what it holds for the call, and starts nothing */
		ctx->text_done(-ECANCELED, "cancelled", ctx->userdata);
		free(ctx);
		return;
	}
	if (error < 0)
		snprintf(text, sizeof(text), "%s: %s", ctx->method, why);
	else if (strcmp(ctx->method, "Version") == 0 &&
	         (error = cri_decode_version(msg, len, text, sizeof(text), dwhy, sizeof(dwhy))) < 0)
		snprintf(text, sizeof(text), "Version: %s", dwhy);
	ctx->text_done(error, text, ctx->userdata);
	free(ctx);
}

static int text_call(cri_client *c, const char *method, const char *path, uint8_t *req, size_t len, cri_text_fn done,
                     void *userdata)
{
	call_ctx *ctx = calloc(1, sizeof(*ctx));
	int r;

	if (!ctx) {
		free(req);
		return -ENOMEM;
	}
	*ctx = (call_ctx){ .c = c, .method = method, .text_done = done, .userdata = userdata };
	r = start(c, path, req, len, text_done, ctx, false);
	free(req);
	if (r < 0)
		free(ctx);
	return r;
}

int cri_client_version(cri_client *c, cri_text_fn done, void *userdata)
{
	uint8_t *req;
	size_t len;
	int r = cri_encode_version(&req, &len);

	return r < 0 ? r : text_call(c, "Version", RUNTIME "Version", req, len, done, userdata);
}

int cri_client_remove_image(cri_client *c, const char *id, cri_text_fn done, void *userdata)
{
	uint8_t *req;
	size_t len;
	int r = cri_encode_remove_image(id, &req, &len);

	return r < 0 ? r : text_call(c, "RemoveImage", IMAGE "RemoveImage", req, len, done, userdata);
}

static void info_done(int error, long status, const uint8_t *msg, size_t len, const char *why, void *userdata)
{
	call_ctx *ctx = userdata;
	char text[512] = "", dwhy[256];
	char *config = NULL;

	(void)status;
	if (ctx->c->closing) {
		ctx->info_done(-ECANCELED, NULL, "cancelled", ctx->userdata);
		free(ctx);
		return;
	}
	if (error < 0)
		snprintf(text, sizeof(text), "Status: %s", why);
	else if ((error = cri_decode_status_info(msg, len, "config", &config, dwhy, sizeof(dwhy))) < 0)
		snprintf(text, sizeof(text), "Status: %s", dwhy);
	ctx->info_done(error, config, text, ctx->userdata);
	free(config);
	free(ctx);
}

int cri_client_runtime_config(cri_client *c, cri_info_fn done, void *userdata)
{
	uint8_t *req;
	size_t len;
	int r = cri_encode_runtime_status(true, &req, &len);
	call_ctx *ctx;

	if (r < 0)
		return r;
	if (!(ctx = calloc(1, sizeof(*ctx)))) {
		free(req);
		return -ENOMEM;
	}
	*ctx = (call_ctx){ .c = c, .method = "Status", .info_done = done, .userdata = userdata };
	r = start(c, RUNTIME "Status", req, len, info_done, ctx, false);
	free(req);
	if (r < 0)
		free(ctx);
	return r;
}

/* --- a listing ------------------------------------------------------------------------------ */

static int by_log_id(const void *a, const void *b)
{
	return strcmp(((const log_cache_entry *)a)->id, ((const log_cache_entry *)b)->id);
}

static const char *cached_log(const cri_client *c, const char *id)
{
	log_cache_entry key = { .id = (char *)id }, *e;

	e = c->n_logs ? bsearch(&key, c->logs, c->n_logs, sizeof(key), by_log_id) : NULL;
	return e ? e->path : NULL;
}

/* The cache becomes the finished listing's log paths (containers gone are forgotten). */
static void logs_keep(cri_client *c, const cri_listing *l)
{
	log_cache_entry *n = calloc(l->n_containers ? l->n_containers : 1, sizeof(*n));
	size_t k = 0;

	if (!n)
		return; /* a cache, not a promise: the next listing asks again */
	for (size_t i = 0; i < l->n_containers; i++) {
		if (!l->containers[i].log_path)
			continue;
		n[k].id = strdup(l->containers[i].id);
		n[k].path = strdup(l->containers[i].log_path);
		if (!n[k].id || !n[k].path) {
			free(n[k].id);
			free(n[k].path);
			continue;
		}
		k++;
	}
	logs_free(c);
	c->logs = n;
	c->n_logs = k; /* containers are sorted by id: so is the cache */
}

static void run_fail(listing_run *run, int error, const char *fmt, const char *method, const char *why)
{
	if (run->error < 0)
		return;
	run->error = error;
	snprintf(run->why, sizeof(run->why), fmt, method, why);
}

static void list_done(int error, long status, const uint8_t *msg, size_t len, const char *why, void *userdata);
static void run_fail_deadline(cri_client *c);

/* A failed listing ends now: what is still in flight could only be thrown away. */
static void run_abort(cri_client *c)
{
	listing_run *run = c->run;

	while (run->calls) {
		call_ctx *ctx = run->calls;
		run_unlink(run, ctx);
		grpc_call_cancel(c->ch, ctx->call);
		free(ctx);
	}
}

static void run_finish_if_done(cri_client *c)
{
	listing_run *run = c->run;

	if (run->error < 0)
		run_abort(c);
	if (run->in_flight > 0)
		return;
	c->run = NULL;
	/*
	 * Failed or not, the log paths known when it ended are kept (a container's never changes):
	 * after a deadline the next listing asks only for those it did not get.
	 */
	if ((run->what & CRI_LIST_LOGS) && run->l.containers)
		logs_keep(c, &run->l);
	if (run->error < 0)
		run->done(run->error, NULL, run->why, run->userdata);
	else {
		cri_listing *l = malloc(sizeof(*l));
		if (!l)
			run->done(-ENOMEM, NULL, "out of memory", run->userdata);
		else {
			*l = run->l;
			run->l = (cri_listing){ 0 };
			run->done(0, l, "", run->userdata);
		}
	}
	run_free(run);
}

/* The log paths asked before, all at once: they count as kept even if this listing fails early. */
static void fill_cached_logs(cri_client *c)
{
	listing_run *run = c->run;

	for (size_t i = 0; i < run->l.n_containers && run->error >= 0; i++) {
		cri_container *k = &run->l.containers[i];
		const char *known = cached_log(c, k->id);
		if (known && !k->log_path && !(k->log_path = strdup(known)))
			run_fail(run, -ENOMEM, "%s: %s", "ContainerStatus", "out of memory");
	}
}

/* Starts ContainerStatus calls for containers without a known log path, up to the parallel bound. */
static void ask_logs(cri_client *c)
{
	listing_run *run = c->run;

	while (run->error >= 0 && run->next_status < run->l.n_containers && run->in_flight < c->o.status_parallel) {
		size_t i = run->next_status++;
		cri_container *k = &run->l.containers[i];
		uint8_t *req;
		size_t len;
		call_ctx *ctx;

		if (k->log_path)
			continue;
		ctx = calloc(1, sizeof(*ctx));
		if (!ctx || cri_encode_status(k->id, &req, &len) < 0) {
			free(ctx);
			run_fail(run, -ENOMEM, "%s: %s", "ContainerStatus", "out of memory");
			break;
		}
		*ctx = (call_ctx){ .c = c, .method = "ContainerStatus", .container = i };
		int r = start(c, RUNTIME "ContainerStatus", req, len, list_done, ctx, true);
		free(req);
		if (r < 0) {
			free(ctx);
			run_fail(run, r, "%s: %s", "ContainerStatus", strerror(-r));
			break;
		}
	}
}

static int decode_into(listing_run *run, const char *method, const uint8_t *msg, size_t len, size_t container,
                       char *why, size_t size)
{
	if (strcmp(method, "ImageFsInfo") == 0)
		return cri_decode_fs_info(msg, len, &run->l, why, size);
	if (strcmp(method, "ListImages") == 0)
		return cri_decode_images(msg, len, &run->l, why, size);
	if (strcmp(method, "ListPodSandbox") == 0)
		return cri_decode_sandboxes(msg, len, &run->l, why, size);
	if (strcmp(method, "ListContainers") == 0) {
		int r = cri_decode_containers(msg, len, &run->l, why, size);
		if (r >= 0 && run->stats_pending) {
			run->stats_pending = false;
			r = cri_decode_stats(run->stats, run->stats_len, &run->l, why, size);
		}
		return r;
	}
	if (strcmp(method, "ListContainerStats") == 0) {
		if (run->l.containers || !(run->what & CRI_LIST_CONTAINERS) || run->stats_pending)
			return cri_decode_stats(msg, len, &run->l, why, size);
		/* the containers' answer is not in yet: the stats wait for it */
		run->stats = malloc(len ? len : 1);
		if (!run->stats)
			return -ENOMEM;
		memcpy(run->stats, msg, len);
		run->stats_len = len;
		run->stats_pending = true;
		return 0;
	}
	/* ContainerStatus */
	return cri_decode_status_log_path(msg, len, &run->l.containers[container].log_path, why, size);
}

static void list_done(int error, long status, const uint8_t *msg, size_t len, const char *why, void *userdata)
{
	call_ctx *ctx = userdata;
	cri_client *c = ctx->c;
	listing_run *run = c->run;
	char dwhy[384];

	if (c->closing) {
		free(ctx);
		return;
	}
	/* a call of the listing is given what is left of the listing's deadline: its timeout, which
	 * may come a moment before the listing's timer, is the listing's deadline */
	if (error == -ETIMEDOUT)
		run_fail_deadline(c);
	run_unlink(run, ctx);
	if (error < 0) {
		/* a container removed since it was listed has no status: not a failure of the runtime */
		if (!(strcmp(ctx->method, "ContainerStatus") == 0 && status == GRPC_NOT_FOUND))
			run_fail(run, error, "%s: %s", ctx->method, why);
	} else if (run->error >= 0) {
		int r = decode_into(run, ctx->method, msg, len, ctx->container, dwhy, sizeof(dwhy));
		if (r < 0)
			run_fail(run, r, "%s: answer refused: %s", ctx->method, r == -ENOMEM ? "out of memory" : dwhy);
		else if (strcmp(ctx->method, "ListContainers") == 0 && (run->what & CRI_LIST_LOGS)) {
			fill_cached_logs(c);
			run->next_status = 0;
		}
	}
	free(ctx);
	if (run->error >= 0 && (run->what & CRI_LIST_LOGS) && run->l.containers)
		ask_logs(c);
	run_finish_if_done(c);
}

/* The listing's deadline passed: it fails with what was still waiting and what it kept. */
static void run_fail_deadline(cri_client *c)
{
	listing_run *run = c->run;
	size_t known = 0, o = 0;
	char why[384], waiting[160] = "";

	for (size_t i = 0; i < run->l.n_containers; i++)
		known += run->l.containers[i].log_path != NULL;
	/* which calls were still waiting, each named once */
	for (const call_ctx *k = run->calls; k && o < sizeof(waiting); k = k->next)
		if (!strstr(waiting, k->method))
			o += (size_t)snprintf(waiting + o, sizeof(waiting) - o, "%s%s", o ? ", " : "", k->method);
	snprintf(why, sizeof(why), "deadline exceeded: not done within %.3g s (runtime-request-timeout); waiting for %s",
	         (double)c->o.timeout_usec / 1e6, waiting[0] ? waiting : "nothing");
	if (run->l.containers)
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "; %zu of %zu log paths known, kept for the next listing",
		         known, run->l.n_containers);
	run_fail(run, -ETIMEDOUT, "%s: %s", "listing", why);
}

/* The listing's deadline: whatever is still in flight is cancelled, the listing fails with it. */
static int on_list_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	cri_client *c = userdata;

	(void)s;
	(void)usec;
	run_fail_deadline(c);
	run_finish_if_done(c);
	return 0;
}

int cri_client_list(cri_client *c, unsigned what, cri_list_fn done, void *userdata)
{
	uint64_t now;
	int r0;

	static const struct {
		unsigned bit;
		const char *method, *path;
	} calls[] = {
		{ CRI_LIST_FS, "ImageFsInfo", IMAGE "ImageFsInfo" },
		{ CRI_LIST_IMAGES, "ListImages", IMAGE "ListImages" },
		{ CRI_LIST_SANDBOXES, "ListPodSandbox", RUNTIME "ListPodSandbox" },
		{ CRI_LIST_CONTAINERS, "ListContainers", RUNTIME "ListContainers" },
		{ CRI_LIST_STATS, "ListContainerStats", RUNTIME "ListContainerStats" },
	};
	listing_run *run;

	if (c->run)
		return -EBUSY;
	if (!(what & CRI_LIST_CONTAINERS))
		what &= ~(unsigned)(CRI_LIST_STATS | CRI_LIST_LOGS);
	run = calloc(1, sizeof(*run));
	if (!run)
		return -ENOMEM;
	run->what = what;
	run->done = done;
	run->userdata = userdata;
	run->next_status = SIZE_MAX; /* no log path is asked before the containers are known */
	r0 = sd_event_now(c->event, CLOCK_MONOTONIC, &now);
	run->deadline = now + c->o.timeout_usec;
	/* accuracy 1 µs: sd-event's default slack (250 ms) would stretch the deadline */
	if (r0 >= 0)
		r0 = sd_event_add_time(c->event, &run->timer, CLOCK_MONOTONIC, run->deadline, 1, on_list_deadline, c);
	if (r0 < 0) {
		run_free(run);
		return r0;
	}
	(void)sd_event_source_set_description(run->timer, "cri-listing-deadline");
	c->run = run;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		call_ctx *ctx;
		int r;
		if (!(what & calls[i].bit))
			continue;
		ctx = calloc(1, sizeof(*ctx));
		if (!ctx)
			r = -ENOMEM;
		else {
			*ctx = (call_ctx){ .c = c, .method = calls[i].method };
			/* every list request is the empty message: no filter, everything */
			r = start(c, calls[i].path, NULL, 0, list_done, ctx, true);
		}
		if (r < 0) {
			free(ctx);
			run_fail(run, r, "%s: %s", calls[i].method, strerror(-r));
			break;
		}
	}
	if (run->error < 0)
		run_abort(c);
	if (run->in_flight == 0 && run->error < 0) {
		/* nothing started: the caller hears it from the return value, not from done */
		int r = run->error;
		c->run = NULL;
		run_free(run);
		return r;
	}
	if (run->in_flight == 0)
		run_finish_if_done(c);
	return 0;
}
