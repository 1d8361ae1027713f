/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A kubeconfig: the current context's cluster (server, certificate authority, proxy-url) and user
 * (client certificate and key, a bearer token or tokenFile). kubeconfig_load reads the node's
 * (the kubelet's /etc/kubernetes/kubelet.conf, evictd-kube): an `exec` or `auth-provider` plugin
 * is refused with one clear line (evictd-kube runs no programs). kubeconfig_load_as with
 * KUBECONFIG_CLUSTER_USER reads a cluster user's as kubectl does (preemptctl, preemptd): an `exec`
 * plugin is run (kexec.h) and its credential renewed by the client (http.h).
 * insecure-skip-tls-verify is always refused (TLS is always verified). Malformed YAML is one
 * line, FILE:LINE:COLUMN, libfyaml's own diagnostics never printed.
 *
 * The file may hold a private key: one readable by group or others is refused.
 */

#include <stddef.h>
#include <stdint.h>

#define KUBECONFIG_DEFAULT "/etc/kubernetes/kubelet.conf"
#define KUBECONFIG_MAX (1024 * 1024)

/* One credential or CA: a file path, or the decoded bytes of a *-data field. */
typedef struct kube_blob {
	char *path;
	unsigned char *data;
	size_t len;
} kube_blob;

typedef struct kube_config {
	char *server;      /* "https://host:port", without a trailing '/' */
	char *tls_server_name; /* clusters[].cluster.tls-server-name, NULL when absent */
	kube_blob ca;      /* no path and no data: the system's trust store */
	kube_blob cert, key;
	char *token;       /* users[].user.token or the content of tokenFile; never logged */
	char *proxy_url;   /* clusters[].cluster.proxy-url, NULL when absent */
	char *context, *cluster, *user; /* names, for messages */
	struct kube_exec *exec; /* the user's exec plugin (KUBECONFIG_CLUSTER_USER), NULL without */
	int64_t expiry_ns;      /* when the plugin's credential expires (wall clock); 0: never */
} kube_config;

/* kubeconfig_load_as's flags */
enum {
	/* A cluster user's kubeconfig as kubectl reads it (preemptctl, preemptd): an exec credential
	 * plugin is run for its token or client certificate; without this flag (the node's
	 * kubeconfig, evictd-kube) it is refused. Hints then speak to a cluster user. */
	KUBECONFIG_CLUSTER_USER = 1 << 0,
};

/*
 * Loads path. Returns 0, or -errno with err[] holding "path: what is wrong" (one line; never a
 * credential): -ENOENT missing (missing_hint, when not NULL, follows in parentheses: what the
 * calling program wants the user to do, e.g. which of its settings names the file), -EPERM readable by group/others or not owned by root or us,
 * -EINVAL malformed or unsupported (exec plugin, no current context, http://...), -EFBIG.
 */
int kubeconfig_load(const char *path, const char *missing_hint, kube_config **ret, char *err, size_t err_size);

/* The same, with flags (KUBECONFIG_CLUSTER_USER). */
int kubeconfig_load_as(const char *path, const char *missing_hint, unsigned flags, kube_config **ret, char *err,
                       size_t err_size);

kube_config *kubeconfig_free(kube_config *c);

/* Standard base64 (whitespace ignored). Returns 0 with a malloc'ed buffer, or -EINVAL / -ENOMEM. */
int kube_base64_decode(const char *s, size_t n, unsigned char **ret, size_t *ret_len);
