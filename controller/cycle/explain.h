/* SPDX-License-Identifier: MIT */
/*
 * The words of a decision, in one place: `preemptctl preempt --explain` prints them for a what-if
 * and preemptd writes the same into the journal for a live decision, so that the two never tell a
 * user different stories about the same cluster.
 */
#ifndef CTL_EXPLAIN_H
#define CTL_EXPLAIN_H

#include <stdint.h>
#include <stdio.h>

#include <preempt.h>

/* Formats Unix nanoseconds as RFC 3339 (UTC). */
void format_time(int64_t ns, char *buf, size_t size);

/*
 * Why each node was rejected or chosen, the victims with their priorities and start times, and
 * the criterion that decided (p made with pp_preempt_options.explain). pod: the preemptor;
 * now_ns: the time pods without a start time count as started.
 */
void explain_preemption(FILE *f, const pp_preemption *p, const pp_pod_info *pod, int64_t now_ns);

#endif
