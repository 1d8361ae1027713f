/* SPDX-License-Identifier: MIT */
#include "kube-spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "spool.h"
#include "clock.h"

/* The spool directory, created root 0755 when missing (its parent is evictd's RuntimeDirectory). */
static int open_spool(const evictd_config *c)
{
	int fd = open(c->kube.spool_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && mkdir(c->kube.spool_dir, 0755) == 0)
		fd = open(c->kube.spool_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		log_msg(LOG_WARNING, "Eviction spool %s unavailable, the API server will not hear of it: %s",
		        c->kube.spool_dir, strerror(errno));
	return fd;
}

static const threshold_value *threshold_of_kind(const evictd_config *c, threshold_kind k, evictd_signal s)
{
	static const threshold_value none;
	const threshold_value *t = k == THRESHOLD_HARD ? config_hard(c, s) : &c->soft[s];
	return t ? t : &none;
}

void kube_spool_measure(const evictd_config *c, const char *cgroup_path, const pod_info *p,
                        const eviction_choice *ch, spool_container ctr[POD_CONTAINERS_MAX])
{
	if (!c->kube.enable || c->dry_run)
		return;
	bool memory = strcmp(spool_signal_resource(signal_name(ch->signal)), "memory") == 0;
	int podfd = open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	spool_container_usage(podfd, p, memory, ctr);
	if (podfd >= 0)
		close(podfd);
}

void kube_spool_eviction(const evictd_config *c, const pod_info *p, const eviction_choice *ch, int64_t usage,
                         const spool_container *ctr)
{
	char why[512];
	int dirfd, r;

	if (!c->kube.enable || c->dry_run)
		return;
	dirfd = open_spool(c);
	if (dirfd < 0)
		return;
	spool_eviction ev = {
		.pod = p, .signal = signal_name(ch->signal), .hard = ch->kind == THRESHOLD_HARD,
		.threshold = ch->threshold, .observed = ch->observed, .usage = usage,
		.threshold_percent = threshold_of_kind(c, ch->kind, ch->signal)->percent,
		.grace_usec = ch->grace_usec, .started_real_usec = clock_wall_usec(),
		.containers = ctr, .n_containers = p->n_containers,
	};
	r = spool_write_eviction(dirfd, c->kube.spool_max, &ev, why, sizeof(why));
	if (r < 0) {
		log_entry e;
		log_entry_init(&e, LOG_WARNING, NULL);
		log_entry_add(&e, FIELD_POD_UID, "%s", p->uid);
		log_entry_add(&e, FIELD_REASON, "%s", why);
		log_entry_send(&e, "Eviction of %s not queued for the API server: %s", p->uid, why);
	}
	close(dirfd);
}

/* "memory.available 80Mi < 625Mi (hard), allocatableMemory.available ...": what holds the condition. */
static void condition_message(const evaluation *ev, const node_signals *node, evictd_condition cnd, char *buf, size_t size)
{
	size_t l = 0;
	buf[0] = '\0';
	for (int sig = 0; sig < _SIGNAL_MAX; sig++) {
		if (signal_condition((evictd_signal)sig) != cnd)
			continue;
		for (int k = 0; k < _THRESHOLD_KIND_MAX && l < size; k++) {
			const threshold_eval *te = &ev->t[k][sig];
			char a[32], t[32];
			if (!te->met || !node->s[sig].known)
				continue;
			bool bytes = strcmp(signal_unit((evictd_signal)sig), "bytes") == 0;
			if (bytes) {
				spool_quantity(node->s[sig].available, a, sizeof(a));
				spool_quantity(te->threshold, t, sizeof(t));
			} else {
				snprintf(a, sizeof(a), "%lld", (long long)node->s[sig].available);
				snprintf(t, sizeof(t), "%lld", (long long)te->threshold);
			}
			l += (size_t)snprintf(buf + l, size - l, "%s%s %s %s %s (%s)", l ? ", " : "",
			                      signal_name((evictd_signal)sig), a, signal_is_psi((evictd_signal)sig) ? ">" : "<",
			                      t, k == THRESHOLD_HARD ? "hard" : "soft");
		}
	}
}

/*
 * Whether evictd watched cnd at its last evaluation: true when one of its signals with a threshold
 * was measured, or when none of them has a threshold (there was nothing to watch, and evictd never
 * claimed otherwise); false when every thresholded signal of it was unreadable.
 */
static bool condition_watched(const evictd_config *c, const node_signals *node, evictd_condition cnd)
{
	bool thresholded = false;
	for (int sig = 0; sig < _SIGNAL_MAX; sig++) {
		const threshold_value *h = config_hard(c, (evictd_signal)sig);
		if (signal_condition((evictd_signal)sig) != cnd || !((h && h->set) || c->soft[sig].set))
			continue;
		if (node->s[sig].known)
			return true;
		thresholded = true;
	}
	return !thresholded;
}

/*
 * stopping: the records of an orderly stop (reason SPOOL_REASON_STOPPED). From then on nothing
 * relieves pressure, so a condition says False only where the pressure is known to be gone: evictd
 * had it False at its last evaluation (no threshold met, pressure-transition-period over) and
 * watched it. A condition still True (pressure, or within the transition period) or not measured
 * says Unknown: a controller that taints on True must not lift its taint because evictd stopped.
 */
static void write_conditions(const evictd_config *c, const evaluation *ev, const node_signals *node, bool all,
                             bool stopping, int *dirfd)
{
	char msg[1024], why[512], what[800];

	for (int cnd = 0; cnd < _CONDITION_MAX; cnd++) {
		if (!all && !ev->condition_changed[cnd])
			continue;
		if (*dirfd < 0 && (*dirfd = open_spool(c)) < 0)
			return;
		const char *name = signal_condition_name((evictd_condition)cnd), *status, *reason = NULL;
		bool on = ev->conditions[cnd];
		condition_message(ev, node, (evictd_condition)cnd, what, sizeof(what));
		if (!stopping) {
			status = on ? "True" : "False";
			if (on)
				snprintf(msg, sizeof(msg), "evictd is evicting pods to relieve %s: %s", name,
				         what[0] ? what : "a threshold is met");
			else
				snprintf(msg, sizeof(msg), "no evictd threshold for this condition is met");
		} else {
			reason = SPOOL_REASON_STOPPED;
			if (on) {
				status = "Unknown";
				snprintf(msg, sizeof(msg), "evictd stopped while %s held (%s): nothing relieves it until evictd "
				         "runs again", name, what[0] ? what : "within pressure-transition-period");
			} else if (condition_watched(c, node, (evictd_condition)cnd)) {
				status = "False";
				snprintf(msg, sizeof(msg), "evictd stopped; no threshold for %s was met at its last evaluation",
				         name);
			} else {
				status = "Unknown";
				snprintf(msg, sizeof(msg), "evictd stopped; none of the signals of %s could be measured at its "
				         "last evaluation", name);
			}
		}
		if (spool_write_condition(*dirfd, c->kube.spool_max, name, status, reason, msg, clock_wall_usec(), why,
		                          sizeof(why)) < 0)
			log_msg(LOG_WARNING, "Node condition %s not queued: %s", name, why);
	}
}

void kube_spool_conditions(const evictd_config *c, const evaluation *ev, const node_signals *node, bool all)
{
	int dirfd = -1;

	if (!c->kube.enable || c->dry_run)
		return;
	write_conditions(c, ev, node, all, false, &dirfd);
	if (dirfd >= 0)
		close(dirfd);
}

void kube_spool_conditions_stopped(const evictd_config *c, const evaluation *ev, const node_signals *node)
{
	static const node_signals none;
	int dirfd = -1;

	if (!c->kube.enable || c->dry_run)
		return;
	write_conditions(c, ev, node ? node : &none, true, true, &dirfd);
	if (dirfd >= 0)
		close(dirfd);
}

void kube_spool_thresholds(const evictd_config *c, const evaluation *ev, const snapshot *s)
{
	int dirfd = -1;

	if (!c->kube.enable || c->dry_run)
		return;
	for (int k = 0; k < _THRESHOLD_KIND_MAX; k++)
		for (int sig = 0; sig < _SIGNAL_MAX; sig++) {
			const threshold_eval *te = &ev->t[k][sig];
			char why[512];
			/* the kubelet's EvictionThresholdMet: when a threshold becomes actionable (a soft one
			 * once its grace period has passed), not when it is first crossed */
			if (!te->newly_actionable || !s->node.s[sig].known || signal_is_psi((evictd_signal)sig))
				continue;
			if (dirfd < 0 && (dirfd = open_spool(c)) < 0)
				return;
			if (spool_write_threshold(dirfd, c->kube.spool_max, signal_name((evictd_signal)sig),
			                          k == THRESHOLD_HARD, te->threshold, s->node.s[sig].available, clock_wall_usec(),
			                          why, sizeof(why)) < 0)
				log_msg(LOG_WARNING, "Node event for %s not queued: %s", signal_name((evictd_signal)sig), why);
		}
	write_conditions(c, ev, &s->node, false, false, &dirfd);
	if (dirfd >= 0)
		close(dirfd);
}
