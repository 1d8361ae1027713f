/* SPDX-License-Identifier: MIT */
/*
 * evictd's whole conversation with the container runtime, and why it is long: finding the endpoint
 * and waiting for its socket, Version and Status (the sandbox image), full and light listings with
 * their failures, image removals with their refusals, and a journal entry for each that a user
 * reads. What node-level reclaim decides from them is decide/'s (noderec.h, noderec-policy.h):
 * here its inputs are gathered, its outcome recorded and logged, and the one call it names made.
 */
#include "runtime.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "cri.h"
#include "image-remove.h"
#include "jsonread.h"
#include "kubelet-watch.h"
#include "log.h"
#include "noderec-policy.h"
#include "noderec-state.h"
#include "runtime-disk.h"
#include "clock.h"

struct runtime_state {
	sd_event *event;
	const evictd_config *cfg;
	runtime_changed_fn changed;
	void *userdata;
	cri_client *client;       /* NULL: no runtime */
	char socket[108];
	char why_off[PATH_MAX + 128];
	char runtime[128];        /* "containerd 1.6.20 (CRI v1)" once Version answered */
	/* The socket(s) awaited (a runtime started after evictd): the endpoint's while it does not
	 * exist, or containerd's and CRI-O's while neither does and nothing names one. */
	kubelet_watch *socket_watch[2];
	bool awaiting_default;    /* no endpoint named and neither default socket there */
	bool appeared;            /* the awaited socket appeared: the next Version says it turns on */
	sd_event_source *ask_again; /* Version once more, a moment after the socket appeared */

	cri_listing *listing;     /* the latest, its log sizes measured */
	uint64_t listing_usec;    /* when it arrived; 0: none usable (never, or a removal since) */
	bool refreshing;
	uint64_t failed_usec;     /* the last listing failed then: no hold, no retry for a TTL */
	bool failure_logged;
	disk_layout layout;
	char imagefs[256];

	image_record *images;     /* sorted by id: what every listing saw */
	size_t n_images;

	image_removal *removal;
	evictd_signal removal_signal;
	int64_t removal_before;
	bool removal_done;        /* the result waits for runtime_observe to log it */
	image_removal_result result;

	noderec_memory memory;    /* what node-level reclaim counted, decision after decision */
	char *state_dir;          /* where its pending windows and the images' history survive a restart
	                           * (noderec-state.h); NULL: nowhere */
	bool state_error_logged;
	bool covered_logged[_SIGNAL_MAX];
	bool expired_logged[_SIGNAL_MAX];
	uint64_t images_removed, bytes_removed;
	int64_t last_pending[_SIGNAL_MAX]; /* what the last decision counted */
	unsigned last_n_dead[_SIGNAL_MAX]; /* the dead containers behind it */
	runtime_label_notes label_notes; /* containers labelled for another pod than their sandbox's */
	bool sync_done;           /* runtime_list_now */
	int sync_error;

	/* the runtime's sandbox (pause) image, never removed: what Status says, else any ".../pause" */
	char *sandbox_image;      /* NULL: not said */
	bool sandbox_asking;      /* Status in flight: no removal before it answers */
	bool sandbox_failed;      /* the call failed: asked again after the next good listing */
	bool sandbox_unknown_logged;
	noderec_refusals refusals; /* images the runtime refused to remove, backed off */
	/* a removal only from a listing asked after it was wanted: a container started since the
	 * listing before keeps its image (the kubelet too lists right before it removes) */
	bool relist_wanted;       /* a removal waits for a new listing */
	bool refresh_for_removal; /* the listing in flight was asked for it */
	bool listing_for_removal; /* the current listing was; consumed by the removal it allows */
	bool kept_logged[_SIGNAL_MAX];
	/* images' use asked between disk episodes (ListImages + ListContainers only, as the kubelet's
	 * image manager does): a container that comes and goes between two listings marks its image */
	sd_event_source *usage_timer; /* NULL: image-usage-refresh = 0, or --once */
	bool usage_refreshing;        /* that light listing in flight */
	bool full_waits;              /* a full listing asked meanwhile: started when it ends */
};

static void resolve_endpoint(runtime_state *rt)
{
	const evictd_config *c = rt->cfg;
	const char *p = NULL;
	struct stat st;

	rt->socket[0] = '\0';
	rt->awaiting_default = false;
	if (c->runtime_endpoint) {
		if (!c->runtime_endpoint[0]) {
			snprintf(rt->why_off, sizeof(rt->why_off), "container-runtime-endpoint = none");
			return;
		}
		p = c->runtime_endpoint;
	} else if (c->kubelet.runtime_endpoint[0])
		p = c->kubelet.runtime_endpoint;
	else if (stat(CONTAINERD_SOCKET, &st) == 0)
		p = CONTAINERD_SOCKET;
	else if (stat(CRIO_SOCKET, &st) == 0)
		p = CRIO_SOCKET;
	if (!p) {
		snprintf(rt->why_off, sizeof(rt->why_off), "no runtime socket (neither %s nor %s exists, and no "
		         "container-runtime-endpoint or containerRuntimeEndpoint names one; both are waited for)",
		         CONTAINERD_SOCKET, CRIO_SOCKET);
		rt->awaiting_default = true;
		return;
	}
	snprintf(rt->socket, sizeof(rt->socket), "%.107s", p);
}

static void log_off(const runtime_state *rt)
{
	log_entry e;
	log_entry_init(&e, LOG_NOTICE, MSGID_RUNTIME_STATUS);
	log_entry_add(&e, FIELD_RUNTIME, "none");
	log_entry_add(&e, FIELD_REASON, "%s", rt->why_off);
	log_entry_send(&e, "No container runtime: %s. Not done: node-level reclaim before disk evictions (unused images, "
	               "dead containers) and ranking by writable layers; nodefs pressure ranks pods by "
	               "emptyDir volumes and logs, imagefs pressure by priority alone", rt->why_off);
}

static int client_open(runtime_state *rt)
{
	cri_client_opts o = { .timeout_usec = rt->cfg->runtime_timeout_usec };

	resolve_endpoint(rt);
	if (!rt->socket[0])
		return 0;
	int r = cri_client_new(rt->event, rt->socket, &o, &rt->client);
	if (r == -ENAMETOOLONG) {
		snprintf(rt->why_off, sizeof(rt->why_off), "the socket path %s is too long", rt->socket);
		rt->socket[0] = '\0';
		return 0;
	}
	return r;
}

static bool socket_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void on_socket_change(void *userdata, const char *why);

/*
 * At boot the runtime often starts after evictd: its socket is followed (kubelet-watch.c, the
 * kubelet configuration's follower) until it exists, and node-level reclaim turns on then rather
 * than at the next reload. Nothing is followed once it exists or when none is wanted.
 */
static void follow_sockets(runtime_state *rt)
{
	const char *want[2] = { NULL, NULL };

	if (rt->client && !socket_exists(rt->socket))
		want[0] = rt->socket;
	else if (!rt->client && rt->awaiting_default) {
		want[0] = CONTAINERD_SOCKET;
		want[1] = CRIO_SOCKET;
	}
	for (int i = 0; i < 2; i++) {
		if (want[i] && !rt->socket_watch[i] &&
		    kubelet_watch_new(rt->event, on_socket_change, rt, &rt->socket_watch[i]) < 0) {
			log_msg(LOG_WARNING, "Cannot follow %s: a container runtime started later is used after a reload only",
			        want[i]);
			continue;
		}
		kubelet_watch_set_subject(rt->socket_watch[i], "the container runtime's socket");
		kubelet_watch_arm(rt->socket_watch[i], want[i], NULL);
	}
}

static void on_version(int error, const char *text, void *userdata);
static void refresh(runtime_state *rt);

static void on_socket_change(void *userdata, const char *why)
{
	runtime_state *rt = userdata;

	(void)why; /* the follower says a name changed; whether the socket is there is looked at here */
	if (!rt->client) {
		if (!rt->awaiting_default || client_open(rt) < 0 || !rt->client)
			return;
	} else if (!socket_exists(rt->socket))
		return;
	/* A listing that failed before the socket existed says nothing of the runtime now there. */
	rt->failed_usec = 0;
	rt->appeared = true;
	rt->ask_again = sd_event_source_disable_unref(rt->ask_again); /* kept once fired: one retry per appearance */
	follow_sockets(rt);
	(void)cri_client_version(rt->client, on_version, rt);
	refresh(rt);
}

/* What an earlier evictd of this boot counted and saw carries over: ages go on from there. */
static int state_resume(runtime_state *rt)
{
	noderec_state st;
	int r = noderec_state_load(rt->state_dir, clock_mono_usec(), &st);
	if (r < 0)
		return r;
	memcpy(rt->memory.pending_since, st.pending_since, sizeof(rt->memory.pending_since));
	rt->images = st.images;
	rt->n_images = st.n_images;
	return 0;
}

static void state_save(runtime_state *rt)
{
	noderec_state st = { .images = rt->images, .n_images = rt->n_images };

	if (!rt->state_dir)
		return;
	memcpy(st.pending_since, rt->memory.pending_since, sizeof(st.pending_since));
	int r = noderec_state_save(rt->state_dir, &st);
	if (r < 0 && !rt->state_error_logged)
		log_msg(LOG_WARNING, "Cannot save node-level reclaim's state in %s/%s: %s; a restart now would count the "
		        "kubelet's container GC period and images' ages from the restart", rt->state_dir,
		        NODEREC_STATE_FILE, strerror(-r));
	else if (r == 0 && rt->state_error_logged)
		log_msg(LOG_INFO, "Node-level reclaim's state saved again in %s/%s", rt->state_dir, NODEREC_STATE_FILE);
	rt->state_error_logged = r < 0;
}

int runtime_state_new(sd_event *e, const evictd_config *cfg, const char *state_dir, runtime_changed_fn changed,
                      void *userdata, runtime_state **ret)
{
	runtime_state *rt = calloc(1, sizeof(*rt));
	int r;

	if (!rt)
		return -ENOMEM;
	rt->event = sd_event_ref(e);
	rt->cfg = cfg;
	rt->changed = changed;
	rt->userdata = userdata;
	if (state_dir && (!(rt->state_dir = strdup(state_dir)) || state_resume(rt) < 0)) {
		runtime_state_free(rt);
		return -ENOMEM;
	}
	r = client_open(rt);
	if (r < 0) {
		runtime_state_free(rt);
		return r;
	}
	follow_sockets(rt);
	*ret = rt;
	return 0;
}

static void images_forget(runtime_state *rt)
{
	noderec_records_free(rt->images, rt->n_images);
	rt->images = NULL;
	rt->n_images = 0;
}

static void listing_drop(runtime_state *rt)
{
	if (rt->listing) {
		cri_listing_free(rt->listing);
		free(rt->listing);
	}
	rt->listing = NULL;
	rt->listing_usec = 0;
}

static void client_close(runtime_state *rt)
{
	image_removal_cancel(rt->removal);
	rt->removal = NULL;
	rt->client = cri_client_free(rt->client); /* calls in flight end here, silently */
	rt->refreshing = false;
	rt->sandbox_asking = false;
	rt->refresh_for_removal = rt->listing_for_removal = rt->relist_wanted = false;
	rt->usage_refreshing = rt->full_waits = false;
}

runtime_state *runtime_state_free(runtime_state *rt)
{
	if (!rt)
		return NULL;
	client_close(rt);
	for (int i = 0; i < 2; i++)
		rt->socket_watch[i] = kubelet_watch_free(rt->socket_watch[i]);
	rt->ask_again = sd_event_source_disable_unref(rt->ask_again);
	rt->usage_timer = sd_event_source_disable_unref(rt->usage_timer);
	listing_drop(rt);
	images_forget(rt);
	runtime_label_notes_done(&rt->label_notes);
	noderec_refusals_done(&rt->refusals);
	free(rt->sandbox_image);
	free(rt->state_dir);
	sd_event_unref(rt->event);
	free(rt);
	return NULL;
}

bool runtime_enabled(const runtime_state *rt)
{
	return rt && rt->client;
}

const char *runtime_describe(const runtime_state *rt)
{
	return rt->client ? rt->socket : rt->why_off;
}

void runtime_counters(const runtime_state *rt, uint64_t *images_removed, uint64_t *bytes_removed,
                      int64_t pending[_SIGNAL_MAX], int *up)
{
	*images_removed = rt ? rt->images_removed : 0;
	*bytes_removed = rt ? rt->bytes_removed : 0;
	for (int s = 0; s < _SIGNAL_MAX; s++)
		pending[s] = rt ? rt->last_pending[s] : 0;
	*up = !rt || !rt->client ? -1 : rt->failed_usec ? 0 : 1;
}

/* --- listings ------------------------------------------------------------------------------ */

/* The images' history follows each listing, full or light: saved when it changed. */
static void images_update(runtime_state *rt, const cri_listing *l, uint64_t now)
{
	if (noderec_records_follow(&rt->images, &rt->n_images, l, now) > 0)
		state_save(rt);
}

static void ask_sandbox_image(runtime_state *rt);
static void usage_arm(runtime_state *rt, uint64_t now);

static void on_listing(int error, cri_listing *l, const char *why, void *userdata)
{
	runtime_state *rt = userdata;
	uint64_t now;

	rt->refreshing = false;
	(void)sd_event_now(rt->event, CLOCK_MONOTONIC, &now);
	if (error < 0)
		rt->refresh_for_removal = false;
	if (error < 0) {
		rt->failed_usec = now ? now : 1;
		rt->sync_error = error;
		if (!rt->failure_logged) {
			log_entry e;
			log_entry_init(&e, LOG_WARNING, MSGID_RUNTIME_STATUS);
			log_entry_add(&e, FIELD_ENDPOINT, "%s", rt->socket);
			log_entry_add(&e, FIELD_REASON, "%s", why);
			log_entry_send(&e, "The container runtime at %s did not answer usably: %s; disk pressure is met without "
			               "node-level reclaim or writable layers until it does (asked again in %" PRIu64 " s)",
			               rt->socket, why, RUNTIME_LISTING_TTL_USEC / 1000000);
			rt->failure_logged = true;
		}
	} else {
		if (rt->failure_logged)
			log_msg(LOG_INFO, "The container runtime at %s answers again", rt->socket);
		if (rt->sandbox_failed)
			ask_sandbox_image(rt);
		rt->failure_logged = false;
		rt->failed_usec = 0;
		rt->sync_error = 0;
		runtime_measure_logs(l);
		images_update(rt, l, now);
		usage_arm(rt, now); /* this listing told as much: the light one waits a whole period again */
		listing_drop(rt);
		rt->listing = l;
		rt->listing_usec = now ? now : 1;
		rt->listing_for_removal = rt->refresh_for_removal;
		disk_layout before = rt->layout;
		rt->layout = runtime_layout(l, rt->cfg->kubelet_root_dir, rt->imagefs, sizeof(rt->imagefs));
		if (rt->layout != before)
			log_msg(LOG_INFO, "Container runtime disk layout: %s (image filesystem %s, kubelet root %s)",
			        snapshot_disk_layout_name(rt->layout), rt->imagefs[0] ? rt->imagefs : "not named",
			        rt->cfg->kubelet_root_dir);
	}
	rt->sync_done = true;
	if (rt->changed)
		rt->changed(rt->userdata);
}

static void refresh(runtime_state *rt)
{
	if (!rt->client || rt->refreshing)
		return;
	/* the client runs one listing at a time: after the light one (a deadline away at most), and
	 * counted as refreshing meanwhile, so disk evictions are held for it as for any listing */
	if (rt->usage_refreshing || cri_client_list(rt->client, CRI_LIST_ALL, on_listing, rt) >= 0) {
		rt->full_waits = rt->usage_refreshing;
		rt->refreshing = true;
		rt->refresh_for_removal = rt->relist_wanted;
		rt->relist_wanted = false;
	}
}

static void on_usage_listing(int error, cri_listing *l, const char *why, void *userdata)
{
	runtime_state *rt = userdata;
	uint64_t now = 0;

	if (error == -ECANCELED)
		return;
	rt->usage_refreshing = false;
	(void)sd_event_now(rt->event, CLOCK_MONOTONIC, &now);
	if (error >= 0) {
		images_update(rt, l, now);
		cri_listing_free(l);
		free(l);
	} else
		/* said by the next full listing if it lasts; ages only grow meanwhile, nothing removed early */
		log_msg(LOG_DEBUG, "Images' use not refreshed from %s: %s", rt->socket, why);
	usage_arm(rt, now);
	if (rt->full_waits) {
		rt->full_waits = false;
		int r = rt->client ? cri_client_list(rt->client, CRI_LIST_ALL, on_listing, rt) : -ENOTCONN;
		if (r < 0) {
			/* asked again at the next decision, as when a listing cannot start */
			rt->refreshing = false;
			rt->relist_wanted |= rt->refresh_for_removal;
			rt->refresh_for_removal = false;
			rt->sync_done = true;
			rt->sync_error = r;
			if (rt->changed)
				rt->changed(rt->userdata);
		}
	}
}

static int on_usage_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	runtime_state *rt = userdata;

	(void)s;
	/* a full listing in flight updates the images itself; none while the runtime is not there */
	if (!rt->client || rt->refreshing || rt->usage_refreshing) {
		usage_arm(rt, usec);
		return 0;
	}
	rt->usage_refreshing = true; /* before the call: its end may be heard from within it */
	if (cri_client_list(rt->client, CRI_LIST_IMAGES | CRI_LIST_CONTAINERS, on_usage_listing, rt) < 0) {
		rt->usage_refreshing = false;
		usage_arm(rt, usec);
	}
	return 0;
}

/* The next light refresh, a period after now (the last listing); none when the period is 0. */
static void usage_arm(runtime_state *rt, uint64_t now)
{
	uint64_t period = rt->cfg->image_usage_refresh_usec;

	if (!rt->usage_timer)
		return;
	if (!period) {
		(void)sd_event_source_set_enabled(rt->usage_timer, SD_EVENT_OFF);
		return;
	}
	(void)sd_event_source_set_time(rt->usage_timer, now + period);
	(void)sd_event_source_set_enabled(rt->usage_timer, SD_EVENT_ONESHOT);
}

static int on_ask_again(sd_event_source *s, uint64_t usec, void *userdata)
{
	runtime_state *rt = userdata;

	(void)s, (void)usec;
	if (rt->client)
		(void)cri_client_version(rt->client, on_version, rt);
	return 0;
}

static void on_version(int error, const char *text, void *userdata)
{
	runtime_state *rt = userdata;
	log_entry e;

	if (error == -ECANCELED)
		return;
	log_entry_init(&e, error < 0 ? LOG_WARNING : LOG_INFO, MSGID_RUNTIME_STATUS);
	log_entry_add(&e, FIELD_ENDPOINT, "%s", rt->socket);
	bool appeared = rt->appeared;
	rt->appeared = false;
	if (error < 0 && appeared && !rt->ask_again && rt->client) {
		/* A socket is made by bind() before listen(): asked in between, the runtime refuses.
		 * Asked once more a second later, before saying it is unreachable. */
		rt->appeared = sd_event_add_time_relative(rt->event, &rt->ask_again, CLOCK_MONOTONIC, 1000000, 0,
		                                          on_ask_again, rt) >= 0;
		if (rt->appeared)
			return;
	}
	if (error < 0) {
		bool missing = !socket_exists(rt->socket);
		log_entry_add(&e, FIELD_RUNTIME, "unreachable");
		log_entry_add(&e, FIELD_REASON, "%s", text);
		log_entry_send(&e, "Container runtime at %s: %s. Not done while it stays so: node-level reclaim before disk "
		               "evictions and ranking by writable layers (asked again when a disk threshold is met%s)",
		               rt->socket, text, missing ? ", and when its socket appears" : "");
		return;
	}
	snprintf(rt->runtime, sizeof(rt->runtime), "%s", text);
	if (appeared && rt->failed_usec && !rt->refreshing) {
		/* the listing asked when the socket appeared may have met it between bind() and listen():
		 * refused then says nothing of the runtime that answers now */
		rt->failed_usec = 0;
		refresh(rt);
	}
	log_entry_add(&e, FIELD_RUNTIME, "%s", text);
	log_entry_send(&e, "Container runtime %s at %s%s: node-level reclaim before disk evictions (%s), pods ranked by "
	               "writable layers and logs; listed while a disk threshold is met, images' use asked in between", text, rt->socket,
	               appeared ? " (its socket appeared: node-level reclaim turns on)" : "",
	               rt->cfg->node_reclaim == NODE_RECLAIM_IMAGES    ? "unused images removed"
	               : rt->cfg->node_reclaim == NODE_RECLAIM_ACCOUNT ? "unused images counted, left to the kubelet"
	                                                              : "off");
}

/* containerd: config.sandboxImage; CRI-O: pause_image (its configuration's key), at the top or one level down. */
static const char *find_sandbox_image(yajl_val v, int depth)
{
	static const char *const keys[] = { "sandboxImage", "sandbox_image", "pause_image", "pauseImage", "PauseImage" };

	if (!v || !YAJL_IS_OBJECT(v) || depth > 2)
		return NULL;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		yajl_val x = json_member(v, keys[k]);
		const char *str = x && YAJL_IS_STRING(x) ? YAJL_GET_STRING(x) : NULL;
		if (str && str[0] && strlen(str) < CRI_STRING_MAX)
			return str;
	}
	for (size_t i = 0; i < v->u.object.len; i++) {
		const char *found = find_sandbox_image(v->u.object.values[i], depth + 1);
		if (found)
			return found;
	}
	return NULL;
}

static void on_runtime_config(int error, const char *config, const char *why, void *userdata)
{
	runtime_state *rt = userdata;
	const char *name = NULL;
	char err[128];

	if (error == -ECANCELED)
		return;
	rt->sandbox_asking = false;
	rt->sandbox_failed = error < 0;
	if (error < 0 && rt->sandbox_image)
		goto done; /* what it said before still holds */
	yajl_val root = error >= 0 && config ? yajl_tree_parse(config, err, sizeof(err)) : NULL;
	if (root)
		name = find_sandbox_image(root, 0);
	free(rt->sandbox_image);
	rt->sandbox_image = name ? strdup(name) : NULL;
	yajl_tree_free(root);
	if (rt->sandbox_image)
		log_msg(LOG_INFO, "Container runtime's sandbox image: %s; never removed by node-level reclaim, whatever "
		        "its pinned flag says", rt->sandbox_image);
	else if (!rt->sandbox_unknown_logged)
		log_msg(LOG_NOTICE, "The container runtime at %s did not name its sandbox image (%s); node-level reclaim "
		        "never removes an image of a repository named pause instead", rt->socket,
		        error < 0 ? why : !config ? "no config in its verbose Status" : "no sandboxImage or pause_image in its config");
	rt->sandbox_unknown_logged = !rt->sandbox_image;
done:
	if (rt->changed)
		rt->changed(rt->userdata);
}

static void ask_sandbox_image(runtime_state *rt)
{
	if (rt->client && !rt->sandbox_asking && cri_client_runtime_config(rt->client, on_runtime_config, rt) >= 0)
		rt->sandbox_asking = true;
}

/* The daemon's light refresh of images' use (never --once's: it lists once and exits). */
static void usage_start(runtime_state *rt, uint64_t now_usec)
{
	if (!rt->usage_timer && rt->cfg->image_usage_refresh_usec &&
	    sd_event_add_time(rt->event, &rt->usage_timer, CLOCK_MONOTONIC, UINT64_MAX, 1000000, on_usage_timer, rt) < 0) {
		log_msg(LOG_WARNING, "Cannot arm image-usage-refresh: images' use is refreshed only at disk pressure");
		rt->usage_timer = NULL;
		return;
	}
	usage_arm(rt, now_usec);
}

void runtime_start(runtime_state *rt, uint64_t now_usec)
{
	usage_start(rt, now_usec); /* idle without a runtime: one that appears later is refreshed too */
	if (!rt->client) {
		log_off(rt);
		return;
	}
	(void)cri_client_version(rt->client, on_version, rt);
	ask_sandbox_image(rt);
	/* images' first sighting starts their minimum age: from evictd's start, as the kubelet's from its own */
	refresh(rt);
}

int runtime_list_now(runtime_state *rt, uint64_t now_usec)
{
	(void)now_usec;
	if (!rt->client)
		return -ENOTCONN;
	rt->sync_done = false;
	ask_sandbox_image(rt); /* what --once would remove leaves it out too */
	refresh(rt);
	if (!rt->refreshing)
		return -EBUSY;
	while (!rt->sync_done || rt->sandbox_asking) {
		int r = sd_event_run(rt->event, UINT64_MAX);
		if (r < 0)
			return r;
	}
	return rt->sync_error;
}

/* --- node-level reclaim -------------------------------------------------------------------- */

static const char *image_name(const cri_image *im)
{
	return im->n_tags ? im->tags[0] : im->id;
}

/* The runtime refused an image: journaled once, with its status, and skipped for the back-off. */
static void on_image_failed(const char *id, const char *name, const char *why, void *userdata)
{
	runtime_state *rt = userdata;
	uint64_t now = 0;

	(void)sd_event_now(rt->event, CLOCK_MONOTONIC, &now);
	log_entry e;
	log_entry_init(&e, LOG_WARNING, MSGID_NODE_RECLAIM_IMAGES);
	log_entry_add(&e, FIELD_IMAGES, "%s", name);
	log_entry_add(&e, FIELD_REASON, "%s", why);
	log_entry_send(&e, "The container runtime did not remove image %s (%s): %s; not tried again for %" PRIu64 " s, "
	               "node-level reclaim goes on with the next unused image, else a pod is evicted",
	               name, id, why, NODEREC_REFUSAL_BACKOFF_USEC / 1000000);
	(void)noderec_refusals_add(&rt->refusals, id, now); /* -ENOMEM: not remembered, tried at the next plan */
}

static void on_removed(const image_removal_result *res, void *userdata)
{
	runtime_state *rt = userdata;

	rt->removal = NULL;
	rt->result = *res;
	rt->removal_done = true;
	rt->images_removed += res->n_removed;
	rt->bytes_removed += (uint64_t)res->bytes;
	/* what is left must be listed again before more is removed; when nothing went, the listing
	 * still says what is there and the next plan, without the refused images, uses it at once */
	if (res->n_removed)
		rt->listing_usec = 0;
	if (rt->changed)
		rt->changed(rt->userdata);
}

/* Once per episode: the kubelet's container GC has had its period and the reclaim is still pending. */
static void log_expired(runtime_state *rt, evictd_signal s, uint64_t now_usec, int64_t counted)
{
	char v[32];

	if (rt->expired_logged[s])
		return;
	rt->expired_logged[s] = true;
	log_msg(LOG_NOTICE, "Node-level reclaim for %s (%s) pending for %" PRIu64 " s, longer than the kubelet's container "
	        "GC period (%" PRIu64 " s, counted across evictd's restarts): no longer counted, pods may be evicted",
	        signal_name(s), decide_format_signal_value(s, counted, v, sizeof(v)),
	        (now_usec - rt->memory.pending_since[s]) / 1000000, KUBELET_CONTAINER_GC_PERIOD_USEC / 1000000);
}

/*
 * Once per episode of a signal: the unused images node-level reclaim may not remove (yet) and why
 * (the kubelet is as silent about them as evictd was: a pod evicted beside a 97 MiB image younger
 * than image-minimum-gc-age deserves a word).
 */
static void log_kept(runtime_state *rt, evictd_signal s, const noderec_plan *p, uint64_t now_usec)
{
	char list[1024] = "", sz[32], age[48];
	size_t len = 0;

	if (rt->kept_logged[s] || !p->n_kept)
		return;
	rt->kept_logged[s] = true;
	for (size_t i = 0; i < p->n_kept && len < sizeof(list) - 1; i++) {
		const cri_image *im = &rt->listing->images[p->kept[i]];
		const char *name = image_name(im);
		const image_record *r = noderec_record_find(rt->images, rt->n_images, im->id);
		age[0] = '\0';
		if (p->kept_why[i] == NODEREC_KEEP_YOUNG && r && now_usec >= r->h.first_seen_usec)
			snprintf(age, sizeof(age), ", first seen %" PRIu64 " s ago", (now_usec - r->h.first_seen_usec) / 1000000);
		int n = snprintf(list + len, sizeof(list) - len, "%s%s (%s, %s%s)", len ? ", " : "", name,
		                 log_format_bytes((int64_t)im->size, sz, sizeof(sz)), noderec_keep_name(p->kept_why[i]), age);
		if (n < 0 || (size_t)n >= sizeof(list) - len) {
			snprintf(list + (len < sizeof(list) - 6 ? len : sizeof(list) - 6), 6, ", …");
			break;
		}
		len += (size_t)n;
	}
	log_entry e;
	log_entry_init(&e, LOG_NOTICE, MSGID_NODE_RECLAIM_IMAGES);
	log_entry_add(&e, FIELD_SIGNAL, "%s", signal_name(s));
	log_entry_add(&e, FIELD_IMAGES_COUNT, "%zu", p->n_kept);
	log_entry_add(&e, FIELD_IMAGES, "%s", list);
	log_entry_send(&e, "Node-level reclaim for %s: %zu unused image%s may not be removed (yet): %s; "
	               "image-minimum-gc-age = %" PRIu64 " s", signal_name(s), p->n_kept, p->n_kept == 1 ? "" : "s", list,
	               rt->cfg->image_min_gc_age_usec / 1000000);
}

static void start_removal(runtime_state *rt, const noderec_plan *p, size_t n, evictd_signal s, int64_t before)
{
	const char *ids[64], *names[64];
	int64_t sizes[64];

	if (n > 64)
		n = 64; /* more in the next round, after measuring */
	for (size_t i = 0; i < n; i++) {
		const cri_image *im = &rt->listing->images[p->images[i]];
		ids[i] = im->id;
		names[i] = image_name(im);
		sizes[i] = (int64_t)im->size;
	}
	int r = image_removal_start(rt->client, ids, names, sizes, n, s, on_image_failed, on_removed, rt, &rt->removal);
	if (r < 0) {
		log_error_errno(r, "node-level reclaim: images not removed");
		return;
	}
	rt->removal_signal = s;
	rt->removal_before = before;
	rt->listing_for_removal = false; /* the next removal lists again */
}

void runtime_settle(runtime_state *rt, const evaluation *ev)
{
	bool ended[_SIGNAL_MAX];

	if (!rt)
		return;
	bool pending_ended = noderec_settle(&rt->memory, ev, ended);
	for (int s = 0; s < _SIGNAL_MAX; s++)
		if (ended[s]) /* the next episode is logged anew */
			rt->covered_logged[s] = rt->expired_logged[s] = rt->kept_logged[s] = false;
	if (pending_ended)
		state_save(rt);
}

/*
 * The plan from the latest listing: each image's history (one not recorded yet is first seen now)
 * and the refusals still backed off. 0 or -ENOMEM.
 */
static int plan_from_listing(runtime_state *rt, uint64_t now_usec, noderec_plan *ret)
{
	const cri_listing *l = rt->listing;
	size_t n_img = l->n_images ? l->n_images : 1;
	image_history *h = calloc(n_img, sizeof(*h));
	bool *refused = calloc(n_img, sizeof(*refused));
	int r = -ENOMEM;

	if (!h || !refused)
		goto out;
	noderec_history_of(rt->images, rt->n_images, l, now_usec, h);
	noderec_refusals_prune(&rt->refusals, now_usec);
	if ((r = noderec_refusals_mark(&rt->refusals, l, refused)) < 0)
		goto out;
	noderec_rules rules = { .min_age_usec = rt->cfg->image_min_gc_age_usec, .sandbox_image = rt->sandbox_image,
		                .backed_off = refused };
	r = noderec_plan_build_rules(l, h, now_usec, &rules, ret);
out:
	free(h);
	free(refused);
	return r;
}

/*
 * What the outcome says, said: the report's view of it (plan), the journal's (expired counts and
 * kept images, once per episode), the metrics' (last_pending) and the saved pending windows.
 */
static void outcome_record(runtime_state *rt, const noderec_plan *p, const noderec_outcome *oc, uint64_t now_usec,
                           runtime_plan *plan)
{
	if (oc->pending_changed)
		state_save(rt);
	for (size_t i = 0; i < p->n_kept && i < 8; i++) {
		plan->kept_names[i] = image_name(&rt->listing->images[p->kept[i]]);
		plan->kept_why[i] = noderec_keep_name(p->kept_why[i]);
	}
	plan->valid = true;
	plan->layout = rt->layout;
	snprintf(plan->imagefs, sizeof(plan->imagefs), "%s", rt->imagefs);
	for (int si = 0; si < _SIGNAL_MAX; si++) {
		evictd_signal s = (evictd_signal)si;
		const runtime_signal_plan *sp = &oc->s[s];
		if (!noderec_disk_signal(s))
			continue;
		plan->s[s] = *sp;
		if (oc->count[s] == NODEREC_COUNT_NONE)
			rt->expired_logged[s] = false;
		else if (oc->count[s] == NODEREC_COUNT_EXPIRED)
			log_expired(rt, s, now_usec, oc->counted[s]);
		rt->last_pending[s] = oc->count[s] == NODEREC_COUNT_PENDING ? oc->counted[s] : 0;
		rt->last_n_dead[s] = rt->last_pending[s] ? sp->n_dead : 0;
		for (size_t i = 0; i < sp->n_remove && i < 8 && !plan->remove_names[i]; i++)
			plan->remove_names[i] = image_name(&rt->listing->images[p->images[i]]);
		if (oc->images_matter[s])
			log_kept(rt, s, p, now_usec);
	}
}

/* The one call the outcome asks for: made last, after everything it decided was recorded. */
static void outcome_call(runtime_state *rt, const noderec_plan *p, const noderec_outcome *oc)
{
	if (oc->call == NODEREC_CALL_REMOVE)
		start_removal(rt, p, oc->call_n, oc->call_signal, oc->call_before);
	else if (oc->call != NODEREC_CALL_NONE) {
		/* the listing the removal waits for: a container started since the last one keeps its image */
		rt->relist_wanted |= oc->call == NODEREC_CALL_LIST_FOR_REMOVAL;
		refresh(rt);
	}
}

void runtime_prepare(runtime_state *rt, snapshot *snap, const evaluation *ev, const pending_reclaim *pods_pending,
                     uint64_t now_usec, node_reclaim_input *out, runtime_plan *plan)
{
	const evictd_config *c = rt->cfg;
	noderec_plan p = { 0 };
	noderec_outcome oc;
	runtime_plan local;

	*out = (node_reclaim_input){ 0 };
	if (!plan)
		plan = &local;
	*plan = (runtime_plan){ 0 };
	runtime_settle(rt, ev);
	if (!rt->client)
		return;
	/* a memory or pid decision needs no listing, no plan: it pays nothing for the runtime */
	if (!noderec_any_disk(ev) && plan == &local)
		return;
	noderec_situation sit = {
		.mode = c->node_reclaim,
		.dry_run = c->dry_run,
		.layout = rt->layout,
		.kubelet_hard = c->kubelet.hard,
		.kubelet_read = c->kubelet.path[0] != '\0',
		.listing_usable = rt->listing && rt->listing_usec && now_usec - rt->listing_usec < RUNTIME_LISTING_TTL_USEC,
		.removal_running = rt->removal != NULL,
		.listing_for_removal = rt->listing_for_removal,
		.sandbox_asking = rt->sandbox_asking,
		.failed_recently = rt->failed_usec && now_usec - rt->failed_usec < RUNTIME_LISTING_TTL_USEC,
	};
	if (sit.listing_usable) {
		runtime_attribute(snap, rt->listing, rt->layout, &rt->label_notes);
		if (plan_from_listing(rt, now_usec, &p) < 0)
			return;
	}
	noderec_decide(sit.listing_usable ? &p : NULL, rt->listing, &sit, ev, &snap->node, pods_pending, now_usec,
	               &rt->memory, &oc);
	if (sit.listing_usable)
		outcome_record(rt, &p, &oc, now_usec, plan);
	outcome_call(rt, &p, &oc);
	/* each hold as the runtime stands once the call is made: a call that could not start holds nothing */
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		out->pending[s] = oc.s[s].pending;
		out->hold[s] = oc.hold[s] == NODEREC_HOLD_ANSWER    ? rt->refreshing || rt->removal
		               : oc.hold[s] == NODEREC_HOLD_LISTING  ? rt->refreshing || rt->sandbox_asking
		               : oc.hold[s] == NODEREC_HOLD_REMOVAL ? rt->removal != NULL
		                                                     : false;
		if (plan->valid)
			plan->s[s].hold = out->hold[s];
	}
	noderec_plan_done(&p);
}

void runtime_forget_listing(runtime_state *rt)
{
	if (rt)
		rt->listing_usec = 0;
}

void runtime_after_decision(runtime_state *rt, const decision *dec, const snapshot *snap)
{
	char v[32];

	for (int si = 0; rt && si < _SIGNAL_MAX; si++) {
		evictd_signal s = (evictd_signal)si;
		if (!noderec_disk_signal(s))
			continue;
		if (!dec->node_covered[s]) {
			if (!dec->eval.t[THRESHOLD_HARD][s].met && !dec->eval.t[THRESHOLD_SOFT][s].met)
				rt->covered_logged[s] = false;
			continue;
		}
		if (rt->covered_logged[s])
			continue;
		rt->covered_logged[s] = true;
		const signal_obs *o = &snap->node.s[s];
		char p[32];
		log_entry e;
		log_entry_init(&e, LOG_NOTICE, MSGID_NODE_RECLAIM_PENDING);
		log_entry_add(&e, FIELD_SIGNAL, "%s", signal_name(s));
		log_entry_add(&e, FIELD_OBSERVED, "%" PRId64, o->available);
		log_entry_add(&e, FIELD_UNIT, "%s", signal_unit(s));
		/* the catalog's text names both */
		log_entry_add(&e, FIELD_PENDING, "%" PRId64, rt->last_pending[s]);
		log_entry_add(&e, FIELD_CONTAINERS_COUNT, "%u", rt->last_n_dead[s]);
		log_entry_send(&e, "No pod evicted for %s (%s): the kubelet's own node-level reclaim (%u dead container%s%s, %s) "
		               "covers the need; counted until the kubelet's threshold or %" PRIu64 " s",
		               signal_name(s), decide_format_signal_value(s, o->available, v, sizeof(v)), rt->last_n_dead[s],
		               rt->last_n_dead[s] == 1 ? "" : "s",
		               rt->cfg->node_reclaim == NODE_RECLAIM_ACCOUNT ? ", unused images" : "",
		               decide_format_signal_value(s, rt->last_pending[s], p, sizeof(p)),
		               KUBELET_CONTAINER_GC_PERIOD_USEC / 1000000);
	}
}

void runtime_observe(runtime_state *rt, const node_signals *node)
{
	char b[32], a[32], f[32];
	const image_removal_result *res = &rt->result;
	evictd_signal s = res->signal;
	log_entry e;

	if (!rt || !rt->removal_done)
		return;
	rt->removal_done = false;
	log_entry_init(&e, res->n_removed ? LOG_NOTICE : LOG_WARNING, MSGID_NODE_RECLAIM_IMAGES);
	log_entry_add(&e, FIELD_SIGNAL, "%s", signal_name(s));
	log_entry_add(&e, FIELD_IMAGES_COUNT, "%zu", res->n_removed);
	log_entry_add(&e, FIELD_IMAGES, "%s", res->names);
	log_entry_add(&e, FIELD_FREED_BYTES, "%" PRId64, res->bytes);
	log_entry_add(&e, FIELD_OBSERVED, "%" PRId64, rt->removal_before);
	if (node->s[s].known)
		log_entry_add(&e, FIELD_OBSERVED_AFTER, "%" PRId64, node->s[s].available);
	log_entry_add(&e, FIELD_UNIT, "%s", signal_unit(s));
	if (res->n_failed)
		log_entry_add(&e, FIELD_REASON, "%s", res->why);
	decide_format_signal_value(s, rt->removal_before, b, sizeof(b));
	if (node->s[s].known)
		decide_format_signal_value(s, node->s[s].available, a, sizeof(a));
	else
		snprintf(a, sizeof(a), "unknown");
	log_entry_send(&e, "Node-level reclaim for %s: removed %zu unused image%s (%s: %s)%s%s%s; %s %s -> %s",
	               signal_name(s), res->n_removed, res->n_removed == 1 ? "" : "s",
	               log_format_bytes(res->bytes, f, sizeof(f)), res->names[0] ? res->names : "none",
	               res->n_failed ? "; failed: " : "", res->n_failed ? res->why : "", "", signal_name(s), b, a);
}

void runtime_reconfigure(runtime_state *rt, const evictd_config *cfg)
{
	char before[108];

	snprintf(before, sizeof(before), "%s", rt->socket);
	rt->cfg = cfg;
	resolve_endpoint(rt);
	if (rt->usage_timer || cfg->image_usage_refresh_usec) {
		uint64_t now = 0;
		(void)sd_event_now(rt->event, CLOCK_MONOTONIC, &now);
		usage_start(rt, now); /* a changed period counts from the reload */
	}
	if (strcmp(before, rt->socket) == 0 && (rt->client || !rt->socket[0])) {
		follow_sockets(rt); /* none any more, when the endpoint became "none" */
		return;
	}
	client_close(rt);
	listing_drop(rt);
	int r = client_open(rt);
	follow_sockets(rt);
	if (r < 0 || !rt->client) {
		log_off(rt);
		return;
	}
	runtime_start(rt, 0);
}
