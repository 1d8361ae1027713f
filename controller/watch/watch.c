/* SPDX-License-Identifier: MIT */
#include "watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "k8s.h"
#include "k8s_decode.h"
#include "reflector.h"

struct source {
	watch *w;
	cluster_kind kind;
	kube_reflector *r;
	uint64_t refused;
};

struct watch {
	cluster *c;
	struct source src[CLUSTER_KINDS];
	bool pods_started;
	karena arena;     /* one pod's decoded strings */
	k8s_cluster objs; /* one node / PDB / class, decoded */
	diag diag;        /* the decoder's messages, one object at a time */
	char diag_buf[1024];
	bool diag_open;
	/* an unreachable API server (or a CA that does not match) fails every list and watch again
	 * and again: said once with where and with what, then summed up at most once a minute */
	sd_event *event;
	char api[600];            /* kube_client_describe */
	bool api_failing;
	uint64_t api_told_usec;   /* when the last line about it was written */
	unsigned api_untold;      /* failures since */
};

#define API_FAILURE_EVERY_USEC (60 * UINT64_C(1000000))

static const struct {
	const char *path, *what, *kind, *selector;
} watched[CLUSTER_KINDS] = {
	[CLUSTER_CLASSES] = { "/apis/scheduling.k8s.io/v1/priorityclasses", "PriorityClass", "PriorityClass", NULL },
	[CLUSTER_NODES] = { "/api/v1/nodes", "node", "Node", NULL },
	[CLUSTER_PDBS] = { "/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget", "PodDisruptionBudget",
	                   NULL },
	/* kube-scheduler's own selector: assigned and unassigned pods alike, not the finished ones */
	[CLUSTER_PODS] = { "/api/v1/pods", "pod", "Pod", "status.phase!=Succeeded,status.phase!=Failed" },
};

/* --- refusals ---------------------------------------------------------------------------------- */

static void refused(struct source *s, const char *ns, const char *name, const char *what)
{
	s->refused++;
	if (!cluster_first_refusal(s->w->c, s->kind, ns, name))
		return;
	journal_entry e;
	journal_entry_init(&e, LOG_WARNING, MSGID_OBJECT_REFUSED);
	journal_entry_add(&e, FIELD_OBJECT, "%s/%s%s%s", cluster_kind_name(s->kind), ns ? ns : "", ns ? "/" : "", name);
	journal_entry_add(&e, FIELD_REASON, "%s", what);
	journal_entry_send(&e, "%s; skipped", what);
}

static const char *meta_str(const kval *obj, const char *key)
{
	const kval *v = kval_get(kval_get(obj, "metadata"), key);
	return kval_type_of(v) == KVAL_STRING ? kval_str(v) : NULL;
}

/* --- objects ----------------------------------------------------------------------------------- */

static int apply_pod(struct source *s, const kval *obj, const char *source)
{
	watch *w = s->w;
	struct k8s_pod p;
	char err[1024];
	int r;

	r = k8s_decode_pod(&w->arena, &w->diag, source, obj, &p);
	if (r == -EINVAL) {
		char what[1100];
		snprintf(what, sizeof(what), "%s", diag_take_line(&w->diag));
		karena_reset(&w->arena);
		refused(s, meta_str(obj, "namespace"), meta_str(obj, "name") ? meta_str(obj, "name") : "(unnamed)", what);
		return 0;
	}
	if (r < 0) {
		karena_reset(&w->arena);
		return r == -EMEDIUMTYPE ? 0 : r;
	}
	r = cluster_put_pod(w->c, &p, err, sizeof(err));
	if (r == -EINVAL)
		refused(s, p.namespace_, p.name, err);
	karena_reset(&w->arena);
	return r == -ENOMEM ? r : 0;
}

static int apply_other(struct source *s, const kval *obj, const char *source)
{
	watch *w = s->w;
	char err[1024], what[1100];
	const char *name = meta_str(obj, "name"), *ns = s->kind == CLUSTER_PDBS ? meta_str(obj, "namespace") : NULL;
	int r;

	r = k8s_decode_list_item(&w->objs, &w->diag, source, obj, watched[s->kind].kind);
	if (r == 0 && w->objs.nclasses)
		r = cluster_put_class(w->c, &w->objs.classes[0], err, sizeof(err));
	else if (r == 0 && w->objs.nnodes)
		r = cluster_put_node(w->c, &w->objs.nodes[0], err, sizeof(err));
	else if (r == 0 && w->objs.npdbs)
		r = cluster_put_pdb(w->c, &w->objs.pdbs[0], err, sizeof(err));
	else if (r == 0) {
		/* another kind in this resource's stream: nothing of ours */
		snprintf(err, sizeof(err), "%s/%s: not a %s", cluster_kind_name(s->kind), name ? name : "(unnamed)",
		         watched[s->kind].kind);
		r = -EINVAL;
	} else if (r == -EINVAL) {
		snprintf(err, sizeof(err), "%s", diag_take_line(&w->diag));
	}
	if (r == -EINVAL) {
		snprintf(what, sizeof(what), "%s", err);
		refused(s, ns, name ? name : "(unnamed)", what);
		r = 0;
	}
	k8s_cluster_done(&w->objs);
	k8s_cluster_init(&w->objs);
	return r;
}

static void api_recovered(watch *w)
{
	if (!w->api_failing)
		return;
	journal_msg(LOG_NOTICE, "%s: answering again (%u more failures since the last line)", w->api, w->api_untold);
	w->api_failing = false;
	w->api_untold = 0;
}

/* A transport failure (no HTTP status) or a 5xx: NULL when this one is not to be written, else
 * what its line ends with (buf, or "" for any other note). */
static const char *api_failure_suffix(watch *w, const kube_reflector_note *n, char *buf, size_t size)
{
	uint64_t now = 0;

	if (!n->verb || (n->status && n->status < 500))
		return "";
	if (w->event)
		(void)sd_event_now(w->event, CLOCK_MONOTONIC, &now);
	if (!w->api_failing) {
		w->api_failing = true;
		w->api_told_usec = now;
		w->api_untold = 0;
		snprintf(buf, size, "; retrying with backoff (%s), at most one line a minute until it answers", w->api);
		return buf;
	}
	if (now - w->api_told_usec < API_FAILURE_EVERY_USEC) {
		w->api_untold++;
		return NULL;
	}
	snprintf(buf, size, "; still retrying (%s; %u more failures in the last minute)", w->api, w->api_untold);
	w->api_told_usec = now;
	w->api_untold = 0;
	return buf;
}

static int on_object(void *userdata, kube_event_type type, const kval *obj, const char *source)
{
	struct source *s = userdata;
	int r;

	api_recovered(s->w);
	if (type == KUBE_DELETED) {
		/* the last state of a deleted object may be anything: only its name matters */
		const char *name = meta_str(obj, "name");
		if (name)
			cluster_delete(s->w->c, s->kind, s->kind == CLUSTER_PODS || s->kind == CLUSTER_PDBS
			                                     ? (meta_str(obj, "namespace") ? meta_str(obj, "namespace") : "default")
			                                     : NULL,
			               name);
		return 0;
	}
	r = s->kind == CLUSTER_PODS ? apply_pod(s, obj, source) : apply_other(s, obj, source);
	/* warnings the decoder had about an accepted object: not worth a line each */
	if (s->w->diag.nerrors || s->w->diag.nwarnings)
		(void)diag_take_line(&s->w->diag);
	return r;
}

/* --- lists ------------------------------------------------------------------------------------- */

static void start_pods_when_ready(watch *w);

static void on_list_begin(void *userdata)
{
	struct source *s = userdata;
	cluster_relist_begin(s->w->c, s->kind);
}

static void on_list_done(void *userdata, const char *rv)
{
	struct source *s = userdata;
	size_t gone = cluster_relist_end(s->w->c, s->kind);
	kube_reflector_stats st;

	kube_reflector_get_stats(s->r, &st);
	api_recovered(s->w);
	journal_entry e;
	journal_entry_init(&e, st.lists > 1 ? LOG_NOTICE : LOG_INFO, MSGID_WATCH);
	journal_entry_add(&e, FIELD_RESOURCE, "%s", cluster_kind_name(s->kind));
	if (gone)
		journal_entry_send(&e, "%s %s at resourceVersion %s: %zu gone while the watch was down", "Relisted",
		                   cluster_kind_name(s->kind), rv, gone);
	else
		journal_entry_send(&e, "%s %s at resourceVersion %s", st.lists > 1 ? "Relisted" : "Listed",
		                   cluster_kind_name(s->kind), rv);
	start_pods_when_ready(s->w);
}

static void on_note(void *userdata, const kube_reflector_note *n)
{
	struct source *s = userdata;
	char more[800];
	const char *tail = api_failure_suffix(s->w, n, more, sizeof(more));
	journal_entry e;

	if (!tail)
		return;

	journal_entry_init(&e, n->priority, n->verb ? MSGID_API_ERROR : MSGID_WATCH);
	journal_entry_add(&e, FIELD_RESOURCE, "%s", cluster_kind_name(s->kind));
	if (n->verb) {
		journal_entry_add(&e, FIELD_VERB, "%s", n->verb);
		journal_entry_add(&e, FIELD_PATH, "%s", n->path);
		journal_entry_add(&e, FIELD_STATUS, "%ld", n->status);
		if (n->status)
			journal_entry_send(&e, "%s %s: HTTP %ld: %.400s%s", n->verb, n->path, n->status, n->text, tail);
		else
			journal_entry_send(&e, "%s %s failed: %.400s%s", n->verb, n->path, n->text, tail);
	} else {
		journal_entry_send(&e, "%s: %s", cluster_kind_name(s->kind), n->text);
	}
}

static void start_pods_when_ready(watch *w)
{
	if (w->pods_started)
		return;
	for (int k = 0; k < CLUSTER_PODS; k++)
		if (!kube_reflector_synced(w->src[k].r))
			return;
	w->pods_started = true;
	kube_reflector_start(w->src[CLUSTER_PODS].r);
}

/* --- the object -------------------------------------------------------------------------------- */

int watch_new(sd_event *e, kube_multi *m, cluster *c, const watch_opts *o, watch **ret)
{
	watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->c = c;
	w->event = e;
	if (m)
		kube_client_describe(kube_multi_client(m), w->api, sizeof(w->api));
	else /* a replay (tests) */
		snprintf(w->api, sizeof(w->api), "the API server");
	k8s_cluster_init(&w->objs);
	r = diag_open_buffer(&w->diag, w->diag_buf, sizeof(w->diag_buf));
	if (r < 0) {
		free(w);
		return r;
	}
	w->diag.bare = true;
	w->diag_open = true;
	static const kube_reflector_ops ops = { .list_begin = on_list_begin, .object = on_object,
	                                        .list_done = on_list_done, .note = on_note };
	for (int k = 0; k < CLUSTER_KINDS; k++) {
		char hint[256];
		snprintf(hint, sizeof(hint), "forbidden: preemptd's ClusterRole must allow list and watch on %s "
		         "(deploy/preemptd.yaml)", cluster_kind_name((cluster_kind)k));
		kube_reflector_opts ro = {
			.path = watched[k].path,
			.field_selector = watched[k].selector,
			.what = watched[k].what,
			.forbidden_hint = hint,
			.page_limit = o ? o->page_limit : 0,
			.watch_timeout_usec = o ? o->watch_timeout_usec : 0,
			.retry_max_usec = o ? o->retry_max_usec : 0,
		};
		w->src[k] = (struct source){ .w = w, .kind = (cluster_kind)k };
		r = kube_reflector_new(e, m, &ro, &ops, &w->src[k], &w->src[k].r);
		if (r < 0) {
			watch_free(w);
			return r;
		}
	}
	*ret = w;
	return 0;
}

watch *watch_free(watch *w)
{
	if (!w)
		return NULL;
	for (int k = 0; k < CLUSTER_KINDS; k++)
		kube_reflector_free(w->src[k].r);
	if (w->diag_open)
		diag_close_buffer(&w->diag);
	k8s_cluster_done(&w->objs);
	karena_free(&w->arena);
	free(w);
	return NULL;
}

void watch_start(watch *w)
{
	for (int k = 0; k < CLUSTER_PODS; k++)
		kube_reflector_start(w->src[k].r);
}

bool watch_synced(const watch *w)
{
	for (int k = 0; k < CLUSTER_KINDS; k++)
		if (!kube_reflector_synced(w->src[k].r))
			return false;
	return true;
}

int watch_replay(watch *w, cluster_kind k, const void *buf, size_t len)
{
	if ((unsigned)k >= CLUSTER_KINDS)
		return -EINVAL;
	return kube_reflector_replay(w->src[k].r, buf, len);
}

int watch_replay_end(watch *w, cluster_kind k, long status)
{
	if ((unsigned)k >= CLUSTER_KINDS)
		return -EINVAL;
	return kube_reflector_replay_end(w->src[k].r, status);
}

const char *watch_replay_request(const watch *w, cluster_kind k)
{
	if ((unsigned)k >= CLUSTER_KINDS)
		return NULL;
	return kube_reflector_replay_request(w->src[k].r);
}

void watch_get_stats(const watch *w, watch_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (int k = 0; k < CLUSTER_KINDS; k++) {
		kube_reflector_stats st;
		kube_reflector_get_stats(w->src[k].r, &st);
		ret->lists[k] = st.lists;
		ret->restarts[k] = st.failures + st.relists_gone;
		ret->events[k] = st.events;
		ret->refused[k] = w->src[k].refused;
	}
}
