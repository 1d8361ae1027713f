/* SPDX-License-Identifier: MIT */
/*
 * The configuration as data, the bottom of the parser: what every part uses — the error text,
 * freeing, and resolving a threshold against a signal's capacity. Loading is config-load.c, the
 * key table config-keys.c, the values and their validation config-values.c.
 */
#include "config-parse.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void config_set_error(config_error *err, const char *file, unsigned line, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(err->text, sizeof(err->text), "%s:%u: %s", err->file, line, err->msg);
	else
		snprintf(err->text, sizeof(err->text), "%s: %s", err->file, err->msg);
}

char **config_strv_free(char **v)
{
	if (v)
		for (char **i = v; *i; i++)
			free(*i);
	free(v);
	return NULL;
}

evictd_config *config_free(evictd_config *c)
{
	if (!c)
		return NULL;
	free(c->cgroup_root);
	config_strv_free(c->pods);
	free(c->pod_metadata_dir);
	free(c->proc_root);
	free(c->nodefs_path);
	free(c->imagefs_path);
	free(c->runtime_endpoint);
	free(c->kubelet_root_dir);
	free(c->pod_logs_dir);
	config_strv_free(c->exec_argv);
	free(c->status_file);
	free(c->metrics_file);
	free(c->run_dir);
	for (size_t i = 0; i < c->n_classes; i++) {
		free(c->classes[i].name);
		free(c->classes[i].description);
	}
	free(c->classes);
	pp_pcset_free(c->pcset);
	free(c->sources);
	free(c->kube.kubeconfig);
	free(c->kube.node_name);
	free(c->kube.descriptor_dir);
	free(c->kube.spool_dir);
	free(c->kubelet.config_path);
	free(c);
	return NULL;
}

int64_t config_threshold_resolve_signal(evictd_signal s, const threshold_value *t, int64_t capacity)
{
	/* PSI is evictd's own: round to the nearest centipercent instead of the kubelet's float32 cut. */
	if (signal_is_psi(s) && t && t->set && t->percent)
		return llround((double)capacity * (double)t->fraction);
	return config_threshold_resolve(t, capacity);
}

int64_t config_threshold_resolve(const threshold_value *t, int64_t capacity)
{
	if (!t || !t->set)
		return -1;
	if (!t->percent)
		return t->quantity + t->margin;
	return (int64_t)((double)capacity * (double)t->fraction) + t->margin;
}

const char *config_threshold_format(const threshold_value *t, char *buf, size_t size)
{
	if (!t || !t->set)
		snprintf(buf, size, "none");
	else if (t->percent && t->margin)
		snprintf(buf, size, "%g%%+%lld", (double)t->fraction * 100.0, (long long)t->margin);
	else if (t->percent)
		snprintf(buf, size, "%g%%", (double)t->fraction * 100.0);
	else
		snprintf(buf, size, "%lld", (long long)t->quantity);
	return buf;
}

bool config_soft_is_hard(const evictd_config *c, evictd_signal s)
{
	return c->soft[s].set && c->soft_grace_set[s] && c->soft_grace_usec[s] == 0;
}

const threshold_value *config_hard(const evictd_config *c, evictd_signal s)
{
	return &c->hard[s];
}
