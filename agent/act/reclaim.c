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

int reclaim_arm(reclaim_set *r, const reclaim_entry *e)
{
	if (!r || !e || !e->uid[0] || !e->cgroup[0])
		return -EINVAL;
	reclaim_entry *x = find(r, e->uid);
	if (!x) {
		if (r->n == RECLAIM_MAX)
			return -ENOSPC;
		if (r->n == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 8;
			reclaim_entry *n = realloc(r->e, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			r->e = n;
			r->cap = cap;
		}
		x = &r->e[r->n++];
	}
	*x = *e;
	x->reclaiming = false;
	x->gone_usec = x->deadline_usec = 0;
	x->rekills = 0;
	x->rekill_error = 0;
	memset(x->relieved, 0, sizeof(x->relieved));
	x->bound_set = false;
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

/* A restarted container in a victim: the kill is the eviction's, carried on (no new decision). */
static int kill_again(int fd)
{
	int k = cg_kill(fd);
	if (k == -ENOENT) /* kernel without cgroup.kill: every process, once */
		k = cg_signal_tree(fd, SIGKILL, getpid());
	return k < 0 ? k : 0;
}

unsigned reclaim_check(reclaim_set *r, uint64_t now,
                       void (*fn)(reclaim_event what, const reclaim_entry *e, void *userdata), void *userdata)
{
	unsigned removed = 0;
	for (size_t i = 0; r && i < r->n;) {
		reclaim_entry *x = &r->e[i];
		if (!x->reclaiming) {
			i++;
			continue;
		}
		int fd = cgfs_open_dir_beneath(AT_FDCWD, x->cgroup);
		if (fd == -ENOENT) {
			if (fn)
				fn(RECLAIM_DONE, x, userdata);
			remove_at(r, i);
			removed++;
			continue;
		}
		if (fd >= 0 && !x->dry_run && cg_populated(fd) == 1) {
			x->rekill_error = kill_again(fd);
			if (x->rekills++ == 0 && fn)
				fn(RECLAIM_REKILLED, x, userdata);
		}
		if (fd >= 0)
			close(fd);
		if (now >= x->deadline_usec) {
			if (fn)
				fn(RECLAIM_TIMEOUT, x, userdata);
			remove_at(r, i);
			removed++;
			continue;
		}
		i++;
	}
	return removed;
}

void reclaim_pending(const reclaim_set *r, int64_t amount[_SIGNAL_MAX], unsigned pods[_SIGNAL_MAX],
                     bool unknown[_SIGNAL_MAX], int64_t bound[_SIGNAL_MAX])
{
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		amount[s] = 0;
		pods[s] = 0;
		unknown[s] = false;
		bound[s] = 0;
	}
	for (size_t i = 0; r && i < r->n; i++) {
		const reclaim_entry *x = &r->e[i];
		if (!x->reclaiming)
			continue;
		for (int s = 0; s < _SIGNAL_MAX; s++) {
			if (x->relieved[s])
				continue;
			if (x->expected[s] >= 0)
				amount[s] += x->expected[s];
			else
				unknown[s] = true;
			pods[s]++;
			/* without a value to tell new pressure from this pod's, any reading counts as new */
			bool psi = signal_is_psi((evictd_signal)s);
			int64_t b = x->bound_set && x->gone_known[s] ? x->gone[s]
			          : x->observed_known[s]              ? x->observed[s]
			          : psi                               ? INT64_MIN
			                                              : INT64_MAX;
			if (pods[s] == 1 || (psi ? b > bound[s] : b < bound[s]))
				bound[s] = b;
		}
	}
}

void reclaim_observe(reclaim_set *r, const int64_t available[_SIGNAL_MAX], const bool known[_SIGNAL_MAX])
{
	for (size_t i = 0; r && i < r->n; i++) {
		reclaim_entry *x = &r->e[i];
		if (!x->reclaiming || x->bound_set)
			continue;
		for (int s = 0; s < _SIGNAL_MAX; s++) {
			x->gone[s] = available[s];
			x->gone_known[s] = known[s];
		}
		x->bound_set = true;
	}
}

void reclaim_signal_relieved(reclaim_set *r, evictd_signal s)
{
	if (s < 0 || s >= _SIGNAL_MAX)
		return;
	for (size_t i = 0; r && i < r->n; i++)
		if (r->e[i].reclaiming)
			r->e[i].relieved[s] = true;
}

void reclaim_foreach(const reclaim_set *r, void (*fn)(const reclaim_entry *e, void *userdata), void *userdata)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (r->e[i].reclaiming)
			fn(&r->e[i], userdata);
}
