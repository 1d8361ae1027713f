/* SPDX-License-Identifier: MIT */
#include "requests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yajl/yajl_gen.h>

#define NOTE_MAX 1024 /* events.k8s.io/v1 validation: NoteLengthLimit */

static void put_str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void put_kv(yajl_gen g, const char *k, const char *v)
{
	put_str(g, k);
	if (v)
		put_str(g, v);
	else
		yajl_gen_null(g);
}

/* "apiVersion": ..., "kind": ...: what every object and reference here begins with */
static void type_meta(yajl_gen g, const char *api_version, const char *kind)
{
	put_kv(g, "apiVersion", api_version);
	put_kv(g, "kind", kind);
}

static yajl_gen open_gen(void)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (g) {
		/* refuse bytes that are not UTF-8 rather than send a body the API server rejects */
		yajl_gen_config(g, yajl_gen_validate_utf8, 1);
		yajl_gen_map_open(g);
	}
	return g;
}

/* Closes the top map and hands the text over (NULL when generation failed). */
static char *close_gen(yajl_gen g)
{
	const unsigned char *buf;
	size_t len;
	char *out = NULL;

	if (!g)
		return NULL;
	if (yajl_gen_map_close(g) == yajl_gen_status_ok && yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok &&
	    (out = malloc(len + 1))) {
		memcpy(out, buf, len);
		out[len] = '\0';
	}
	yajl_gen_free(g);
	return out;
}

void req_time(int64_t ns, char *buf, size_t size)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;

	if (!gmtime_r(&s, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "1970-01-01T00:00:00Z");
}

void req_micro_time(int64_t ns, char *buf, size_t size)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	char day[32];

	if (!gmtime_r(&s, &tm) || !strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(day, sizeof(day), "1970-01-01T00:00:00");
	snprintf(buf, size, "%s.%06ldZ", day, (long)((ns % 1000000000) / 1000));
}

static void uid_guard(yajl_gen g, const char *uid)
{
	put_str(g, "metadata");
	yajl_gen_map_open(g);
	put_kv(g, "uid", uid);
	yajl_gen_map_close(g);
}

char *req_binding(const char *ns, const char *name, const char *uid, const char *node)
{
	yajl_gen g = open_gen();
	if (!g)
		return NULL;
	type_meta(g, "v1", "Binding");
	put_str(g, "metadata");
	yajl_gen_map_open(g);
	put_kv(g, "namespace", ns);
	put_kv(g, "name", name);
	put_kv(g, "uid", uid);
	yajl_gen_map_close(g);
	put_str(g, "target");
	yajl_gen_map_open(g);
	type_meta(g, "v1", "Node");
	put_kv(g, "name", node);
	yajl_gen_map_close(g);
	return close_gen(g);
}

/* "conditions":[{type, status, reason, message, lastProbeTime: null, lastTransitionTime}] */
static void condition(yajl_gen g, const char *type, const char *status, const char *reason, const char *message,
                      int64_t transition_ns)
{
	char t[40];

	put_str(g, "conditions");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	put_kv(g, "type", type);
	put_kv(g, "status", status);
	put_kv(g, "reason", reason);
	put_kv(g, "message", message);
	put_kv(g, "lastProbeTime", NULL);
	if (transition_ns) {
		req_time(transition_ns, t, sizeof(t));
		put_kv(g, "lastTransitionTime", t);
	}
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
}

char *req_unschedulable_patch(const char *uid, const char *message, int64_t transition_ns, bool set_nomination,
                              const char *node)
{
	yajl_gen g = open_gen();
	if (!g)
		return NULL;
	uid_guard(g, uid);
	put_str(g, "status");
	yajl_gen_map_open(g);
	condition(g, "PodScheduled", "False", "Unschedulable", message, transition_ns);
	if (set_nomination)
		put_kv(g, "nominatedNodeName", node);
	yajl_gen_map_close(g);
	return close_gen(g);
}

char *req_clear_nomination_patch(const char *uid)
{
	yajl_gen g = open_gen();
	if (!g)
		return NULL;
	uid_guard(g, uid);
	put_str(g, "status");
	yajl_gen_map_open(g);
	put_kv(g, "nominatedNodeName", NULL);
	yajl_gen_map_close(g);
	return close_gen(g);
}

char *req_disruption_patch(const char *uid, const char *scheduler, int64_t now_ns)
{
	char msg[512];
	yajl_gen g = open_gen();

	if (!g)
		return NULL;
	snprintf(msg, sizeof(msg), "%s: preempting to accommodate a higher priority pod", scheduler);
	uid_guard(g, uid);
	put_str(g, "status");
	yajl_gen_map_open(g);
	condition(g, "DisruptionTarget", "True", "PreemptionByScheduler", msg, now_ns);
	yajl_gen_map_close(g);
	return close_gen(g);
}

char *req_delete_options(const char *uid)
{
	yajl_gen g = open_gen();
	if (!g)
		return NULL;
	type_meta(g, "v1", "DeleteOptions");
	put_str(g, "preconditions");
	yajl_gen_map_open(g);
	put_kv(g, "uid", uid);
	yajl_gen_map_close(g);
	return close_gen(g);
}

char *req_eviction(const char *ns, const char *name, const char *uid)
{
	yajl_gen g = open_gen();
	if (!g)
		return NULL;
	type_meta(g, "policy/v1", "Eviction");
	put_str(g, "metadata");
	yajl_gen_map_open(g);
	put_kv(g, "namespace", ns);
	put_kv(g, "name", name);
	yajl_gen_map_close(g);
	put_str(g, "deleteOptions");
	yajl_gen_map_open(g);
	put_str(g, "preconditions");
	yajl_gen_map_open(g);
	put_kv(g, "uid", uid);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	return close_gen(g);
}

static void object_ref(yajl_gen g, const char *key, const char *api_version, const char *kind, const char *ns,
                       const char *name, const char *uid)
{
	put_str(g, key);
	yajl_gen_map_open(g);
	type_meta(g, api_version, kind);
	put_kv(g, "namespace", ns);
	put_kv(g, "name", name);
	if (uid)
		put_kv(g, "uid", uid);
	yajl_gen_map_close(g);
}

void req_event_name(const char *regarding, int64_t now_ns, char *buf, size_t size)
{
	snprintf(buf, size, "%.240s.%llx", regarding, (unsigned long long)now_ns);
}

char *req_event_body(const req_event *e)
{
	char name[320], t[48], note[NOTE_MAX + 1];
	yajl_gen g = open_gen();

	if (!g)
		return NULL;
	req_event_name(e->name, e->now_ns, name, sizeof(name));
	req_micro_time(e->now_ns, t, sizeof(t));
	if (strlen(e->note) > NOTE_MAX) {
		/* kube-scheduler's truncateMessage, kept on a UTF-8 boundary */
		int cut = NOTE_MAX - 4;
		while (cut > 0 && ((unsigned char)e->note[cut] & 0xc0) == 0x80)
			cut--;
		snprintf(note, sizeof(note), "%.*s ...", cut, e->note);
	} else
		snprintf(note, sizeof(note), "%s", e->note);
	type_meta(g, "events.k8s.io/v1", "Event");
	put_str(g, "metadata");
	yajl_gen_map_open(g);
	put_kv(g, "name", name);
	put_kv(g, "namespace", e->ns);
	yajl_gen_map_close(g);
	put_kv(g, "eventTime", t);
	put_kv(g, "reportingController", e->controller);
	put_kv(g, "reportingInstance", e->instance);
	put_kv(g, "action", e->action);
	put_kv(g, "reason", e->reason);
	put_kv(g, "type", e->type);
	put_kv(g, "note", note);
	object_ref(g, "regarding", e->regarding_api_version ? e->regarding_api_version : "v1",
	           e->regarding_kind ? e->regarding_kind : "Pod", e->ns, e->name, e->uid);
	if (e->related_name)
		object_ref(g, "related", "v1", "Pod", e->related_ns, e->related_name, e->related_uid);
	return close_gen(g);
}

char *req_lease_body(const req_lease *l)
{
	yajl_gen g = open_gen();
	if (!g)
		return NULL;
	type_meta(g, "coordination.k8s.io/v1", "Lease");
	put_str(g, "metadata");
	yajl_gen_map_open(g);
	put_kv(g, "name", l->name);
	put_kv(g, "namespace", l->ns);
	if (l->resource_version)
		put_kv(g, "resourceVersion", l->resource_version); /* optimistic concurrency: 409 if it moved */
	yajl_gen_map_close(g);
	put_str(g, "spec");
	yajl_gen_map_open(g);
	put_kv(g, "holderIdentity", l->holder);
	put_str(g, "leaseDurationSeconds");
	yajl_gen_integer(g, l->duration_s);
	put_kv(g, "acquireTime", l->acquire_time);
	put_kv(g, "renewTime", l->renew_time);
	put_str(g, "leaseTransitions");
	yajl_gen_integer(g, l->transitions);
	yajl_gen_map_close(g);
	return close_gen(g);
}
