/* SPDX-License-Identifier: MIT */
/*
 * Over ~600 lines on purpose: delivering one spool record is one ordered sequence (Event,
 * condition patch, DELETE or Eviction) with one retry state; the HTTP calls themselves are kube/'s.
 */
#include "reporter.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "backoff.h"
#include "k8s_body.h"
#include "kagent-log.h"
#include "outcome.h"
#include "spool.h"

#define RECORD_MAX (64 * 1024)

typedef enum step {
	STEP_EVENT,
	STEP_CONDITION,
	STEP_DELETE, /* or the Eviction API */
	STEP_NODE_EVENT,
	STEP_NODE_CONDITION, /* evictd's own condition on the Node's status: nodecond's to post */
	STEP_DONE,
} step;

struct reporter {
	sd_event *event;
	kube_multi *multi;
	nodecond *conditions;
	char *dir, *node;
	bool eviction_api;
	uint64_t retry_max_usec, backoff_usec;
	sd_event_source *inotify, *timer, *defer;
	int dirfd;
	int outcome_fd; /* "<spool-dir>.outcome": refusals told back to evictd (outcome.h) */

	/* the record in progress */
	char name[256];
	yajl_val rec;
	step step;
	kube_call *call;
	bool waiting; /* backoff timer armed */
	bool word;    /* a condition record is with nodecond */
};

static void next(reporter *r);

/* Spool records (reporter.h) are small flat JSON objects of our own, read whole. */
static yajl_val ytree_get(yajl_val v, const char *a, const char *b, const char *c)
{
	const char *path[] = { a, b, c, NULL };

	if (!v || !a)
		return v;
	return yajl_tree_get(v, path, yajl_t_any);
}

static const char *ytree_str(yajl_val v, const char *a, const char *b, const char *c)
{
	return YAJL_GET_STRING(ytree_get(v, a, b, c));
}

static const char *rstr(const reporter *r, const char *key)
{
	const char *s = ytree_str(r->rec, key, NULL, NULL);
	return s ? s : "";
}

static int64_t rint64(const reporter *r, const char *key)
{
	yajl_val v = ytree_get(r->rec, key, NULL, NULL);
	return YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
}

static const char *step_name(const reporter *r, step s)
{
	switch (s) {
	case STEP_EVENT:
		return "event";
	case STEP_CONDITION:
		return "condition";
	case STEP_DELETE:
		return r->eviction_api ? "eviction" : "delete";
	case STEP_NODE_EVENT:
		return "node-event";
	case STEP_NODE_CONDITION:
		return "node-condition";
	default:
		return "done";
	}
}

/* --- spool files ---------------------------------------------------------------------------- */

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The oldest record's name into out; returns the number of records, or -errno. */
static int oldest(reporter *r, char *out, size_t size)
{
	int fd = openat(r->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int n = 0;

	out[0] = '\0';
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || l >= size || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		n++;
		const char *nm = de->d_name;
		if (!out[0] || name_cmp(&nm, &(const char *){ out }) < 0)
			snprintf(out, size, "%s", de->d_name);
	}
	closedir(d);
	return n;
}

static yajl_val load_record(reporter *r, const char *name)
{
	char buf[RECORD_MAX + 1], perr[256];
	struct stat st;
	ssize_t n;
	int fd = openat(r->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	yajl_val v;

	if (fd < 0)
		return NULL;
	/* only evictd (root) writes the spool: anything else is not believed */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		log_msg(LOG_WARNING, "Spool record %s is not a root-owned regular file: dropped", name);
		(void)unlinkat(r->dirfd, name, 0);
		return NULL;
	}
	n = read(fd, buf, RECORD_MAX);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	v = yajl_tree_parse(buf, perr, sizeof(perr));
	if (!v || !YAJL_IS_OBJECT(v) || !ytree_str(v, "kind", NULL, NULL)) {
		log_msg(LOG_WARNING, "Spool record %s is not a valid record (%s): dropped", name, v ? "no kind" : "bad JSON");
		yajl_tree_free(v);
		(void)unlinkat(r->dirfd, name, 0);
		return NULL;
	}
	return v;
}

static void finish_record(reporter *r, const char *why)
{
	log_entry e;

	log_entry_init(&e, LOG_INFO, MSGID_KUBE_REPORTED);
	if (strcmp(rstr(r, "kind"), "eviction") == 0) {
		log_entry_add(&e, FIELD_POD, "%s/%s", rstr(r, "namespace"), rstr(r, "name"));
		log_entry_add(&e, FIELD_POD_UID, "%s", rstr(r, "uid"));
		log_entry_add(&e, FIELD_NAMESPACE, "%s", rstr(r, "namespace"));
	}
	log_entry_add(&e, FIELD_SIGNAL, "%s", rstr(r, "signal"));
	log_entry_add(&e, FIELD_FILE, "%s", r->name);
	log_entry_send(&e, "Eviction report %s: %s", r->name, why);
	(void)unlinkat(r->dirfd, r->name, 0);
	yajl_tree_free(r->rec);
	r->rec = NULL;
	r->name[0] = '\0';
	r->backoff_usec = 0;
}

/* --- request bodies (kube/k8s_body) ---------------------------------------------------------- */

static int64_t now_ns(void)
{
	return (int64_t)time(NULL) * 1000000000LL;
}

/* A stable event name: the record's start (its file name, in usec) makes it, so that a report
 * retried after a restart meets its own Event (409) instead of making a second one. */
static void event_name(const reporter *r, const char *obj, char *buf, size_t size)
{
	const char *ts = strrchr(r->name, '/') ? strrchr(r->name, '/') + 1 : r->name;
	unsigned long long usec = strtoull(ts, NULL, 10);
	k8s_body_event_name(obj, (int64_t)(usec * 1000ULL), buf, size);
}

/* The kubelet's annotations on its Evicted event: the containers over their request, and usage. */
static void offenders(const reporter *r, char *names, size_t names_size, char *usage, size_t usage_size)
{
	yajl_val cs = ytree_get(r->rec, "containers", NULL, NULL);
	size_t ln = 0, lu = 0;
	char q[32];

	names[0] = usage[0] = '\0';
	for (size_t i = 0; YAJL_IS_ARRAY(cs) && i < cs->u.array.len; i++) {
		yajl_val c = cs->u.array.values[i];
		yajl_val u = ytree_get(c, "usage", NULL, NULL), rq = ytree_get(c, "request", NULL, NULL);
		const char *cn = ytree_str(c, "name", NULL, NULL);
		int64_t uv = YAJL_IS_INTEGER(u) ? YAJL_GET_INTEGER(u) : -1;
		int64_t rv = YAJL_IS_INTEGER(rq) && YAJL_GET_INTEGER(rq) > 0 ? YAJL_GET_INTEGER(rq) : 0;
		if (!cn || uv < 0 || uv <= rv || ln >= names_size || lu >= usage_size)
			continue;
		ln += (size_t)snprintf(names + ln, names_size - ln, "%s%s", ln ? "," : "", cn);
		spool_quantity(uv, q, sizeof(q));
		lu += (size_t)snprintf(usage + lu, usage_size - lu, "%s%s", lu ? "," : "", q);
	}
}

static char *body_event(reporter *r, bool node)
{
	char name[300], now[40], names[1024], usage[1024];
	const char *when = rstr(r, "startedAt");
	const char *annotations[] = { "offending_containers", names, "offending_containers_usage", usage,
		                      "starved_resource", rstr(r, "resource"), NULL };

	k8s_body_time(now_ns(), now, sizeof(now));
	event_name(r, node ? r->node : rstr(r, "name"), name, sizeof(name));
	if (!node)
		offenders(r, names, sizeof(names), usage, sizeof(usage));
	k8s_body_core_event e = {
		.ns = node ? "default" : rstr(r, "namespace"),
		.name = name,
		.object_kind = node ? "Node" : "Pod",
		.object_name = node ? r->node : rstr(r, "name"),
		.object_ns = node ? NULL : rstr(r, "namespace"),
		.object_uid = node ? r->node : rstr(r, "uid"), /* the kubelet's node reference uses the name */
		.type = "Warning",
		.reason = node ? "EvictionThresholdMet" : "Evicted",
		.message = rstr(r, "message"),
		.component = "evictd",
		.host = r->node,
		.first_time = *when ? when : now,
		.last_time = *when ? when : now,
		.annotations = node ? NULL : annotations,
	};
	return k8s_body_core_event_v1(&e);
}

static char *body_condition(reporter *r)
{
	k8s_body_condition c = { "DisruptionTarget", "True", "TerminationByKubelet", rstr(r, "message"), now_ns() };
	return k8s_body_pod_status_patch(rstr(r, "uid"), &c, false, NULL);
}

/* 0 would be a forced deletion; the kubelet's immediate eviction uses 1 s as well */
static int64_t grace_period(const reporter *r)
{
	int64_t g = rint64(r, "gracePeriodSeconds");
	return g < 1 ? 1 : g;
}

/* --- steps ---------------------------------------------------------------------------------- */

typedef enum verdict { V_OK, V_SKIP_REST, V_REFUSED, V_RETRY } verdict;

static verdict classify(const reporter *r, step s, int error, long status)
{
	if (error < 0 || status == 0)
		return V_RETRY;
	if (status >= 200 && status < 300)
		return V_OK;
	if (status == 409 && (s == STEP_EVENT || s == STEP_NODE_EVENT))
		return V_OK; /* AlreadyExists: reported before a restart */
	if (status == 404 || (status == 409 && (s == STEP_CONDITION || s == STEP_DELETE)))
		return s == STEP_EVENT ? V_REFUSED : V_SKIP_REST; /* gone, or another pod by that name */
	if (status == 429 && s == STEP_DELETE && r->eviction_api)
		return V_SKIP_REST; /* a PodDisruptionBudget said no; the local kill goes on */
	if (status == 401 || status == 429 || status >= 500)
		return V_RETRY;
	return V_REFUSED; /* 400, 403, 422: will not get better by retrying */
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	reporter *r = userdata;
	(void)s;
	(void)usec;
	r->waiting = false;
	next(r);
	return 0;
}

/*
 * The API server finally refused the eviction (eviction-api = eviction: a PodDisruptionBudget's
 * 429, or a refusal retrying will not change): evictd hears it, so that the pod is not killed again
 * (its containers may restart) and the next pod is chosen while pressure lasts.
 */
static void tell_refused(reporter *r, long status)
{
	int q = r->outcome_fd < 0 ? -EBADF : outcome_write(r->outcome_fd, rstr(r, "uid"), (int)status);
	if (q < 0)
		log_msg(LOG_WARNING, "Refusal of the eviction of %s/%s not passed on to evictd: %s", rstr(r, "namespace"),
		        rstr(r, "name"), strerror(-q));
}

static void step_done(kube_call *call, int error, long status, const char *body, size_t len, const char *msg,
                      void *userdata)
{
	reporter *r = userdata;
	verdict v = classify(r, r->step, error, status);
	const char *sn = step_name(r, r->step);
	log_entry e;

	(void)call;
	(void)len;
	r->call = NULL;
	log_entry_init(&e, v == V_OK ? LOG_INFO : v == V_RETRY ? LOG_WARNING : LOG_NOTICE, MSGID_KUBE_API_CALL);
	log_entry_add(&e, FIELD_KUBE_STEP, "%s", sn);
	log_entry_add(&e, FIELD_KUBE_STATUS, "%ld", error < 0 ? 0L : status);
	if (r->step != STEP_NODE_EVENT && r->step != STEP_NODE_CONDITION) {
		log_entry_add(&e, FIELD_POD, "%s/%s", rstr(r, "namespace"), rstr(r, "name"));
		log_entry_add(&e, FIELD_POD_UID, "%s", rstr(r, "uid"));
		log_entry_add(&e, FIELD_NAMESPACE, "%s", rstr(r, "namespace"));
		log_entry_add(&e, FIELD_PRIORITY, "%" PRId64, rint64(r, "priority"));
	}
	log_entry_add(&e, FIELD_SIGNAL, "%s", rstr(r, "signal"));
	char what[400];
	if (error < 0)
		snprintf(what, sizeof(what), "%s", msg && *msg ? msg : strerror(-error));
	else {
		/* the Status message of an error answer, else nothing */
		char perr[64];
		yajl_val st = status >= 300 ? yajl_tree_parse(body, perr, sizeof(perr)) : NULL;
		const char *m = ytree_str(st, "message", NULL, NULL);
		snprintf(what, sizeof(what), "HTTP %ld%s%.300s", status, m ? ": " : "", m ? m : "");
		yajl_tree_free(st);
	}
	log_entry_add(&e, FIELD_REASON, "%s", what);
	if (r->step == STEP_NODE_EVENT)
		log_entry_send(&e, "Node event EvictionThresholdMet (%s): %s%s", rstr(r, "signal"), what,
		               v == V_RETRY ? "; will retry" : "");
	else if (r->step == STEP_DELETE && r->eviction_api && (v == V_REFUSED || (v == V_SKIP_REST && status == 429)))
		log_entry_send(&e, "Eviction API refused pod %s/%s (%s): evictd is told, the pod is not killed again "
		               "and keeps no DisruptionTarget condition", rstr(r, "namespace"), rstr(r, "name"),
		               status == 429 ? "429, a PodDisruptionBudget" : what);
	else
		log_entry_send(&e, "Pod %s/%s %s: %s%s", rstr(r, "namespace"), rstr(r, "name"), sn, what,
		               v == V_RETRY ? "; will retry" : v == V_SKIP_REST ? "; nothing more to report" : "");

	switch (v) {
	case V_RETRY: {
		uint64_t now, delay = backoff_next(&r->backoff_usec, r->retry_max_usec);
		r->waiting = true;
		if (sd_event_now(r->event, CLOCK_MONOTONIC, &now) >= 0 &&
		    sd_event_source_set_time(r->timer, now + delay) >= 0)
			(void)sd_event_source_set_enabled(r->timer, SD_EVENT_ONESHOT);
		return;
	}
	case V_SKIP_REST:
		if (r->step == STEP_DELETE && r->eviction_api && status == 429) {
			tell_refused(r, status);
			finish_record(r, "refused by the API server (a PodDisruptionBudget); evictd told");
		} else
			finish_record(r, "reported (the pod is gone or was replaced)");
		break;
	case V_OK:
	case V_REFUSED:
		r->backoff_usec = 0;
		if (r->eviction_api) {
			/*
			 * The Eviction API first: on success the API server sets DisruptionTarget
			 * (EvictionByEvictionAPI) and deletes the pod, then the Event tells why; on a
			 * refusal no condition and no Event claim an eviction of a pod that keeps running.
			 */
			if (r->step == STEP_DELETE && v == V_REFUSED) {
				tell_refused(r, status);
				finish_record(r, "refused by the API server; evictd told");
				break;
			}
			r->step = r->step == STEP_DELETE ? STEP_EVENT : STEP_DONE;
			if (r->step == STEP_DONE)
				finish_record(r, "reported");
			break;
		}
		if (r->step == STEP_EVENT)
			r->step = STEP_CONDITION;
		else if (r->step == STEP_CONDITION)
			r->step = STEP_DELETE;
		else
			r->step = STEP_DONE;
		if (r->step == STEP_DONE)
			finish_record(r, "reported");
		break;
	}
	next(r);
}

static void start_step(reporter *r)
{
	char path[1024], *ns = NULL, *nm = NULL;
	const char *method = "POST", *ctype = "application/json";
	char *body = NULL;
	int q;

	if (r->step == STEP_NODE_EVENT) {
		snprintf(path, sizeof(path), "/api/v1/namespaces/default/events");
		body = body_event(r, true);
	} else {
		ns = kube_escape(rstr(r, "namespace"));
		nm = kube_escape(rstr(r, "name"));
		if (!ns || !nm) {
			free(ns);
			free(nm);
			return;
		}
		switch (r->step) {
		case STEP_EVENT:
			snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns);
			body = body_event(r, false);
			break;
		case STEP_CONDITION:
			snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/status", ns, nm);
			method = "PATCH";
			ctype = "application/strategic-merge-patch+json";
			body = body_condition(r);
			break;
		default:
			if (r->eviction_api) {
				snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/eviction", ns, nm);
				body = k8s_body_eviction(rstr(r, "namespace"), rstr(r, "name"), rstr(r, "uid"), grace_period(r));
			} else {
				snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, nm);
				method = "DELETE";
				body = k8s_body_delete_options(rstr(r, "uid"), grace_period(r));
			}
			break;
		}
		free(ns);
		free(nm);
	}
	if (!body) {
		char why[128];
		snprintf(why, sizeof(why), "dropped: the request could not be built: %s", strerror(errno));
		finish_record(r, why);
		return;
	}
	kube_call_opts o = { .method = method, .path = path, .body = body, .content_type = ctype,
	                     .max_body = 256 * 1024, .done = step_done, .userdata = r };
	q = kube_multi_start(r->multi, &o, &r->call);
	free(body);
	if (q < 0) {
		log_msg(LOG_ERR, "Cannot start an API call: %s", strerror(-q));
		r->waiting = true;
		uint64_t now;
		if (sd_event_now(r->event, CLOCK_MONOTONIC, &now) >= 0 &&
		    sd_event_source_set_time(r->timer, now + backoff_next(&r->backoff_usec, r->retry_max_usec)) >= 0)
			(void)sd_event_source_set_enabled(r->timer, SD_EVENT_ONESHOT);
	}
}

static void word_done(long refused, void *userdata)
{
	reporter *r = userdata;
	char why[64];
	r->word = false;
	if (refused)
		snprintf(why, sizeof(why), "refused by the API server (HTTP %ld)", refused);
	finish_record(r, refused ? why : "reported");
	next(r);
}

/* Whether a record of the spool other than the one in progress matches. */
static bool any_record(reporter *r, bool (*match)(const reporter *r, const char *name))
{
	int fd = openat(r->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	bool found = false;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (!found && (de = readdir(d)))
		found = de->d_name[0] != '.' && strcmp(de->d_name, r->name) != 0 && match(r, de->d_name);
	closedir(d);
	return found;
}

/* A newer record of the same condition: the one in progress is no longer evictd's word. */
static bool newer_of_same_condition(const reporter *r, const char *name)
{
	char suffix[128];
	snprintf(suffix, sizeof(suffix), "-cond-%s.json", rstr(r, "type"));
	size_t l = strlen(name), ls = strlen(suffix);
	return l > ls && strcmp(name + l - ls, suffix) == 0 && strcmp(name, r->name) > 0;
}

static bool condition_record(const reporter *r, const char *name)
{
	(void)r;
	return strstr(name, "-cond-") != NULL;
}

/* Hands the condition record to nodecond, the one writer of evictd's Node conditions. */
static void hand_word(reporter *r)
{
	if (any_record(r, newer_of_same_condition)) {
		finish_record(r, "superseded by a newer record of the same condition");
		next(r);
		return;
	}
	nodecond_word w = { .type = rstr(r, "type"), .status = rstr(r, "status"), .reason = rstr(r, "reason"),
	                    .message = rstr(r, "message"), .at = rstr(r, "startedAt") };
	r->word = true;
	if (nodecond_take_word(r->conditions, &w, word_done, r) < 0) {
		r->word = false;
		finish_record(r, "not reportable (not one of evictd's condition types or statuses)");
		next(r);
	}
}

/* Condition records wait in the spool, besides the one in progress (nodecond.h). */
static bool words_pending(void *userdata)
{
	return any_record(userdata, condition_record);
}

/* Takes the oldest record when idle, and runs its next step. */
static void next(reporter *r)
{
	if (r->call || r->waiting || r->word)
		return;
	while (!r->rec) {
		char name[256];
		if (oldest(r, name, sizeof(name)) <= 0)
			return;
		snprintf(r->name, sizeof(r->name), "%s", name);
		r->rec = load_record(r, name);
		if (!r->rec)
			continue;
		const char *kind = rstr(r, "kind");
		if (strcmp(kind, "threshold") == 0)
			r->step = STEP_NODE_EVENT;
		else if (strcmp(kind, "condition") == 0 && strncmp(rstr(r, "type"), "Evictd", 6) == 0) {
			r->step = STEP_NODE_CONDITION; /* never one of the kubelet's own types */
			hand_word(r);
			return;
		}
		else if (strcmp(kind, "eviction") == 0 && *rstr(r, "uid") && *rstr(r, "name") && *rstr(r, "namespace"))
			r->step = r->eviction_api ? STEP_DELETE : STEP_EVENT;
		else {
			/* a pod whose metadata never arrived has no namespace: nothing to tell the API */
			finish_record(r, "not reportable (no namespace/name: the pod's metadata never arrived)");
			continue;
		}
	}
	start_step(r);
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
	(void)s;
	(void)ev;
	next(userdata);
	return 0;
}

static int on_defer(sd_event_source *s, void *userdata)
{
	(void)s;
	next(userdata);
	return 0;
}

int reporter_new(sd_event *e, kube_multi *m, nodecond *conditions, const reporter_opts *o, reporter **ret)
{
	reporter *r = calloc(1, sizeof(*r));
	int q;

	if (!r)
		return -ENOMEM;
	r->dirfd = r->outcome_fd = -1;
	r->event = sd_event_ref(e);
	r->multi = m;
	r->conditions = conditions;
	r->eviction_api = o->eviction_api;
	r->retry_max_usec = o->retry_max_usec ? o->retry_max_usec : 30000000ULL;
	if (!(r->dir = strdup(o->spool_dir)) || !(r->node = strdup(o->node_name))) {
		reporter_free(r);
		return -ENOMEM;
	}
	if (mkdir(r->dir, 0755) < 0 && errno != EEXIST) {
		q = -errno;
		reporter_free(r);
		return q;
	}
	r->dirfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->dirfd < 0) {
		q = -errno;
		reporter_free(r);
		return q;
	}
	if (r->eviction_api) {
		char od[4096];
		if (snprintf(od, sizeof(od), "%s%s", r->dir, OUTCOME_DIR_SUFFIX) < (int)sizeof(od) &&
		    (mkdir(od, 0755) == 0 || errno == EEXIST))
			r->outcome_fd = open(od, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (r->outcome_fd < 0)
			log_msg(LOG_WARNING, "Outcome directory %s%s unavailable: refused evictions cannot be told to evictd: %s",
			        r->dir, OUTCOME_DIR_SUFFIX, strerror(errno));
	}
	q = sd_event_add_inotify(e, &r->inotify, r->dir, IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR, on_inotify, r);
	if (q >= 0)
		q = sd_event_add_time(e, &r->timer, CLOCK_MONOTONIC, UINT64_MAX, 0, on_retry, r);
	if (q >= 0)
		q = sd_event_add_defer(e, &r->defer, on_defer, r); /* the backlog left by a previous run */
	if (q < 0) {
		reporter_free(r);
		return q;
	}
	(void)sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
	nodecond_set_words_pending(conditions, words_pending, r);
	*ret = r;
	return 0;
}

reporter *reporter_free(reporter *r)
{
	if (!r)
		return NULL;
	if (r->call)
		kube_call_cancel(r->multi, r->call);
	sd_event_source_disable_unref(r->inotify);
	sd_event_source_disable_unref(r->timer);
	sd_event_source_disable_unref(r->defer);
	sd_event_unref(r->event);
	yajl_tree_free(r->rec);
	if (r->dirfd >= 0)
		close(r->dirfd);
	if (r->outcome_fd >= 0)
		close(r->outcome_fd);
	free(r->dir);
	free(r->node);
	free(r);
	return NULL;
}

void reporter_kick(reporter *r)
{
	next(r);
}

unsigned reporter_pending(reporter *r)
{
	char name[256];
	int n = oldest(r, name, sizeof(name));
	return n > 0 ? (unsigned)n : 0;
}
