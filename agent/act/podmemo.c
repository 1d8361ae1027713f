/* SPDX-License-Identifier: MIT */
#include "podmemo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgfs.h"
#include "cgkill.h"
#include "grow.h"

/* Far more than a node runs (the kubelet's default max-pods is 110): a bound, not a tuning knob. */
#define MEMO_MAX 4096

typedef struct memo_entry {
	char uid[POD_UID_MAX];
	char cgroup[PATH_MAX]; /* absolute */
	bool done;
	bool dry;           /* "evicted" in a dry run: its processes run on, by design */
	bool restart_said;  /* processes reappeared after the eviction: reported once */
	bool refused_in_flight; /* refused while its eviction ran: its end does not make it "done" */
	unsigned failures;
	uint64_t retry_at;
} memo_entry;

struct pod_memo {
	memo_entry *e;
	size_t n, cap;
};

pod_memo *pod_memo_new(void)
{
	return calloc(1, sizeof(pod_memo));
}

pod_memo *pod_memo_free(pod_memo *m)
{
	if (m) {
		free(m->e);
		free(m);
	}
	return NULL;
}

unsigned pod_memo_count(const pod_memo *m)
{
	return m ? (unsigned)m->n : 0;
}

static memo_entry *find(const pod_memo *m, const char *uid)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->e[i].uid, uid) == 0)
			return &m->e[i];
	return NULL;
}

static memo_entry *find_or_add_uid(pod_memo *m, const char *uid, const char *cgroup)
{
	memo_entry *e = find(m, uid);
	if (e)
		return e;
	if (m->n == MEMO_MAX || strlen(uid) >= POD_UID_MAX || strlen(cgroup) >= PATH_MAX)
		return NULL;
	if (GROW_ARRAY(&m->e, &m->cap, m->n + 1) < 0)
		return NULL;
	e = &m->e[m->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->uid, sizeof(e->uid), "%s", uid);
	snprintf(e->cgroup, sizeof(e->cgroup), "%s", cgroup);
	return e;
}

static memo_entry *find_or_add(pod_memo *m, const evict_info *i)
{
	return find_or_add_uid(m, i->uid, i->cgroup_path);
}

static memo_verdict failed(memo_entry *e, uint64_t now, uint64_t backoff_usec, uint64_t backoff_max_usec,
                           uint64_t *ret_retry_usec)
{
	e->done = false;
	e->failures++;
	uint64_t b = backoff_usec;
	for (unsigned k = 1; k < e->failures && b < backoff_max_usec; k++)
		b *= 2;
	if (b > backoff_max_usec)
		b = backoff_max_usec;
	e->retry_at = now + b;
	if (ret_retry_usec)
		*ret_retry_usec = b;
	return e->failures == 1 ? MEMO_FIRST_FAILURE : MEMO_REPEATED_FAILURE;
}

memo_verdict pod_memo_refused(pod_memo *m, const char *uid, uint64_t now, uint64_t backoff_usec,
                              uint64_t backoff_max_usec, uint64_t *ret_retry_usec)
{
	memo_entry *e = m && uid ? find(m, uid) : NULL;
	if (!e || e->dry)
		return MEMO_IGNORED;
	e->restart_said = false;
	return failed(e, now, backoff_usec, backoff_max_usec, ret_retry_usec);
}

memo_verdict pod_memo_refused_in_flight(pod_memo *m, const char *uid, const char *cgroup, uint64_t now,
                                        uint64_t backoff_usec, uint64_t backoff_max_usec, uint64_t *ret_retry_usec)
{
	memo_entry *e = m && uid && cgroup ? find_or_add_uid(m, uid, cgroup) : NULL;
	if (!e || e->dry)
		return MEMO_IGNORED;
	e->restart_said = false;
	e->refused_in_flight = true;
	return failed(e, now, backoff_usec, backoff_max_usec, ret_retry_usec);
}

bool pod_memo_get(const pod_memo *m, const char *uid, pod_memo_state *ret)
{
	const memo_entry *e = m && uid ? find(m, uid) : NULL;
	if (!e)
		return false;
	*ret = (pod_memo_state){ .done = e->done, .refused_in_flight = e->refused_in_flight, .dry = e->dry,
		                 .failures = e->failures, .retry_at = e->retry_at, .cgroup = e->cgroup };
	return true;
}

int pod_memo_restore(pod_memo *m, const char *uid, const char *cgroup, const pod_memo_state *st)
{
	if (!m || !uid || !*uid || !cgroup || !st)
		return -EINVAL;
	memo_entry *e = find_or_add_uid(m, uid, cgroup);
	if (!e)
		return m->n == MEMO_MAX ? -ENOSPC : -ENOMEM;
	e->done = st->done && !st->refused_in_flight;
	e->refused_in_flight = st->refused_in_flight;
	e->dry = false;
	e->failures = st->failures;
	e->retry_at = e->done ? 0 : st->retry_at;
	return 0;
}

memo_verdict pod_memo_finished(pod_memo *m, const evict_info *i, uint64_t now, uint64_t backoff_usec,
                               uint64_t backoff_max_usec, uint64_t *ret_retry_usec)
{
	if (!m || !i)
		return MEMO_IGNORED;
	if (i->dry_run) {
		/* as if evicted: the dry run shows the real run's sequence, each victim once */
		memo_entry *e = i->outcome == EVICT_DRY ? find_or_add(m, i) : NULL;
		if (!e)
			return MEMO_IGNORED;
		e->done = e->dry = true;
		return MEMO_DONE;
	}
	switch (i->outcome) {
	case EVICT_DONE:
	case EVICT_EMPTY:
	case EVICT_GONE: {
		memo_entry *e = find_or_add(m, i);
		if (e && e->refused_in_flight) {
			/* the API server refused it meanwhile: killed once, but not evicted in its eyes */
			e->refused_in_flight = false;
			return MEMO_IGNORED;
		}
		if (e) {
			/* the failure count stays: a pod refused again later waits twice as long (issue 29) */
			e->done = true;
			e->dry = false;
			e->retry_at = 0;
		}
		return MEMO_DONE;
	}
	case EVICT_FAILED:
	case EVICT_TIMEOUT: {
		memo_entry *e = find_or_add(m, i);
		if (!e)
			return MEMO_FIRST_FAILURE;
		if (e->refused_in_flight) {
			e->refused_in_flight = false; /* counted already, when refused */
			return MEMO_REPEATED_FAILURE;
		}
		return failed(e, now, backoff_usec, backoff_max_usec, ret_retry_usec);
	}
	default:
		return MEMO_IGNORED;
	}
}

static bool in_snapshot(const snapshot *snap, const char *uid)
{
	for (size_t i = 0; i < snap->n_pods; i++)
		if (strcmp(snap->pods[i].uid, uid) == 0)
			return true;
	return false;
}

static bool repopulated(const memo_entry *e)
{
	int fd = cgfs_open_dir_beneath(AT_FDCWD, e->cgroup);
	if (fd < 0)
		return false;
	bool r = cg_populated(fd) == 1;
	close(fd);
	return r;
}

void pod_memo_prune(pod_memo *m, const snapshot *snap, pod_memo_restarted_fn fn, pod_memo_forgot_fn forgot,
                    void *userdata)
{
	if (!m || !snap)
		return;
	for (size_t i = 0; i < m->n;) {
		memo_entry *e = &m->e[i];
		if (!in_snapshot(snap, e->uid)) {
			char uid[POD_UID_MAX];
			snprintf(uid, sizeof(uid), "%s", e->uid);
			m->e[i] = m->e[--m->n];
			if (forgot)
				forgot(uid, userdata);
			continue;
		}
		if (e->done && !e->dry && fn && repopulated(e)) {
			fn(e->uid, e->cgroup, !e->restart_said, userdata);
			e->restart_said = true;
		}
		i++;
	}
}

int pod_memo_skip_list(const pod_memo *m, uint64_t now, const char ***ret_uids, const char ***ret_why,
                       size_t *ret_n)
{
	size_t n = m ? m->n : 0;
	const char **uids = calloc(n ? n : 1, sizeof(*uids));
	const char **why = calloc(n ? n : 1, sizeof(*why));
	if (!uids || !why) {
		free(uids);
		free(why);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const memo_entry *e = &m->e[i];
		if (e->done && e->dry)
			why[k] = "evicted in this dry run";
		else if (e->done)
			why[k] = "evicted already";
		else if (e->retry_at > now)
			why[k] = "its eviction failed; waiting before the next try";
		else
			continue;
		uids[k++] = e->uid;
	}
	*ret_uids = uids;
	*ret_why = why;
	*ret_n = k;
	return 0;
}
