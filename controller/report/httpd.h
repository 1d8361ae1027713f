/* SPDX-License-Identifier: MIT */
/*
 * The small HTTP server of /healthz, /livez, /readyz and /metrics: libmicrohttpd, driven by the
 * program's sd-event loop (its epoll descriptor and its timeout), so that a scrape reads the
 * stages' counters from the loop's own thread, without a lock. GET and HEAD only; a few
 * connections at once, each bounded in time.
 */
#ifndef CTL_HTTPD_H
#define CTL_HTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

typedef struct httpd httpd;

/* Writes the answer for path (the URL's path, then "?verbose" when the query names it) into out, sets *content_type (default text/plain) and returns the
 * HTTP status. */
typedef int (*httpd_handler)(void *userdata, const char *path, FILE *out, const char **content_type);

/* listen: "ADDR:PORT" ("127.0.0.1:10271", "[::1]:10271", "0.0.0.0:10271"; port 0: any). err gets
 * what went wrong ("--listen ADDR: what"). */
int httpd_new(sd_event *e, const char *listen, httpd_handler h, void *userdata, httpd **ret, char *err,
              size_t err_size);
httpd *httpd_free(httpd *d);
/* The port it listens on (the one chosen for port 0). */
uint16_t httpd_port(const httpd *d);

#endif
