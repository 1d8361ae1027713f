/* SPDX-License-Identifier: MIT */
#include "condparse.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_tree.h>

static const char *const type_names[NODECOND_TYPES] = { "EvictdMemoryPressure", "EvictdDiskPressure",
	                                                "EvictdPIDPressure" };

const char *condparse_type_name(int i)
{
	return i >= 0 && i < NODECOND_TYPES ? type_names[i] : "";
}

int condparse_type_index(const char *type)
{
	for (int i = 0; i < NODECOND_TYPES; i++)
		if (type && strcmp(type, type_names[i]) == 0)
			return i;
	return -1;
}

static void set(char *dst, size_t size, const char *s)
{
	snprintf(dst, size, "%s", s ? s : "");
}

static yajl_val member(yajl_val v, const char *key)
{
	const char *path[] = { key, NULL };
	return yajl_tree_get(v, path, yajl_t_any);
}

int condparse_status(const char *text, evictd_status *ret)
{
	char perr[128];
	yajl_val root = yajl_tree_parse(text, perr, sizeof(perr));
	yajl_val pid = member(root, "pid"), state = member(root, "state"), updated = member(root, "updated_usec");
	yajl_val hb = member(root, "heartbeat_usec"), conds = member(root, "conditions");
	evictd_status st = { 0 };

	if (!YAJL_IS_OBJECT(root) || !YAJL_IS_INTEGER(pid) || YAJL_GET_INTEGER(pid) <= 0 ||
	    YAJL_GET_INTEGER(pid) > INT_MAX || !YAJL_IS_STRING(state) || !YAJL_IS_INTEGER(updated) ||
	    YAJL_GET_INTEGER(updated) < 0) {
		yajl_tree_free(root);
		return -EBADMSG;
	}
	st.pid = (pid_t)YAJL_GET_INTEGER(pid);
	snprintf(st.state, sizeof(st.state), "%s", YAJL_GET_STRING(state));
	st.dry_run = YAJL_IS_TRUE(member(root, "dry_run"));
	st.updated_usec = (uint64_t)YAJL_GET_INTEGER(updated);
	st.heartbeat_usec = YAJL_IS_INTEGER(hb) && YAJL_GET_INTEGER(hb) > 0 ? (uint64_t)YAJL_GET_INTEGER(hb) : 0;
	for (size_t i = 0; YAJL_IS_ARRAY(conds) && i < conds->u.array.len; i++) {
		const char *c = YAJL_GET_STRING(conds->u.array.values[i]);
		size_t len = strlen(st.conditions);
		if (c && *c && !strchr(c, ' ') && len + 1 + strlen(c) < sizeof(st.conditions))
			snprintf(st.conditions + len, sizeof(st.conditions) - len, "%s%s", len ? " " : "", c);
	}
	yajl_tree_free(root);
	*ret = st;
	return 0;
}

static const char *member_str(yajl_val v, const char *key)
{
	const char *path[] = { key, NULL };
	return YAJL_GET_STRING(yajl_tree_get(v, path, yajl_t_string));
}

int condparse_node(const char *body, nodecond_value out[NODECOND_TYPES])
{
	char perr[128];
	yajl_val root = yajl_tree_parse(body, perr, sizeof(perr));
	const char *path[] = { "status", "conditions", NULL };

	memset(out, 0, sizeof(*out) * NODECOND_TYPES);
	if (!YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return -EBADMSG;
	}
	yajl_val conds = yajl_tree_get(root, path, yajl_t_array);
	for (size_t k = 0; conds && k < conds->u.array.len; k++) {
		yajl_val c = conds->u.array.values[k];
		int i = condparse_type_index(member_str(c, "type"));
		if (i < 0)
			continue;
		nodecond_value *v = &out[i];
		v->present = true;
		set(v->status, sizeof(v->status), member_str(c, "status"));
		set(v->reason, sizeof(v->reason), member_str(c, "reason"));
		set(v->message, sizeof(v->message), member_str(c, "message"));
		set(v->time, sizeof(v->time), member_str(c, "lastTransitionTime"));
	}
	yajl_tree_free(root);
	return 0;
}

