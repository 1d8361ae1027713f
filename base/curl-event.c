/* SPDX-License-Identifier: MIT */
#include "curl-event.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

struct curl_event {
	sd_event *event;
	CURLM *multi;
	sd_event_source *timer;
	curl_event_done_fn done;
	void *userdata;
	char socket_name[64];
};

static void drain_done(curl_event *ce)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(ce->multi, &left)))
		if (m->msg == CURLMSG_DONE)
			ce->done(m->easy_handle, m->data.result, ce->userdata);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	curl_event *ce = userdata;
	int flags = 0, running;

	(void)s;
	flags |= revents & EPOLLIN ? CURL_CSELECT_IN : 0;
	flags |= revents & EPOLLOUT ? CURL_CSELECT_OUT : 0;
	flags |= revents & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0;
	curl_multi_socket_action(ce->multi, fd, flags, &running);
	drain_done(ce);
	return 0;
}

static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	curl_event *ce = userp;
	sd_event_source *src = socketp;
	uint32_t ev = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (src) {
			sd_event_source_disable_unref(src);
			curl_multi_assign(ce->multi, fd, NULL);
		}
		return 0;
	}
	if (src)
		return sd_event_source_set_io_events(src, ev) < 0 ? -1 : 0;
	if (sd_event_add_io(ce->event, &src, fd, ev, on_io, ce) < 0)
		return -1;
	(void)sd_event_source_set_description(src, ce->socket_name);
	curl_multi_assign(ce->multi, fd, src);
	return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	curl_event *ce = userdata;
	int running;

	(void)s;
	(void)usec;
	curl_multi_socket_action(ce->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	drain_done(ce);
	return 0;
}

static int set_timer(CURLM *multi, long timeout_ms, void *userp)
{
	curl_event *ce = userp;
	uint64_t now;

	(void)multi;
	if (timeout_ms < 0)
		return sd_event_source_set_enabled(ce->timer, SD_EVENT_OFF) < 0 ? -1 : 0;
	if (sd_event_now(ce->event, CLOCK_MONOTONIC, &now) < 0)
		return -1;
	/* 0 means "now": 1 µs later, so curl is re-entered from the loop, never from inside itself */
	if (sd_event_source_set_time(ce->timer, now + (uint64_t)timeout_ms * 1000 + 1) < 0 ||
	    sd_event_source_set_enabled(ce->timer, SD_EVENT_ONESHOT) < 0)
		return -1;
	return 0;
}

int curl_event_new(sd_event *e, const char *name, curl_event_done_fn done, void *userdata, curl_event **ret)
{
	char timer_name[sizeof(((curl_event *)0)->socket_name)];
	curl_event *ce = calloc(1, sizeof(*ce));
	int r;

	if (!ce)
		return -ENOMEM;
	ce->event = sd_event_ref(e);
	ce->done = done;
	ce->userdata = userdata;
	snprintf(ce->socket_name, sizeof(ce->socket_name), "%s-socket", name);
	snprintf(timer_name, sizeof(timer_name), "%s-timer", name);
	ce->multi = curl_multi_init();
	if (!ce->multi) {
		curl_event_free(ce);
		return -ENOMEM;
	}
	/* accuracy 1 µs: sd-event's default slack (250 ms) would stretch every curl timeout */
	r = sd_event_add_time(e, &ce->timer, CLOCK_MONOTONIC, UINT64_MAX, 1, on_timer, ce);
	if (r < 0) {
		curl_event_free(ce);
		return r;
	}
	(void)sd_event_source_set_enabled(ce->timer, SD_EVENT_OFF);
	(void)sd_event_source_set_description(ce->timer, timer_name);
	curl_multi_setopt(ce->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(ce->multi, CURLMOPT_SOCKETDATA, ce);
	curl_multi_setopt(ce->multi, CURLMOPT_TIMERFUNCTION, set_timer);
	curl_multi_setopt(ce->multi, CURLMOPT_TIMERDATA, ce);
	*ret = ce;
	return 0;
}

curl_event *curl_event_free(curl_event *ce)
{
	if (!ce)
		return NULL;
	if (ce->multi)
		curl_multi_cleanup(ce->multi); /* removes the sockets: on_socket unrefs their sources */
	sd_event_source_disable_unref(ce->timer);
	sd_event_unref(ce->event);
	free(ce);
	return NULL;
}

CURLM *curl_event_multi(const curl_event *ce)
{
	return ce->multi;
}
