/* SPDX-License-Identifier: MIT */
/*
 * The words of a decision, in one place: `preemptctl preempt --explain` prints them for a what-if
 * and preemptd writes the same into the journal for a live decision, so that the two never tell a
 * user different stories about the same cluster.
 */
#ifndef CTL_EXPLAIN_H
#define CTL_EXPLAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <preempt.h>

/* Formats Unix nanoseconds as RFC 3339 (UTC). */
void explain_format_time(int64_t ns, char *buf, size_t size);

/*
 * Why each node was rejected or chosen, the victims with their priorities and start times, and
 * the criterion that decided (p made with pp_preempt_options.explain). pod: the preemptor;
 * now_ns: the time pods without a start time count as started.
 */
void explain_preemption(FILE *f, const pp_preemption *p, const pp_pod_info *pod, int64_t now_ns);

/* events.k8s.io/v1's limit on an Event's note (bytes). */
#define EXPLAIN_NOTE_MAX 1024

/*
 * The facts that decided p, in one line: kube-scheduler's FitError counts the filters, this says
 * what its words leave out. The same from p made with or without pp_preempt_options.explain, so
 * that preemptd (which decides without: it costs memory and time per node) and preemptctl
 * preempt --explain say the same words.
 *   preempt: "Preempting on node n2, picked by lowest highest-victim priority: 100 against 500 on
 *            n1. Victims: default/b2 (priority 100 < 1000; no PodDisruptionBudget)."
 *   no node: "Preemption cannot resolve: 2 node(s) had untolerated taint {dedicated: gpu}." (the
 *            filters behind kube's "Preemption is not helpful for scheduling"), or nothing.
 * Nothing for a pod that fits or may not preempt (kube's own message says it all), and never a
 * claim that a pod could preempt unless p preempts. Within size bytes (NUL included): victims
 * that do not fit are counted ("... and 12 more victims."). Returns the length written.
 */
size_t explain_summary(char *buf, size_t size, const pp_preemption *p, const pp_pod_info *pod);
/* The same for a preemption the budget postponed: "Would preempt on node n2, ..." (nothing was
 * deleted, so the words must not say it is happening). */
size_t explain_summary_for(char *buf, size_t size, const pp_preemption *p, const pp_pod_info *pod, bool postponed);

/* Why victim i of p (pp_preemption_victim) is one, within size bytes: "priority 100 < 1000;
 * within PodDisruptionBudget default/web (1 disruption allowed)". Returns the length. */
size_t explain_victim(char *buf, size_t size, const pp_preemption *p, size_t i, int32_t preemptor_priority);

/*
 * An Event's note: head (kube's own words, unchanged, so that what parses them still does), then
 * " " and the summary, shortened to fit limit bytes, in buf (limit + 1 bytes). Returns buf, or head
 * itself when it leaves no room (the act stage cuts it as kube-scheduler does).
 */
const char *explain_note(char *buf, size_t limit, const char *head, const pp_preemption *p, const pp_pod_info *pod);
const char *explain_note_for(char *buf, size_t limit, const char *head, const pp_preemption *p, const pp_pod_info *pod,
                             bool postponed);

#endif
