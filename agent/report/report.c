/* SPDX-License-Identifier: MIT */
#include "report.h"

#include "jsonw.h"

#include "config-out.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "heartbeat.h"
#include "log.h"

static void json_i64_or_null(FILE *f, bool known, int64_t v)
{
	if (known)
		fprintf(f, "%" PRId64, v);
	else
		fputs("null", f);
}

static void json_ranking(FILE *f, evictd_rank_kind k, const snapshot *s, const decision *d)
{
	const ranked_pod *rank = d->ranking[k];
	char name[320], why[400];

	fputc('[', f);
	for (size_t i = 0; rank && i < d->n_ranked; i++) {
		const ranked_pod *r = &rank[i];
		const pod_info *p = &s->pods[r->pod];
		fputs(i ? ",{" : "{", f);
		fputs("\"pod\":", f);
		json_string(f, snapshot_pod_display_name(p, name, sizeof(name)));
		fputs(",\"uid\":", f);
		json_string(f, p->uid);
		fprintf(f, ",\"rank\":%zu,\"priority\":%" PRId32 ",\"usage_bytes\":", i + 1, p->priority);
		if (k == RANK_DISK)
			json_i64_or_null(f, p->has_disk, p->disk_bytes);
		else if (k == RANK_IMAGEFS)
			json_i64_or_null(f, p->has_imagefs, p->imagefs_bytes); /* null: no runtime, not attributable */
		else if (k == RANK_INODES || k == RANK_IMAGEFS_INODES)
			fputs("null", f); /* inodes are not bytes */
		else
			json_i64_or_null(f, p->has_memory, p->working_set);
		if (k == RANK_DISK || k == RANK_INODES) {
			fputs(",\"disk_bytes\":", f);
			json_i64_or_null(f, p->has_disk, p->disk_bytes);
			fputs(",\"disk_inodes\":", f);
			json_i64_or_null(f, p->has_disk, p->disk_inodes);
			fprintf(f, ",\"disk_lower_bound\":%s", p->has_disk && p->disk_partial ? "true" : "false");
		}
		if (k == RANK_IMAGEFS || k == RANK_IMAGEFS_INODES || k == RANK_DISK) {
			fputs(",\"rootfs_bytes\":", f);
			json_i64_or_null(f, p->has_rootfs, p->rootfs_bytes);
			fputs(",\"rootfs_inodes\":", f);
			json_i64_or_null(f, p->has_rootfs, p->rootfs_inodes);
			fputs(",\"imagefs_inodes\":", f);
			json_i64_or_null(f, p->has_imagefs, p->imagefs_inodes);
			fprintf(f, ",\"logs_from_runtime\":%s", p->cri_logs ? "true" : "false");
		}
		fprintf(f, ",\"request_bytes\":%" PRId64 ",\"exceeds_requests\":%s", r->request, r->exceeds ? "true" : "false");
		fputs(",\"processes\":", f);
		json_i64_or_null(f, p->has_pids, p->pids);
		fputs(",\"qos\":", f);
		json_string(f, snapshot_pod_qos_name(p->qos));
		fputs(",\"cgroup\":", f);
		json_string(f, p->cgroup);
		fprintf(f, ",\"critical\":%s,\"candidate\":%s,\"reason\":", p->critical ? "true" : "false",
		        r->candidate ? "true" : "false");
		json_string(f, decide_ranked_reason(k, p, r, why, sizeof(why)));
		fputc('}', f);
	}
	fputc(']', f);
}

static void json_node_reclaim(FILE *f, const evictd_config *c, const decision *d, const runtime_plan *plan);

int report_json(FILE *f, const cg_info *cg, const evictd_config *c, const snapshot *s, const decision *d,
                const runtime_plan *plan)
{
	char name[320];
	bool first;

	fputs("{\"cgroup\":{\"mode\":", f);
	json_string(f, cg_mode_name(cg->mode));
	fputs(",\"root\":", f);
	json_string(f, cg->root);
	fputs(",\"controllers\":[", f);
	{
		char tmp[sizeof(cg->controllers)], *save = NULL;
		int k = 0;
		snprintf(tmp, sizeof(tmp), "%s", cg->controllers);
		for (char *w = strtok_r(tmp, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
			if (k++)
				fputc(',', f);
			json_string(f, w);
		}
	}
	fputs("]},\"signals\":[", f);
	for (int i = 0; i < _SIGNAL_MAX; i++) {
		const signal_obs *o = &s->node.s[i];
		const threshold_eval *h = &d->eval.t[THRESHOLD_HARD][i], *so = &d->eval.t[THRESHOLD_SOFT][i];
		fputs(i ? ",{\"signal\":" : "{\"signal\":", f);
		json_string(f, signal_name((evictd_signal)i));
		fputs(",\"available\":", f);
		json_i64_or_null(f, o->known, o->available);
		fputs(",\"capacity\":", f);
		json_i64_or_null(f, o->known, o->capacity);
		fputs(",\"threshold\":", f);
		json_i64_or_null(f, h->configured && o->known, h->threshold);
		fprintf(f, ",\"met\":%s,\"soft_threshold\":", h->met ? "true" : "false");
		json_i64_or_null(f, so->configured && o->known, so->threshold);
		fprintf(f, ",\"soft_met\":%s,\"unit\":", so->met ? "true" : "false");
		json_string(f, signal_unit((evictd_signal)i));
		if (!o->known) {
			fputs(",\"unavailable\":", f);
			json_string(f, o->reason);
		}
		fputc('}', f);
	}
	fprintf(f, "],\"fall_rates\":{\"online_cpus\":%u,\"memory\":%" PRId64 ",\"memory_derived\":%s,\"pid\":%" PRId64
	        ",\"pid_derived\":%s,\"disk\":%" PRId64 ",\"inodes\":%" PRId64 "}", c->online_cpus, c->memory_max_rate,
	        c->memory_max_rate_auto ? "true" : "false", c->pid_max_rate, c->pid_max_rate_auto ? "true" : "false",
	        c->disk_max_rate, c->inodes_max_rate);
	fputs(",\"conditions\":[", f);
	first = true;
	for (int i = 0; i < _CONDITION_MAX; i++)
		if (d->eval.conditions[i]) {
			if (!first)
				fputc(',', f);
			json_string(f, signal_condition_name((evictd_condition)i));
			first = false;
		}
	fputs("],\"ranking\":{\"memory\":", f);
	json_ranking(f, RANK_MEMORY, s, d);
	fputs(",\"pid\":", f);
	json_ranking(f, RANK_PID, s, d);
	fputs(",\"disk\":", f);
	json_ranking(f, RANK_DISK, s, d);
	fputs(",\"inodes\":", f);
	json_ranking(f, RANK_INODES, s, d);
	fputs(",\"imagefs\":", f);
	json_ranking(f, RANK_IMAGEFS, s, d);
	fputs(",\"imagefs_inodes\":", f);
	json_ranking(f, RANK_IMAGEFS_INODES, s, d);
	fputc('}', f);
	json_node_reclaim(f, c, d, plan);
	fputs(",\"evict\":[", f);
	for (size_t i = 0; i < d->n_evict; i++) {
		const eviction_choice *ch = &d->evict[i];
		const pod_info *p = &s->pods[ch->pod];
		fputs(i ? ",{\"pod\":" : "{\"pod\":", f);
		json_string(f, snapshot_pod_display_name(p, name, sizeof(name)));
		fputs(",\"uid\":", f);
		json_string(f, p->uid);
		fputs(",\"signal\":", f);
		json_string(f, signal_name(ch->signal));
		fprintf(f, ",\"grace_sec\":%" PRIu64 ",\"threshold_kind\":\"%s\",\"rank\":%u,\"expected_reclaim\":",
		        ch->grace_usec / USEC_PER_SEC, threshold_kind_name(ch->kind), ch->rank);
		json_i64_or_null(f, ch->expected_reclaim >= 0, ch->expected_reclaim);
		fputs(",\"cgroup\":", f);
		json_string(f, p->cgroup);
		fputc('}', f);
	}
	int64_t caps[_SIGNAL_MAX];
	for (int i = 0; i < _SIGNAL_MAX; i++)
		caps[i] = s->node.s[i].known ? s->node.s[i].capacity : -1;
	fputc(']', f);
	config_out_json_members(f, c, caps);
	fprintf(f, ",\"dry_run\":%s}\n", c->dry_run ? "true" : "false");
	return ferror(f) ? -EIO : 0;
}

static bool is_disk(int i)
{
	return i == SIGNAL_NODEFS_AVAILABLE || i == SIGNAL_NODEFS_INODES_FREE || i == SIGNAL_IMAGEFS_AVAILABLE ||
	       i == SIGNAL_IMAGEFS_INODES_FREE;
}

static const char *mode_name(const evictd_config *c)
{
	return c->node_reclaim == NODE_RECLAIM_IMAGES ? "images" : c->node_reclaim == NODE_RECLAIM_ACCOUNT ? "account" : "off";
}

/* Node-level reclaim before any victim: what the kubelet's order would free first. */
static void text_node_reclaim(FILE *f, const evictd_config *c, const decision *d, const runtime_plan *plan)
{
	char a[32], b[32];

	fputs("\nnode-level reclaim (before any pod is evicted for disk pressure):\n", f);
	if (!plan || !plan->valid) {
		fputs("  no container runtime listing: not planned (pods ranked as without a runtime)\n", f);
		return;
	}
	fprintf(f, "  layout: %s, image filesystem %s; node-reclaim = %s\n", snapshot_disk_layout_name(plan->layout),
	        plan->imagefs[0] ? plan->imagefs : "not named", mode_name(c));
	for (int i = 0; i < _SIGNAL_MAX; i++) {
		const runtime_signal_plan *sp = &plan->s[i];
		evictd_signal s = (evictd_signal)i;
		if (!is_disk(i))
			continue;
		fprintf(f, "  %-20s ", signal_name(s));
		if (!sp->steps) {
			fputs("none on this layout\n", f);
			continue;
		}
		if (sp->steps & NODEREC_CONTAINERS)
			fprintf(f, "%u dead container%s (the kubelet's) %s; ", sp->n_dead, sp->n_dead == 1 ? "" : "s",
			        decide_format_signal_value(s, sp->dead, a, sizeof(a)));
		if (sp->steps & NODEREC_IMAGES)
			fprintf(f, "%zu unused image%s %s", sp->n_images, sp->n_images == 1 ? "" : "s",
			        log_format_bytes(sp->images_bytes, b, sizeof(b)));
		if (sp->n_remove)
			fprintf(f, "; %s %zu (%s) for the need", c->dry_run ? "would remove" : "removes", sp->n_remove,
			        log_format_bytes(sp->remove_bytes, b, sizeof(b)));
		if (sp->pending)
			fprintf(f, "; pending %s", decide_format_signal_value(s, sp->pending, a, sizeof(a)));
		if (sp->kubelet_reached)
			fputs("; below the kubelet's own threshold: nothing counts as pending", f);
		if (d->node_covered[i])
			fputs("; covers the need: no pod evicted", f);
		fputc('\n', f);
	}
	for (int i = 0; i < 8 && plan->remove_names[i]; i++)
		fprintf(f, "  %s %s\n", c->dry_run ? "would remove" : "removes", plan->remove_names[i]);
	for (int i = 0; i < 8 && plan->kept_names[i]; i++)
		fprintf(f, "  may not remove %s: %s\n", plan->kept_names[i], plan->kept_why[i]);
}

static void json_node_reclaim(FILE *f, const evictd_config *c, const decision *d, const runtime_plan *plan)
{
	bool first = true;

	fputs(",\"node_reclaim\":", f);
	if (!plan || !plan->valid) {
		fputs("null", f);
		return;
	}
	fputs("{\"layout\":", f);
	json_string(f, snapshot_disk_layout_name(plan->layout));
	fputs(",\"image_filesystem\":", f);
	json_string(f, plan->imagefs);
	fputs(",\"mode\":", f);
	json_string(f, mode_name(c));
	fputs(",\"signals\":{", f);
	for (int i = 0; i < _SIGNAL_MAX; i++) {
		const runtime_signal_plan *sp = &plan->s[i];
		if (!is_disk(i))
			continue;
		fputs(first ? "" : ",", f);
		first = false;
		json_string(f, signal_name((evictd_signal)i));
		fprintf(f, ":{\"dead_containers\":%s,\"images\":%s,\"n_dead\":%u,\"dead\":%" PRId64 ",\"n_unused_images\":%zu,"
		        "\"unused_image_bytes\":%" PRId64 ",\"remove\":%zu,\"remove_bytes\":%" PRId64 ",\"pending\":%" PRId64
		        ",\"kubelet_threshold_reached\":%s,\"covers_need\":%s}",
		        sp->steps & NODEREC_CONTAINERS ? "true" : "false", sp->steps & NODEREC_IMAGES ? "true" : "false",
		        sp->n_dead, sp->dead, sp->n_images, sp->images_bytes, sp->n_remove, sp->remove_bytes, sp->pending,
		        sp->kubelet_reached ? "true" : "false", d->node_covered[i] ? "true" : "false");
	}
	fputs("},\"remove\":[", f);
	for (int i = 0; i < 8 && plan->remove_names[i]; i++) {
		fputs(i ? "," : "", f);
		json_string(f, plan->remove_names[i]);
	}
	fputs("],\"kept\":[", f);
	for (int i = 0; i < 8 && plan->kept_names[i]; i++) {
		fputs(i ? ",{\"image\":" : "{\"image\":", f);
		json_string(f, plan->kept_names[i]);
		fputs(",\"why\":", f);
		json_string(f, plan->kept_why[i]);
		fputs("}", f);
	}
	fputs("]}", f);
}

int report_text(FILE *f, const cg_info *cg, const evictd_config *c, const snapshot *s, const decision *d,
                const runtime_plan *plan)
{
	char a[32], cap[32], t[32], name[320], why[400];
	bool any = false;

	fprintf(f, "cgroup v2: %s, root %s (found by %s), controllers: %s\n", cg_mode_name(cg->mode),
	        cg->root[0] ? cg->root : "none", cg->found_by ? cg->found_by : "?",
	        cg->controllers[0] ? cg->controllers : "none");
	fprintf(f, "\n%-28s %12s %12s %16s %s\n", "SIGNAL", "AVAILABLE", "CAPACITY", "THRESHOLD", "MET");
	for (int i = 0; i < _SIGNAL_MAX; i++) {
		const signal_obs *o = &s->node.s[i];
		const threshold_eval *h = &d->eval.t[THRESHOLD_HARD][i], *so = &d->eval.t[THRESHOLD_SOFT][i];
		if (!o->known) {
			fprintf(f, "%-28s unavailable: %s\n", signal_name((evictd_signal)i), o->reason);
			continue;
		}
		char thr[80] = "-";
		if (h->configured)
			snprintf(thr, sizeof(thr), "%s", decide_format_signal_value((evictd_signal)i, h->threshold, t, sizeof(t)));
		fprintf(f, "%-28s %12s %12s %16s %s", signal_name((evictd_signal)i),
		        decide_format_signal_value((evictd_signal)i, o->available, a, sizeof(a)),
		        decide_format_signal_value((evictd_signal)i, o->capacity, cap, sizeof(cap)), thr,
		        h->met ? "yes (hard)" : "no");
		if (so->configured)
			fprintf(f, "; soft %s: %s", decide_format_signal_value((evictd_signal)i, so->threshold, t, sizeof(t)),
			        so->met ? "met, waiting for its grace period" : "not met");
		fputc('\n', f);
	}
	char rates[160];
	heartbeat_fall_rates_text(c, rates, sizeof(rates));
	fprintf(f, "\n%s\n", rates);
	fputs("\nconditions:", f);
	for (int i = 0; i < _CONDITION_MAX; i++)
		if (d->eval.conditions[i]) {
			fprintf(f, " %s", signal_condition_name((evictd_condition)i));
			any = true;
		}
	fprintf(f, "%s\n", any ? "" : " none");
	for (int k = 0; k < _RANK_MAX; k++) {
		fprintf(f, "\nranking for %s pressure (evicted first at the top):\n", signal_rank_kind_name((evictd_rank_kind)k));
		if (!d->ranking[k] || d->n_ranked == 0)
			fputs("  (no pods)\n", f);
		for (size_t i = 0; d->ranking[k] && i < d->n_ranked; i++) {
			const ranked_pod *r = &d->ranking[k][i];
			const pod_info *p = &s->pods[r->pod];
			fprintf(f, "  %3zu. %-40s %s\n", i + 1, snapshot_pod_display_name(p, name, sizeof(name)),
			        decide_ranked_reason((evictd_rank_kind)k, p, r, why, sizeof(why)));
		}
	}
	text_node_reclaim(f, c, d, plan);
	fputs("\nwould evict:", f);
	if (d->n_evict == 0)
		fputs(" nothing\n", f);
	else
		fputc('\n', f);
	for (size_t i = 0; i < d->n_evict; i++) {
		const eviction_choice *ch = &d->evict[i];
		const pod_info *p = &s->pods[ch->pod];
		fprintf(f, "  %s (uid %s) for %s (%s threshold, rank %u, grace %" PRIu64 "s", snapshot_pod_display_name(p, name, sizeof(name)),
		        p->uid, signal_name(ch->signal), threshold_kind_name(ch->kind), ch->rank, ch->grace_usec / USEC_PER_SEC);
		if (ch->expected_reclaim >= 0)
			fprintf(f, ", expected reclaim %s", decide_format_signal_value(ch->signal, ch->expected_reclaim, a, sizeof(a)));
		fputs(")\n", f);
	}
	int64_t caps[_SIGNAL_MAX];
	for (int i = 0; i < _SIGNAL_MAX; i++)
		caps[i] = s->node.s[i].known ? s->node.s[i].capacity : -1;
	fputc('\n', f);
	return config_out_text(f, c, caps);
}
