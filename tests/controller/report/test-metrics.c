/* preemptd's /metrics text (controller/report/metrics.c) as Prometheus' text format 0.0.4 wants
 * it and a scraper parses it: HELP and TYPE lines per family, samples with and without labels,
 * label values escaped (backslash, quote, newline) and cut inside their quotes when the buffer
 * is short, values as integers, decimals, +Inf and NaN, and histograms with cumulative buckets
 * (le inclusive, +Inf last), _sum and _count. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"

struct out {
	FILE *f;
	char *text;
	size_t size;
};

static void out_open(struct out *o)
{
	o->text = NULL;
	o->size = 0;
	o->f = open_memstream(&o->text, &o->size);
	assert_non_null(o->f);
}

/* The text written so far (owned by o until out_free). */
static const char *out_text(struct out *o)
{
	assert_int_equal(fflush(o->f), 0);
	return o->text;
}

static void out_free(struct out *o)
{
	fclose(o->f);
	free(o->text);
}

static void test_family_lines(void **state)
{
	(void)state;
	struct out o;
	out_open(&o);
	metrics_family(o.f, "scheduler_schedule_attempts_total", "counter", "Number of attempts to schedule pods.");
	assert_string_equal(out_text(&o), "# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods.\n"
	                                  "# TYPE scheduler_schedule_attempts_total counter\n");
	out_free(&o);
}

static void test_samples_and_values(void **state)
{
	(void)state;
	struct out o;
	out_open(&o);
	metrics_sample(o.f, "a", NULL, 3);
	metrics_sample(o.f, "b", "", 0);
	metrics_sample(o.f, "c", "queue=\"active\"", 42);
	metrics_sample(o.f, "d", NULL, 0.25);
	metrics_sample(o.f, "e", NULL, -7);
	metrics_sample(o.f, "f", NULL, INFINITY);
	metrics_sample(o.f, "g", NULL, NAN);
	metrics_sample(o.f, "h", NULL, 1714557600.0);
	metrics_sample(o.f, "i", NULL, 1e300);
	assert_string_equal(out_text(&o), "a 3\n"
	                                  "b 0\n"
	                                  "c{queue=\"active\"} 42\n"
	                                  "d 0.25\n"
	                                  "e -7\n"
	                                  "f +Inf\n"
	                                  "g NaN\n"
	                                  "h 1714557600\n"
	                                  "i 1e+300\n");
	out_free(&o);
}

/* A pod's or a node's name is the user's: a quote, a backslash or a newline in it must not end
 * the label value or the line. */
static void test_label_escaping(void **state)
{
	(void)state;
	char buf[256];

	assert_string_equal(metrics_labels(buf, sizeof(buf), "queue", "active", "event", "PodAdd", (const char *)NULL),
	                    "queue=\"active\",event=\"PodAdd\"");
	assert_string_equal(metrics_labels(buf, sizeof(buf), "reason", "say \"hi\"\\now\nnext", (const char *)NULL),
	                    "reason=\"say \\\"hi\\\"\\\\now\\nnext\"");
	assert_string_equal(metrics_labels(buf, sizeof(buf), (const char *)NULL), "");
	assert_string_equal(metrics_labels(buf, sizeof(buf), "empty", "", (const char *)NULL), "empty=\"\"");
}

/* Too long for the buffer: cut inside the value, still quoted, NUL-terminated within the buffer. */
static void test_label_cut_stays_quoted(void **state)
{
	(void)state;
	char buf[16];

	memset(buf, 'x', sizeof(buf));
	metrics_labels(buf, 12, "a", "0123456789abcdef", (const char *)NULL);
	assert_string_equal(buf, "a=\"012345\"");
	assert_int_equal(buf[12], 'x');
	metrics_labels(buf, 12, "a", "0\"\"\"\"\"\"\"\"", (const char *)NULL);
	size_t n = strlen(buf);
	assert_true(n < 12);
	assert_int_equal(buf[n - 1], '"');
	/* no escape cut in half: every backslash is followed by the quote it escapes */
	for (size_t i = 3; i + 1 < n; i++)
		if (buf[i] == '\\')
			assert_int_equal(buf[++i], '"');
}

static void test_histogram_exposition(void **state)
{
	(void)state;
	static const double bounds[] = { 0.005, 0.5, 1, 10 };
	histogram h;
	struct out o;

	metrics_histogram_init(&h, bounds, 4);
	assert_true(isnan(metrics_histogram_median(&h)));
	metrics_histogram_observe(&h, 0.001);
	metrics_histogram_observe(&h, 0.5); /* on a bound: that bucket (le is "less or equal") */
	metrics_histogram_observe(&h, 0.75);
	metrics_histogram_observe(&h, 100);
	assert_true(metrics_histogram_median(&h) == 0.5);
	out_open(&o);
	metrics_histogram(o.f, "lat_seconds", "result=\"bound\"", &h);
	metrics_histogram(o.f, "plain", NULL, &h);
	assert_string_equal(out_text(&o), "lat_seconds_bucket{result=\"bound\",le=\"0.005\"} 1\n"
	                                  "lat_seconds_bucket{result=\"bound\",le=\"0.5\"} 2\n"
	                                  "lat_seconds_bucket{result=\"bound\",le=\"1\"} 3\n"
	                                  "lat_seconds_bucket{result=\"bound\",le=\"10\"} 3\n"
	                                  "lat_seconds_bucket{result=\"bound\",le=\"+Inf\"} 4\n"
	                                  "lat_seconds_sum{result=\"bound\"} 101.251\n"
	                                  "lat_seconds_count{result=\"bound\"} 4\n"
	                                  "plain_bucket{le=\"0.005\"} 1\n"
	                                  "plain_bucket{le=\"0.5\"} 2\n"
	                                  "plain_bucket{le=\"1\"} 3\n"
	                                  "plain_bucket{le=\"10\"} 3\n"
	                                  "plain_bucket{le=\"+Inf\"} 4\n"
	                                  "plain_sum 101.251\n"
	                                  "plain_count 4\n");
	out_free(&o);
	metrics_histogram_observe(&h, 200);
	metrics_histogram_observe(&h, 300);
	assert_true(metrics_histogram_median(&h) == 1); /* 3 of 6 at or below 1 */
	metrics_histogram_observe(&h, 400);
	assert_true(isinf(metrics_histogram_median(&h)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_lines),
		cmocka_unit_test(test_samples_and_values),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_label_cut_stays_quoted),
		cmocka_unit_test(test_histogram_exposition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
