/* SPDX-License-Identifier: MIT */
/*
 * kube-apiserver's admission configuration file (--admission-control-config-file), as far as the
 * ResourceQuota plugin goes (k8s.h k8s_load_admission_config):
 *
 *   apiVersion: apiserver.config.k8s.io/v1
 *   kind: AdmissionConfiguration
 *   plugins:
 *   - name: ResourceQuota
 *     configuration:                       # or  path: resourcequota.yaml
 *       apiVersion: apiserver.config.k8s.io/v1
 *       kind: ResourceQuotaConfiguration
 *       limitedResources:
 *       - resource: pods
 *         matchScopes:
 *         - scopeName: PriorityClass
 *           operator: In
 *           values: ["cluster-services"]
 *
 * kube-apiserver decodes both objects strictly (serializer.EnableStrict in
 * apiserver/pkg/admission/config.go and the plugin's config.go): an unknown or misspelt field is an
 * error, and so it is here — a "limitedResource:" typo must not turn the restriction off quietly.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "k8s_decode.h"
#include "k8s_quota.h"

struct adm_load {
	k8s_cluster *c;
	diag *d;
	const char *file; /* in the cluster's arena: locations keep it */
	const char *dir;  /* for the plugin's relative path */
	unsigned objects;
	bool plugin_file; /* reading the file a plugin's path names */
	bool found;       /* the ResourceQuota plugin was met */
	bool bad;
};

struct type_meta {
	const char *api_version, *kind;
};

static const struct type_meta admission_types[] = {
	{ "apiserver.config.k8s.io/v1", "AdmissionConfiguration" },
	{ "apiserver.config.k8s.io/v1alpha1", "AdmissionConfiguration" },
	{ "apiserver.k8s.io/v1alpha1", "AdmissionConfiguration" },
};

static const struct type_meta quota_types[] = {
	{ "apiserver.config.k8s.io/v1", "ResourceQuotaConfiguration" },
	{ "resourcequota.admission.k8s.io/v1beta1", "Configuration" },
	{ "resourcequota.admission.k8s.io/v1alpha1", "Configuration" },
};

/* Strict decoding: every key of map is one of allowed (NULL-terminated). */
static int strict(yv *v, const kval *map, const char *const *allowed)
{
	int bad = 0;
	for (size_t i = 0; i < kval_count(map); i++) {
		const kval *k = kval_key_at(map, i);
		const char *name = kval_is_scalar(k) ? kval_str(k) : "";
		const char *const *a = allowed;
		while (*a && strcmp(*a, name) != 0)
			a++;
		if (*a)
			continue;
		size_t mark = yv_push_key(v, name);
		yv_error(v, k, "unknown field (kube-apiserver decodes this file strictly)");
		yv_pop(v, mark);
		bad = -1;
	}
	return bad;
}

/* apiVersion and kind, one of types; v->object becomes the kind. */
static int type_meta(yv *v, const kval *obj, const struct type_meta *types, size_t n, const char *what)
{
	const char *api = NULL, *kind = NULL;
	int bad = 0;

	if (!yv_expect_map(v, obj))
		return -1;
	bad |= yv_string(v, obj, "apiVersion", true, &api) < 0;
	bad |= yv_string(v, obj, "kind", true, &kind) < 0;
	if (bad)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(api, types[i].api_version) == 0 && strcmp(kind, types[i].kind) == 0) {
			snprintf(v->object, sizeof(v->object), "%s", kind);
			return 0;
		}
	char want[256];
	size_t at = 0;
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(want + at, sizeof(want) - at, "%s%s %s", i ? ", " : "", types[i].api_version,
		                       types[i].kind);
	yv_error(v, obj, "%s %s is not %s (%s)", api, kind, what, want);
	return -1;
}

static int strict_scope_req(yv *v, const kval *e, void *elem)
{
	static const char *const keys[] = { "scopeName", "operator", "values", NULL };
	int bad = strict(v, e, keys);
	return k8s_scope_req(v, e, elem) < 0 || bad ? -1 : 0;
}

static int limited_resource(yv *v, const kval *e, void *elem)
{
	static const char *const keys[] = { "apiGroup", "resource", "matchContains", "matchScopes", NULL };
	struct k8s_limited_resource *l = elem;
	int bad = strict(v, e, keys);

	l->loc = (struct diag_loc){ .file = v->file, .line = yv_line(e) };
	bad |= yv_string(v, e, "apiGroup", false, &l->api_group) < 0;
	bad |= yv_string(v, e, "resource", false, &l->resource) < 0;
	bad |= yv_string_list(v, e, "matchContains", &l->ncontains, &l->contains) < 0;
	bad |= yv_list(v, e, "matchScopes", sizeof(struct k8s_scope_req), &l->nscopes, (void **)&l->scopes,
	               strict_scope_req) < 0;
	if (!l->api_group)
		l->api_group = "";
	return bad ? -1 : 0;
}

/* The plugin's configuration object (inline or from its file) into c->limited. */
static int quota_configuration(struct adm_load *l, yv *v, const kval *obj)
{
	static const char *const keys[] = { "apiVersion", "kind", "limitedResources", NULL };
	struct k8s_limited_resource *arr = NULL;
	size_t n = 0;
	int bad;

	if (type_meta(v, obj, quota_types, sizeof(quota_types) / sizeof(quota_types[0]), "the ResourceQuota plugin's configuration") < 0)
		return -1;
	bad = strict(v, obj, keys);
	bad |= yv_list(v, obj, "limitedResources", sizeof(*arr), &n, (void **)&arr, limited_resource) < 0;
	for (size_t i = 0; !bad && i < n && !v->oom; i++) {
		struct k8s_limited_resource *e;
		APPEND(l->c, limited, arr[i], e);
		v->oom |= !e;
	}
	return bad || v->errors ? -1 : 0;
}

/* Whether item is the file's one object to read (a second one is reported; empty documents are
 * skipped). v is set up to report on it as object. */
static bool the_object(struct adm_load *l, yv *v, const kval *item, const char *object, const char *holds)
{
	*v = (yv){ .arena = &l->c->arena, .diag = l->d, .file = l->file };
	snprintf(v->object, sizeof(v->object), "%s", object);
	if (yv_is_null(item))
		return false;
	if (++l->objects > 1) {
		yv_error(v, item, "a second object: %s", holds);
		l->bad = true;
		return false;
	}
	return true;
}

static int on_plugin_file(void *userdata, const kval *item)
{
	struct adm_load *l = userdata;
	yv v;

	if (!the_object(l, &v, item, "ResourceQuota plugin configuration", "the plugin's file holds one configuration"))
		return 0;
	if (quota_configuration(l, &v, item) < 0)
		l->bad = true;
	return v.oom ? -ENOMEM : 0;
}

/* The plugin's path, relative to the admission file's directory as kube-apiserver resolves it. */
static int plugin_file(struct adm_load *l, yv *v, const kval *path_node, const char *path)
{
	struct adm_load sub = { .c = l->c, .d = l->d, .plugin_file = true };
	char full[PATH_MAX];
	struct stat st;
	int r;

	if (path[0] == '/' || strcmp(l->dir, ".") == 0)
		snprintf(full, sizeof(full), "%s", path);
	else
		snprintf(full, sizeof(full), "%s/%s", l->dir, path);
	/* kube-apiserver reads any file; a device or a FIFO would only hang or flood this one */
	if (stat(full, &st) < 0) {
		yv_error(v, path_node, "%s: %s", full, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		yv_error(v, path_node, "%s: not a regular file", full);
		return -1;
	}
	if (!(sub.file = karena_strdup(&l->c->arena, full)))
		return -ENOMEM;
	r = k8s_read_file(full, sub.file, l->d, on_plugin_file, &sub);
	if (r == -ENOMEM)
		return r;
	if (r == 0 && sub.objects == 0) {
		yv_error(v, path_node, "%s holds no configuration", full);
		return -1;
	}
	return r < 0 || sub.bad ? -1 : 0;
}

static int plugin(struct adm_load *l, yv *v, const kval *e)
{
	static const char *const keys[] = { "name", "path", "configuration", NULL };
	const char *name = NULL, *path = NULL;
	int bad = strict(v, e, keys);

	bad |= yv_string(v, e, "name", true, &name) < 0;
	bad |= yv_string(v, e, "path", false, &path) < 0;
	if (bad || strcmp(name, "ResourceQuota") != 0 || l->found)
		return bad ? -1 : 0; /* kube-apiserver takes the first entry of a name */
	l->found = true;
	const kval *conf = yv_get(e, "configuration");
	size_t mark = yv_push_key(v, conf ? "configuration" : "path");
	char object[sizeof(v->object)];
	memcpy(object, v->object, sizeof(object));
	int r = 0;
	if (conf)
		r = quota_configuration(l, v, conf);
	else if (path && *path)
		r = plugin_file(l, v, yv_get(e, "path"), path);
	memcpy(v->object, object, sizeof(object));
	yv_pop(v, mark);
	return r;
}

static int on_item(void *userdata, const kval *item)
{
	static const char *const keys[] = { "apiVersion", "kind", "plugins", NULL };
	struct adm_load *l = userdata;
	const kval *plugins;
	yv v;

	if (!the_object(l, &v, item, "admission configuration", "kube-apiserver reads one AdmissionConfiguration"))
		return 0;
	if (type_meta(&v, item, admission_types, sizeof(admission_types) / sizeof(admission_types[0]),
	              "an admission configuration") < 0 || strict(&v, item, keys) < 0)
		l->bad = true;
	else if ((plugins = yv_get(item, "plugins"))) {
		size_t mark = yv_push_key(&v, "plugins");
		if (!yv_expect_seq(&v, plugins))
			l->bad = true;
		for (size_t i = 0; !l->bad && i < kval_count(plugins) && !v.oom; i++) {
			size_t m2 = yv_push_index(&v, i);
			int r = yv_expect_map(&v, kval_at(plugins, i)) ? plugin(l, &v, kval_at(plugins, i)) : -1;
			if (r == -ENOMEM)
				v.oom = true;
			l->bad |= r < 0;
			yv_pop(&v, m2);
		}
		yv_pop(&v, mark);
	}
	return v.oom ? -ENOMEM : 0;
}

static int load(k8s_cluster *c, const char *name, const char *path, const char *text, size_t len, diag *d)
{
	struct adm_load l = { .c = c, .d = d };
	char buf[PATH_MAX];
	int r;

	snprintf(buf, sizeof(buf), "%s", path && strcmp(path, "-") ? path : name);
	if (!(l.file = karena_strdup(&c->arena, name)) || !(l.dir = karena_strdup(&c->arena, dirname(buf))))
		return -ENOMEM;
	if (path && strcmp(path, "-") == 0)
		l.dir = ".";
	c->admission_file = l.file;
	r = path ? k8s_read_file(path, l.file, d, on_item, &l) : k8s_read_string(l.file, text, len, d, on_item, &l);
	if (r == -ENOMEM)
		return r;
	if (r == 0 && l.objects == 0) {
		diag_error(d, &(struct diag_loc){ .file = l.file }, NULL, "no AdmissionConfiguration in the file");
		return -EINVAL;
	}
	if (r < 0 || l.bad)
		return r < 0 && r != -EINVAL && r != -EILSEQ && r != -EFBIG ? r : -EINVAL;
	if (!l.found)
		diag_warn(d, &(struct diag_loc){ .file = l.file }, NULL,
		          "no plugin named ResourceQuota: its default configuration applies (no limitedResources)");
	return 0;
}

int k8s_load_admission_config(k8s_cluster *c, const char *path, diag *d)
{
	return load(c, strcmp(path, "-") == 0 ? "<stdin>" : path, path, NULL, 0, d);
}

int k8s_load_admission_string(k8s_cluster *c, const char *name, const char *text, size_t len, diag *d)
{
	return load(c, name, NULL, text, len, d);
}
