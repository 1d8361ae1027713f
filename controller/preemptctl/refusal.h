/* SPDX-License-Identifier: MIT */
/*
 * How a pod refused at admission is told (refusal.c) — one wording for preemptctl's JSON, its
 * --explain, schedule's event lines, and whatever later explains a live decision: a refused pod is
 * never scheduled, so nothing may claim it could preempt.
 */
#ifndef CTL_REFUSAL_H
#define CTL_REFUSAL_H

#include <stdio.h>

#include <preempt.h>

/* The admission plugin that refused ("ResourceQuota"). */
const char *refusal_plugin(const pp_admission *a);

/* The human account (preempt --explain): the API server's message, then why, in a few lines. */
void refusal_explain(FILE *f, const char *namespace_, const char *name, const pp_admission *a);

/* preempt's one JSON object:
 *   {"pod":"ns/name","node":null,"refused":"ResourceQuota","reason":"<the API server's message>"}
 * Returns 0, or -EIO when writing fails. */
int refusal_json(FILE *out, const char *namespace_, const char *name, const pp_admission *a);

/* schedule's event line at simulated time 0 (the pod is never created):
 *   {"time":0,"event":"refused","pod":"ns/name","plugin":"ResourceQuota","message":"..."} */
int refusal_event(FILE *out, const char *namespace_, const char *name, const pp_admission *a);

#endif
