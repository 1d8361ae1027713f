/* SPDX-License-Identifier: MIT */
#include "incluster.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_MAX (64 * 1024)

/* asprintf that leaves NULL, not an undefined pointer, when out of memory. */
__attribute__((format(printf, 1, 2)))
static char *fmt(const char *f, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

int incluster_read_token(const char *dir, char **ret)
{
	char path[4096], *buf;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/token", dir ? dir : INCLUSTER_DIR);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	buf = malloc(TOKEN_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, TOKEN_MAX + 1, f);
	fclose(f);
	if (n > TOKEN_MAX) {
		free(buf);
		return -EFBIG;
	}
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	if (!n || strlen(buf) != n) {
		explicit_bzero(buf, n);
		free(buf);
		return -EINVAL;
	}
	*ret = buf;
	return 0;
}

int incluster_config(const char *dir, kube_config **ret, char *err, size_t err_size)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *d = dir ? dir : INCLUSTER_DIR;
	kube_config *c;
	int r;

	if (!host || !*host || !port || !*port) {
		snprintf(err, err_size, "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
		         "set (give --kubeconfig FILE)");
		return -ENOENT;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* an IPv6 service address needs brackets in a URL */
	c->server = strchr(host, ':') ? fmt("https://[%s]:%s", host, port) : fmt("https://%s:%s", host, port);
	c->ca.path = fmt("%s/ca.crt", d);
	if (!c->server || !c->ca.path || !(c->context = strdup("in-cluster")) ||
	    !(c->cluster = strdup("in-cluster")) || !(c->user = strdup("serviceaccount"))) {
		kubeconfig_free(c);
		return -ENOMEM;
	}
	r = incluster_read_token(dir, &c->token);
	if (r < 0) {
		snprintf(err, err_size, "%s/token: %s (is a service account token mounted?)", d,
		         r == -EINVAL ? "empty or not text" : strerror(-r));
		kubeconfig_free(c);
		return r;
	}
	*ret = c;
	return 0;
}
