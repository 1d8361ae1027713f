/* SPDX-License-Identifier: MIT */
/*
 * Reading a kubeconfig (kubeconfig.h): the file itself (size, mode, libfyaml), the current
 * context's cluster and user, credentials from files or base64 *-data fields, and an exec
 * plugin's command with the ExecCredential request it is handed. One file because every refusal
 * (a private key readable by others, insecure-skip-tls-verify, a plugin for the node's reader)
 * is judged against the same parsed document and reported in one FILE: message form; running the
 * plugin is kexec.c's.
 */
#include "kubeconfig.h"

#include "jsonw.h"
#include "kexec.h"

#include <errno.h>
#include <fcntl.h>
#include <libfyaml.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_MAX 16384

static int kfail(char *err, size_t size, int r, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int kfail(char *err, size_t size, int r, const char *path, const char *fmt, ...)
{
	char m[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	snprintf(err, size, "%s: %s", path, m);
	return r;
}

int kube_base64_decode(const char *s, size_t n, unsigned char **ret, size_t *ret_len)
{
	unsigned char *out = malloc(n / 4 * 3 + 4);
	uint32_t acc = 0;
	size_t len = 0;
	int bits = 0, pad = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		int v;
		if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
			continue;
		if (ch == '=') {
			pad++;
			continue;
		}
		if (pad)
			goto bad; /* data after padding */
		if (ch >= 'A' && ch <= 'Z')
			v = ch - 'A';
		else if (ch >= 'a' && ch <= 'z')
			v = ch - 'a' + 26;
		else if (ch >= '0' && ch <= '9')
			v = ch - '0' + 52;
		else if (ch == '+')
			v = 62;
		else if (ch == '/')
			v = 63;
		else
			goto bad;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[len++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (pad > 2 || bits >= 6)
		goto bad;
	*ret = out;
	*ret_len = len;
	return 0;
bad:
	free(out);
	return -EINVAL;
}

/* Reads a whole small file through an fd opened without following a final symlink's tricks. */
static int read_file(const char *path, size_t max, bool check_mode, char **ret, size_t *ret_len, char *err,
                     size_t err_size)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			return kfail(err, err_size, r, path, "no such file");
		return kfail(err, err_size, r, path, "cannot open: %s", strerror(-r));
	}
	if (fstat(fd, &st) < 0) {
		r = kfail(err, err_size, -errno, path, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = kfail(err, err_size, -EINVAL, path, "not a regular file");
		goto out;
	}
	if (check_mode && (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH))) {
		r = kfail(err, err_size, -EPERM, path,
		          "refused: it holds credentials and is accessible by %s (mode %04o; chmod 600 it)",
		          st.st_mode & (S_IROTH | S_IWOTH) ? "others" : "its group", (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (check_mode && st.st_uid != 0 && st.st_uid != geteuid()) {
		r = kfail(err, err_size, -EPERM, path, "refused: owned by uid %u, neither root nor us",
		          (unsigned)st.st_uid);
		goto out;
	}
	if ((size_t)st.st_size > max) {
		r = kfail(err, err_size, -EFBIG, path, "larger than %zu bytes", max);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = kfail(err, err_size, -errno, path, "cannot read: %s", strerror(errno));
			free(buf);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	r = 0;
out:
	close(fd);
	return r;
}

static const char *scalar(struct fy_node *map, const char *key)
{
	struct fy_node *v;

	if (!map || !fy_node_is_mapping(map))
		return NULL;
	v = fy_node_mapping_lookup_value_by_simple_key(map, key, strlen(key));
	if (!v || !fy_node_is_scalar(v))
		return NULL;
	return fy_node_get_scalar0(v);
}

/* The entry of a named list (clusters, users, contexts) whose name is `name`: its inner map. */
static struct fy_node *named(struct fy_node *root, const char *list, const char *name, const char *inner)
{
	struct fy_node *seq = fy_node_mapping_lookup_value_by_simple_key(root, list, strlen(list));
	struct fy_node *item;
	void *it = NULL;

	if (!seq || !fy_node_is_sequence(seq))
		return NULL;
	while ((item = fy_node_sequence_iterate(seq, &it))) {
		const char *n = scalar(item, "name");
		if (n && strcmp(n, name) == 0) {
			struct fy_node *v = fy_node_mapping_lookup_value_by_simple_key(item, inner, strlen(inner));
			return v && fy_node_is_mapping(v) ? v : NULL;
		}
	}
	return NULL;
}

/* A path in a kubeconfig is relative to the kubeconfig's directory. */
static char *resolve_path(const char *kubeconfig, const char *p)
{
	char *r;
	const char *slash;

	if (p[0] == '/')
		return strdup(p);
	slash = strrchr(kubeconfig, '/');
	if (!slash)
		return strdup(p);
	if (asprintf(&r, "%.*s/%s", (int)(slash - kubeconfig), kubeconfig, p) < 0)
		return NULL;
	return r;
}

static int load_blob(const char *path, struct fy_node *map, const char *file_key, const char *data_key,
                     kube_blob *b, char *err, size_t err_size)
{
	const char *f = scalar(map, file_key), *d = scalar(map, data_key);

	if (d && *d) {
		if (kube_base64_decode(d, strlen(d), &b->data, &b->len) < 0 || b->len == 0)
			return kfail(err, err_size, -EINVAL, path, "%s: not valid base64", data_key);
	} else if (f && *f) {
		b->path = resolve_path(path, f);
		if (!b->path)
			return -ENOMEM;
	}
	return 0;
}

/* Room for the largest CA a kubeconfig may name (KUBECONFIG_MAX, a third more as base64) and the
 * rest: the bound is never what stops a kubeconfig that loads. */
#define EXEC_INFO_MAX (2 * KUBECONFIG_MAX)

/* KUBERNETES_EXEC_INFO as kubectl sets it: spec.interactive (false: we run without a terminal)
 * and, with provideClusterInfo, spec.cluster (server, tls-server-name, the CA's data). */
static int exec_info(kube_exec *x, const kube_config *c, bool cluster_info, const char *path, char *err,
                     size_t err_size)
{
	char *ca64 = NULL, *env = NULL;
	jsonbuf j;
	int r = 0;

	jb_init(&j, EXEC_INFO_MAX);
	jb_begin_object(&j);
	jb_key(&j, "kind"), jb_string(&j, "ExecCredential");
	jb_key(&j, "apiVersion"), jb_string(&j, x->api_version);
	jb_key(&j, "spec"), jb_begin_object(&j);
	jb_key(&j, "interactive"), jb_bool(&j, false);
	if (cluster_info) {
		const unsigned char *ca = c->ca.data;
		size_t ca_len = c->ca.len;
		char *text = NULL;
		if (!ca && c->ca.path) {
			int q = read_file(c->ca.path, KUBECONFIG_MAX, false, &text, &ca_len, err, err_size);
			if (q < 0) {
				jb_free(&j);
				return q;
			}
			ca = (const unsigned char *)text;
		}
		if (ca && !(ca64 = kube_base64_encode(ca, ca_len)))
			r = -ENOMEM;
		free(text);
		jb_key(&j, "cluster"), jb_begin_object(&j);
		jb_key(&j, "server"), jb_string(&j, c->server);
		if (c->tls_server_name)
			jb_key(&j, "tls-server-name"), jb_string(&j, c->tls_server_name);
		if (ca64)
			jb_key(&j, "certificate-authority-data"), jb_string(&j, ca64);
		if (c->proxy_url)
			jb_key(&j, "proxy-url"), jb_string(&j, c->proxy_url);
		jb_end_object(&j);
	}
	jb_end_object(&j);
	jb_end_object(&j);
	free(ca64);
	if (!r)
		r = jb_error(&j);
	if (!r && asprintf(&env, "KUBERNETES_EXEC_INFO=%.*s", (int)j.len, j.buf) < 0) {
		env = NULL;
		r = -ENOMEM;
	}
	jb_free(&j);
	if (r == -ENOMEM)
		return kfail(err, err_size, r, path, "out of memory");
	if (r < 0)
		return kfail(err, err_size, r, path, "user \"%s\": KUBERNETES_EXEC_INFO: %s", c->user, strerror(-r));
	x->exec_info = env;
	return 0;
}

/* users[].user.exec: the plugin, ready to run. */
static int parse_exec(const char *path, const kube_config *c, struct fy_node *ex, kube_exec **ret, char *err,
                      size_t err_size)
{
	const char *cmd = scalar(ex, "command"), *api = scalar(ex, "apiVersion"), *mode = scalar(ex, "interactiveMode"),
	           *pci = scalar(ex, "provideClusterInfo"), *hint = scalar(ex, "installHint");
	struct fy_node *args = fy_node_mapping_lookup_value_by_simple_key(ex, "args", 4),
	               *env = fy_node_mapping_lookup_value_by_simple_key(ex, "env", 3), *item;
	kube_exec *x;
	size_t nargs = 0, nenv = 0;
	void *it = NULL;
	int r;

	if (!fy_node_is_mapping(ex))
		return kfail(err, err_size, -EINVAL, path, "user \"%s\": exec is not a mapping", c->user);
	if (!cmd || !*cmd)
		return kfail(err, err_size, -EINVAL, path, "user \"%s\": exec has no command", c->user);
	if (!api || (strcmp(api, "client.authentication.k8s.io/v1") != 0 &&
	             strcmp(api, "client.authentication.k8s.io/v1beta1") != 0))
		return kfail(err, err_size, -EINVAL, path,
		             "user \"%s\": exec apiVersion \"%s\" is not supported (client.authentication.k8s.io/v1 "
		             "or v1beta1)", c->user, api ? api : "");
	if (mode && strcmp(mode, "Always") == 0)
		return kfail(err, err_size, -EINVAL, path,
		             "user \"%s\": exec plugin \"%s\" has interactiveMode Always, but this program runs "
		             "without a terminal; give it a non-interactive login (IfAvailable or Never)", c->user, cmd);
	if (mode && strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable") != 0)
		return kfail(err, err_size, -EINVAL, path,
		             "user \"%s\": exec interactiveMode \"%s\" is not Never, IfAvailable or Always", c->user, mode);
	if (args && !fy_node_is_sequence(args))
		return kfail(err, err_size, -EINVAL, path, "user \"%s\": exec args is not a list", c->user);
	if (env && !fy_node_is_sequence(env))
		return kfail(err, err_size, -EINVAL, path, "user \"%s\": exec env is not a list", c->user);
	nargs = args ? (size_t)fy_node_sequence_item_count(args) : 0;
	nenv = env ? (size_t)fy_node_sequence_item_count(env) : 0;
	if (!(x = calloc(1, sizeof(*x))))
		return -ENOMEM;
	x->n_ref = 1;
	r = -ENOMEM;
	if (!(x->argv = calloc(nargs + 2, sizeof(char *))) || !(x->env = calloc(nenv + 1, sizeof(char *))) ||
	    !(x->api_version = strdup(api)) || (hint && *hint && !(x->install_hint = strdup(hint))) ||
	    asprintf(&x->where, "%s: user \"%s\"", path, c->user) < 0) {
		x->where = NULL;
		goto fail;
	}
	/* kubectl: a relative command with a '/' is relative to the kubeconfig's directory; a bare
	 * name is looked up in PATH */
	x->argv[0] = strchr(cmd, '/') ? resolve_path(path, cmd) : strdup(cmd);
	if (!x->argv[0])
		goto fail;
	for (size_t i = 0; (item = args ? fy_node_sequence_iterate(args, &it) : NULL); i++) {
		const char *a = fy_node_is_scalar(item) ? fy_node_get_scalar0(item) : NULL;
		if (!a) {
			r = kfail(err, err_size, -EINVAL, path, "user \"%s\": exec args[%zu] is not a string", c->user, i);
			goto fail;
		}
		if (!(x->argv[i + 1] = strdup(a)))
			goto fail;
	}
	it = NULL;
	for (size_t i = 0; (item = env ? fy_node_sequence_iterate(env, &it) : NULL); i++) {
		const char *n = scalar(item, "name"), *v = scalar(item, "value");
		if (!n || !*n || strchr(n, '=') || !v) {
			r = kfail(err, err_size, -EINVAL, path, "user \"%s\": exec env[%zu] needs a name and a value", c->user,
			          i);
			goto fail;
		}
		if (asprintf(&x->env[i], "%s=%s", n, v) < 0) {
			x->env[i] = NULL;
			goto fail;
		}
	}
	r = exec_info(x, c, pci && strcmp(pci, "true") == 0, path, err, err_size);
	if (r < 0)
		goto fail;
	*ret = x;
	return 0;
fail:
	kube_exec_unref(x);
	return r;
}

/* libfyaml's diagnostics are collected, never printed (its source excerpt, caret and "[ERR]"
 * lines would reach the user): the first error becomes our one line, with its line and column. */
static int parse_yaml(const char *path, const char *text, size_t len, struct fy_document **ret, char *err,
                      size_t err_size)
{
	struct fy_diag_cfg dcfg;
	struct fy_diag *fdiag;
	struct fy_diag_error *e;
	void *it = NULL;
	int r;

	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.output_fn = NULL;
	dcfg.colorize = false;
	fdiag = fy_diag_create(&dcfg);
	if (!fdiag)
		return kfail(err, err_size, -ENOMEM, path, "out of memory");
	fy_diag_set_collect_errors(fdiag, true);
	struct fy_parse_cfg pcfg = { .flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG | FYPCF_DISABLE_ACCELERATORS,
		                     .diag = fdiag };
	*ret = fy_document_build_from_string(&pcfg, text, len);
	if (*ret) {
		fy_diag_destroy(fdiag);
		return 0;
	}
	r = kfail(err, err_size, -EINVAL, path, "not valid YAML");
	while ((e = fy_diag_errors_iterate(fdiag, &it))) {
		if (e->type < FYET_ERROR || !e->msg)
			continue;
		if (e->line > 0 && e->column > 0)
			snprintf(err, err_size, "%s:%d:%d: not valid YAML: %s", path, e->line, e->column, e->msg);
		else if (e->line > 0)
			snprintf(err, err_size, "%s:%d: not valid YAML: %s", path, e->line, e->msg);
		else
			snprintf(err, err_size, "%s: not valid YAML: %s", path, e->msg);
		break;
	}
	fy_diag_destroy(fdiag);
	return r;
}

int kubeconfig_load(const char *path, const char *missing_hint, kube_config **ret, char *err, size_t err_size)
{
	return kubeconfig_load_as(path, missing_hint, 0, ret, err, err_size);
}

/* The context's cluster: server (https only), proxy, TLS server name and CA; never
 * insecure-skip-tls-verify. 0 or -errno with err set. */
static int read_cluster(const char *path, struct fy_node *root, kube_config *c, char *err, size_t err_size)
{
	struct fy_node *cluster = named(root, "clusters", c->cluster, "cluster");
	const char *v;

	if (!cluster)
		return kfail(err, err_size, -EINVAL, path, "context \"%s\": cluster \"%s\" is not in clusters", c->context,
		             c->cluster);
	v = scalar(cluster, "server");
	if (!v || strncmp(v, "https://", 8) != 0 || !v[8])
		return kfail(err, err_size, -EINVAL, path, "cluster \"%s\": server must be an https:// URL, not \"%s\"",
		             c->cluster, v ? v : "");
	if (!(c->server = strdup(v)))
		return -ENOMEM;
	while (strlen(c->server) > 8 && c->server[strlen(c->server) - 1] == '/')
		c->server[strlen(c->server) - 1] = '\0';
	v = scalar(cluster, "insecure-skip-tls-verify");
	if (v && strcmp(v, "true") == 0)
		return kfail(err, err_size, -EINVAL, path,
		             "cluster \"%s\": insecure-skip-tls-verify is refused (TLS is always verified): give the "
		             "cluster's CA as certificate-authority or certificate-authority-data", c->cluster);
	if ((v = scalar(cluster, "proxy-url")) && *v) {
		/* what libcurl takes; kubectl's Go client takes http, https and socks5 too */
		if (strncmp(v, "http://", 7) != 0 && strncmp(v, "https://", 8) != 0 && strncmp(v, "socks5://", 9) != 0)
			return kfail(err, err_size, -EINVAL, path,
			             "cluster \"%s\": proxy-url \"%s\" is not an http://, https:// or socks5:// URL",
			             c->cluster, v);
		if (!(c->proxy_url = strdup(v)))
			return -ENOMEM;
	}
	if ((v = scalar(cluster, "tls-server-name")) && *v && !(c->tls_server_name = strdup(v)))
		return -ENOMEM;
	return load_blob(path, cluster, "certificate-authority", "certificate-authority-data", &c->ca, err, err_size);
}

/* The user's token (inline or tokenFile), without the line end a file gives it. */
static int read_token(const char *path, struct fy_node *user, kube_config *c, char *err, size_t err_size)
{
	const char *v;

	if ((v = scalar(user, "token")) && *v)
		return (c->token = strdup(v)) ? 0 : -ENOMEM;
	if ((v = scalar(user, "tokenFile")) && *v) {
		char *tp = resolve_path(path, v), *tok = NULL;
		size_t tl;
		int r;

		if (!tp)
			return -ENOMEM;
		r = read_file(tp, TOKEN_MAX, true, &tok, &tl, err, err_size);
		free(tp);
		if (r < 0)
			return r;
		while (tl > 0 && (tok[tl - 1] == '\n' || tok[tl - 1] == '\r' || tok[tl - 1] == ' '))
			tok[--tl] = '\0';
		c->token = tok;
	}
	return 0;
}

/* The context's user: a client certificate and key, a token, or (a cluster user's, flags) an exec
 * plugin run once now; auth-provider plugins refused. 0 or -errno with err set. */
static int read_user(const char *path, struct fy_node *root, unsigned flags, kube_config *c, char *err,
                     size_t err_size)
{
	struct fy_node *user = named(root, "users", c->user, "user");
	int r;

	if (!user)
		return kfail(err, err_size, -EINVAL, path, "context \"%s\": user \"%s\" is not in users", c->context,
		             c->user);
	struct fy_node *ex = fy_node_mapping_lookup_value_by_simple_key(user, "exec", 4);
	if (fy_node_mapping_lookup_value_by_simple_key(user, "auth-provider", 13) && (flags & KUBECONFIG_CLUSTER_USER))
		return kfail(err, err_size, -EINVAL, path,
		             "user \"%s\": auth-provider plugins are not supported (kubectl dropped them too); use an exec "
		             "plugin (e.g. kubelogin, gke-gcloud-auth-plugin), a client certificate or a token", c->user);
	if ((ex && !(flags & KUBECONFIG_CLUSTER_USER)) ||
	    fy_node_mapping_lookup_value_by_simple_key(user, "auth-provider", 13))
		return kfail(err, err_size, -EINVAL, path,
		             "user \"%s\": credential plugins (exec/auth-provider) are not supported; use the "
		             "kubelet's client certificate or a token", c->user);
	if ((r = load_blob(path, user, "client-certificate", "client-certificate-data", &c->cert, err, err_size)) < 0 ||
	    (r = load_blob(path, user, "client-key", "client-key-data", &c->key, err, err_size)) < 0 ||
	    (r = read_token(path, user, c, err, err_size)) < 0)
		return r;
	if (ex && !c->token && !c->cert.path && !c->cert.data) {
		kube_exec_cred cred;
		if ((r = parse_exec(path, c, ex, &c->exec, err, err_size)) < 0 ||
		    (r = kube_exec_run(c->exec, &cred, err, err_size)) < 0)
			return r;
		c->token = cred.token;
		c->cert.data = cred.cert;
		c->cert.len = cred.cert_len;
		c->key.data = cred.key;
		c->key.len = cred.key_len;
		c->expiry_ns = cred.expiry_ns;
	}
	if (!(c->cert.path || c->cert.data) != !(c->key.path || c->key.data))
		return kfail(err, err_size, -EINVAL, path, "user \"%s\": a client certificate needs its key and vice versa",
		             c->user);
	if (!c->cert.path && !c->cert.data && !c->token)
		return kfail(err, err_size, -EINVAL, path, "user \"%s\": no client certificate and no token%s", c->user,
		             flags & KUBECONFIG_CLUSTER_USER ? " (nor an exec plugin)" : "");
	return 0;
}

int kubeconfig_load_as(const char *path, const char *missing_hint, unsigned flags, kube_config **ret, char *err,
                       size_t err_size)
{
	struct fy_document *doc = NULL;
	struct fy_node *root, *ctx;
	kube_config *c = NULL;
	char *text = NULL;
	size_t len;
	const char *cur, *v;
	int r;

	r = read_file(path, KUBECONFIG_MAX, true, &text, &len, err, err_size);
	if (r == -ENOENT && missing_hint) {
		size_t l = strlen(err);
		snprintf(err + l, err_size - l, " (%s)", missing_hint);
	}
	if (r < 0)
		return r;
	r = parse_yaml(path, text, len, &doc, err, err_size);
	if (r < 0)
		goto out;
	root = fy_document_root(doc);
	if (!root || !fy_node_is_mapping(root)) {
		r = kfail(err, err_size, -EINVAL, path, "not a kubeconfig (expected a mapping)");
		goto out;
	}
	cur = scalar(root, "current-context");
	if (!cur || !*cur) {
		r = kfail(err, err_size, -EINVAL, path, "current-context is not set");
		goto out;
	}
	ctx = named(root, "contexts", cur, "context");
	if (!ctx) {
		r = kfail(err, err_size, -EINVAL, path, "current-context \"%s\" is not in contexts", cur);
		goto out;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		r = -ENOMEM;
		goto out;
	}
	c->context = strdup(cur);
	c->cluster = strdup((v = scalar(ctx, "cluster")) ? v : "");
	c->user = strdup((v = scalar(ctx, "user")) ? v : "");
	if (!c->context || !c->cluster || !c->user) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = read_cluster(path, root, c, err, err_size)) < 0 || (r = read_user(path, root, flags, c, err, err_size)) < 0)
		goto out;
	*ret = c;
	c = NULL;
	r = 0;
out:
	if (text) {
		explicit_bzero(text, len);
		free(text);
	}
	if (doc)
		fy_document_destroy(doc);
	kubeconfig_free(c);
	return r;
}

static void blob_done(kube_blob *b)
{
	free(b->path);
	if (b->data)
		explicit_bzero(b->data, b->len);
	free(b->data);
}

kube_config *kubeconfig_free(kube_config *c)
{
	if (!c)
		return NULL;
	free(c->server);
	free(c->tls_server_name);
	free(c->proxy_url);
	kube_exec_unref(c->exec);
	blob_done(&c->ca);
	blob_done(&c->cert);
	blob_done(&c->key);
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	free(c->context);
	free(c->cluster);
	free(c->user);
	free(c);
	return NULL;
}
