/* SPDX-License-Identifier: MIT */
/*
 * Prometheus' text exposition format (version 0.0.4), written as a scrape asks for it, and the
 * histogram the stages keep. Nothing is registered: the program writes every family from the
 * stages' own counters when /metrics is read (preemptd/scrape.c).
 */
#ifndef CTL_METRICS_H
#define CTL_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HISTOGRAM_BUCKETS_MAX 24

typedef struct histogram {
	const double *bounds; /* upper bounds, ascending; +Inf is implied */
	size_t n;
	uint64_t counts[HISTOGRAM_BUCKETS_MAX]; /* per bucket, not cumulative */
	uint64_t count;
	double sum;
} histogram;

void metrics_histogram_init(histogram *h, const double *bounds, size_t n);
void metrics_histogram_observe(histogram *h, double v);
/* The median (an upper estimate: the bucket's bound), NAN when empty. */
double metrics_histogram_median(const histogram *h);

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void metrics_family(FILE *f, const char *name, const char *type, const char *help);
/* name{labels} value; labels: already formatted (metrics_labels), or NULL / "". */
void metrics_sample(FILE *f, const char *name, const char *labels, double value);
/* name_bucket{labels,le=...} (cumulative), name_sum, name_count. */
void metrics_histogram(FILE *f, const char *name, const char *labels, const histogram *h);
/* Formats k1="v1",k2="v2"... from NULL-terminated key, value pairs, values escaped as the format
 * wants (backslash, quote, newline). Returns buf. */
char *metrics_labels(char *buf, size_t size, ...) __attribute__((sentinel));

#endif
