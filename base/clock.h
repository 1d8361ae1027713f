/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The two clocks this tree reads, in the two units it keeps them in. Every name says which clock
 * (mono: CLOCK_MONOTONIC, for durations and deadlines; wall: CLOCK_REALTIME, for times other
 * programs and the API server read) and which unit (usec: unsigned microseconds, sd-event's unit;
 * ns: signed nanoseconds, metav1.Time arithmetic and libpreempt's "now"). One set, so a duration
 * is never computed from two clocks or two units by accident.
 *
 * Return contract: never fails (both clocks exist on every Linux this tree builds for).
 */

#include <stdint.h>
#include <time.h>

#define NOW_USEC_PER_SEC UINT64_C(1000000)
#define NOW_NSEC_PER_SEC INT64_C(1000000000)

uint64_t clock_mono_usec(void);
uint64_t clock_wall_usec(void);
int64_t clock_mono_ns(void);
int64_t clock_wall_ns(void);
/* The same for a clock chosen at run time (CLOCK_BOOTTIME, or either of the above). */
uint64_t clock_usec_on(clockid_t clock);
int64_t clock_ns_on(clockid_t clock);
