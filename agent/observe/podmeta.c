/* SPDX-License-Identifier: MIT */
#include "podmeta.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgfs.h"

typedef struct desc_parse {
	const char *text;
	size_t off;
	unsigned lineno;
	bool overlong;
	char err[300];
	char ns[64], name[254], klass[254];
	bool has_ns, has_name, has_class, has_prio, has_mem, has_cpu, has_storage, has_grace;
	bool has_policy, has_qos, critical;
	const char *uid; /* the file's: a uid key must match it */
	pp_preemption_policy policy;
	pod_qos qos;
	pod_container containers[POD_CONTAINERS_MAX];
	size_t n_containers;
	int32_t prio;
	int64_t mem, cpu, storage;
	uint64_t grace;
} desc_parse;

static char *desc_reader(char *buf, int size, void *stream)
{
	desc_parse *d = stream;
	const char *s = d->text + d->off;
	size_t len, take;

	if (!*s)
		return NULL;
	len = strcspn(s, "\n");
	take = len;
	if (take > (size_t)size - 2) {
		take = (size_t)size - 2;
		if (!d->err[0])
			snprintf(d->err, sizeof(d->err), "line %u: longer than %d characters", d->lineno + 1, size - 3);
	}
	memcpy(buf, s, take);
	buf[take] = '\n';
	buf[take + 1] = '\0';
	d->off += len + (s[len] == '\n');
	d->lineno++;
	return buf;
}

static int dfail(desc_parse *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int dfail(desc_parse *d, const char *fmt, ...)
{
	va_list ap;
	char m[160];

	if (!d->err[0]) {
		va_start(ap, fmt);
		vsnprintf(m, sizeof(m), fmt, ap);
		va_end(ap);
		snprintf(d->err, sizeof(d->err), "line %u: %s", d->lineno, m);
	}
	return 0;
}

static bool is_dns_label(const char *s)
{
	return strlen(s) <= 63 && !strchr(s, '.') && pp_is_dns_subdomain(s);
}

/* "NAME [ID|-] [memory=Q] [ephemeral-storage=Q] [cpu=Q]" (cpu is accepted and not kept). */
static int parse_container(desc_parse *d, const char *v)
{
	char buf[512], *save = NULL, *w;
	pod_container *c;
	int i = 0;
	pp_err e;

	if (d->n_containers >= POD_CONTAINERS_MAX)
		return dfail(d, "more than %d containers", POD_CONTAINERS_MAX);
	if (strlen(v) >= sizeof(buf))
		return dfail(d, "container: line too long");
	snprintf(buf, sizeof(buf), "%s", v);
	c = &d->containers[d->n_containers];
	*c = (pod_container){ .memory_request = -1, .storage_request = -1 };
	for (w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save), i++) {
		const char *eq = strchr(w, '=');
		if (i == 0) {
			if (!is_dns_label(w))
				return dfail(d, "container name \"%s\" is not a valid DNS label", w);
			snprintf(c->name, sizeof(c->name), "%s", w);
		} else if (!eq) {
			if (i != 1 || strlen(w) >= sizeof(c->id))
				return dfail(d, "container %s: unexpected \"%s\" (expected KEY=QUANTITY)", c->name, w);
			if (strcmp(w, "-") != 0)
				snprintf(c->id, sizeof(c->id), "%s", w);
		} else {
			int64_t q;
			size_t kl = (size_t)(eq - w);
			int64_t *dst = kl == 6 && strncmp(w, "memory", 6) == 0              ? &c->memory_request
			             : kl == 17 && strncmp(w, "ephemeral-storage", 17) == 0 ? &c->storage_request
			                                                                    : NULL;
			bool cpu = kl == 3 && strncmp(w, "cpu", 3) == 0;
			if (!dst && !cpu)
				return dfail(d, "container %s: unknown resource \"%.*s\"", c->name, (int)kl, w);
			if ((cpu ? pp_quantity_parse_milli(eq + 1, &q, &e) : pp_quantity_parse(eq + 1, &q, &e)) < 0 || q < 0)
				return dfail(d, "container %s: invalid quantity \"%s\"", c->name, eq + 1);
			if (dst) {
				*dst = q;
				/* kept as written: the kubelet's message prints a request in the pod spec's form */
				char *str = dst == &c->memory_request ? c->memory_request_str : c->storage_request_str;
				if (strlen(eq + 1) < sizeof(c->memory_request_str))
					snprintf(str, sizeof(c->memory_request_str), "%s", eq + 1);
			}
		}
	}
	if (i == 0)
		return dfail(d, "container: missing name");
	d->n_containers++;
	return 1;
}

static int desc_handler(void *user, const char *section, const char *key, const char *v)
{
	desc_parse *d = user;
	pp_err e;

	if (strcmp(section, "pod") != 0)
		return dfail(d, "unknown section [%s] (expected [pod])", section);
	if (!*v)
		return dfail(d, "%s: missing value", key);
	if (strcmp(key, "namespace") == 0) {
		if (!is_dns_label(v))
			return dfail(d, "namespace \"%s\" is not a valid DNS label", v);
		snprintf(d->ns, sizeof(d->ns), "%s", v);
		d->has_ns = true;
	} else if (strcmp(key, "name") == 0) {
		if (!pp_is_dns_subdomain(v))
			return dfail(d, "name \"%s\" is not a valid DNS subdomain", v);
		snprintf(d->name, sizeof(d->name), "%s", v);
		d->has_name = true;
	} else if (strcmp(key, "priority-class") == 0) {
		if (!pp_is_dns_subdomain(v))
			return dfail(d, "priority-class \"%s\" is not a valid name", v);
		snprintf(d->klass, sizeof(d->klass), "%s", v);
		d->has_class = true;
	} else if (strcmp(key, "priority") == 0) {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (errno || end == v || *end || x < INT32_MIN || x > INT32_MAX)
			return dfail(d, "priority \"%s\" is not a 32-bit integer", v);
		d->prio = (int32_t)x;
		d->has_prio = true;
	} else if (strcmp(key, "memory-request") == 0 || strcmp(key, "ephemeral-storage-request") == 0) {
		int64_t q;
		if (pp_quantity_parse(v, &q, &e) < 0 || q < 0)
			return dfail(d, "%s: invalid quantity \"%s\"", key, v);
		if (key[0] == 'm') {
			d->mem = q;
			d->has_mem = true;
		} else {
			d->storage = q;
			d->has_storage = true;
		}
	} else if (strcmp(key, "cpu-request") == 0) {
		int64_t q;
		if (pp_quantity_parse_milli(v, &q, &e) < 0 || q < 0)
			return dfail(d, "cpu-request: invalid quantity \"%s\"", v);
		d->cpu = q;
		d->has_cpu = true;
	} else if (strcmp(key, "uid") == 0) {
		if (strcmp(v, d->uid) != 0)
			return dfail(d, "uid \"%s\" does not match the file name", v);
	} else if (strcmp(key, "preemption-policy") == 0) {
		if (strcmp(v, "PreemptLowerPriority") == 0)
			d->policy = PP_PREEMPT_LOWER_PRIORITY;
		else if (strcmp(v, "Never") == 0)
			d->policy = PP_PREEMPT_NEVER;
		else
			return dfail(d, "preemption-policy: expected PreemptLowerPriority or Never, not \"%s\"", v);
		d->has_policy = true;
	} else if (strcmp(key, "qos-class") == 0) {
		d->qos = strcmp(v, "Guaranteed") == 0 ? QOS_GUARANTEED : strcmp(v, "Burstable") == 0 ? QOS_BURSTABLE
		       : strcmp(v, "BestEffort") == 0 ? QOS_BESTEFFORT : QOS_UNKNOWN;
		if (d->qos == QOS_UNKNOWN)
			return dfail(d, "qos-class: expected Guaranteed, Burstable or BestEffort, not \"%s\"", v);
		d->has_qos = true;
	} else if (strcmp(key, "critical") == 0) {
		if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0)
			d->critical = true;
		else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0)
			d->critical = false;
		else
			return dfail(d, "critical: expected yes or no, not \"%s\"", v);
	} else if (strcmp(key, "container") == 0) {
		return parse_container(d, v);
	} else if (strcmp(key, "termination-grace-period") == 0) {
		int64_t ns;
		if (pp_duration_parse(v, &ns, &e) < 0)
			return dfail(d, "termination-grace-period: invalid duration \"%s\"", v);
		d->grace = (uint64_t)ns / 1000;
		d->has_grace = true;
	} else
		return dfail(d, "unknown key \"%s\"", key);
	return 1;
}

/* Deeper than any real path: a bound for the walk up through "..". */
#define DIR_CHECK_MAX_DEPTH 256

static bool dir_unsafe(const struct stat *st, bool is_metadir, char *why, size_t why_size, const char *what)
{
	if (st->st_uid != 0)
		snprintf(why, why_size, "%s is owned by uid %u, not root", what, (unsigned)st->st_uid);
	else if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (is_metadir || !(st->st_mode & S_ISVTX)))
		snprintf(why, why_size, "%s is writable by %s (mode %04o)", what,
		         st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
	else
		return false;
	return true;
}

int podmeta_dir_check(int metadir_fd, char *why, size_t why_size)
{
	struct stat st, parent;
	int fd, r = 0;

	if (fstat(metadir_fd, &st) < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot stat the directory: %s", strerror(-r));
		return r;
	}
	if (dir_unsafe(&st, true, why, why_size, "the directory"))
		return -EPERM;
	/* Up through "..": the directories that really contain it, whatever path led here. */
	fd = metadir_fd;
	for (int depth = 1; depth <= DIR_CHECK_MAX_DEPTH; depth++) {
		int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
		if (up < 0) {
			r = -errno;
			snprintf(why, why_size, "cannot open its parent directory: %s", strerror(-r));
			break;
		}
		if (fd != metadir_fd)
			close(fd);
		fd = up;
		if (fstat(fd, &parent) < 0) {
			r = -errno;
			snprintf(why, why_size, "cannot stat its parent directory: %s", strerror(-r));
			break;
		}
		if (parent.st_dev == st.st_dev && parent.st_ino == st.st_ino)
			break; /* "/.." is "/" */
		char what[PATH_MAX + 32], link[64], target[PATH_MAX];
		ssize_t tl;
		/* For the message only: the kernel's name of that directory. */
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		tl = readlink(link, target, sizeof(target) - 1);
		if (tl > 0) {
			target[tl] = '\0';
			snprintf(what, sizeof(what), "its ancestor %s", target);
		} else
			snprintf(what, sizeof(what), "its ancestor %d level%s up", depth, depth > 1 ? "s" : "");
		if (dir_unsafe(&parent, false, why, why_size, what)) {
			r = -EPERM;
			break;
		}
		st = parent;
	}
	if (fd != metadir_fd)
		close(fd);
	return r;
}

int podmeta_stat(int metadir_fd, const char *uid, struct stat *st)
{
	char name[POD_UID_MAX + 8];

	if (metadir_fd < 0)
		return -ENOENT;
	snprintf(name, sizeof(name), "%s.conf", uid);
	if (fstatat(metadir_fd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

static int replace(char **dst, const char *v)
{
	char *s = strdup(v);
	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* Reads descriptor name into buf (POD_DESCRIPTOR_MAX + 1 bytes), NUL-terminated, when root wrote it
 * and nobody else may: its length, -ENOENT when there is none, or -errno with why[] set. */
static ssize_t read_descriptor(int metadir_fd, const char *name, char *buf, char *why, size_t why_size)
{
	struct stat st;
	ssize_t n;
	int fd, r;

	fd = openat(metadir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			return r;
		if (r == -ELOOP) {
			snprintf(why, why_size, "%s is a symbolic link", name);
			return -EPERM;
		}
		snprintf(why, why_size, "cannot open %s: %s", name, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(why, why_size, "cannot stat %s: %s", name, strerror(-r));
		close(fd);
		return r;
	}
	/* Trust: the descriptor decides who gets evicted, so only root may have written it. */
	if (!S_ISREG(st.st_mode))
		snprintf(why, why_size, "%s is not a regular file", name);
	else if (st.st_uid != 0)
		snprintf(why, why_size, "%s is owned by uid %u, not root", name, (unsigned)st.st_uid);
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		snprintf(why, why_size, "%s is writable by %s (mode %04o)", name,
		         st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 07777));
	else if (st.st_nlink != 1)
		snprintf(why, why_size, "%s has %lu hard links", name, (unsigned long)st.st_nlink);
	else if (st.st_size > POD_DESCRIPTOR_MAX)
		snprintf(why, why_size, "%s is larger than %d bytes", name, POD_DESCRIPTOR_MAX);
	else
		why[0] = '\0';
	if (why[0]) {
		close(fd);
		return st.st_size > POD_DESCRIPTOR_MAX && S_ISREG(st.st_mode) && st.st_uid == 0 ? -EFBIG : -EPERM;
	}
	n = pread(fd, buf, POD_DESCRIPTOR_MAX + 1, 0);
	r = -errno;
	close(fd);
	if (n < 0) {
		snprintf(why, why_size, "cannot read %s: %s", name, strerror(-r));
		return r;
	}
	if (n > POD_DESCRIPTOR_MAX) {
		snprintf(why, why_size, "%s is larger than %d bytes", name, POD_DESCRIPTOR_MAX);
		return -EFBIG;
	}
	buf[n] = '\0';
	if (memchr(buf, '\0', (size_t)n)) {
		snprintf(why, why_size, "%s contains a NUL byte", name);
		return -EINVAL;
	}
	return n;
}

int podmeta_apply_descriptor(int metadir_fd, const pod_info *in, const pp_pcset *pcset, pod_info *pod,
                             char *why, size_t why_size)
{
	char name[POD_UID_MAX + 8], buf[POD_DESCRIPTOR_MAX + 1];
	desc_parse d = { 0 };
	ssize_t n;
	int r;
	int32_t prio;
	pp_preemption_policy pol;
	pp_err e;

	(void)in;
	pod->termination_grace_usec = POD_DEFAULT_GRACE_USEC;
	if (metadir_fd < 0)
		return 0;
	snprintf(name, sizeof(name), "%s.conf", pod->uid);
	n = read_descriptor(metadir_fd, name, buf, why, why_size);
	if (n < 0)
		return n == -ENOENT ? 0 : (int)n;
	d.text = buf;
	d.uid = pod->uid;
	r = ini_parse_stream(desc_reader, &d, desc_handler, &d);
	if (r != 0 && !d.err[0])
		snprintf(d.err, sizeof(d.err), "line %d: syntax error", r);
	if (!d.err[0] && d.has_class) {
		/* Both given: they must agree, as the priority admission plugin requires. */
		r = pp_pcset_resolve(pcset, d.klass, d.has_prio ? &d.prio : NULL, &prio, &pol, &e);
		if (r < 0)
			snprintf(d.err, sizeof(d.err), "%s", e.msg);
	} else if (d.has_prio)
		prio = d.prio; /* the writer resolved it already (e.g. copied from spec.priority) */
	if (d.err[0]) {
		snprintf(why, why_size, "%s: %s", name, d.err);
		return -EINVAL;
	}

	/* Apply only now, all or nothing. */
	if ((d.has_ns && replace(&pod->namespace_, d.ns) < 0) || (d.has_name && replace(&pod->name, d.name) < 0) ||
	    (d.has_class && replace(&pod->priority_class, d.klass) < 0))
		return -ENOMEM;
	if (d.has_class || d.has_prio) {
		pod->priority = prio;
		pod->priority_src = META_DESCRIPTOR;
	}
	if (d.has_mem) {
		pod->memory_request = d.mem;
		pod->memory_request_src = META_DESCRIPTOR;
	}
	if (d.has_cpu) {
		pod->cpu_request_milli = d.cpu;
		pod->cpu_request_src = META_DESCRIPTOR;
	}
	if (d.has_storage)
		pod->storage_request = d.storage;
	if (d.n_containers) {
		pod_container *pc = malloc(d.n_containers * sizeof(*pc));
		if (!pc)
			return -ENOMEM;
		memcpy(pc, d.containers, d.n_containers * sizeof(*pc));
		free(pod->containers);
		pod->containers = pc;
		pod->n_containers = d.n_containers;
	}
	if (d.has_qos && pod->qos == QOS_UNKNOWN)
		pod->qos = d.qos;
	pod->declared_critical = d.critical;
	if (d.has_grace)
		pod->termination_grace_usec = d.grace;
	pod->has_descriptor = true;
	return 1;
}

int64_t podmeta_weight_to_millicpu(uint64_t weight)
{
	uint64_t shares, milli;

	if (weight <= 1)
		return 0;
	if (weight >= 10000)
		shares = 262144;
	else /* kubelet: weight = 1 + (shares - 2) * 9999 / 262142, integer division */
		shares = 2 + ((weight - 1) * 262142 + 9998) / 9999;
	/* MilliCPUToShares(m) = m * 1024 / 1000 */
	milli = (shares * 1000 + 1023) / 1024;
	return (int64_t)milli;
}

int podmeta_defaults(int pod_dirfd, const pp_pcset *pcset, pod_info *pod)
{
	uint64_t v;
	int32_t prio;
	pp_preemption_policy pol;

	if (pod->memory_request_src == META_NONE && pod_dirfd >= 0 &&
	    cgfs_read_u64(pod_dirfd, "memory.min", &v) == 0 && v > 0 && v <= INT64_MAX) {
		pod->memory_request = (int64_t)v;
		pod->memory_request_src = META_CGROUP;
	}
	if (pod->cpu_request_src == META_NONE && pod_dirfd >= 0 && cgfs_read_u64(pod_dirfd, "cpu.weight", &v) == 0 &&
	    podmeta_weight_to_millicpu(v) > 0) {
		pod->cpu_request_milli = podmeta_weight_to_millicpu(v);
		pod->cpu_request_src = META_CGROUP;
	}
	if (pod->priority_src == META_NONE) {
		pod->priority = 0;
		if (pcset && pp_pcset_resolve(pcset, NULL, NULL, &prio, &pol, NULL) == 0)
			pod->priority = prio;
		pod->priority_src = META_DEFAULT;
	}
	if (!pod->name && replace(&pod->name, pod->uid) < 0)
		return -ENOMEM;
	if (!pod->namespace_ && replace(&pod->namespace_, "") < 0)
		return -ENOMEM;
	pod->critical = pod->declared_critical || pp_priority_is_critical(pod->priority);
	return 0;
}
