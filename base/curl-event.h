/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * libcurl's multi interface on an sd-event loop, no threads: curl's sockets become sd-event io
 * sources (CURLMOPT_SOCKETFUNCTION), its one timeout one sd-event time source
 * (CURLMOPT_TIMERFUNCTION), and each event is handed back to curl_multi_socket_action. A
 * transfer that ends is reported once, from the loop, through the done callback. The Kubernetes
 * client (kube/kmulti.c) and the container runtime client (cri/grpc.c) both drive curl with it.
 *
 * The user adds and removes easy handles on curl_event_multi() itself and keeps its own per-call
 * state (CURLOPT_PRIVATE is the usual place).
 */

#include <curl/curl.h>
#include <systemd/sd-event.h>

typedef struct curl_event curl_event;

/* A transfer ended with result; the handle is still in the multi: the callback removes it. */
typedef void (*curl_event_done_fn)(CURL *easy, CURLcode result, void *userdata);

/*
 * A multi handle driven by e. name labels the event sources (sd_event_source_get_description:
 * "<name>-socket", "<name>-timer"). 0, or -ENOMEM, or sd-event's -errno.
 */
int curl_event_new(sd_event *e, const char *name, curl_event_done_fn done, void *userdata, curl_event **ret);
/* Cleans up the multi handle (its sockets' sources go with it); easy handles still in it are the
 * user's to free, before or after. Returns NULL. */
curl_event *curl_event_free(curl_event *ce);
/* The multi handle, for curl_multi_add_handle / curl_multi_remove_handle / curl_multi_setopt. */
CURLM *curl_event_multi(const curl_event *ce);
