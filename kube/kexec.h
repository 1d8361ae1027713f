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
#include <sys/types.h>

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

/* The steps of kube_exec_run, shared with kube_exec_start (kexec-async.c), which runs them on an
 * sd-event loop instead of blocking. */
typedef struct kube_exec_output {
	char *buf; /* NUL-terminated */
	size_t len, cap;
} kube_exec_output;

/* Spawns the plugin: *ret_fd reads its standard output (O_CLOEXEC, blocking). -errno with err[]. */
int kube_exec_spawn(const kube_exec *x, pid_t *ret_pid, int *ret_fd, char *err, size_t err_size);
/* One read(): 1 bytes came, 0 end of output, -EAGAIN nothing now, -EFBIG past KUBE_EXEC_OUTPUT_MAX
 * or -EIO with why[] saying so, -ENOMEM. */
int kube_exec_output_read(kube_exec_output *o, int fd, char *why, size_t why_size);
void kube_exec_output_done(kube_exec_output *o);
/* The plugin ended (r: how reading its output went, why[] the reason when < 0; status from
 * waitpid): its answer decoded into *ret, or -errno with err[] as kube_exec_run says. Frees o. */
int kube_exec_finish(const kube_exec *x, int r, const char *why, int status, kube_exec_output *o,
                     kube_exec_cred *ret, char *err, size_t err_size);

/* Standard base64 of len bytes, NUL-terminated, malloc'ed; NULL on ENOMEM. */
char *kube_base64_encode(const unsigned char *data, size_t len);
