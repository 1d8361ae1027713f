/* SPDX-License-Identifier: MIT */
/*
 * The Kubernetes write bodies of both programs (k8s_body.h), on yajl's generator. Each string goes
 * through base's jsonw_gen_string, the one place that bounds the output's size (checked before a
 * string grows it) and turns a byte that is not UTF-8 into U+FFFD rather than lose the body.
 */
#include "k8s_body.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#include "jsonw.h"

#define NOTE_MAX 1024 /* events.k8s.io/v1 validation: NoteLengthLimit */
#define NAME_MAX_LEN 253 /* DNS subdomain: what an Event's metadata.name must be */

typedef struct body {
	yajl_gen g;
	int error; /* first failure, -errno */
} body;

static void body_fail(body *b, int error)
{
	if (!b->error)
		b->error = error;
}

static void body_check(body *b, yajl_gen_status s)
{
	if (s != yajl_gen_status_ok)
		body_fail(b, s == yajl_gen_invalid_string ? -EILSEQ : -ENOMEM);
}

static void body_str(body *b, const char *s)
{
	if (!b->error)
		body_fail(b, jsonw_gen_string(b->g, K8S_BODY_MAX, s));
}

static void body_kv(body *b, const char *k, const char *v)
{
	body_str(b, k);
	body_str(b, v);
}

static void body_int(body *b, const char *k, long long v)
{
	body_str(b, k);
	if (!b->error)
		body_check(b, yajl_gen_integer(b->g, v));
}

static void body_map_open(body *b, const char *key)
{
	if (key)
		body_str(b, key);
	if (!b->error)
		body_check(b, yajl_gen_map_open(b->g));
}

static void body_map_close(body *b)
{
	if (!b->error)
		body_check(b, yajl_gen_map_close(b->g));
}

static void body_array_open(body *b, const char *key)
{
	body_str(b, key);
	if (!b->error)
		body_check(b, yajl_gen_array_open(b->g));
}

static void body_array_close(body *b)
{
	if (!b->error)
		body_check(b, yajl_gen_array_close(b->g));
}

/* "apiVersion": ..., "kind": ...: what every object and reference here begins with */
static void body_type_meta(body *b, const char *api_version, const char *kind)
{
	body_kv(b, "apiVersion", api_version);
	body_kv(b, "kind", kind);
}

static body body_open(void)
{
	body b = { .g = yajl_gen_alloc(NULL) };

	if (!b.g) {
		b.error = -ENOMEM;
		return b;
	}
	/* no yajl_gen_validate_utf8: body_str has repaired every string already (validated once) */
	body_map_open(&b, NULL);
	return b;
}

/* Closes the top map and hands the text over; NULL with errno on any failure on the way. */
static char *body_close(body *b)
{
	const unsigned char *buf;
	size_t len;
	char *out = NULL;

	body_map_close(b);
	if (!b->error && yajl_gen_get_buf(b->g, &buf, &len) != yajl_gen_status_ok)
		b->error = -ENOMEM;
	if (!b->error && len > K8S_BODY_MAX)
		b->error = -E2BIG;
	if (!b->error && !(out = malloc(len + 1)))
		b->error = -ENOMEM;
	if (out) {
		memcpy(out, buf, len);
		out[len] = '\0';
	}
	if (b->g)
		yajl_gen_free(b->g);
	if (!out)
		errno = -b->error;
	return out;
}

void k8s_body_time(int64_t ns, char *buf, size_t size)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!gmtime_r(&s, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "1970-01-01T00:00:00Z");
}

void k8s_body_micro_time(int64_t ns, char *buf, size_t size)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	char day[32];

	if (!gmtime_r(&s, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(day, sizeof(day), "1970-01-01T00:00:00");
	snprintf(buf, size, "%s.%06ldZ", day, (long)((ns % 1000000000) / 1000));
}

char *k8s_body_binding(const char *ns, const char *name, const char *uid, const char *node)
{
	body b = body_open();

	body_type_meta(&b, "v1", "Binding");
	body_map_open(&b, "metadata");
	body_kv(&b, "namespace", ns);
	body_kv(&b, "name", name);
	body_kv(&b, "uid", uid);
	body_map_close(&b);
	body_map_open(&b, "target");
	body_type_meta(&b, "v1", "Node");
	body_kv(&b, "name", node);
	body_map_close(&b);
	return body_close(&b);
}

char *k8s_body_pod_status_patch(const char *uid, const k8s_body_condition *cond, bool set_nomination,
                                const char *node)
{
	char t[40];
	body b = body_open();

	body_map_open(&b, "metadata");
	body_kv(&b, "uid", uid);
	body_map_close(&b);
	body_map_open(&b, "status");
	if (cond) {
		body_array_open(&b, "conditions");
		body_map_open(&b, NULL);
		body_kv(&b, "type", cond->type);
		body_kv(&b, "status", cond->status);
		body_kv(&b, "reason", cond->reason);
		body_kv(&b, "message", cond->message);
		body_kv(&b, "lastProbeTime", NULL); /* a zero metav1.Time, as the Go clients send it */
		if (cond->transition_ns) {
			k8s_body_time(cond->transition_ns, t, sizeof(t));
			body_kv(&b, "lastTransitionTime", t);
		}
		body_map_close(&b);
		body_array_close(&b);
	}
	if (set_nomination)
		body_kv(&b, "nominatedNodeName", node);
	body_map_close(&b);
	return body_close(&b);
}

char *k8s_body_node_conditions_patch(const k8s_body_node_condition *conds, size_t n)
{
	body b = body_open();

	body_map_open(&b, "status");
	body_array_open(&b, "conditions");
	for (size_t i = 0; i < n; i++) {
		body_map_open(&b, NULL);
		body_kv(&b, "type", conds[i].type);
		body_kv(&b, "status", conds[i].status);
		body_kv(&b, "reason", conds[i].reason);
		body_kv(&b, "message", conds[i].message);
		body_kv(&b, "lastHeartbeatTime", conds[i].heartbeat_time);
		body_kv(&b, "lastTransitionTime", conds[i].transition_time);
		body_map_close(&b);
	}
	body_array_close(&b);
	body_map_close(&b);
	return body_close(&b);
}

/* The DeleteOptions object's members, inside a map already open. Inside an Eviction the field
 * says what it is: no TypeMeta there, as kubectl drain sends it. */
static void body_delete_options(body *b, bool type_meta, const char *uid, int64_t grace_period_s)
{
	if (type_meta)
		body_type_meta(b, "v1", "DeleteOptions");
	if (grace_period_s >= 0)
		body_int(b, "gracePeriodSeconds", grace_period_s);
	body_map_open(b, "preconditions");
	body_kv(b, "uid", uid);
	body_map_close(b);
}

char *k8s_body_delete_options(const char *uid, int64_t grace_period_s)
{
	body b = body_open();

	body_delete_options(&b, true, uid, grace_period_s);
	return body_close(&b);
}

char *k8s_body_eviction(const char *ns, const char *name, const char *uid, int64_t grace_period_s)
{
	body b = body_open();

	body_type_meta(&b, "policy/v1", "Eviction");
	body_map_open(&b, "metadata");
	body_kv(&b, "namespace", ns);
	body_kv(&b, "name", name);
	body_map_close(&b);
	body_map_open(&b, "deleteOptions");
	body_delete_options(&b, false, uid, grace_period_s);
	body_map_close(&b);
	return body_close(&b);
}

void k8s_body_event_name(const char *object, int64_t ns, char *buf, size_t size)
{
	char hex[24];
	int n = snprintf(hex, sizeof(hex), "%llx", (unsigned long long)ns);

	snprintf(buf, size, "%.*s.%s", NAME_MAX_LEN - 1 - n, object, hex);
}

static void body_object_ref(body *b, const char *key, const char *api_version, const char *kind, const char *ns,
                       const char *name, const char *uid)
{
	body_map_open(b, key);
	body_type_meta(b, api_version, kind);
	body_kv(b, "namespace", ns);
	body_kv(b, "name", name);
	if (uid)
		body_kv(b, "uid", uid);
	body_map_close(b);
}

char *k8s_body_event_v1(const k8s_body_event *e)
{
	char name[NAME_MAX_LEN + 1], t[48], note[NOTE_MAX + 1];
	const char *n = e->note ? e->note : "";
	body b = body_open();

	k8s_body_event_name(e->name, e->now_ns, name, sizeof(name));
	k8s_body_micro_time(e->now_ns, t, sizeof(t));
	if (strlen(n) > NOTE_MAX) {
		/* kube-scheduler's truncateMessage, kept on a UTF-8 boundary */
		int cut = NOTE_MAX - 4;
		while (cut > 0 && ((unsigned char)n[cut] & 0xc0) == 0x80)
			cut--;
		snprintf(note, sizeof(note), "%.*s ...", cut, n);
	} else
		snprintf(note, sizeof(note), "%s", n);
	body_type_meta(&b, "events.k8s.io/v1", "Event");
	body_map_open(&b, "metadata");
	body_kv(&b, "name", name);
	body_kv(&b, "namespace", e->ns);
	body_map_close(&b);
	body_kv(&b, "eventTime", t);
	body_kv(&b, "reportingController", e->controller);
	body_kv(&b, "reportingInstance", e->instance);
	body_kv(&b, "action", e->action);
	body_kv(&b, "reason", e->reason);
	body_kv(&b, "type", e->type);
	body_kv(&b, "note", note);
	body_object_ref(&b, "regarding", e->regarding_api_version ? e->regarding_api_version : "v1",
	           e->regarding_kind ? e->regarding_kind : "Pod", e->ns, e->name, e->uid);
	if (e->related_name)
		body_object_ref(&b, "related", "v1", "Pod", e->related_ns, e->related_name, e->related_uid);
	return body_close(&b);
}

char *k8s_body_event_series_patch(int32_t count, int64_t last_observed_ns)
{
	char t[48];
	body b = body_open();

	k8s_body_micro_time(last_observed_ns, t, sizeof(t));
	body_map_open(&b, "series");
	body_int(&b, "count", count);
	body_kv(&b, "lastObservedTime", t);
	body_map_close(&b);
	return body_close(&b);
}

char *k8s_body_core_event_v1(const k8s_body_core_event *e)
{
	body b = body_open();

	body_type_meta(&b, "v1", "Event");
	body_map_open(&b, "metadata");
	body_kv(&b, "name", e->name);
	body_kv(&b, "namespace", e->ns);
	if (e->annotations) {
		body_map_open(&b, "annotations");
		for (const char *const *a = e->annotations; a[0] && a[1]; a += 2)
			body_kv(&b, a[0], a[1]);
		body_map_close(&b);
	}
	body_map_close(&b);
	body_map_open(&b, "involvedObject");
	body_type_meta(&b, "v1", e->object_kind);
	body_kv(&b, "name", e->object_name);
	if (e->object_ns)
		body_kv(&b, "namespace", e->object_ns);
	body_kv(&b, "uid", e->object_uid);
	body_map_close(&b);
	body_kv(&b, "reason", e->reason);
	body_kv(&b, "message", e->message);
	body_kv(&b, "type", e->type);
	body_map_open(&b, "source");
	body_kv(&b, "component", e->component);
	body_kv(&b, "host", e->host);
	body_map_close(&b);
	body_kv(&b, "reportingComponent", e->component);
	body_kv(&b, "reportingInstance", e->host);
	body_kv(&b, "firstTimestamp", e->first_time);
	body_kv(&b, "lastTimestamp", e->last_time);
	body_int(&b, "count", 1);
	return body_close(&b);
}

char *k8s_body_lease_v1(const k8s_body_lease *l)
{
	body b = body_open();

	body_type_meta(&b, "coordination.k8s.io/v1", "Lease");
	body_map_open(&b, "metadata");
	body_kv(&b, "name", l->name);
	body_kv(&b, "namespace", l->ns);
	if (l->resource_version)
		body_kv(&b, "resourceVersion", l->resource_version); /* optimistic concurrency: 409 if it moved */
	body_map_close(&b);
	body_map_open(&b, "spec");
	body_kv(&b, "holderIdentity", l->holder);
	body_int(&b, "leaseDurationSeconds", l->duration_s);
	body_kv(&b, "acquireTime", l->acquire_time);
	body_kv(&b, "renewTime", l->renew_time);
	body_int(&b, "leaseTransitions", l->transitions);
	body_map_close(&b);
	return body_close(&b);
}
