/* SPDX-License-Identifier: MIT */
#include "podwatch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kagent-log.h"
#include "kpod.h"
#include "log.h"
#include "reflector.h"
#include "grow.h"

struct podwatch {
	descdir *dir;
	char *node;
	kube_reflector *reflector;
	bool listing;
	/* uids seen by the list in progress (prune afterwards), sorted at the end */
	char **seen;
	size_t n_seen, cap_seen;
	karena arena; /* one pod's decoded strings, reset after each */
};

static void seen_clear(podwatch *w)
{
	for (size_t i = 0; i < w->n_seen; i++)
		free(w->seen[i]);
	w->n_seen = 0;
}

static int seen_add(podwatch *w, const char *uid)
{
	if (GROW_ARRAY_FROM(&w->seen, &w->cap_seen, w->n_seen + 1, 128) < 0)
		return -ENOMEM;
	if (!(w->seen[w->n_seen] = strdup(uid)))
		return -ENOMEM;
	w->n_seen++;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool seen_has(const char *uid, void *userdata)
{
	podwatch *w = userdata;
	/* no pods listed: seen is NULL, which bsearch() may not be given */
	return w->n_seen && bsearch(&uid, w->seen, w->n_seen, sizeof(*w->seen), str_cmp) != NULL;
}

static void log_api(int prio, const char *verb, const char *path, long status, int error, const char *msg)
{
	log_entry e;

	log_entry_init(&e, prio, MSGID_KUBE_API_CALL);
	log_entry_add(&e, FIELD_KUBE_VERB, "%s", verb);
	log_entry_add(&e, FIELD_KUBE_PATH, "%s", path);
	log_entry_add(&e, FIELD_KUBE_STATUS, "%ld", status);
	if (error)
		log_entry_add(&e, FIELD_REASON, "%s", msg && *msg ? msg : strerror(-error));
	if (error)
		log_entry_send(&e, "%s %s failed: %s", verb, path, msg && *msg ? msg : strerror(-error));
	else
		log_entry_send(&e, "%s %s: HTTP %ld%s%.300s", verb, path, status, msg && *msg ? ": " : "", msg ? msg : "");
}

static int apply_pod(podwatch *w, const kval *obj, const char *source, bool deleted)
{
	char err[512], text[16384];
	kpod *p = malloc(sizeof(*p));
	int r, n;

	if (!p)
		return -ENOMEM;
	r = kpod_decode(obj, &w->arena, source, p, err, sizeof(err));
	karena_reset(&w->arena);
	if (r == -ENOMEM) {
		free(p);
		return r;
	}
	if (r == -EMEDIUMTYPE)
		snprintf(err, sizeof(err), "kind \"%.40s\" is not Pod", kval_str(kval_get(obj, "kind")));
	if (r < 0) {
		log_msg(LOG_WARNING, "Ignoring a pod from the API server: %s", err);
		free(p);
		return 0;
	}
	if (w->listing)
		(void)seen_add(w, p->uid);
	if (deleted) {
		if (descdir_remove(w->dir, p->uid) > 0) {
			log_entry e;
			log_entry_init(&e, LOG_INFO, MSGID_KUBE_POD_REMOVED);
			log_entry_add(&e, FIELD_POD, "%s/%s", p->namespace_, p->name);
			log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
			log_entry_send(&e, "Pod %s/%s deleted: descriptor removed", p->namespace_, p->name);
		}
		free(p);
		return 0;
	}
	n = kpod_descriptor(p, text, sizeof(text));
	if (n < 0) {
		log_msg(LOG_WARNING, "Pod %s/%s: descriptor too large, skipped", p->namespace_, p->name);
		free(p);
		return 0;
	}
	r = descdir_put(w->dir, p->uid, text, (size_t)n);
	if (r < 0)
		log_msg(LOG_ERR, "Pod %s/%s: cannot write its descriptor: %s", p->namespace_, p->name, strerror(-r));
	else if (r > 0) {
		log_entry e;
		log_entry_init(&e, LOG_DEBUG, MSGID_KUBE_POD_UPDATED);
		log_entry_add(&e, FIELD_POD, "%s/%s", p->namespace_, p->name);
		log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
		log_entry_add(&e, FIELD_NAMESPACE, "%s", p->namespace_);
		log_entry_add(&e, FIELD_PRIORITY, "%d", p->priority);
		log_entry_send(&e, "Pod %s/%s: descriptor written (priority %d%s)", p->namespace_, p->name, p->priority,
		               kpod_critical(p) ? ", critical" : "");
	}
	free(p);
	return 0;
}

/* --- the reflector's calls ------------------------------------------------------------------ */

static void on_list_begin(void *userdata)
{
	podwatch *w = userdata;

	seen_clear(w);
	w->listing = true;
}

static int on_object(void *userdata, kube_event_type type, const kval *obj, const char *source)
{
	return apply_pod(userdata, obj, source, type == KUBE_DELETED);
}

static void on_list_done(void *userdata, const char *rv)
{
	podwatch *w = userdata;

	w->listing = false;
	if (w->n_seen) /* none: seen is NULL, which qsort() may not be given */
		qsort(w->seen, w->n_seen, sizeof(*w->seen), str_cmp);
	int pruned = descdir_prune(w->dir, seen_has, w);
	log_msg(LOG_INFO, "Listed %zu pod(s) on node %s at resourceVersion %s%s", w->n_seen, w->node, rv,
	        pruned > 0 ? " (stale descriptors removed)" : "");
	seen_clear(w);
}

static void on_note(void *userdata, const kube_reflector_note *n)
{
	(void)userdata;
	if (n->verb)
		log_api(n->priority, n->verb, "pods", n->status, n->error, n->text);
	else
		log_msg(n->priority, "%s", n->text);
}

int podwatch_new(sd_event *e, kube_multi *m, descdir *dir, const podwatch_opts *o, podwatch **ret)
{
	podwatch *w = calloc(1, sizeof(*w));
	char sel[300];
	int r;

	if (!w)
		return -ENOMEM;
	w->dir = dir;
	snprintf(sel, sizeof(sel), "spec.nodeName=%s", o->node_name);
	if (!(w->node = strdup(o->node_name))) {
		podwatch_free(w);
		return -ENOMEM;
	}
	kube_reflector_opts ro = {
		.path = "/api/v1/pods",
		.field_selector = sel,
		.what = "pod",
		.forbidden_hint = "forbidden: the node authorizer allows only spec.nodeName=<this node>; is node-name right?",
		.page_limit = o->page_limit,
		.watch_timeout_usec = o->watch_timeout_usec,
		.retry_max_usec = o->retry_max_usec,
	};
	static const kube_reflector_ops ops = { .list_begin = on_list_begin, .object = on_object,
	                                        .list_done = on_list_done, .note = on_note };
	r = kube_reflector_new(e, m, &ro, &ops, w, &w->reflector);
	if (r < 0) {
		podwatch_free(w);
		return r;
	}
	*ret = w;
	return 0;
}

podwatch *podwatch_free(podwatch *w)
{
	if (!w)
		return NULL;
	kube_reflector_free(w->reflector);
	seen_clear(w);
	free(w->seen);
	karena_free(&w->arena);
	free(w->node);
	free(w);
	return NULL;
}

int podwatch_start(podwatch *w)
{
	kube_reflector_start(w->reflector);
	return 0;
}

unsigned podwatch_count(const podwatch *w)
{
	return descdir_count(w->dir);
}
