/* SPDX-License-Identifier: MIT */
/*
 * The victims' records: what the daemon must still know about a pod after an eviction, on disk
 * (victims.h, act/inflight.h), so that a restart at any moment neither evicts a second pod for
 * pressure a pending reclaim covers nor credits that reclaim to another pod, and a refused pod's
 * back-off keeps doubling.
 */
#include "victims.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evict-log.h"
#include "inflight.h"
#include "log.h"
#include "clock.h"

static void split_pod(const char *pod, inflight_record *r)
{
	const char *slash = strchr(pod, '/');
	if (!slash) {
		snprintf(r->name, sizeof(r->name), "%.255s", pod);
		return;
	}
	int ns = (int)(slash - pod);
	snprintf(r->namespace_, sizeof(r->namespace_), "%.*s", ns < 255 ? ns : 255, pod);
	snprintf(r->name, sizeof(r->name), "%.255s", slash + 1);
}

static void sync_one(evictd_daemon *d, const char *uid, bool reclaim_over)
{
	if (!d->inflight_dir || !uid || evictor_contains(d->ev, uid))
		return; /* the evictor's record, while the eviction runs */
	const reclaim_entry *e = reclaim_over ? NULL : reclaim_find(d->reclaim, uid);
	pod_memo_state m;
	bool known = pod_memo_get(d->memo, uid, &m);
	if ((e && e->dry_run) || (known && m.dry))
		return; /* a dry run acts on nothing and records nothing */
	inflight_record *r = calloc(1, sizeof(*r));
	if (!r) {
		log_error_errno(-ENOMEM, "the record of %s is not updated", uid);
		return;
	}
	snprintf(r->uid, sizeof(r->uid), "%s", uid);
	r->version = INFLIGHT_VERSION;
	r->failures = known ? m.failures : 0;
	if (e && e->reclaiming) {
		r->phase = INFLIGHT_RECLAIMING;
		r->has_reclaim = true;
		r->reclaim = *e;
		snprintf(r->cgroup, sizeof(r->cgroup), "%s", e->cgroup);
		split_pod(e->pod, r);
	} else if (known && (m.done || m.failures) && access(m.cgroup, F_OK) == 0) {
		/* while its cgroup stays: a pod whose cgroup is gone is gone, and nothing is left to keep */
		r->phase = m.done ? INFLIGHT_EVICTED : INFLIGHT_BACKOFF;
		r->retry_mono_usec = m.done ? 0 : m.retry_at;
		snprintf(r->cgroup, sizeof(r->cgroup), "%s", m.cgroup);
	} else {
		int k = inflight_remove(d->inflight_dir, uid);
		if (k < 0)
			log_error_errno(k, "cannot remove the record of %s in %s", uid, d->inflight_dir);
		free(r);
		return;
	}
	int k = inflight_save(d->inflight_dir, r);
	if (k < 0)
		log_msg(LOG_WARNING, "The record of %s (%s) could not be written in %s (%s): a restart now would not "
		        "carry it over", uid, inflight_phase_to_string(r->phase), d->inflight_dir, strerror(-k));
	free(r);
}

void victims_sync(evictd_daemon *d, const char *uid)
{
	sync_one(d, uid, false);
}

void victims_sync_reclaim_over(evictd_daemon *d, const char *uid)
{
	sync_one(d, uid, true);
}

static void sync_entry(const reclaim_entry *e, void *userdata)
{
	sync_one(userdata, e->uid, false);
}

void victims_sync_reclaiming(evictd_daemon *d)
{
	reclaim_foreach(d->reclaim, sync_entry, d);
}

/* A version 1 record holds one signal's expected reclaim and the cgroup: tracked with that. */
static void entry_from_v1(const inflight_record *rec, reclaim_entry *e)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->uid, sizeof(e->uid), "%.63s", rec->uid); /* inflight_uid_valid: < 64 */
	/* a namespace has at most 63 characters, a pod name 253 */
	snprintf(e->pod, sizeof(e->pod), "%.63s%s%.253s", rec->namespace_, rec->namespace_[0] ? "/" : "", rec->name);
	snprintf(e->cgroup, sizeof(e->cgroup), "%s", rec->cgroup);
	e->signal = signal_from_name(rec->signal);
	if (e->signal == _SIGNAL_INVALID)
		e->signal = SIGNAL_MEMORY_AVAILABLE;
	e->hard = rec->hard;
	for (int s = 0; s < _SIGNAL_MAX; s++)
		e->expected[s] = -1;
	for (int p = 0; p < _RECLAIM_PART_MAX; p++)
		e->part_bytes[p] = e->part_inodes[p] = -1;
	if (rec->expected_reclaim > 0)
		e->expected[e->signal] = rec->expected_reclaim;
	/* nothing observed at the choice: measured from the value once it was gone (reclaim_measured) */
}

static void restore_memo(evictd_daemon *d, const inflight_record *rec, bool done)
{
	pod_memo_state st = { .done = done, .refused_in_flight = rec->refused, .failures = rec->failures,
		              .retry_at = rec->retry_mono_usec };
	int k = pod_memo_restore(d->memo, rec->uid, rec->cgroup, &st);
	if (k < 0)
		log_error_errno(k, "what the previous evictd knew of %s is not carried over", rec->uid);
}

static void resume_one(const inflight_record *rec, void *userdata)
{
	evictd_daemon *d = userdata;
	int k;
	switch (rec->phase) {
	case INFLIGHT_TERMINATING:
	case INFLIGHT_KILLING:
	case INFLIGHT_EXEC: {
		/* tracked for reclaim like any other eviction: armed before the evictor may finish it;
		 * not when the API server refused it already (its reclaim does not count) */
		reclaim_entry *e = rec->refused ? NULL : malloc(sizeof(*e));
		if (e) {
			if (rec->has_reclaim)
				*e = rec->reclaim;
			else
				entry_from_v1(rec, e);
			k = reclaim_arm(d->reclaim, e);
			if (k < 0)
				log_error_errno(k, "the reclaim of %s will not be tracked", rec->uid);
			free(e);
		}
		if (rec->failures || rec->refused)
			restore_memo(d, rec, false);
		k = evictor_resume(d->ev, rec);
		if (k < 0) {
			log_error_errno(k, "cannot resume the eviction of %s", rec->uid);
			reclaim_drop(d->reclaim, rec->uid);
			(void)inflight_remove(d->inflight_dir, rec->uid);
		}
		break;
	}
	case INFLIGHT_RECLAIMING:
		k = reclaim_restore(d->reclaim, &rec->reclaim);
		if (k < 0) {
			log_error_errno(k, "cannot resume the reclaim of %s", rec->uid);
			break;
		}
		restore_memo(d, rec, true);
		evict_log_reclaim_resumed(&rec->reclaim, clock_mono_usec());
		break;
	case INFLIGHT_EVICTED:
	case INFLIGHT_BACKOFF:
		/* kept while its cgroup stays: a pod gone meanwhile has nothing left to remember */
		if (access(rec->cgroup, F_OK) < 0)
			(void)inflight_remove(d->inflight_dir, rec->uid);
		else
			restore_memo(d, rec, rec->phase == INFLIGHT_EVICTED);
		break;
	default:
		break;
	}
}

void victims_resume(evictd_daemon *d)
{
	int r = inflight_load(d->inflight_dir, resume_one, d);
	if (r < 0 && r != -ENOENT)
		log_error_errno(r, "cannot read %s; evictions and reclaims in flight before a restart are not resumed",
		                d->inflight_dir);
	if (r > 0)
		d->dirty = true;
}
