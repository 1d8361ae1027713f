/* SPDX-License-Identifier: MIT */
#include "httpd.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct httpd {
	struct MHD_Daemon *daemon;
	sd_event_source *io, *timer;
	httpd_handler handler;
	void *userdata;
};

static void rearm(httpd *d)
{
	MHD_UNSIGNED_LONG_LONG ms;
	uint64_t now;

	if (MHD_get_timeout(d->daemon, &ms) != MHD_YES) {
		(void)sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
		return;
	}
	if (sd_event_now(sd_event_source_get_event(d->timer), CLOCK_MONOTONIC, &now) < 0)
		return;
	(void)sd_event_source_set_time(d->timer, now + ms * 1000);
	(void)sd_event_source_set_enabled(d->timer, SD_EVENT_ONESHOT);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	httpd *d = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	(void)MHD_run(d->daemon);
	rearm(d);
	return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	(void)s;
	(void)usec;
	return on_io(NULL, -1, 0, userdata);
}

static enum MHD_Result find_verbose(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	(void)value;
	if (!strcmp(key, "verbose")) {
		*(bool *)cls = true;
		return MHD_NO; /* found: stop */
	}
	return MHD_YES;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	httpd *d = cls;
	char *buf = NULL;
	size_t len = 0;
	const char *type = "text/plain; charset=utf-8";
	int status;
	struct MHD_Response *resp;
	enum MHD_Result r;

	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		/* the first call is for the headers; a body (there should be none) is ignored */
		*con_cls = d;
		return MHD_YES;
	}
	*upload_data_size = 0;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		static const char msg[] = "only GET and HEAD\n";
		resp = MHD_create_response_from_buffer(sizeof(msg) - 1, (void *)msg, MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		MHD_add_response_header(resp, "Allow", "GET, HEAD");
		r = MHD_queue_response(conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
		MHD_destroy_response(resp);
		return r;
	}
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return MHD_NO;
	/* the one query the endpoints know: ?verbose (k8s.io/apiserver's healthz lists its checks) */
	bool verbose = false;
	char path[256];
	(void)MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, find_verbose, &verbose);
	snprintf(path, sizeof(path), "%s%s", url, verbose ? "?verbose" : "");
	status = d->handler(d->userdata, path, f, &type);
	if (fclose(f) != 0) {
		free(buf);
		return MHD_NO;
	}
	resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	r = MHD_queue_response(conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return r;
}

static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *len, bool *v6, char *err,
                        size_t err_size)
{
	char host[256];
	const char *colon = strrchr(listen, ':'), *h = listen;
	size_t hl;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE, .ai_socktype = SOCK_STREAM },
	                *res = NULL;
	int r;

	if (!colon || !colon[1]) {
		snprintf(err, err_size, "--listen %s: expected ADDRESS:PORT", listen);
		return -EINVAL;
	}
	hl = (size_t)(colon - listen);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl >= sizeof(host)) {
		snprintf(err, err_size, "--listen %s: address too long", listen);
		return -EINVAL;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	r = getaddrinfo(hl ? host : NULL, colon + 1, &hints, &res);
	if (r != 0) {
		snprintf(err, err_size, "--listen %s: %s", listen, gai_strerror(r));
		return -EINVAL;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	*v6 = res->ai_family == AF_INET6;
	freeaddrinfo(res);
	return 0;
}

int httpd_new(sd_event *e, const char *listen, httpd_handler h, void *userdata, httpd **ret, char *err,
              size_t err_size)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	bool v6;
	httpd *d;
	int r;

	r = parse_listen(listen, &ss, &sl, &v6, err, err_size);
	if (r < 0)
		return r;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->handler = h;
	d->userdata = userdata;
	d->daemon = MHD_start_daemon(MHD_USE_EPOLL | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, answer, d,
	                             MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
	                             (unsigned)16, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	if (!d->daemon) {
		r = errno ? -errno : -EADDRINUSE;
		snprintf(err, err_size, "--listen %s: cannot listen: %s", listen, strerror(-r));
		free(d);
		return r;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || (r = sd_event_add_io(e, &d->io, info->epoll_fd, EPOLLIN, on_io, d)) < 0 ||
	    (r = sd_event_add_time(e, &d->timer, CLOCK_MONOTONIC, UINT64_MAX, 1000, on_timer, d)) < 0) {
		snprintf(err, err_size, "--listen %s: cannot watch the server: %s", listen, strerror(info ? -r : EINVAL));
		httpd_free(d);
		return info ? r : -EINVAL;
	}
	(void)sd_event_source_set_description(d->io, "httpd");
	rearm(d);
	*ret = d;
	return 0;
}

httpd *httpd_free(httpd *d)
{
	if (!d)
		return NULL;
	sd_event_source_disable_unref(d->io);
	sd_event_source_disable_unref(d->timer);
	if (d->daemon)
		MHD_stop_daemon(d->daemon);
	free(d);
	return NULL;
}

uint16_t httpd_port(const httpd *d)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d->daemon, MHD_DAEMON_INFO_BIND_PORT);
	return info ? info->port : 0;
}
