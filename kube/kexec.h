/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A kubeconfig's `exec` credential plugin, run as kubectl runs it (client.authentication.k8s.io
 * v1 and v1beta1): the command with its args and env, KUBERNETES_EXEC_INFO in its environment
 * (spec.interactive false; spec.cluster when provideClusterInfo), its standard output an
 * ExecCredential holding a token or a client certificate and key, and maybe an
 * expirationTimestamp. Its standard error is passed through (plugins say there what they need).
 *
 * No shell: posix_spawn with the argv; standard input /dev/null (we run without a terminal: an
 * interactiveMode Always plugin is refused when the kubeconfig is loaded); at most
 * KUBE_EXEC_OUTPUT_MAX bytes of output read within KUBE_EXEC_DEADLINE_MS, after which the plugin is
 * killed; it is always waited for.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KUBE_EXEC_OUTPUT_MAX (256 * 1024)
#define KUBE_EXEC_DEADLINE_MS 30000

typedef struct kube_exec {
	unsigned n_ref;
	char *api_version;
	char **argv;          /* command (resolved) then args; NULL-terminated */
	char **env;           /* "NAME=value", NULL-terminated */
	char *exec_info;      /* KUBERNETES_EXEC_INFO=... */
	char *install_hint;   /* NULL when absent */
	char *where;          /* "KUBECONFIG: user \"NAME\"", for messages */
} kube_exec;

typedef struct kube_exec_cred {
	char *token;                   /* NULL when a certificate was returned */
	unsigned char *cert, *key;     /* PEM, with their lengths */
	size_t cert_len, key_len;
	int64_t expiry_ns;             /* wall clock; 0: does not expire */
} kube_exec_cred;

kube_exec *kube_exec_ref(kube_exec *x);
kube_exec *kube_exec_unref(kube_exec *x);

/* Runs the plugin. 0 with *ret filled, or -errno with err[] one line naming the plugin and what
 * went wrong (never a credential): missing command (and its installHint), exit status, a signal,
 * the deadline, too much output, an answer that is no ExecCredential of our apiVersion. */
int kube_exec_run(const kube_exec *x, kube_exec_cred *ret, char *err, size_t err_size);
void kube_exec_cred_done(kube_exec_cred *c);

/* Standard base64 of len bytes, NUL-terminated, malloc'ed; NULL on ENOMEM. */
char *kube_base64_encode(const unsigned char *data, size_t len);
