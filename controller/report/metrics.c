/* SPDX-License-Identifier: MIT */
#include "metrics.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

void metrics_histogram_init(histogram *h, const double *bounds, size_t n)
{
	memset(h, 0, sizeof(*h));
	h->bounds = bounds;
	h->n = n < HISTOGRAM_BUCKETS_MAX - 1 ? n : HISTOGRAM_BUCKETS_MAX - 1;
}

void metrics_histogram_observe(histogram *h, double v)
{
	size_t i = 0;

	while (i < h->n && v > h->bounds[i])
		i++;
	h->counts[i]++; /* i == n: +Inf */
	h->count++;
	h->sum += v;
}

double metrics_histogram_median(const histogram *h)
{
	uint64_t seen = 0;

	if (!h->count)
		return NAN;
	for (size_t i = 0; i <= h->n; i++) {
		seen += h->counts[i];
		if (seen * 2 >= h->count)
			return i < h->n ? h->bounds[i] : INFINITY;
	}
	return INFINITY;
}

void metrics_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void value(FILE *f, double v)
{
	if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else if (isnan(v))
		fputs("NaN", f);
	/* the range first: converting a double beyond int64_t is undefined behaviour */
	else if (fabs(v) < 9e15 && v == (double)(int64_t)v)
		fprintf(f, "%lld", (long long)v);
	else
		fprintf(f, "%.9g", v);
}

void metrics_sample(FILE *f, const char *name, const char *labels, double v)
{
	if (labels && *labels)
		fprintf(f, "%s{%s} ", name, labels);
	else
		fprintf(f, "%s ", name);
	value(f, v);
	fputc('\n', f);
}

void metrics_histogram(FILE *f, const char *name, const char *labels, const histogram *h)
{
	uint64_t cum = 0;
	const char *sep = labels && *labels ? "," : "";

	for (size_t i = 0; i <= h->n; i++) {
		cum += h->counts[i];
		fprintf(f, "%s_bucket{%s%sle=\"", name, labels ? labels : "", sep);
		value(f, i < h->n ? h->bounds[i] : INFINITY);
		fprintf(f, "\"} %llu\n", (unsigned long long)cum);
	}
	fprintf(f, "%s_sum%s%s%s ", name, labels && *labels ? "{" : "", labels ? labels : "", labels && *labels ? "}" : "");
	value(f, h->sum);
	fprintf(f, "\n%s_count%s%s%s %llu\n", name, labels && *labels ? "{" : "", labels ? labels : "",
	        labels && *labels ? "}" : "", (unsigned long long)h->count);
}

char *metrics_labels(char *buf, size_t size, ...)
{
	va_list ap;
	size_t off = 0;
	const char *k;

	buf[0] = '\0';
	va_start(ap, size);
	while ((k = va_arg(ap, const char *))) {
		const char *v = va_arg(ap, const char *);
		int n = snprintf(buf + off, size - off, "%s%s=\"", off ? "," : "", k);
		if (n < 0 || (size_t)n >= size - off)
			break;
		off += (size_t)n;
		for (; *v && off + 3 < size; v++) {
			if (*v == '\\' || *v == '"' || *v == '\n') {
				buf[off++] = '\\';
				buf[off++] = *v == '\n' ? 'n' : *v;
			} else {
				buf[off++] = *v;
			}
		}
		if (off + 2 > size)
			break;
		buf[off++] = '"';
		buf[off] = '\0';
	}
	va_end(ap);
	return buf;
}
