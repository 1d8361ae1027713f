/* SPDX-License-Identifier: MIT */
#include "decide.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "preempt.h"

const char *decide_format_signal_value(evictd_signal s, int64_t v, char *buf, size_t size)
{
	if (signal_is_psi(s))
		snprintf(buf, size, "%" PRId64 ".%02" PRId64 "%%", v / 100, (v < 0 ? -v : v) % 100);
	else if (strcmp(signal_unit(s), "bytes") == 0)
		log_format_bytes(v, buf, size);
	else
		snprintf(buf, size, "%" PRId64, v);
	return buf;
}

static bool is_inflight(const decide_input *in, const pod_info *p)
{
	for (size_t i = 0; i < in->n_inflight; i++)
		if (in->inflight_uids[i] && strcmp(in->inflight_uids[i], p->uid) == 0)
			return true;
	return false;
}

static const char *skipped(const decide_input *in, const pod_info *p)
{
	for (size_t i = 0; i < in->n_skip; i++)
		if (in->skip_uids[i] && strcmp(in->skip_uids[i], p->uid) == 0)
			return in->skip_why[i];
	return NULL;
}

static int rank_kind(const decide_input *in, evictd_rank_kind k, ranked_pod **ret)
{
	const snapshot *s = in->snap;
	size_t n = s->n_pods;
	pp_evict_pod *pp = calloc(n ? n : 1, sizeof(*pp));
	size_t *order = calloc(n ? n : 1, sizeof(*order));
	ranked_pod *out = calloc(n ? n : 1, sizeof(*out));
	static const pp_evict_signal map[_RANK_MAX] = { PP_EVICT_MEMORY, PP_EVICT_DISK, PP_EVICT_PID, PP_EVICT_DISK,
		                                        PP_EVICT_DISK, PP_EVICT_DISK };
	int r = -ENOMEM;

	if (!pp || !order || !out)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const pod_info *p = &s->pods[i];
		pp[i] = (pp_evict_pod){
			.namespace_ = p->namespace_,
			.name = p->name ? p->name : p->uid,
			.uid = p->uid,
			.priority = p->priority,
		};
		switch (k) {
		case RANK_MEMORY:
			pp[i].has_stats = p->has_memory;
			pp[i].usage = p->working_set;
			pp[i].request = p->memory_request;
			break;
		case RANK_DISK:
			pp[i].has_stats = p->has_disk;
			pp[i].usage = p->disk_bytes;
			pp[i].request = p->storage_request;
			break;
		case RANK_INODES:
			/*
			 * Deviation from the kubelet (reference §7.4): it subtracts the ephemeral-storage
			 * byte request from the inode count. There is no inode request, so none is
			 * subtracted: "exceeds" = uses any inode, then priority, then inode count.
			 */
			pp[i].has_stats = p->has_disk;
			pp[i].usage = p->disk_inodes;
			pp[i].request = 0;
			break;
		case RANK_IMAGEFS:
			/* the layout's share (runtime-disk.h); without the runtime: priority, then name */
			pp[i].has_stats = p->has_imagefs;
			pp[i].usage = p->imagefs_bytes;
			pp[i].request = p->storage_request;
			break;
		case RANK_IMAGEFS_INODES:
			pp[i].has_stats = p->has_imagefs;
			pp[i].usage = p->imagefs_inodes;
			pp[i].request = 0; /* as nodefs.inodesFree: no inode request */
			break;
		default:
			pp[i].has_stats = p->has_pids;
			pp[i].usage = p->pids;
			break;
		}
	}
	r = pp_evict_rank(map[k], pp, n, order);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const pod_info *p = &s->pods[order[i]];
		ranked_pod *rp = &out[i];
		rp->pod = order[i];
		rp->has_usage = pp[order[i]].has_stats;
		rp->usage = pp[order[i]].usage;
		rp->request = pp[order[i]].request;
		rp->exceeds = pp_evict_exceeds_request(map[k], &pp[order[i]]);
		rp->lower_bound = (k == RANK_DISK || k == RANK_INODES) && rp->has_usage && p->disk_partial;
		if (p->critical)
			rp->excluded = "critical pod (priority >= 2000000000)";
		else if (p->is_self)
			rp->excluded = "evictd's own cgroup";
		else if (is_inflight(in, p))
			rp->excluded = "already being evicted";
		else if (skipped(in, p))
			rp->excluded = skipped(in, p);
		else if ((k == RANK_MEMORY || k == RANK_PID) && !rp->has_usage)
			rp->excluded = "no usage statistics";
		rp->candidate = rp->excluded == NULL;
	}
	*ret = out;
	out = NULL;
	r = 0;
out:
	free(pp);
	free(order);
	free(out);
	return r;
}

int64_t decide_pod_expected_reclaim(evictd_signal s, const pod_info *p)
{
	switch (signal_rank_kind(s)) {
	case RANK_MEMORY:
		if (signal_is_psi(s))
			return -1;
		return p->has_memory ? p->working_set : -1;
	case RANK_PID:
		return p->has_pids ? p->pids : -1;
	case RANK_DISK:
		return p->has_disk ? p->disk_bytes : -1;
	case RANK_INODES:
		return p->has_disk ? p->disk_inodes : -1;
	case RANK_IMAGEFS:
		return p->has_imagefs ? p->imagefs_bytes : -1;
	case RANK_IMAGEFS_INODES:
		return p->has_imagefs ? p->imagefs_inodes : -1;
	default:
		return -1;
	}
}

static bool chosen_already(const decision *d, size_t pod)
{
	for (size_t i = 0; i < d->n_evict; i++)
		if (d->evict[i].pod == pod)
			return true;
	return false;
}

static int add_choice(decision *d, const eviction_choice *c)
{
	eviction_choice *n = realloc(d->evict, (d->n_evict + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	d->evict = n;
	n[d->n_evict++] = *c;
	return 0;
}

static uint64_t grace_for(const decide_input *in, threshold_kind k, evictd_signal s, const pod_info *p)
{
	const evictd_config *c = in->cfg;

	/* Hard thresholds (and soft ones with a 0 s grace, which the kubelet treats as hard): now. */
	if (k == THRESHOLD_HARD || config_soft_is_hard(c, s))
		return 0;
	if (c->max_pod_grace_usec > 0 && c->max_pod_grace_usec < p->termination_grace_usec)
		return c->max_pod_grace_usec;
	return p->termination_grace_usec;
}

static int select_for(const decide_input *in, decision *d, threshold_kind k, evictd_signal s)
{
	const snapshot *snap = in->snap;
	const threshold_eval *te = &d->eval.t[k][s];
	const signal_obs *o = &snap->node.s[s];
	evictd_rank_kind rk = signal_rank_kind(s);
	const ranked_pod *rank = d->ranking[rk];
	bool estimable = !signal_is_psi(s);
	bool disk = rk == RANK_DISK || rk == RANK_INODES;
	int64_t need, pending = 0;
	bool inflight_any = false, inflight_unknown = false;

	for (size_t i = 0; i < snap->n_pods; i++) {
		const pod_info *p = &snap->pods[i];
		if (is_inflight(in, p) || chosen_already(d, i)) {
			inflight_any = true;
			int64_t r = decide_pod_expected_reclaim(s, p);
			if (r > 0)
				pending += r;
			if (r < 0 || (disk && p->disk_partial))
				inflight_unknown = true;
		}
	}
	const pending_reclaim *pr = in->pending;
	bool worse = false;
	if (pr && pr->sources[s]) {
		pending += pr->amount[s];
		worse = signal_is_psi(s) ? o->available > pr->bound[s] : o->available < pr->bound[s];
		if (!worse)
			return 0; /* what evicted pods are still giving back may relieve this: wait for it */
	}
	if (inflight_unknown)
		return 0; /* let what is in flight act first: its effect cannot be predicted */
	if (in->node && in->node->hold[s]) {
		d->node_held[s] = true;
		return 0; /* node-level reclaim first, then measure again (the kubelet's order) */
	}
	if (in->node && in->node->pending[s] > 0)
		pending += in->node->pending[s];
	if (!estimable) {
		if (inflight_any)
			return 0;
		need = 1; /* PSI: one pod, then measure again */
	} else {
		/* back to threshold + minimum reclaim, less what evictions in flight or reclaiming will free */
		need = te->threshold + te->min_reclaim - o->available - pending;
		/* with a reclaim pending, only the pressure that came since its pod was gone */
		if (worse && pr->bound[s] - o->available < need)
			need = pr->bound[s] - o->available;
	}
	if (need <= 0) {
		if (in->node && in->node->pending[s] > 0 && te->threshold + te->min_reclaim - o->available > 0)
			d->node_covered[s] = true;
		return 0;
	}

	/* what every candidate of the ranking together would give back (pods within their requests too) */
	int64_t whole = 0;
	for (size_t i = 0; estimable && i < d->n_ranked; i++) {
		const ranked_pod *rp = &rank[i];
		int64_t r = rp->candidate && !chosen_already(d, rp->pod) ? decide_pod_expected_reclaim(s, &snap->pods[rp->pod]) : 0;
		if (r > 0)
			whole += r;
	}
	bool ranking_covers = whole >= need;

	bool first_exceeds = false;
	size_t taken = 0, first = d->n_evict;
	for (size_t i = 0; i < d->n_ranked && need > 0; i++) {
		const ranked_pod *rp = &rank[i];
		if (!rp->candidate || chosen_already(d, rp->pod))
			continue;
		if (rk != RANK_PID) {
			if (taken == 0)
				first_exceeds = rp->exceeds;
			else if (first_exceeds && !rp->exceeds)
				break; /* within-request pods only when no pod exceeds its requests */
		}
		const pod_info *p = &snap->pods[rp->pod];
		int64_t r = decide_pod_expected_reclaim(s, p);
		eviction_choice c = {
			.pod = rp->pod,
			.signal = s,
			.kind = k,
			.rank = (unsigned)(i + 1),
			.grace_usec = grace_for(in, k, s, p),
			.observed = o->available,
			.threshold = te->threshold,
			.min_reclaim = te->min_reclaim,
			.expected_reclaim = estimable ? r : -1,
		};
		if (add_choice(d, &c) < 0)
			return -ENOMEM;
		taken++;
		/*
		 * A pod whose reclaim is unknown, nothing (nodefs pressure from outside the pods) or only
		 * a lower bound ends the batch: one pod, as the kubelet would, then measure again.
		 */
		if (!estimable || r <= 0 || (disk && p->disk_partial))
			need = 0;
		else
			need -= r;
	}
	/*
	 * Short of the need after every pod the walk may take (it stops where pods within their
	 * requests begin). When the whole ranking could cover the need, the walk's pods all go in this
	 * batch — each of them must go anyway, and waiting for each one's reclaim under memory pressure
	 * invites the OOM killer — and the next step is chosen after measuring again. Only when even
	 * every candidate together cannot cover it (the pressure comes from outside the pods) would
	 * evicting them all not end it either: one pod, the kubelet's step, then measure again.
	 */
	if (need > 0 && taken > 1 && !ranking_covers)
		d->n_evict = first + 1;
	return 0;
}

void decide_decision_free(decision *d)
{
	for (int k = 0; k < _RANK_MAX; k++) {
		free(d->ranking[k]);
		d->ranking[k] = NULL;
	}
	free(d->evict);
	d->evict = NULL;
	d->n_evict = 0;
}

int decide_evictions(const decide_input *in, threshold_state *st, decision *ret)
{
	threshold_state next = *st;
	decision d = { .n_ranked = in->snap->n_pods };
	int r;

	thresholds_evaluate(in->cfg, &in->snap->node, &next, in->now_usec, &d.eval);

	for (int k = 0; k < _RANK_MAX; k++) {
		bool need = in->rank_all;
		for (int kind = 0; kind < _THRESHOLD_KIND_MAX && !need; kind++)
			for (int s = 0; s < _SIGNAL_MAX && !need; s++)
				need = d.eval.t[kind][s].actionable && signal_rank_kind((evictd_signal)s) == (evictd_rank_kind)k;
		if (need && (r = rank_kind(in, (evictd_rank_kind)k, &d.ranking[k])) < 0)
			goto fail;
	}
	/* Hard before soft; within a kind, the enum order: memory, allocatable, pid, disk, PSI. */
	for (int kind = 0; kind < _THRESHOLD_KIND_MAX; kind++)
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (d.eval.t[kind][s].actionable && (r = select_for(in, &d, (threshold_kind)kind, (evictd_signal)s)) < 0)
				goto fail;
	*st = next;
	*ret = d;
	return 0;
fail:
	decide_decision_free(&d);
	return r;
}

const char *decide_ranked_reason(evictd_rank_kind k, const pod_info *p, const ranked_pod *r, char *buf, size_t size)
{
	char u[32], q[32];
	int n = 0;

	switch (k) {
	case RANK_MEMORY:
		if (!r->has_usage)
			n = snprintf(buf, size, "memory usage unknown (ranked last)");
		else if (r->exceeds)
			n = snprintf(buf, size, "working set %s exceeds request %s", log_format_bytes(r->usage, u, sizeof(u)),
			             log_format_bytes(r->request, q, sizeof(q)));
		else
			n = snprintf(buf, size, "working set %s within request %s", log_format_bytes(r->usage, u, sizeof(u)),
			             log_format_bytes(r->request, q, sizeof(q)));
		break;
	case RANK_DISK:
		if (!r->has_usage)
			n = snprintf(buf, size, "disk usage not measured; ephemeral-storage request %s",
			             log_format_bytes(r->request, q, sizeof(q)));
		else
			n = snprintf(buf, size, "emptyDir+logs %s%s %s ephemeral-storage request %s",
			             r->lower_bound ? "at least " : "", log_format_bytes(r->usage, u, sizeof(u)),
			             r->exceeds ? "exceeds" : "within", log_format_bytes(r->request, q, sizeof(q)));
		break;
	case RANK_INODES:
		if (!r->has_usage)
			n = snprintf(buf, size, "inode usage not measured");
		else
			n = snprintf(buf, size, "emptyDir+logs %s%" PRId64 " inodes", r->lower_bound ? "at least " : "",
			             r->usage);
		break;
	case RANK_IMAGEFS:
	case RANK_IMAGEFS_INODES:
		if (!r->has_usage)
			n = snprintf(buf, size, "writable layers not attributable without the container runtime (ranked by priority)");
		else if (k == RANK_IMAGEFS)
			n = snprintf(buf, size, "writable layers%s %s %s ephemeral-storage request %s",
			             p->cri_logs && p->rootfs_bytes != r->usage ? " + logs + emptyDir" : "",
			             log_format_bytes(r->usage, u, sizeof(u)), r->exceeds ? "exceeds" : "within",
			             log_format_bytes(r->request, q, sizeof(q)));
		else
			n = snprintf(buf, size, "writable layers %" PRId64 " inodes", r->usage);
		break;
	default:
		if (r->has_usage)
			n = snprintf(buf, size, "%" PRId64 " tasks", r->usage);
		else
			n = snprintf(buf, size, "task count unknown");
		break;
	}
	if (n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, "; priority %" PRId32 "%s%s", p->priority,
		         r->excluded ? "; not a candidate: " : "", r->excluded ? r->excluded : "");
	return buf;
}
