/* SPDX-License-Identifier: MIT */
#include "inflight.h"

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

#include "boot-id.h"
#include "jsonw.h"
#include "jsonread.h"
#include "log.h"
#include "atomic-file.h"

/* Three paths of up to PATH_MAX and the per-signal state fit, escaped; anything larger is not ours. */
#define RECORD_MAX_BYTES 65536

static const char *const phase_names[_INFLIGHT_PHASE_MAX] = {
	"terminating", "killing", "exec", "reclaiming", "evicted", "backoff",
};
static const char *const part_keys[_RECLAIM_PART_MAX] = { "cgroup", "volumes", "logs" };

const char *inflight_phase_to_string(inflight_phase p)
{
	return (unsigned)p < _INFLIGHT_PHASE_MAX ? phase_names[p] : "unknown";
}

bool inflight_uid_valid(const char *uid)
{
	size_t n = uid ? strlen(uid) : 0;
	if (n == 0 || n >= sizeof(((reclaim_entry *)0)->uid))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = uid[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

static int record_path(const char *dir, const char *uid, char *buf, size_t size)
{
	if (!inflight_uid_valid(uid))
		return -EINVAL;
	return snprintf(buf, size, "%s/%s.json", dir, uid) >= (int)size ? -ENAMETOOLONG : 0;
}

static bool is_evicting(inflight_phase p)
{
	return p == INFLIGHT_TERMINATING || p == INFLIGHT_KILLING || p == INFLIGHT_EXEC;
}

static void int_or_null(jsonbuf *j, bool known, int64_t v)
{
	if (known)
		jb_int(j, v);
	else
		jb_null(j);
}

static void save_reclaim(jsonbuf *j, const reclaim_entry *e)
{
	jb_begin_object(j);
	jb_key(j, "pod"), jb_string(j, e->pod);
	jb_key(j, "signal"), jb_string(j, signal_name(e->signal));
	jb_key(j, "hard"), jb_bool(j, e->hard);
	jb_key(j, "dry_run"), jb_bool(j, e->dry_run);
	jb_key(j, "parts");
	jb_begin_object(j);
	for (int p = 0; p < _RECLAIM_PART_MAX; p++) {
		jb_key(j, part_keys[p]);
		jb_begin_object(j);
		jb_key(j, "path"), jb_string(j, reclaim_part_path(e, (reclaim_part)p));
		if (p != RECLAIM_PART_CGROUP) {
			jb_key(j, "bytes"), jb_int(j, e->part_bytes[p]);
			jb_key(j, "inodes"), jb_int(j, e->part_inodes[p]);
		}
		jb_key(j, "back"), jb_bool(j, e->part_back[p]);
		jb_end_object(j);
	}
	jb_end_object(j);
	jb_key(j, "signals");
	jb_begin_object(j);
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		jb_key(j, signal_name((evictd_signal)s));
		jb_begin_object(j);
		jb_key(j, "expected"), jb_int(j, e->expected[s] < 0 ? -1 : e->expected[s]);
		jb_key(j, "observed"), int_or_null(j, e->observed_known[s], e->observed[s]);
		jb_key(j, "base"), int_or_null(j, e->base_known[s], e->base[s]);
		jb_key(j, "gone"), int_or_null(j, e->bound_set && e->gone_known[s], e->gone[s]);
		jb_key(j, "relieved"), jb_bool(j, e->relieved[s]);
		jb_end_object(j);
	}
	jb_end_object(j);
	jb_key(j, "reclaiming"), jb_bool(j, e->reclaiming);
	jb_key(j, "gone_monotonic_usec"), jb_uint(j, e->gone_usec);
	jb_key(j, "deadline_monotonic_usec"), jb_uint(j, e->deadline_usec);
	jb_key(j, "bound_set"), jb_bool(j, e->bound_set);
	jb_key(j, "rekills"), jb_uint(j, e->rekills);
	jb_end_object(j);
}

int inflight_save(const char *dir, const inflight_record *r)
{
	char path[PATH_MAX], boot[40];
	int k = record_path(dir, r->uid, path, sizeof(path));
	if (k < 0)
		return k;
	if ((unsigned)r->phase >= _INFLIGHT_PHASE_MAX || (r->phase == INFLIGHT_RECLAIMING && !r->has_reclaim))
		return -EINVAL;
	if (boot_id_read(boot) < 0)
		boot[0] = '\0'; /* no /proc: such a record is never resumed, see load */
	jsonbuf j;
	jb_init(&j, RECORD_MAX_BYTES);
	jb_begin_object(&j);
	jb_key(&j, "version"), jb_uint(&j, INFLIGHT_VERSION);
	jb_key(&j, "boot_id"), jb_string(&j, boot);
	jb_key(&j, "uid"), jb_string(&j, r->uid);
	jb_key(&j, "namespace"), jb_string(&j, r->namespace_);
	jb_key(&j, "name"), jb_string(&j, r->name);
	jb_key(&j, "cgroup"), jb_string(&j, r->cgroup);
	jb_key(&j, "phase"), jb_string(&j, inflight_phase_to_string(r->phase));
	jb_key(&j, "failures"), jb_uint(&j, r->failures);
	jb_key(&j, "retry_monotonic_usec"), jb_uint(&j, r->retry_mono_usec);
	if (is_evicting(r->phase)) {
		jb_key(&j, "refused"), jb_bool(&j, r->refused);
		jb_key(&j, "signal"), jb_string(&j, r->signal);
		jb_key(&j, "hard"), jb_bool(&j, r->hard);
		jb_key(&j, "action"), jb_string(&j, r->exec ? "exec" : "kill");
		jb_key(&j, "priority"), jb_int(&j, r->priority);
		jb_key(&j, "grace_usec"), jb_uint(&j, r->grace_usec);
		jb_key(&j, "usage"), jb_int(&j, r->usage);
		jb_key(&j, "expected_reclaim"), jb_int(&j, r->expected_reclaim);
		jb_key(&j, "started_realtime_usec"), jb_uint(&j, r->started_real_usec);
		jb_key(&j, "deadline_realtime_usec"), jb_uint(&j, r->deadline_real_usec);
		jb_key(&j, "started_boottime_usec"), jb_uint(&j, r->started_boot_usec);
		jb_key(&j, "deadline_boottime_usec"), jb_uint(&j, r->deadline_boot_usec);
	}
	if (r->has_reclaim) {
		jb_key(&j, "reclaim");
		save_reclaim(&j, &r->reclaim);
	}
	jb_end_object(&j);
	k = jb_error(&j);
	if (k == 0)
		k = atomic_write_file_in(dir, path, j.buf, j.len);
	jb_free(&j);
	return k;
}

int inflight_remove(const char *dir, const char *uid)
{
	char path[PATH_MAX];
	int k = record_path(dir, uid, path, sizeof(path));
	if (k < 0)
		return k;
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

/* --- reading ---------------------------------------------------------------------------------- */

static const char *parse_eviction(yajl_val root, inflight_record *r)
{
	char action[8];
	long long prio, grace, usage, reclaim, started, deadline;
	if (!json_get_str(root, "namespace", r->namespace_, sizeof(r->namespace_)) ||
	    !json_get_str(root, "name", r->name, sizeof(r->name)) || !json_get_str(root, "signal", r->signal, sizeof(r->signal)))
		return "namespace, name or signal missing";
	if (!json_get_bool(root, "hard", &r->hard))
		return "hard missing";
	if (!json_get_str(root, "action", action, sizeof(action)) || (strcmp(action, "kill") != 0 && strcmp(action, "exec") != 0))
		return "action missing or invalid";
	if (!json_get_int(root, "priority", INT32_MIN, &prio) || prio > INT32_MAX || !json_get_int(root, "grace_usec", 0, &grace) ||
	    !json_get_int(root, "usage", -1, &usage) || !json_get_int(root, "expected_reclaim", -1, &reclaim) ||
	    !json_get_int(root, "started_realtime_usec", 0, &started) || !json_get_int(root, "deadline_realtime_usec", 0, &deadline))
		return "a number is missing or out of range";
	r->exec = action[0] == 'e';
	r->priority = (int32_t)prio;
	r->grace_usec = (uint64_t)grace;
	r->usage = usage;
	r->expected_reclaim = reclaim;
	r->started_real_usec = (uint64_t)started;
	r->deadline_real_usec = (uint64_t)deadline;
	/* both or neither: a record of an evictd before the boot clock has neither (realtime then) */
	if (json_member(root, "started_boottime_usec") || json_member(root, "deadline_boottime_usec")) {
		if (!json_get_int(root, "started_boottime_usec", 0, &started) ||
		    !json_get_int(root, "deadline_boottime_usec", 0, &deadline))
			return "started_boottime_usec or deadline_boottime_usec missing or out of range";
		r->has_boot_clock = true;
		r->started_boot_usec = (uint64_t)started;
		r->deadline_boot_usec = (uint64_t)deadline;
	}
	return NULL;
}

static const char *parse_parts(yajl_val parts, reclaim_entry *e)
{
	if (!parts || !YAJL_IS_OBJECT(parts))
		return "reclaim: parts missing";
	for (int p = 0; p < _RECLAIM_PART_MAX; p++) {
		yajl_val o = json_member(parts, part_keys[p]);
		char *path = p == RECLAIM_PART_CGROUP ? NULL : p == RECLAIM_PART_VOLUMES ? e->volumes : e->logs;
		char cg[PATH_MAX] = "";
		long long b = -1, i = -1;
		if (!o || !YAJL_IS_OBJECT(o) || !json_get_bool(o, "back", &e->part_back[p]))
			return "reclaim: a part is missing or has no \"back\"";
		if (!json_get_str(o, "path", path ? path : cg, PATH_MAX))
			return "reclaim: a part's path is missing or too long";
		if (path && path[0] && path[0] != '/')
			return "reclaim: a part's path is not absolute";
		if (!path && strcmp(cg, e->cgroup) != 0)
			return "reclaim: the cgroup part is not the record's cgroup";
		if (path && (!json_get_int(o, "bytes", -1, &b) || !json_get_int(o, "inodes", -1, &i)))
			return "reclaim: a part's bytes or inodes are missing or out of range";
		e->part_bytes[p] = b;
		e->part_inodes[p] = i;
	}
	return NULL;
}

static const char *parse_signals(yajl_val sigs, reclaim_entry *e)
{
	if (!sigs || !YAJL_IS_OBJECT(sigs))
		return "reclaim: signals missing";
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		yajl_val o = json_member(sigs, signal_name((evictd_signal)s));
		long long x;
		e->expected[s] = -1;
		if (!o)
			continue; /* not known to the writer: nothing expected, nothing observed */
		if (!YAJL_IS_OBJECT(o) || !json_get_int(o, "expected", -1, &x) ||
		    !json_get_int_or_null(o, "observed", &e->observed[s], &e->observed_known[s]) ||
		    !json_get_int_or_null(o, "base", &e->base[s], &e->base_known[s]) ||
		    !json_get_int_or_null(o, "gone", &e->gone[s], &e->gone_known[s]) || !json_get_bool(o, "relieved", &e->relieved[s]))
			return "reclaim: a signal's expected, observed, base, gone or relieved is missing or invalid";
		e->expected[s] = x;
	}
	return NULL;
}

static const char *parse_reclaim(yajl_val o, const inflight_record *r, reclaim_entry *e)
{
	char sig[64];
	long long gone, deadline, rekills;
	memset(e, 0, sizeof(*e));
	memcpy(e->uid, r->uid, strlen(r->uid) + 1);
	memcpy(e->cgroup, r->cgroup, strlen(r->cgroup) + 1);
	if (!YAJL_IS_OBJECT(o))
		return "reclaim is not an object";
	if (!json_get_str(o, "pod", e->pod, sizeof(e->pod)) || !json_get_str(o, "signal", sig, sizeof(sig)) ||
	    (e->signal = signal_from_name(sig)) == _SIGNAL_INVALID)
		return "reclaim: pod or signal missing or invalid";
	if (!json_get_bool(o, "hard", &e->hard) || !json_get_bool(o, "dry_run", &e->dry_run) ||
	    !json_get_bool(o, "reclaiming", &e->reclaiming) || !json_get_bool(o, "bound_set", &e->bound_set))
		return "reclaim: hard, dry_run, reclaiming or bound_set missing";
	if (!json_get_int(o, "gone_monotonic_usec", 0, &gone) || !json_get_int(o, "deadline_monotonic_usec", 0, &deadline) ||
	    !json_get_int(o, "rekills", 0, &rekills) || rekills > UINT32_MAX)
		return "reclaim: a time or count is missing or out of range";
	const char *why = parse_parts(json_member(o, "parts"), e);
	if (!why)
		why = parse_signals(json_member(o, "signals"), e);
	e->gone_usec = (uint64_t)gone;
	e->deadline_usec = (uint64_t)deadline;
	e->rekills = (unsigned)rekills;
	return why;
}

const char *inflight_parse(const char *text, const char *boot, inflight_record *r)
{
	char err[128];
	memset(r, 0, sizeof(*r));
	yajl_val root = yajl_tree_parse(text, err, sizeof(err));
	if (!root)
		return "not valid JSON";
	const char *why = NULL;
	char rec_boot[40], phase[16];
	long long version = 1, failures = 0, retry = 0;
	if (!YAJL_IS_OBJECT(root))
		why = "not a JSON object";
	else if (json_member(root, "version") && !json_get_int(root, "version", 1, &version))
		why = "version invalid";
	else if (!json_get_str(root, "boot_id", rec_boot, sizeof(rec_boot)))
		why = "boot_id missing";
	else if (!boot[0] || strcmp(rec_boot, boot) != 0)
		why = "written before the last reboot";
	else if (!json_get_str(root, "uid", r->uid, sizeof(r->uid)) || !inflight_uid_valid(r->uid))
		why = "uid missing or invalid";
	else if (!json_get_str(root, "cgroup", r->cgroup, sizeof(r->cgroup)) || r->cgroup[0] != '/')
		why = "cgroup missing or not an absolute path";
	else if (!json_get_str(root, "phase", phase, sizeof(phase)))
		why = "phase missing";
	else {
		why = "unknown phase";
		for (unsigned i = 0; i < _INFLIGHT_PHASE_MAX; i++)
			if (strcmp(phase, phase_names[i]) == 0) {
				r->phase = (inflight_phase)i;
				why = NULL;
			}
	}
	r->version = version > INFLIGHT_VERSION ? INFLIGHT_VERSION : (unsigned)version;
	if (!why && r->version == 1 && !is_evicting(r->phase))
		why = "unknown phase";
	if (!why && r->version >= 2 &&
	    (!json_get_int(root, "failures", 0, &failures) || failures > UINT32_MAX ||
	     !json_get_int(root, "retry_monotonic_usec", 0, &retry)))
		why = "failures or retry_monotonic_usec missing or out of range";
	if (!why && is_evicting(r->phase))
		why = parse_eviction(root, r);
	if (!why && r->version >= 2 && is_evicting(r->phase) && json_member(root, "refused") && !json_get_bool(root, "refused", &r->refused))
		why = "refused is not a boolean";
	yajl_val rec = json_member(root, "reclaim");
	if (!why && r->version >= 2 && rec) {
		r->has_reclaim = true;
		why = parse_reclaim(rec, r, &r->reclaim);
	}
	if (!why && r->phase == INFLIGHT_RECLAIMING && (!r->has_reclaim || !r->reclaim.reclaiming))
		why = "phase reclaiming without a reclaiming reclaim";
	if (!why && !is_evicting(r->phase)) {
		/* names for the messages, when the record has them */
		(void)json_get_str(root, "namespace", r->namespace_, sizeof(r->namespace_));
		(void)json_get_str(root, "name", r->name, sizeof(r->name));
	}
	r->failures = (unsigned)failures;
	r->retry_mono_usec = (uint64_t)retry;
	yajl_tree_free(root);
	return why;
}

int inflight_load(const char *dir, void (*fn)(const inflight_record *r, void *userdata), void *userdata)
{
	char boot[40];
	if (boot_id_read(boot) < 0)
		boot[0] = '\0';
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	char *text = malloc(RECORD_MAX_BYTES);
	inflight_record *r = malloc(sizeof(*r));
	int count = 0;
	if (!text || !r) {
		count = -ENOMEM;
		goto out;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (de->d_name[0] != '.' && strstr(de->d_name, ".json.")) {
			(void)unlinkat(dirfd(d), de->d_name, 0); /* the temporary file of an interrupted write */
			continue;
		}
		if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		const char *why = json_read_own_file(dirfd(d), de->d_name, text, RECORD_MAX_BYTES);
		if (!why)
			why = inflight_parse(text, boot, r);
		if (!why && (n - 5 != strlen(r->uid) || strncmp(de->d_name, r->uid, n - 5) != 0))
			why = "file name does not match its uid";
		if (why) {
			log_msg(LOG_WARNING, "Victim record %s/%s discarded: %s; what it held about the pod (eviction, "
			        "pending reclaim, back-off) is not carried over", dir, de->d_name, why);
			(void)unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		fn(r, userdata);
		count++;
	}
out:
	free(text);
	free(r);
	closedir(d);
	return count;
}
