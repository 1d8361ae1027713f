/* SPDX-License-Identifier: MIT */
#include "noderec-state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "atomic-file.h"
#include "boot-id.h"
#include "jsonw.h"
#include "jsonread.h"
#include "log.h"

/* NODEREC_STATE_MAX_IMAGES records of the longest id and times fit; anything larger is not ours. */
#define STATE_MAX_BYTES (1024 * 1024)

bool noderec_image_id_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n == 0 || n >= NODEREC_IMAGE_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (id[i] <= ' ' || id[i] > '~' || id[i] == '"' || id[i] == '\\')
			return false;
	return true;
}

void noderec_state_done(noderec_state *st)
{
	for (size_t i = 0; i < st->n_images; i++)
		free(st->images[i].id);
	free(st->images);
	*st = (noderec_state){ 0 };
}

static int state_path(const char *dir, char *buf, size_t size)
{
	return snprintf(buf, size, "%s/%s", dir, NODEREC_STATE_FILE) >= (int)size ? -ENAMETOOLONG : 0;
}

/*
 * Something that is not a file where the state belongs (a directory someone made) would make
 * every save fail for good: removed when empty, else renamed to NODEREC_STATE_FILE "~unusable"
 * (not a name the temporaries' sweep takes for its own), once, and said so. 0 or -errno.
 */
static int move_aside(const char *path)
{
	char aside[PATH_MAX];

	if (rmdir(path) == 0) {
		log_msg(LOG_WARNING, "%s was an empty directory, not node-level reclaim's state file: removed", path);
		return 0;
	}
	if (snprintf(aside, sizeof(aside), "%s~unusable", path) >= (int)sizeof(aside))
		return -ENAMETOOLONG;
	if (rename(path, aside) < 0) {
		int r = -errno;
		log_msg(LOG_WARNING, "%s is not node-level reclaim's state file and cannot be moved to %s: %s", path, aside,
		        strerror(errno));
		return r;
	}
	log_msg(LOG_WARNING, "%s was not node-level reclaim's state file (a directory or another kind of file): "
	        "moved to %s, the state is saved in its place", path, aside);
	return 0;
}

static bool is_other_than_file(const char *path)
{
	struct stat sb;
	return lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

int noderec_state_save(const char *dir, const noderec_state *st)
{
	char path[PATH_MAX], boot[40];
	int r = state_path(dir, path, sizeof(path));
	if (r < 0)
		return r;
	if (boot_id_read(boot) < 0)
		boot[0] = '\0'; /* no /proc: never resumed, see the parser */
	jsonbuf j;
	size_t written = 0;
	jb_init(&j, STATE_MAX_BYTES);
	jb_begin_object(&j);
	jb_key(&j, "version"), jb_uint(&j, NODEREC_STATE_VERSION);
	jb_key(&j, "boot_id"), jb_string(&j, boot);
	jb_key(&j, "pending_since_monotonic_usec");
	jb_begin_object(&j);
	for (int s = 0; s < _SIGNAL_MAX; s++)
		if (st->pending_since[s])
			jb_key(&j, signal_name((evictd_signal)s)), jb_uint(&j, st->pending_since[s]);
	jb_end_object(&j);
	jb_key(&j, "images");
	jb_begin_array(&j);
	for (size_t i = 0; i < st->n_images && written < NODEREC_STATE_MAX_IMAGES; i++) {
		const image_record *im = &st->images[i];
		if (!noderec_image_id_valid(im->id))
			continue;
		jb_begin_object(&j);
		jb_key(&j, "id"), jb_string(&j, im->id);
		jb_key(&j, "first_seen_monotonic_usec"), jb_uint(&j, im->h.first_seen_usec);
		jb_key(&j, "last_used_monotonic_usec"), jb_uint(&j, im->h.last_used_usec);
		jb_end_object(&j);
		written++;
	}
	jb_end_array(&j);
	jb_end_object(&j);
	r = jb_error(&j);
	if (r == 0) {
		r = atomic_write_file_in(dir, path, j.buf, j.len);
		if (r < 0 && is_other_than_file(path) && move_aside(path) == 0)
			r = atomic_write_file_in(dir, path, j.buf, j.len);
	}
	jb_free(&j);
	return r;
}

/* --- reading ---------------------------------------------------------------------------------- */

static bool get_time(yajl_val obj, const char *key, long long min, uint64_t now_usec, uint64_t *ret)
{
	long long x;
	if (!json_get_int(obj, key, min, &x) || (uint64_t)x > now_usec)
		return false;
	*ret = (uint64_t)x;
	return true;
}

static const char *parse_pending(yajl_val o, uint64_t now_usec, noderec_state *st)
{
	if (!o || !YAJL_IS_OBJECT(o))
		return "pending_since_monotonic_usec missing or not an object";
	for (size_t i = 0; i < o->u.object.len; i++) {
		evictd_signal s = signal_from_name(o->u.object.keys[i]);
		if (s == _SIGNAL_INVALID)
			return "pending_since_monotonic_usec: not a signal";
		if (st->pending_since[s])
			return "pending_since_monotonic_usec: a signal twice";
		if (!get_time(o, o->u.object.keys[i], 1, now_usec, &st->pending_since[s]))
			return "pending_since_monotonic_usec: a time missing, out of range or later than now";
	}
	return NULL;
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const image_record *)a)->id, ((const image_record *)b)->id);
}

static const char *parse_images(yajl_val a, uint64_t now_usec, noderec_state *st)
{
	if (!a || !YAJL_IS_ARRAY(a))
		return "images missing or not an array";
	if (a->u.array.len > NODEREC_STATE_MAX_IMAGES)
		return "more images than evictd writes";
	st->images = calloc(a->u.array.len ? a->u.array.len : 1, sizeof(*st->images));
	if (!st->images)
		return "out of memory";
	for (size_t i = 0; i < a->u.array.len; i++) {
		yajl_val o = a->u.array.values[i];
		image_record *im = &st->images[i];
		char id[NODEREC_IMAGE_ID_MAX];
		if (!YAJL_IS_OBJECT(o) || !json_get_str(o, "id", id, sizeof(id)) || !noderec_image_id_valid(id))
			return "images: an id missing or invalid";
		if (!get_time(o, "first_seen_monotonic_usec", 1, now_usec, &im->h.first_seen_usec) ||
		    !get_time(o, "last_used_monotonic_usec", 0, now_usec, &im->h.last_used_usec) ||
		    (im->h.last_used_usec && im->h.last_used_usec < im->h.first_seen_usec))
			return "images: a time missing, out of range, later than now, or used before first seen";
		if (!(im->id = strdup(id)))
			return "out of memory";
		st->n_images++;
	}
	qsort(st->images, st->n_images, sizeof(*st->images), by_id);
	for (size_t i = 1; i < st->n_images; i++)
		if (strcmp(st->images[i - 1].id, st->images[i].id) == 0)
			return "images: an id twice";
	return NULL;
}

const char *noderec_state_parse(const char *text, const char *boot, uint64_t now_usec, noderec_state *st)
{
	char err[128], rec_boot[40];
	long long version;
	const char *why = NULL;

	*st = (noderec_state){ 0 };
	yajl_val root = yajl_tree_parse(text, err, sizeof(err));
	if (!root)
		return "not valid JSON";
	if (!YAJL_IS_OBJECT(root))
		why = "not a JSON object";
	else if (!json_get_int(root, "version", 1, &version))
		why = "version missing or invalid";
	else if (!json_get_str(root, "boot_id", rec_boot, sizeof(rec_boot)))
		why = "boot_id missing";
	else if (!boot[0] || strcmp(rec_boot, boot) != 0)
		why = "written before the last reboot";
	else if (!(why = parse_pending(json_member(root, "pending_since_monotonic_usec"), now_usec, st)))
		why = parse_images(json_member(root, "images"), now_usec, st);
	yajl_tree_free(root);
	if (why)
		noderec_state_done(st);
	return why;
}

/* An interrupted atomic write leaves its temporary file (NODEREC_STATE_FILE.XXXXXX) behind. */
static void remove_temporaries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = strlen(NODEREC_STATE_FILE);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strncmp(de->d_name, NODEREC_STATE_FILE, n) == 0 && de->d_name[n] == '.')
			(void)unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}

int noderec_state_load(const char *dir, uint64_t now_usec, noderec_state *st)
{
	char path[PATH_MAX], boot[40];
	const char *why;
	struct stat sb;

	*st = (noderec_state){ 0 };
	remove_temporaries(dir);
	if (state_path(dir, path, sizeof(path)) < 0 || (lstat(path, &sb) < 0 && errno == ENOENT))
		return 0;
	char *text = malloc(STATE_MAX_BYTES);
	if (!text)
		return -ENOMEM;
	if (boot_id_read(boot) < 0)
		boot[0] = '\0';
	why = json_read_own_file(AT_FDCWD, path, text, STATE_MAX_BYTES);
	if (!why)
		why = noderec_state_parse(text, boot, now_usec, st);
	free(text);
	if (why && strcmp(why, "out of memory") == 0)
		return -ENOMEM;
	if (why) {
		log_msg(LOG_WARNING, "Node-level reclaim state %s discarded: %s; node-level reclaim starts afresh (every "
		        "image first seen now, the kubelet's container GC period counted from now)", path, why);
		if (is_other_than_file(path) && !S_ISLNK(sb.st_mode))
			(void)move_aside(path);
		else
			(void)unlink(path);
	}
	return 0;
}
