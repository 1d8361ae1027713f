/* SPDX-License-Identifier: MIT */
#include "kexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "k8s.h"
#include "clock.h"
#include "grow.h"

extern char **environ;

kube_exec *kube_exec_ref(kube_exec *x)
{
	if (x)
		x->n_ref++;
	return x;
}

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

kube_exec *kube_exec_unref(kube_exec *x)
{
	if (!x || --x->n_ref > 0)
		return NULL;
	free(x->api_version);
	free_strv(x->argv);
	free_strv(x->env);
	free(x->exec_info);
	free(x->install_hint);
	free(x->where);
	free(x);
	return NULL;
}

void kube_exec_cred_done(kube_exec_cred *c)
{
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	free(c->token);
	if (c->key)
		explicit_bzero(c->key, c->key_len);
	free(c->key);
	free(c->cert);
	*c = (kube_exec_cred){ 0 };
}

char *kube_base64_encode(const unsigned char *data, size_t len)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < len ? (uint32_t)data[i + 1] << 8 : 0) |
		             (i + 2 < len ? data[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < len ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* The environment: ours, then the plugin's env entries (they win, as in kubectl), then
 * KUBERNETES_EXEC_INFO. */
static char **plugin_env(const kube_exec *x)
{
	size_t n = 0, m = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	while (x->env && x->env[m])
		m++;
	env = calloc(n + m + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strcspn(environ[i], "=");
		bool shadowed = !strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21);
		for (size_t j = 0; j < m && !shadowed; j++)
			shadowed = !strncmp(x->env[j], environ[i], nl) && x->env[j][nl] == '=';
		if (!shadowed)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		env[k++] = x->env[j];
	env[k++] = x->exec_info;
	env[k] = NULL;
	return env;
}

int kube_exec_output_read(kube_exec_output *o, int fd, char *why, size_t why_size)
{
	if (o->len + 1 >= o->cap) {
		if (o->cap >= KUBE_EXEC_OUTPUT_MAX) {
			snprintf(why, why_size, "printed more than %d bytes", KUBE_EXEC_OUTPUT_MAX);
			return -EFBIG;
		}
		/* twice the room (4 KiB first) */
		if (GROW_ARRAY_FROM(&o->buf, &o->cap, o->cap + 1, 4096) < 0)
			return -ENOMEM;
	}
	ssize_t r = read(fd, o->buf + o->len, o->cap - o->len - 1);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return -EAGAIN;
	if (r < 0) {
		snprintf(why, why_size, "cannot read its output: %s", strerror(errno));
		return -EIO;
	}
	o->len += (size_t)r;
	o->buf[o->len] = '\0';
	return r > 0;
}

void kube_exec_output_done(kube_exec_output *o)
{
	if (o->buf)
		explicit_bzero(o->buf, o->len);
	free(o->buf);
	*o = (kube_exec_output){ 0 };
}

/* Reads the plugin's standard output to its end, within the deadline and the bound. */
static int read_output(int fd, kube_exec_output *o, char *why, size_t why_size)
{
	int64_t deadline = clock_mono_ns() + (int64_t)KUBE_EXEC_DEADLINE_MS * 1000000;

	for (;;) {
		int64_t left = deadline - clock_mono_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0) {
			snprintf(why, why_size, "gave no answer within %d s", KUBE_EXEC_DEADLINE_MS / 1000);
			return -ETIMEDOUT;
		}
		int n = poll(&p, 1, (int)(left / 1000000) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, why_size, "cannot read its output: %s", strerror(errno));
			return -errno;
		}
		if (n == 0)
			continue;
		int r = kube_exec_output_read(o, fd, why, why_size);
		if (r == -EAGAIN || r > 0)
			continue;
		return r;
	}
}

static const char *str_at(yajl_val root, const char **path)
{
	yajl_val v = yajl_tree_get(root, path, yajl_t_string);
	return v ? YAJL_GET_STRING(v) : NULL;
}

static int decode(const kube_exec *x, const char *out, kube_exec_cred *c, char *why, size_t why_size)
{
	char perr[256];
	yajl_val root = yajl_tree_parse(out, perr, sizeof(perr));
	const char *kind, *api, *tok, *cert, *key, *exp;
	int r = -EINVAL;

	if (!root || !YAJL_IS_OBJECT(root)) {
		snprintf(why, why_size, "printed no ExecCredential (not a JSON object)");
		goto out;
	}
	kind = str_at(root, (const char *[]){ "kind", NULL });
	api = str_at(root, (const char *[]){ "apiVersion", NULL });
	if (!kind || strcmp(kind, "ExecCredential") != 0) {
		snprintf(why, why_size, "printed kind \"%s\", not ExecCredential", kind ? kind : "");
		goto out;
	}
	if (!api || strcmp(api, x->api_version) != 0) {
		snprintf(why, why_size, "answered apiVersion \"%s\", the kubeconfig asked for %s", api ? api : "",
		         x->api_version);
		goto out;
	}
	tok = str_at(root, (const char *[]){ "status", "token", NULL });
	cert = str_at(root, (const char *[]){ "status", "clientCertificateData", NULL });
	key = str_at(root, (const char *[]){ "status", "clientKeyData", NULL });
	exp = str_at(root, (const char *[]){ "status", "expirationTimestamp", NULL });
	if ((cert && *cert) != (key && *key)) {
		snprintf(why, why_size, "returned a client certificate without its key or a key without its certificate");
		goto out;
	}
	if (!(tok && *tok) && !(cert && *cert)) {
		snprintf(why, why_size, "returned neither status.token nor status.clientCertificateData");
		goto out;
	}
	if (exp && *exp && k8s_parse_time(exp, &c->expiry_ns) < 0) {
		snprintf(why, why_size, "status.expirationTimestamp \"%s\" is not an RFC 3339 time", exp);
		goto out;
	}
	r = -ENOMEM;
	if (tok && *tok && !(c->token = strdup(tok)))
		goto out;
	if (cert && *cert) {
		c->cert_len = strlen(cert);
		c->key_len = strlen(key);
		if (!(c->cert = (unsigned char *)strdup(cert)) || !(c->key = (unsigned char *)strdup(key)))
			goto out;
	}
	r = 0;
out:
	yajl_tree_free(root);
	if (r < 0)
		kube_exec_cred_done(c);
	return r;
}

int kube_exec_spawn(const kube_exec *x, pid_t *ret_pid, int *ret_fd, char *err, size_t err_size)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	char **env = NULL;
	int pipefd[2] = { -1, -1 }, r;
	pid_t pid = -1;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		r = errno;
		snprintf(err, err_size, "%s: cannot run exec plugin \"%s\": %s", x->where, x->argv[0], strerror(r));
		return -r;
	}
	if (!(env = plugin_env(x))) {
		close(pipefd[0]);
		close(pipefd[1]);
		snprintf(err, err_size, "%s: out of memory", x->where);
		return -ENOMEM;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	/* a daemon blocks SIGTERM for signalfd: the plugin gets the default mask and dispositions */
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	r = strchr(x->argv[0], '/') ? posix_spawn(&pid, x->argv[0], &fa, &attr, x->argv, env)
	                            : posix_spawnp(&pid, x->argv[0], &fa, &attr, x->argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	free(env);
	close(pipefd[1]);
	if (r != 0) {
		close(pipefd[0]);
		if (r == ENOENT)
			snprintf(err, err_size, "%s: exec plugin \"%s\" not found%s%s", x->where, x->argv[0],
			         x->install_hint ? ": " : " (is it installed, and in PATH?)",
			         x->install_hint ? x->install_hint : "");
		else
			snprintf(err, err_size, "%s: cannot run exec plugin \"%s\": %s", x->where, x->argv[0], strerror(r));
		/* one line: an installHint may span several */
		for (char *p = err; (p = strchr(p, '\n'));)
			*p = ' ';
		return -r;
	}
	*ret_pid = pid;
	*ret_fd = pipefd[0];
	return 0;
}

int kube_exec_finish(const kube_exec *x, int r, const char *why_in, int status, kube_exec_output *o,
                     kube_exec_cred *ret, char *err, size_t err_size)
{
	char why[300];

	snprintf(why, sizeof(why), "%s", why_in);
	*ret = (kube_exec_cred){ 0 };
	if (r == 0 && WIFSIGNALED(status)) {
		snprintf(why, sizeof(why), "was killed by signal %d", WTERMSIG(status));
		r = -EIO;
	} else if (r == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		snprintf(why, sizeof(why), "exited with status %d (its messages are above)", WEXITSTATUS(status));
		r = -EIO;
	}
	if (r == 0)
		r = decode(x, o->buf ? o->buf : "", ret, why, sizeof(why));
	kube_exec_output_done(o);
	if (r < 0 && r != -ENOMEM)
		snprintf(err, err_size, "%s: exec plugin \"%s\" %s", x->where, x->argv[0], why);
	else if (r == -ENOMEM)
		snprintf(err, err_size, "%s: out of memory", x->where);
	return r;
}

int kube_exec_run(const kube_exec *x, kube_exec_cred *ret, char *err, size_t err_size)
{
	kube_exec_output out = { 0 };
	char why[300] = "";
	int fd = -1, r, status = 0;
	pid_t pid = -1;

	*ret = (kube_exec_cred){ 0 };
	r = kube_exec_spawn(x, &pid, &fd, err, err_size);
	if (r < 0)
		return r;
	r = read_output(fd, &out, why, sizeof(why));
	close(fd);
	if (r < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			status = 0;
			break;
		}
	}
	return kube_exec_finish(x, r, why, status, &out, ret, err, err_size);
}
