/* SPDX-License-Identifier: MIT */
#include "reclaim.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgfs.h"
#include "cgkill.h"
#include "grow.h"

/* Far more than a node runs (the kubelet's default max-pods is 110): a bound, not a tuning knob. */
#define RECLAIM_MAX 1024

struct reclaim_set {
	reclaim_entry *e; /* oldest first */
	size_t n, cap;
};

reclaim_set *reclaim_set_new(void)
{
	return calloc(1, sizeof(reclaim_set));
}

reclaim_set *reclaim_set_free(reclaim_set *r)
{
	if (r) {
		free(r->e);
		free(r);
	}
	return NULL;
}

static reclaim_entry *find(const reclaim_set *r, const char *uid)
{
	for (size_t i = 0; r && uid && i < r->n; i++)
		if (strcmp(r->e[i].uid, uid) == 0)
			return &r->e[i];
	return NULL;
}

static void remove_at(reclaim_set *r, size_t i)
{
	memmove(&r->e[i], &r->e[i + 1], (r->n - i - 1) * sizeof(*r->e));
	r->n--;
}

static reclaim_entry *slot_for(reclaim_set *r, const reclaim_entry *e, int *ret)
{
	*ret = -EINVAL;
	if (!r || !e || !e->uid[0] || !e->cgroup[0])
		return NULL;
	reclaim_entry *x = find(r, e->uid);
	if (x)
		return x;
	*ret = -ENOSPC;
	if (r->n == RECLAIM_MAX)
		return NULL;
	if (GROW_ARRAY_FROM(&r->e, &r->cap, r->n + 1, 8) < 0) {
		*ret = -ENOMEM;
		return NULL;
	}
	return &r->e[r->n++];
}

int reclaim_arm(reclaim_set *r, const reclaim_entry *e)
{
	int k;
	reclaim_entry *x = slot_for(r, e, &k);
	if (!x)
		return k;
	*x = *e;
	memcpy(x->base, x->observed, sizeof(x->base));
	memcpy(x->base_known, x->observed_known, sizeof(x->base_known));
	x->reclaiming = false;
	x->gone_usec = x->deadline_usec = 0;
	x->rekills = 0;
	x->rekill_error = 0;
	memset(x->relieved, 0, sizeof(x->relieved));
	memset(x->part_back, 0, sizeof(x->part_back));
	x->bound_set = false;
	return 0;
}

int reclaim_restore(reclaim_set *r, const reclaim_entry *e)
{
	int k;
	reclaim_entry *x = slot_for(r, e, &k);
	if (!x)
		return k;
	*x = *e;
	return 0;
}

const reclaim_entry *reclaim_begin(reclaim_set *r, const char *uid, uint64_t now, uint64_t timeout)
{
	reclaim_entry *x = find(r, uid);
	if (!x)
		return NULL;
	if (timeout == 0) {
		reclaim_drop(r, uid);
		return NULL;
	}
	x->reclaiming = true;
	x->gone_usec = now;
	x->deadline_usec = now + timeout;
	return x;
}

void reclaim_drop(reclaim_set *r, const char *uid)
{
	reclaim_entry *x = find(r, uid);
	if (x)
		remove_at(r, (size_t)(x - r->e));
}

const reclaim_entry *reclaim_find(const reclaim_set *r, const char *uid)
{
	return find(r, uid);
}

bool reclaim_contains(const reclaim_set *r, const char *uid)
{
	return find(r, uid) != NULL;
}

unsigned reclaim_count(const reclaim_set *r)
{
	unsigned n = 0;
	for (size_t i = 0; r && i < r->n; i++)
		n += r->e[i].reclaiming;
	return n;
}

uint64_t reclaim_next_deadline(const reclaim_set *r)
{
	uint64_t t = UINT64_MAX;
	for (size_t i = 0; r && i < r->n; i++)
		if (r->e[i].reclaiming && r->e[i].deadline_usec < t)
			t = r->e[i].deadline_usec;
	return t;
}

const char *reclaim_part_name(reclaim_part p)
{
	switch (p) {
	case RECLAIM_PART_CGROUP:  return "pod cgroup";
	case RECLAIM_PART_VOLUMES: return "emptyDir volumes";
	case RECLAIM_PART_LOGS:    return "container logs";
	default:                   return "?";
	}
}

const char *reclaim_part_path(const reclaim_entry *e, reclaim_part p)
{
	return p == RECLAIM_PART_CGROUP ? e->cgroup : p == RECLAIM_PART_VOLUMES ? e->volumes
	     : p == RECLAIM_PART_LOGS   ? e->logs   : "";
}

bool reclaim_part_tracked(const reclaim_entry *e, reclaim_part p)
{
	return p >= 0 && p < _RECLAIM_PART_MAX && reclaim_part_path(e, p)[0] != '\0';
}

static bool disk_signal(evictd_signal s)
{
	evictd_rank_kind k = signal_rank_kind(s);
	return k == RANK_DISK || k == RANK_INODES;
}

unsigned reclaim_signal_parts(const reclaim_entry *e, evictd_signal s)
{
	if (!disk_signal(s))
		return 1u << RECLAIM_PART_CGROUP;
	unsigned m = 0;
	if (reclaim_part_tracked(e, RECLAIM_PART_VOLUMES))
		m |= 1u << RECLAIM_PART_VOLUMES;
	if (reclaim_part_tracked(e, RECLAIM_PART_LOGS))
		m |= 1u << RECLAIM_PART_LOGS;
	/* no directory known: the kubelet's own test, the cgroup (the volumes go before it) */
	if (!m)
		m = 1u << RECLAIM_PART_CGROUP;
	return m;
}

/* A restarted container in a victim: the kill is the eviction's, carried on (no new decision). */
static int kill_again(int fd)
{
	int k = cg_kill(fd);
	if (k == -ENOENT) /* kernel without cgroup.kill: every process, once */
		k = cg_signal_tree(fd, SIGKILL, getpid());
	return k < 0 ? k : 0;
}

static bool cgroup_back(reclaim_entry *x)
{
	int fd = cgfs_open_dir_beneath(AT_FDCWD, x->cgroup);
	if (fd == -ENOENT)
		return true;
	if (fd >= 0 && !x->dry_run && cg_populated(fd) == 1) {
		x->rekill_error = kill_again(fd);
		x->rekills++;
	}
	if (fd >= 0)
		close(fd);
	return false;
}

/* Marks the parts that came back since the last look; returns them, a bit each. */
static unsigned look(reclaim_entry *x, reclaim_probe_fn probe, void *probe_data)
{
	unsigned back = 0;
	for (int p = 0; p < _RECLAIM_PART_MAX; p++) {
		reclaim_part part = (reclaim_part)p;
		if (x->part_back[p])
			continue;
		if (!reclaim_part_tracked(x, part))
			x->part_back[p] = true;
		else if (part == RECLAIM_PART_CGROUP)
			x->part_back[p] = cgroup_back(x);
		else if (probe) {
			int k = probe(part, reclaim_part_path(x, part), probe_data);
			x->part_back[p] = k == 0 || k == -ENOENT;
		}
		if (x->part_back[p] && reclaim_part_tracked(x, part))
			back |= 1u << p;
	}
	return back;
}

static bool all_back(const reclaim_entry *x)
{
	for (int p = 0; p < _RECLAIM_PART_MAX; p++)
		if (!x->part_back[p])
			return false;
	return true;
}

unsigned reclaim_check(reclaim_set *r, uint64_t now, reclaim_probe_fn probe, void *probe_data,
                       void (*fn)(reclaim_event what, const reclaim_entry *e, void *userdata), void *userdata)
{
	unsigned changed = 0;
	for (size_t i = 0; r && i < r->n;) {
		reclaim_entry *x = &r->e[i];
		if (!x->reclaiming) {
			i++;
			continue;
		}
		unsigned rekills = x->rekills;
		unsigned back = look(x, probe, probe_data);
		x->just_back = back;
		if (rekills == 0 && x->rekills > 0 && fn)
			fn(RECLAIM_REKILLED, x, userdata);
		if (all_back(x) || now >= x->deadline_usec) {
			if (fn)
				fn(all_back(x) ? RECLAIM_DONE : RECLAIM_TIMEOUT, x, userdata);
			changed += back != 0;
			remove_at(r, i);
			continue;
		}
		if (back) {
			if (fn)
				fn(RECLAIM_PART_BACK, x, userdata);
			changed++;
		}
		i++;
	}
	return changed;
}

/* What the entry's outstanding parts still hold for signal s: -1 unknown, 0 when none is outstanding. */
static int64_t outstanding(const reclaim_entry *x, evictd_signal s, bool *any)
{
	unsigned m = reclaim_signal_parts(x, s);
	int64_t sum = 0;
	*any = false;
	for (int p = 0; p < _RECLAIM_PART_MAX; p++) {
		if (!(m & (1u << p)) || x->part_back[p])
			continue;
		*any = true;
		int64_t a = !disk_signal(s) || p == RECLAIM_PART_CGROUP ? x->expected[s]
		          : s == SIGNAL_NODEFS_INODES_FREE ? x->part_inodes[p] : x->part_bytes[p];
		if (a < 0 || sum < 0)
			sum = -1;
		else
			sum += a;
	}
	return sum;
}

void reclaim_pending(const reclaim_set *r, pending_reclaim *p)
{
	for (size_t i = 0; r && i < r->n; i++) {
		const reclaim_entry *x = &r->e[i];
		if (!x->reclaiming)
			continue;
		for (int s = 0; s < _SIGNAL_MAX; s++) {
			bool any;
			int64_t a = outstanding(x, (evictd_signal)s, &any);
			if (x->relieved[s] || !any)
				continue;
			bool gone = x->bound_set && x->gone_known[s];
			pending_reclaim_add(p, (evictd_signal)s, a, gone || x->observed_known[s],
			                    gone ? x->gone[s] : x->observed[s]);
		}
	}
}

unsigned reclaim_observe(reclaim_set *r, const int64_t available[_SIGNAL_MAX], const bool known[_SIGNAL_MAX])
{
	unsigned n = 0;
	for (size_t i = 0; r && i < r->n; i++) {
		reclaim_entry *x = &r->e[i];
		if (!x->reclaiming || x->bound_set)
			continue;
		for (int s = 0; s < _SIGNAL_MAX; s++) {
			x->gone[s] = available[s];
			x->gone_known[s] = known[s];
		}
		x->bound_set = true;
		n++;
	}
	return n;
}

unsigned reclaim_signal_relieved(reclaim_set *r, evictd_signal s)
{
	unsigned n = 0;
	if (s < 0 || s >= _SIGNAL_MAX)
		return 0;
	for (size_t i = 0; r && i < r->n; i++)
		if (r->e[i].reclaiming && !r->e[i].relieved[s]) {
			r->e[i].relieved[s] = true;
			n++;
		}
	return n;
}

unsigned reclaim_rebase(reclaim_set *r, const int64_t available[_SIGNAL_MAX], const bool known[_SIGNAL_MAX])
{
	unsigned n = 0;
	for (size_t i = 0; r && i < r->n; i++) {
		reclaim_entry *x = &r->e[i];
		if (!x->reclaiming || x->just_back)
			continue; /* its own parts came back: the change is (partly) its own */
		for (int s = 0; s < _SIGNAL_MAX; s++) {
			x->base[s] = available[s];
			x->base_known[s] = known[s];
		}
		n++;
	}
	return n;
}

int reclaim_measured(const reclaim_entry *e, evictd_signal s, bool now_known, int64_t now, int64_t *ret)
{
	if (s < 0 || s >= _SIGNAL_MAX || !now_known)
		return -1;
	/* without a value at the choice (a version 1 record): from the value once it was gone */
	if (e->base_known[s])
		*ret = now - e->base[s];
	else if (e->bound_set && e->gone_known[s])
		*ret = now - e->gone[s];
	else
		return -1;
	return 0;
}

void reclaim_foreach(const reclaim_set *r, void (*fn)(const reclaim_entry *e, void *userdata), void *userdata)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (r->e[i].reclaiming)
			fn(&r->e[i], userdata);
}
