/* SPDX-License-Identifier: MIT */
#include "lease.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "answer.h"
#include "repeat.h"
#include "k8s_body.h"
#include "clock.h"

#define USEC 1000000ULL

typedef enum lease_op { OP_NONE, OP_GET, OP_CREATE, OP_UPDATE, OP_RELEASE_GET, OP_RELEASE } lease_op;

/* A release that meets a newer record (409: our own renewal, cancelled on the way, landed
 * after all) reads it again and retries, this many times at most. */
#define RELEASE_ATTEMPTS 3

struct lease {
	sd_event *event;
	transport *t;
	lease_opts o;
	char *ns, *name, *identity, *path, *collection;
	bool leader;
	lease_record observed;
	bool have_observed;
	uint64_t observed_at; /* when the record last changed, on our monotonic clock */
	uint64_t renewed_at;  /* when the request of our last successful renewal was sent */
	void *handle;
	lease_op op;
	uint64_t sent_at;
	sd_event_source *timer;    /* the next try */
	sd_event_source *deadline; /* leader: renewed_at + renew deadline */
	void (*release_done)(void *userdata, int result);
	void *release_userdata;
	unsigned release_attempts;
	bool stopped;
	lease_stats stats;
	repeat failing; /* the same failure at every retry: one line, then one a minute */
};

static void try_now(lease *l);

/* --- the record -------------------------------------------------------------------------------- */

static int copy_str(const kval *v, char *dst, size_t size)
{
	if (!v || kval_type_of(v) == KVAL_NULL) {
		dst[0] = '\0';
		return 0;
	}
	if (kval_type_of(v) != KVAL_STRING || kval_len(v) >= size || strlen(kval_str(v)) != kval_len(v))
		return -EINVAL;
	memcpy(dst, kval_str(v), kval_len(v) + 1);
	return 0;
}

static int copy_int(const kval *v, int32_t *dst)
{
	char *end;
	long x;

	if (!v || kval_type_of(v) == KVAL_NULL) {
		*dst = 0;
		return 0;
	}
	if (kval_type_of(v) != KVAL_INT)
		return -EINVAL;
	x = strtol(kval_str(v), &end, 10);
	if (*end || x < INT32_MIN || x > INT32_MAX)
		return -EINVAL;
	*dst = (int32_t)x;
	return 0;
}

struct parse {
	lease_record *rec;
	int r;
};

static void read_lease(void *userdata, const kval *obj)
{
	struct parse *p = userdata;
	const kval *kind = kval_get(obj, "kind"), *meta = kval_get(obj, "metadata"), *spec = kval_get(obj, "spec");

	p->r = -EINVAL;
	if (kval_type_of(obj) != KVAL_MAP || (kind && (kval_type_of(kind) != KVAL_STRING || strcmp(kval_str(kind), "Lease"))) ||
	    kval_type_of(meta) != KVAL_MAP || (spec && kval_type_of(spec) != KVAL_MAP))
		return;
	memset(p->rec, 0, sizeof(*p->rec));
	if (copy_str(kval_get(meta, "resourceVersion"), p->rec->resource_version, sizeof(p->rec->resource_version)) < 0 ||
	    !p->rec->resource_version[0] || copy_str(kval_get(meta, "uid"), p->rec->uid, sizeof(p->rec->uid)) < 0 ||
	    copy_str(kval_get(spec, "holderIdentity"), p->rec->holder, sizeof(p->rec->holder)) < 0 ||
	    copy_int(kval_get(spec, "leaseDurationSeconds"), &p->rec->duration_s) < 0 ||
	    copy_int(kval_get(spec, "leaseTransitions"), &p->rec->transitions) < 0 ||
	    copy_str(kval_get(spec, "acquireTime"), p->rec->acquire_time, sizeof(p->rec->acquire_time)) < 0 ||
	    copy_str(kval_get(spec, "renewTime"), p->rec->renew_time, sizeof(p->rec->renew_time)) < 0)
		return;
	p->r = 0;
}

int lease_record_parse(const char *body, size_t len, lease_record *ret)
{
	lease_record rec;
	struct parse p = { .rec = &rec, .r = -EINVAL };
	int r = answer_object(body, len, read_lease, &p);

	if (r == -ENOMEM)
		return r;
	if (r < 0 || p.r < 0)
		return -EINVAL;
	*ret = rec;
	return 0;
}

/* --- timing ------------------------------------------------------------------------------------ */

static uint64_t now_mono(lease *l)
{
	uint64_t t = 0;
	if (sd_event_now(l->event, CLOCK_MONOTONIC, &t) < 0)
		t = clock_mono_usec();
	return t;
}

static void note(lease *l, int prio, const char *text)
{
	if (l->o.note)
		l->o.note(l->o.userdata, prio, text);
}

/* A failed call, told as repeat.h says. */
static void note_failure(lease *l, int prio, const char *text)
{
	char key[160], suffix[96], line[700];

	snprintf(key, sizeof(key), "%d %.150s", prio, text);
	if (!repeat_tell(&l->failing, key, now_mono(l), suffix, sizeof(suffix)))
		return;
	snprintf(line, sizeof(line), "%s%s", text, suffix);
	note(l, prio, line);
}

static void note_success(lease *l)
{
	char text[256];
	unsigned untold = repeat_end(&l->failing);

	if (untold) {
		snprintf(text, sizeof(text), "Lease %s/%s: answering again (%u more failures since the last line)", l->ns,
		         l->name, untold);
		note(l, LOG_NOTICE, text);
	}
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	try_now(userdata);
	return 0;
}

/* The next try after delay (a standby jitters it: client-go's JitterUntil, factor 1.2). */
static void try_later(lease *l, bool jitter)
{
	uint64_t delay = l->o.retry_period_usec;

	if (l->stopped)
		return;
	if (jitter)
		delay += (uint64_t)((double)delay * 1.2 * ((double)random() / RAND_MAX));
	if (sd_event_source_set_time(l->timer, now_mono(l) + delay) < 0 ||
	    sd_event_source_set_enabled(l->timer, SD_EVENT_ONESHOT) < 0)
		note(l, LOG_ERR, "Cannot arm the lease timer");
}

static void set_leader(lease *l, bool leader)
{
	if (l->leader == leader)
		return;
	l->leader = leader;
	if (leader)
		l->stats.acquired++;
	else
		l->stats.lost++;
	(void)sd_event_source_set_enabled(l->deadline, leader ? SD_EVENT_ONESHOT : SD_EVENT_OFF);
	if (l->o.changed)
		l->o.changed(l->o.userdata, leader);
}

/* No renewal for the renew deadline: not the leader any more, whatever the API says later. */
static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	lease *l = userdata;
	char text[256];

	(void)s;
	(void)usec;
	if (!l->leader)
		return 0;
	snprintf(text, sizeof(text), "Lease %s/%s not renewed for %llu ms: no longer leader", l->ns, l->name,
	         (unsigned long long)(l->o.renew_deadline_usec / 1000));
	note(l, LOG_WARNING, text);
	set_leader(l, false);
	return 0;
}

/* --- the calls --------------------------------------------------------------------------------- */

static void observe(lease *l, const lease_record *rec)
{
	if (!l->have_observed || strcmp(rec->resource_version, l->observed.resource_version) != 0) {
		l->observed = *rec;
		l->have_observed = true;
		l->observed_at = now_mono(l);
	}
}

static void answered(void *userdata, const transport_answer *a);

static void send_call(lease *l, lease_op op, const char *method, const char *path, char *body)
{
	uint64_t now = now_mono(l);
	long timeout_ms = (long)(l->o.renew_deadline_usec / 2000);
	int r;

	/* client-go's release() gives each of its two calls the renew deadline */
	if (op == OP_RELEASE_GET || op == OP_RELEASE)
		timeout_ms = (long)(l->o.renew_deadline_usec / 1000);

	if (l->leader && l->renewed_at + l->o.renew_deadline_usec > now) {
		/* a renewal must not outlive the deadline it is trying to beat */
		long left = (long)((l->renewed_at + l->o.renew_deadline_usec - now) / 1000);
		if (left < timeout_ms)
			timeout_ms = left > 100 ? left : 100;
	}
	transport_request rq = { .method = method, .path = path, .content_type = "application/json", .body = body,
	                         .timeout_ms = timeout_ms };
	l->op = op;
	l->sent_at = now;
	r = l->t->start(l->t, &rq, answered, l, &l->handle);
	free(body);
	if (r < 0) {
		l->op = OP_NONE;
		l->stats.failures++;
		try_later(l, !l->leader);
	}
}

static char *record_body(lease *l, bool release)
{
	char now[48];
	const lease_record *o = l->have_observed ? &l->observed : NULL;
	bool ours = o && strcmp(o->holder, l->identity) == 0;

	k8s_body_micro_time(clock_wall_ns(), now, sizeof(now));
	k8s_body_lease lr = {
		.ns = l->ns,
		.name = l->name,
		.resource_version = o ? o->resource_version : NULL,
		.holder = release ? "" : l->identity,
		.duration_s = release ? 1 : (int32_t)(l->o.lease_duration_usec / USEC),
		.acquire_time = release || !ours ? now : o->acquire_time,
		.renew_time = now,
		/* a change of holder is a transition; renewing (or releasing) ours is not */
		.transitions = o ? o->transitions + (!release && !ours ? 1 : 0) : 0,
	};
	return k8s_body_lease_v1(&lr);
}

static void update(lease *l)
{
	send_call(l, OP_UPDATE, "PUT", l->path, record_body(l, false));
}

static void after_get(lease *l, const transport_answer *a)
{
	lease_record rec;
	char text[512];

	if (!a->error && a->status == 404) {
		l->have_observed = false;
		send_call(l, OP_CREATE, "POST", l->collection, record_body(l, false));
		return;
	}
	if (a->error || a->status != 200 || lease_record_parse(a->body, a->len, &rec) < 0) {
		l->stats.failures++;
		if (!a->error && a->status == 403) {
			snprintf(text, sizeof(text), "GET %s: HTTP 403: preemptd's Role must allow get, create and update on "
			         "leases in %s (deploy/preemptd.yaml)", l->path, l->ns);
			note_failure(l, LOG_ERR, text);
		}
		else if (!a->error && a->status >= 400) {
			snprintf(text, sizeof(text), "GET %s: HTTP %ld: %.300s", l->path, a->status, a->body ? a->body : "");
			note_failure(l, LOG_ERR, text);
		}
		try_later(l, !l->leader);
		return;
	}
	note_success(l);
	observe(l, &rec);
	bool free_ = !rec.holder[0] || strcmp(rec.holder, l->identity) == 0 ||
	             now_mono(l) >= l->observed_at + l->o.lease_duration_usec;
	if (!free_) {
		if (l->leader) {
			snprintf(text, sizeof(text), "Lease %s/%s is held by %s: no longer leader", l->ns, l->name, rec.holder);
			note(l, LOG_WARNING, text);
			set_leader(l, false);
		}
		try_later(l, true);
		return;
	}
	update(l);
}

static void after_write(lease *l, lease_op op, const transport_answer *a)
{
	lease_record rec;

	if (!a->error && (a->status == 200 || a->status == 201) && lease_record_parse(a->body, a->len, &rec) == 0) {
		note_success(l);
		observe(l, &rec);
		l->renewed_at = l->sent_at;
		l->stats.renewals++;
		(void)sd_event_source_set_time(l->deadline, l->renewed_at + l->o.renew_deadline_usec);
		set_leader(l, true);
		(void)sd_event_source_set_enabled(l->deadline, SD_EVENT_ONESHOT);
		try_later(l, false);
		return;
	}
	l->stats.failures++;
	if (!a->error && (a->status == 409 || a->status == 404)) {
		/* someone wrote it since we read it (or it went): read it again at once */
		l->have_observed = l->have_observed && a->status == 409;
		send_call(l, OP_GET, "GET", l->path, NULL);
		return;
	}
	if (!a->error && a->status >= 400) {
		char text[512];
		snprintf(text, sizeof(text), "%s %s: HTTP %ld: %.300s", op == OP_CREATE ? "POST" : "PUT",
		         op == OP_CREATE ? l->collection : l->path, a->status, a->body ? a->body : "");
		note_failure(l, LOG_ERR, text);
	}
	try_later(l, !l->leader);
}

static void release_finish(lease *l, int result)
{
	void (*done)(void *userdata, int result) = l->release_done;

	l->release_done = NULL;
	if (done)
		done(l->release_userdata, result);
}

static int answer_errno(const transport_answer *a)
{
	return a->error ? a->error : a->status == 409 ? -ESTALE : -EIO;
}

/* client-go's LeaderElector.release(): read the Lease for its current resourceVersion, and only
 * while it still names us, write it back with no holder and a 1 s duration. */
static void after_release_get(lease *l, const transport_answer *a)
{
	lease_record rec;

	if (!a->error && a->status == 404) {
		release_finish(l, LEASE_NOT_HELD);
		return;
	}
	if (a->error || a->status != 200) {
		release_finish(l, answer_errno(a));
		return;
	}
	if (lease_record_parse(a->body, a->len, &rec) < 0) {
		release_finish(l, -EBADMSG);
		return;
	}
	observe(l, &rec);
	if (strcmp(rec.holder, l->identity) != 0) {
		release_finish(l, LEASE_NOT_HELD);
		return;
	}
	send_call(l, OP_RELEASE, "PUT", l->path, record_body(l, true));
	if (!l->handle)
		release_finish(l, -EIO);
}

static void after_release(lease *l, const transport_answer *a)
{
	lease_record rec;

	if (!a->error && a->status == 200) {
		if (lease_record_parse(a->body, a->len, &rec) == 0)
			observe(l, &rec);
		release_finish(l, LEASE_RELEASED);
		return;
	}
	if (!a->error && a->status == 409 && ++l->release_attempts < RELEASE_ATTEMPTS) {
		send_call(l, OP_RELEASE_GET, "GET", l->path, NULL);
		if (!l->handle)
			release_finish(l, -EIO);
		return;
	}
	release_finish(l, answer_errno(a));
}

static void answered(void *userdata, const transport_answer *a)
{
	lease *l = userdata;
	lease_op op = l->op;

	l->handle = NULL;
	l->op = OP_NONE;
	switch (op) {
	case OP_GET:
		after_get(l, a);
		break;
	case OP_CREATE:
	case OP_UPDATE:
		after_write(l, op, a);
		break;
	case OP_RELEASE_GET:
		after_release_get(l, a);
		break;
	case OP_RELEASE:
		after_release(l, a);
		break;
	case OP_NONE:
		break;
	}
}

static void try_now(lease *l)
{
	if (l->handle || l->stopped)
		return;
	/* the leader writes what it last saw (client-go's fast path); a 409 sends it back to a read */
	if (l->leader && l->have_observed)
		update(l);
	else
		send_call(l, OP_GET, "GET", l->path, NULL);
}

/* --- the object -------------------------------------------------------------------------------- */

int lease_new(sd_event *e, transport *t, const lease_opts *o, lease **ret)
{
	lease *l;
	int r;

	if (!o || !o->namespace_ || !o->name || !o->identity || !*o->identity)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->event = sd_event_ref(e);
	l->t = t;
	l->o = *o;
	if (!l->o.lease_duration_usec)
		l->o.lease_duration_usec = 15 * USEC;
	if (!l->o.renew_deadline_usec)
		l->o.renew_deadline_usec = 10 * USEC;
	if (!l->o.retry_period_usec)
		l->o.retry_period_usec = 2 * USEC;
	if (l->o.renew_deadline_usec >= l->o.lease_duration_usec || l->o.retry_period_usec >= l->o.renew_deadline_usec) {
		lease_free(l);
		return -EINVAL;
	}
	if (!(l->ns = strdup(o->namespace_)) || !(l->name = strdup(o->name)) || !(l->identity = strdup(o->identity)) ||
	    asprintf(&l->collection, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", o->namespace_) < 0) {
		l->collection = NULL;
		lease_free(l);
		return -ENOMEM;
	}
	if (asprintf(&l->path, "%s/%s", l->collection, o->name) < 0) {
		l->path = NULL;
		lease_free(l);
		return -ENOMEM;
	}
	if ((r = sd_event_add_time(e, &l->timer, CLOCK_MONOTONIC, UINT64_MAX, 1000, on_timer, l)) < 0 ||
	    (r = sd_event_add_time(e, &l->deadline, CLOCK_MONOTONIC, UINT64_MAX, 0, on_deadline, l)) < 0) {
		lease_free(l);
		return r;
	}
	(void)sd_event_source_set_enabled(l->timer, SD_EVENT_OFF);
	(void)sd_event_source_set_enabled(l->deadline, SD_EVENT_OFF);
	(void)sd_event_source_set_description(l->timer, "lease-retry");
	(void)sd_event_source_set_description(l->deadline, "lease-deadline");
	*ret = l;
	return 0;
}

lease *lease_free(lease *l)
{
	if (!l)
		return NULL;
	if (l->handle)
		l->t->cancel(l->t, l->handle);
	sd_event_source_disable_unref(l->timer);
	sd_event_source_disable_unref(l->deadline);
	sd_event_unref(l->event);
	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l->path);
	free(l->collection);
	free(l);
	return NULL;
}

void lease_start(lease *l)
{
	try_now(l);
}

bool lease_is_leader(const lease *l)
{
	return l->leader;
}

bool lease_may_write(lease *l, long *ret_timeout_ms)
{
	uint64_t now = now_mono(l);

	if (!l->leader || now >= l->renewed_at + l->o.renew_deadline_usec)
		return false;
	/* a write sent now must be over before the lease a standby waits out could expire */
	uint64_t end = l->renewed_at + l->o.lease_duration_usec - USEC;
	*ret_timeout_ms = end > now ? (long)((end - now) / 1000) : 1;
	return true;
}

const char *lease_holder(const lease *l)
{
	return l->have_observed ? l->observed.holder : "";
}

const char *lease_uid(const lease *l)
{
	return l->have_observed && l->observed.uid[0] ? l->observed.uid : NULL;
}

void lease_release(lease *l, void (*done)(void *userdata, int result), void *userdata)
{
	/* the Lease may still name us although our renew deadline passed (a slow API server): it is
	 * ours to release as long as the record says so */
	bool maybe_ours = l->leader || (l->have_observed && strcmp(l->observed.holder, l->identity) == 0);

	l->stopped = true;
	(void)sd_event_source_set_enabled(l->timer, SD_EVENT_OFF);
	/* a renewal in flight is cancelled (client-go cancels its context); if it lands anyway, the
	 * read below sees the resourceVersion it made */
	if (l->handle) {
		l->t->cancel(l->t, l->handle);
		l->handle = NULL;
	}
	set_leader(l, false);
	l->release_done = done;
	l->release_userdata = userdata;
	l->release_attempts = 0;
	if (!maybe_ours) {
		release_finish(l, LEASE_NOT_HELD);
		return;
	}
	send_call(l, OP_RELEASE_GET, "GET", l->path, NULL);
	if (!l->handle)
		release_finish(l, -EIO);
}

void lease_get_stats(const lease *l, lease_stats *ret)
{
	*ret = l->stats;
}
