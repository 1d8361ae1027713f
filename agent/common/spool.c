/* SPDX-License-Identifier: MIT */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgfs.h"
#include "jsonw.h"
#include "log.h"
#include "grow.h"

const char *spool_signal_resource(const char *signal)
{
	if (strncmp(signal, "nodefs.inodes", 13) == 0 || strncmp(signal, "imagefs.inodes", 14) == 0)
		return "inodes";
	if (strncmp(signal, "nodefs.", 7) == 0 || strncmp(signal, "imagefs.", 8) == 0)
		return "ephemeral-storage";
	if (strncmp(signal, "pid.", 4) == 0)
		return "pids";
	return "memory"; /* memory.available, allocatableMemory.available, the memory PSI signals */
}

const char *spool_quantity(int64_t v, char *buf, size_t size)
{
	static const char *const suffix[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	int unit = -1;

	while (unit < 5 && v != 0 && v % 1024 == 0) {
		v /= 1024;
		unit++;
	}
	snprintf(buf, size, "%" PRId64 "%s", v, unit >= 0 ? suffix[unit] : "");
	return buf;
}

const char *spool_quantity_decimal(int64_t v, char *buf, size_t size)
{
	static const char *const suffix[] = { "k", "M", "G", "T", "P", "E" };
	int unit = -1;

	while (unit < 5 && v != 0 && v % 1000 == 0) {
		v /= 1000;
		unit++;
	}
	snprintf(buf, size, "%" PRId64 "%s", v, unit >= 0 ? suffix[unit] : "");
	return buf;
}

static bool signal_is_psi_name(const char *signal)
{
	return strcmp(signal, "memory.some") == 0 || strcmp(signal, "memory.full") == 0;
}

int spool_message(const spool_eviction *ev, char *buf, size_t size)
{
	const char *res = spool_signal_resource(ev->signal);
	bool count = strcmp(res, "inodes") == 0 || strcmp(res, "pids") == 0;
	char q1[32], q2[32];
	size_t len;

	len = (size_t)snprintf(buf, size, "The node was low on resource: %s. ", res);
	if (!signal_is_psi_name(ev->signal) && len < size)
		len += (size_t)snprintf(buf + len, size - len, "Threshold quantity: %s, available: %s. ",
		                        count && !ev->threshold_percent ? spool_quantity_decimal(ev->threshold, q1, sizeof(q1))
		                                                        : spool_quantity(ev->threshold, q1, sizeof(q1)),
		                        count ? spool_quantity_decimal(ev->observed, q2, sizeof(q2))
		                              : spool_quantity(ev->observed, q2, sizeof(q2)));
	for (size_t i = 0; !count && i < ev->n_containers && len < size; i++) {
		const spool_container *c = &ev->containers[i];
		int64_t req = c->request < 0 ? 0 : c->request;
		if (c->usage < 0 || c->usage <= req)
			continue;
		const char *rs = c->request >= 0 && c->request_str && c->request_str[0] ? c->request_str
		                                                                         : spool_quantity(req, q2, sizeof(q2));
		len += (size_t)snprintf(buf + len, size - len, "Container %s was using %s, request is %s, has larger consumption of %s. ",
		                        c->name, spool_quantity(c->usage, q1, sizeof(q1)), rs, res);
	}
	return len < size ? 0 : -ENOBUFS;
}

static void rfc3339(uint64_t real_usec, char *buf, size_t size)
{
	time_t t = (time_t)(real_usec / 1000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keeps at most max - 1 records so that one more fits: the oldest go first (they are logged). */
static void enforce_bound(int dirfd, unsigned max)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
			continue;
		if (GROW_ARRAY_FROM(&names, &cap, n + 1, 64) < 0)
			break;
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n >= max) {
		qsort(names, n, sizeof(*names), name_cmp);
		for (size_t i = 0; i + max <= n; i++) {
			if (unlinkat(dirfd, names[i], 0) == 0)
				log_msg(LOG_WARNING, "Eviction spool full (%u records): dropped the oldest undelivered report %s",
				        max, names[i]);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int write_atomic(int dirfd, const char *name, const char *data, size_t len, char *why, size_t why_size)
{
	char tmp[300];
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), ".tmp-%s", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot create %s: %s", tmp, strerror(-r));
		return r;
	}
	(void)fchmod(fd, 0644); /* whatever the umask */
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(why, why_size, "cannot write %s: %s", tmp, strerror(-r));
			break;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0 && r == 0) {
		r = -errno;
		snprintf(why, why_size, "cannot write %s: %s", tmp, strerror(-r));
	}
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot rename %s: %s", tmp, strerror(-r));
	}
	if (r < 0)
		(void)unlinkat(dirfd, tmp, 0);
	return r;
}

/*
 * Every record's last steps: the JSON must have been built whole, the oldest undelivered records
 * make room (spool-max), then the file appears atomically. Frees j.
 */
static int finish_record(int dirfd, unsigned max_records, jsonbuf *j, const char *name, char *why, size_t why_size)
{
	int r = jb_error(j);
	if (r < 0)
		snprintf(why, why_size, "cannot format the record: %s", strerror(-r));
	else {
		enforce_bound(dirfd, max_records);
		r = write_atomic(dirfd, name, j->buf, j->len, why, why_size);
	}
	jb_free(j);
	return r;
}

int spool_write_eviction(int dirfd, unsigned max_records, const spool_eviction *ev, char *why, size_t why_size)
{
	const pod_info *p = ev->pod;
	char name[128], msg[4096], q[32], ts[40];
	jsonbuf j;

	if (spool_message(ev, msg, sizeof(msg)) < 0) {
		snprintf(why, why_size, "message too long");
		return -ENOBUFS;
	}
	rfc3339(ev->started_real_usec, ts, sizeof(ts));
	jb_init(&j, SPOOL_RECORD_MAX);
	jb_begin_object(&j);
	jb_key(&j, "kind");
	jb_string(&j, "eviction");
	jb_key(&j, "uid");
	jb_string(&j, p->uid);
	jb_key(&j, "namespace");
	jb_string(&j, p->namespace_ ? p->namespace_ : "");
	jb_key(&j, "name");
	jb_string(&j, p->name ? p->name : p->uid);
	jb_key(&j, "hasMetadata");
	jb_bool(&j, p->has_descriptor);
	jb_key(&j, "signal");
	jb_string(&j, ev->signal);
	jb_key(&j, "resource");
	jb_string(&j, spool_signal_resource(ev->signal));
	jb_key(&j, "hard");
	jb_bool(&j, ev->hard);
	jb_key(&j, "threshold");
	jb_string(&j, spool_quantity(ev->threshold, q, sizeof(q)));
	jb_key(&j, "available");
	jb_string(&j, spool_quantity(ev->observed, q, sizeof(q)));
	jb_key(&j, "podUsage");
	jb_int(&j, ev->usage);
	jb_key(&j, "podRequest");
	jb_int(&j, strcmp(spool_signal_resource(ev->signal), "memory") == 0 ? p->memory_request : p->storage_request);
	jb_key(&j, "priority");
	jb_int(&j, p->priority);
	jb_key(&j, "gracePeriodSeconds");
	jb_uint(&j, (ev->grace_usec + 999999) / 1000000);
	jb_key(&j, "startedAt");
	jb_string(&j, ts);
	jb_key(&j, "startedRealtimeUsec");
	jb_uint(&j, ev->started_real_usec);
	jb_key(&j, "containers");
	jb_begin_array(&j);
	for (size_t i = 0; i < ev->n_containers; i++) {
		jb_begin_object(&j);
		jb_key(&j, "name");
		jb_string(&j, ev->containers[i].name);
		jb_key(&j, "usage");
		jb_int(&j, ev->containers[i].usage);
		jb_key(&j, "request");
		jb_int(&j, ev->containers[i].request);
		jb_end_object(&j);
	}
	jb_end_array(&j);
	jb_key(&j, "message");
	jb_string(&j, msg);
	jb_end_object(&j);
	snprintf(name, sizeof(name), "%020" PRIu64 "-%s.json", ev->started_real_usec, p->uid);
	return finish_record(dirfd, max_records, &j, name, why, why_size);
}

int spool_write_threshold(int dirfd, unsigned max_records, const char *signal, bool hard, int64_t threshold,
                          int64_t observed, uint64_t real_usec, char *why, size_t why_size)
{
	char name[128], q[32], ts[40], msg[128];
	jsonbuf j;

	rfc3339(real_usec, ts, sizeof(ts));
	snprintf(msg, sizeof(msg), "Attempting to reclaim %s", spool_signal_resource(signal));
	jb_init(&j, SPOOL_RECORD_MAX);
	jb_begin_object(&j);
	jb_key(&j, "kind");
	jb_string(&j, "threshold");
	jb_key(&j, "signal");
	jb_string(&j, signal);
	jb_key(&j, "resource");
	jb_string(&j, spool_signal_resource(signal));
	jb_key(&j, "hard");
	jb_bool(&j, hard);
	jb_key(&j, "threshold");
	jb_string(&j, spool_quantity(threshold, q, sizeof(q)));
	jb_key(&j, "available");
	jb_string(&j, spool_quantity(observed, q, sizeof(q)));
	jb_key(&j, "startedAt");
	jb_string(&j, ts);
	jb_key(&j, "message");
	jb_string(&j, msg);
	jb_end_object(&j);
	snprintf(name, sizeof(name), "%020" PRIu64 "-node-%s.json", real_usec, signal);
	return finish_record(dirfd, max_records, &j, name, why, why_size);
}

const char *spool_condition_type(const char *condition, char *buf, size_t size)
{
	snprintf(buf, size, "Evictd%s", condition);
	return buf;
}

/* The kubelet's reasons (KubeletHasInsufficientMemory, ...) with evictd's prefix. */
const char *spool_condition_reason(const char *condition, bool status)
{
	if (strcmp(condition, "MemoryPressure") == 0)
		return status ? "EvictdHasInsufficientMemory" : "EvictdHasSufficientMemory";
	if (strcmp(condition, "DiskPressure") == 0)
		return status ? "EvictdHasDiskPressure" : "EvictdHasNoDiskPressure";
	if (strcmp(condition, "PIDPressure") == 0)
		return status ? "EvictdHasInsufficientPID" : "EvictdHasSufficientPID";
	return status ? "EvictdThresholdMet" : "EvictdThresholdNotMet";
}

int spool_write_condition(int dirfd, unsigned max_records, const char *condition, const char *status,
                          const char *reason, const char *message, uint64_t real_usec, char *why, size_t why_size)
{
	char name[128], ts[40], type[64];
	jsonbuf j;

	rfc3339(real_usec, ts, sizeof(ts));
	spool_condition_type(condition, type, sizeof(type));
	jb_init(&j, SPOOL_RECORD_MAX);
	jb_begin_object(&j);
	jb_key(&j, "kind");
	jb_string(&j, "condition");
	jb_key(&j, "type");
	jb_string(&j, type);
	jb_key(&j, "status");
	jb_string(&j, status);
	jb_key(&j, "reason");
	jb_string(&j, reason ? reason : spool_condition_reason(condition, strcmp(status, "True") == 0));
	jb_key(&j, "message");
	jb_string(&j, message);
	jb_key(&j, "startedAt");
	jb_string(&j, ts);
	jb_end_object(&j);
	snprintf(name, sizeof(name), "%020" PRIu64 "-cond-%s.json", real_usec, type);
	return finish_record(dirfd, max_records, &j, name, why, why_size);
}

void spool_container_usage(int pod_fd, const pod_info *pod, bool memory, spool_container *out)
{
	for (size_t i = 0; i < pod->n_containers; i++) {
		const pod_container *c = &pod->containers[i];
		const char *id = strstr(c->id, "://");
		char cand[4][200], stat[8192];
		uint64_t cur = 0, inactive = 0;

		out[i] = (spool_container){ .name = c->name, .usage = -1,
		                            .request = memory ? c->memory_request : c->storage_request,
		                            .request_str = memory ? c->memory_request_str : c->storage_request_str };
		if (!memory || pod_fd < 0 || !c->id[0])
			continue;
		id = id ? id + 3 : c->id;
		snprintf(cand[0], sizeof(cand[0]), "cri-containerd-%s.scope", id);
		snprintf(cand[1], sizeof(cand[1]), "crio-%s.scope", id);
		snprintf(cand[2], sizeof(cand[2]), "docker-%s.scope", id);
		snprintf(cand[3], sizeof(cand[3]), "%s", id);
		for (int k = 0; k < 4; k++) {
			if (strchr(cand[k], '/'))
				continue;
			int fd = openat(pod_fd, cand[k], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (fd < 0)
				continue;
			if (cgfs_read_u64(fd, "memory.current", &cur) == 0) {
				ssize_t n = cgfs_read(fd, "memory.stat", stat, sizeof(stat));
				if (n > 0)
					(void)cgfs_keyed_u64(stat, "inactive_file", &inactive);
				/* the kubelet's working set: usage minus inactive file pages, floored at 0 */
				out[i].usage = (int64_t)(cur > inactive ? cur - inactive : 0);
			}
			close(fd);
			break;
		}
	}
}
