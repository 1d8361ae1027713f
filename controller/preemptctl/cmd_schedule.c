/* SPDX-License-Identifier: MIT */
/*
 * preemptctl schedule: libpreempt's scheduling queue and cycle over every pending pod of a
 * snapshot, in simulated time, one JSON object per event on stdout (DESIGN §4):
 *
 *   {"time":0,"event":"nominate","pod":"ns/p","node":"n1","victims":["ns/a","ns/b"]}
 *   {"time":30,"event":"victim-gone","pod":"ns/a","node":"n1","preemptor":"ns/p"}
 *   {"time":30,"event":"bind","pod":"ns/p","node":"n1"}
 *   {"time":0,"event":"clear-nomination","pod":"ns/q","node":"n1","by":"ns/p"}
 *   {"time":0,"event":"unschedulable","pod":"ns/r","reasons":{"Insufficient cpu":3},"message":"0/3 ..."}
 *
 * "time" is seconds of simulated time since the start. Victims disappear after their
 * terminationGracePeriodSeconds (default 30); backoffs are Kubernetes' (1 s doubling to 10 s).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <preempt.h>

#include "cmd.h"
#include "cmd_schedule.h"
#include "jsonw.h"
#include "k8s.h"
#include "model.h"
#include "refusal.h"
#include "clock.h"

#define NSEC_PER_SEC 1000000000LL
/* Without --until-idle, a simulation stops after this much simulated time. */
#define DEFAULT_MAX_TIME (600 * NSEC_PER_SEC)

struct out_ctx {
	FILE *out;
	int64_t start;
	bool failed;
	size_t binds, nominations, unschedulable;
};

static void usage(FILE *f)
{
	fputs("Usage: preemptctl schedule CLUSTER [MORE_FILES...] [--until-idle] [--max-time DURATION]\n"
	      "                           [--now TIME] [--pdb prefer|strict] [--kubeconfig FILE]\n"
	      "                           [--admission-config FILE]\n"
	      "\n"
	      "Runs kube-scheduler's queue and scheduling cycle over every pending pod, in simulated\n"
	      "time: binds, preemptions (victims terminate for their terminationGracePeriodSeconds,\n"
	      "default 30), cleared nominations, backoff. One JSON object per event on stdout:\n"
	      "  {\"time\":SECONDS,\"event\":\"bind\",\"pod\":\"ns/name\",\"node\":\"n1\"}\n"
	      "  {... \"event\":\"nominate\", \"node\":..., \"victims\":[\"ns/a\",...]}\n"
	      "  {... \"event\":\"victim-gone\", \"node\":..., \"preemptor\":\"ns/p\"}\n"
	      "  {... \"event\":\"clear-nomination\", \"node\":..., \"by\":\"ns/p\"}\n"
	      "  {... \"event\":\"unschedulable\", \"reasons\":{\"Insufficient cpu\":3,...}, \"message\":...}\n"
	      "  {\"time\":0,\"event\":\"refused\",\"pod\":...,\"plugin\":\"ResourceQuota\",\"message\":...}\n"
	      "A summary goes to stderr.\n"
	      "\n"
	      "  --until-idle         run until nothing more can happen (no pod to try, no victim\n"
	      "                       terminating, no backoff running); default: stop after 10m of\n"
	      "                       simulated time if still busy\n"
	      "  --max-time DURATION  stop after this much simulated time (\"90s\", \"1h\")\n"
	      "  --kubeconfig FILE    read the cluster from its API server (files add to it)\n"
	      "  --admission-config FILE\n"
	      "                       kube-apiserver's admission configuration (its ResourceQuota\n"
	      "                       plugin's limitedResources); new pods are admitted in input order\n"
	      "                       before the simulation: {... \"event\":\"refused\", \"plugin\":...,\n"
	      "                       \"message\":\"<the API server's message>\"} for those refused\n"
	      "  --now TIME           RFC 3339 time the simulation starts at, which pods without\n"
	      "                       status.startTime count as started (default: the current time)\n"
	      "  --pdb prefer|strict  prefer (default): PodDisruptionBudgets steer the choice of\n"
	      "                       victims, as kube-scheduler's; strict: no victim beyond what a\n"
	      "                       budget allows, as preemptd --pdb strict decides\n"
	      "\n"
	      "Exit status: 0 simulated, 1 input rejected, 2 usage error.\n",
	      f);
}

/* Seconds with up to 9 decimals, trailing zeros dropped: 0, 1.5, 30. */
static void put_seconds(FILE *f, int64_t ns)
{
	char buf[32];
	int64_t s = ns / NSEC_PER_SEC, frac = ns % NSEC_PER_SEC;
	int n = snprintf(buf, sizeof(buf), "%" PRId64, s);
	if (frac > 0 && n > 0) {
		snprintf(buf + n, sizeof(buf) - (size_t)n, ".%09" PRId64, frac);
		for (size_t i = strlen(buf); buf[i - 1] == '0'; i--)
			buf[i - 1] = '\0';
	}
	fputs(buf, f);
}

static void put_pod(FILE *f, const char *key, const char *ns, const char *name)
{
	char buf[K8S_LABEL_MAX];
	snprintf(buf, sizeof(buf), "%s/%s", ns, name);
	fprintf(f, ",\"%s\":", key);
	jsonw_fput_string(f, buf);
}

static void on_event(const pp_sched_event *ev, void *ud)
{
	struct out_ctx *o = ud;
	FILE *f = o->out;

	fputs("{\"time\":", f);
	put_seconds(f, ev->time_ns - o->start);
	fputs(",\"event\":", f);
	jsonw_fput_string(f, pp_sched_event_name(ev->kind));
	put_pod(f, "pod", ev->namespace_, ev->name);
	if (ev->node) {
		fputs(",\"node\":", f);
		jsonw_fput_string(f, ev->node);
	}
	switch (ev->kind) {
	case PP_SCHED_BIND:
		o->binds++;
		break;
	case PP_SCHED_NOMINATE:
		o->nominations++;
		fputs(",\"victims\":[", f);
		for (size_t i = 0; i < ev->n_victims; i++) {
			char buf[K8S_LABEL_MAX];
			snprintf(buf, sizeof(buf), "%s/%s", ev->victims[i].namespace_, ev->victims[i].name);
			if (i)
				fputc(',', f);
			jsonw_fput_string(f, buf);
		}
		fputc(']', f);
		break;
	case PP_SCHED_VICTIM_GONE:
		if (ev->by_name)
			put_pod(f, "preemptor", ev->by_namespace, ev->by_name);
		break;
	case PP_SCHED_CLEAR_NOMINATION:
		if (ev->by_name)
			put_pod(f, "by", ev->by_namespace, ev->by_name);
		break;
	case PP_SCHED_UNSCHEDULABLE:
		o->unschedulable++;
		fputs(",\"reasons\":{", f);
		for (size_t i = 0; i < ev->n_reasons; i++) {
			if (i)
				fputc(',', f);
			jsonw_fput_string(f, ev->reasons[i].reason);
			fprintf(f, ":%zu", ev->reasons[i].nodes);
		}
		fputs("},\"message\":", f);
		jsonw_fput_string(f, ev->message);
		break;
	case PP_SCHED_NOMINATION_EXPIRED: /* the simulation sets no nomination timeout, */
	case PP_SCHED_POSTPONED:          /* and no preemption gate */
		break;
	}
	fputs("}\n", f);
	if (ferror(f))
		o->failed = true;
}

struct sched_args {
	const char *kubeconfig;
	const char *admission_config;
	const char **files;
	size_t nfiles;
	bool until_idle;
	bool has_max_time;
	int64_t max_time;
	bool has_now;
	int64_t now;
	pp_pdb_policy pdb_policy;
};

static int usage_error(const char *fmt, const char *arg)
{
	fputs("preemptctl schedule: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'preemptctl schedule --help'.\n", stderr);
	return EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct sched_args *a)
{
	enum { OPT_UNTIL_IDLE = 0x100, OPT_MAX_TIME, OPT_NOW, OPT_KUBECONFIG, OPT_ADMISSION_CONFIG, OPT_PDB };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "admission-config", required_argument, NULL, OPT_ADMISSION_CONFIG },
		{ "until-idle", no_argument, NULL, OPT_UNTIL_IDLE },
		{ "max-time", required_argument, NULL, OPT_MAX_TIME },
		{ "now", required_argument, NULL, OPT_NOW },
		{ "pdb", required_argument, NULL, OPT_PDB },
		{ NULL, 0, NULL, 0 },
	};
	pp_err perr;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "-:h", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case OPT_UNTIL_IDLE:
			a->until_idle = true;
			break;
		case OPT_MAX_TIME:
			if (pp_duration_parse(optarg, &a->max_time, &perr) < 0)
				return usage_error("--max-time: %s", perr.msg);
			a->has_max_time = true;
			break;
		case OPT_KUBECONFIG:
			a->kubeconfig = optarg;
			break;
		case OPT_ADMISSION_CONFIG:
			if (a->admission_config)
				return usage_error("%s", "--admission-config given twice");
			a->admission_config = optarg;
			break;
		case OPT_NOW:
			if (k8s_parse_time(optarg, &a->now) < 0)
				return usage_error("--now '%s': expected an RFC 3339 time such as 2024-05-01T10:00:00Z", optarg);
			a->has_now = true;
			break;
		case OPT_PDB:
			if (pp_pdb_policy_parse(optarg, &a->pdb_policy, &perr) < 0)
				return usage_error("--pdb: %s", perr.msg);
			break;
		case 1:
			a->files[a->nfiles++] = optarg;
			break;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++)
		a->files[a->nfiles++] = argv[optind];
	if (!a->nfiles && !a->kubeconfig)
		return usage_error("%s", "missing CLUSTER file (or --kubeconfig)");
	return -1; /* go on */
}

static int simulate(const struct sched_args *a, FILE *out, FILE *err)
{
	k8s_cluster c;
	model m = { 0 };
	diag d;
	pp_sched *s = NULL;
	pp_err perr = { "" };
	struct out_ctx o = { .out = out };
	int r, status = EXIT_REJECTED;

	o.start = a->has_now ? a->now : clock_wall_ns();
	struct model_input in = { a->kubeconfig, (const char *const *)a->files, a->nfiles, a->admission_config, o.start };
	diag_init(&d, err);
	k8s_cluster_init(&c);
	r = model_load_to_decide(&m, &c, &in, &d);
	if (r < 0) {
		if (r == -ENOMEM)
			fputs("preemptctl: out of memory\n", err);
		goto out;
	}
	/* Quota is charged when a pod is created, not when it is bound: the input's new pods were
	 * created (admitted or refused) in input order before the simulation starts. */
	for (size_t i = 0; i < m.nrefused; i++)
		if (refusal_event(out, m.refused[i].pod->namespace_, m.refused[i].pod->name, m.refused[i].admission) < 0)
			o.failed = true;

	(void)pp_cluster_set_pdb_policy(m.cluster, a->pdb_policy);
	r = pp_sched_new(m.cluster, NULL, o.start, on_event, &o, &s, &perr);
	if (r < 0) {
		fprintf(err, "preemptctl: %s\n", perr.msg);
		goto out;
	}
	m.cluster = NULL; /* the scheduler owns it now */

	int64_t limit = INT64_MAX;
	if (a->has_max_time)
		limit = a->max_time;
	else if (!a->until_idle)
		limit = DEFAULT_MAX_TIME;
	int64_t until = limit > INT64_MAX - o.start ? INT64_MAX : o.start + limit;
	r = pp_sched_run(s, until, &perr);
	if (r < 0) {
		fprintf(err, "preemptctl: %s\n", perr.msg);
		goto out;
	}
	if (fflush(out) != 0 || o.failed) {
		fprintf(err, "preemptctl: writing events: %s\n", strerror(EIO));
		goto out;
	}

	pp_sched_stats st;
	pp_sched_get_stats(s, &st);
	/* Stopped by the limit, the simulated clock is still at the last event (nothing happened
	 * after it): the time reached is the limit itself, which is what the user asked for. */
	fprintf(err, "preemptctl: %s at ", r == 1 ? "idle" : "stopped");
	put_seconds(err, (r == 1 ? pp_sched_now(s) : until) - o.start);
	fprintf(err, "s%s: ", r == 1 ? "" : a->has_max_time ? " (--max-time)" : " (the default --max-time)");
	fprintf(err, "%zu bound, %zu preemption%s, %zu pod%s still pending, %zu victim%s terminating",
	        o.binds, o.nominations, o.nominations == 1 ? "" : "s",
	        st.active + st.backoff + st.unschedulable, st.active + st.backoff + st.unschedulable == 1 ? "" : "s",
	        st.terminating, st.terminating == 1 ? "" : "s");
	if (m.nrefused)
		fprintf(err, ", %zu refused at admission", m.nrefused);
	fputc('\n', err);
	status = 0;
out:
	if (d.unusable)
		status = EXIT_USAGE;
	pp_sched_free(s);
	model_done(&m);
	k8s_cluster_done(&c);
	return status;
}

int cmd_schedule_main(int argc, char **argv)
{
	struct sched_args a = { 0 };
	int r;

	a.files = calloc((size_t)argc + 1, sizeof(*a.files));
	if (!a.files) {
		fputs("preemptctl: out of memory\n", stderr);
		return EXIT_REJECTED;
	}
	r = parse_args(argc, argv, &a);
	if (r < 0)
		r = simulate(&a, stdout, stderr);
	free(a.files);
	return r;
}
