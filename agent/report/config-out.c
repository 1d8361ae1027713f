/* SPDX-License-Identifier: MIT */
#include "config-out.h"

#include <errno.h>
#include <string.h>

#include "jsonw.h"

typedef struct text_state {
	FILE *f;
	char section[320];
} text_state;

static void text_row(const char *section, const char *key, const char *value, const char *origin, void *userdata)
{
	text_state *t = userdata;
	char kv[1024];

	if (strcmp(section, t->section) != 0) {
		fprintf(t->f, "%s[%s]\n", t->section[0] ? "\n" : "", section);
		snprintf(t->section, sizeof(t->section), "%s", section);
	}
	snprintf(kv, sizeof(kv), "%s = %s", key, value);
	fprintf(t->f, "%-48s ; %s\n", kv, origin);
}

static void text_conflict(const kubelet_conflict *k, void *userdata)
{
	fprintf(userdata, "; warning: %s\n", k->text);
}

int config_out_text(FILE *f, const evictd_config *c, const int64_t *capacity)
{
	text_state t = { .f = f };

	fprintf(f, "; evictd's effective configuration; after each value, where it came from\n");
	fprintf(f, "; files: %s\n", c->sources && *c->sources ? c->sources : "none (defaults)");
	if (c->kubelet.path[0])
		fprintf(f, "; kubelet configuration: %s\n", c->kubelet.path);
	else if (c->kubelet.warning[0])
		fprintf(f, "; warning: kubelet configuration ignored: %s (a running evictd that read it before keeps "
		           "those values: a reload refuses a broken file)\n", c->kubelet.warning);
	else if (c->kubelet.missing[0])
		fprintf(f, "; warning: kubelet configuration %s\n", c->kubelet.missing);
	else
		fprintf(f, "; kubelet configuration: %s\n", c->kubelet.config_path ? "not found" : "off");
	config_kubelet_conflicts(c, capacity, text_conflict, f);
	fputc('\n', f);
	config_foreach_setting(c, text_row, &t);
	return ferror(f) ? -EIO : 0;
}

typedef struct json_state {
	FILE *f;
	bool first;
} json_state;

static void json_row(const char *section, const char *key, const char *value, const char *origin, void *userdata)
{
	json_state *j = userdata;
	fputs(j->first ? "{\"section\":" : ",{\"section\":", j->f);
	j->first = false;
	json_string(j->f, section);
	fputs(",\"key\":", j->f);
	json_string(j->f, key);
	fputs(",\"value\":", j->f);
	json_string(j->f, value);
	fputs(",\"origin\":", j->f);
	json_string(j->f, origin);
	fputc('}', j->f);
}

static void json_conflict(const kubelet_conflict *k, void *userdata)
{
	json_state *j = userdata;
	fputs(j->first ? "{\"signal\":" : ",{\"signal\":", j->f);
	j->first = false;
	json_string(j->f, signal_name(k->signal));
	fputs(",\"kind\":", j->f);
	json_string(j->f, k->hard ? "hard" : "soft");
	fputs(",\"key\":", j->f);
	json_string(j->f, k->key);
	fputs(",\"evictd_origin\":", j->f);
	json_string(j->f, k->evictd->origin);
	fputs(",\"kubelet_origin\":", j->f);
	json_string(j->f, k->kubelet->origin);
	fputs(",\"message\":", j->f);
	json_string(j->f, k->text);
	fputc('}', j->f);
}

void config_out_json_members(FILE *f, const evictd_config *c, const int64_t *capacity)
{
	json_state j = { .f = f, .first = true };

	fputs(",\"configuration\":[", f);
	config_foreach_setting(c, json_row, &j);
	fputs("],\"kubelet\":{\"config\":", f);
	if (c->kubelet.path[0])
		json_string(f, c->kubelet.path);
	else
		fputs("null", f);
	fputs(",\"warning\":", f);
	if (c->kubelet.warning[0] || c->kubelet.missing[0])
		json_string(f, c->kubelet.warning[0] ? c->kubelet.warning : c->kubelet.missing);
	else
		fputs("null", f);
	fputs(",\"conflicts\":[", f);
	j.first = true;
	config_kubelet_conflicts(c, capacity, json_conflict, &j);
	fputs("]}", f);
}
