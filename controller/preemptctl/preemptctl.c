/* SPDX-License-Identifier: MIT */
/* preemptctl — Kubernetes preemption what-ifs on `kubectl get -o json|yaml` snapshots. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <preempt.h>

#include "cmd.h"
#include "cmd_schedule.h"
#include "k8s.h"
#include "clock.h"

#ifndef PREEMPTCTL_VERSION
#define PREEMPTCTL_VERSION "0.1.0"
#endif

static void usage(FILE *f)
{
	fputs("Usage: preemptctl COMMAND [OPTIONS] [--kubeconfig FILE] CLUSTER [MORE_FILES...]\n"
	      "\n"
	      "Kubernetes pod priority and preemption on a snapshot of a cluster: the output of\n"
	      "`kubectl get priorityclasses,nodes,pods,pdb,resourcequota -A -o json` (or -o yaml), or\n"
	      "manifests (multi-document YAML, JSON). \"-\" reads standard input.\n"
	      "\n"
	      "Commands:\n"
	      "  preempt CLUSTER [POD_FILES...] [--pod NAMESPACE/NAME] [--explain] [--now TIME]\n"
	      "          [--pdb prefer|strict]\n"
	      "      What kube-scheduler would do for the pending pod: one JSON object on stdout,\n"
	      "        {\"pod\":\"ns/name\",\"node\":\"n3\",\"victims\":[\"ns/a\",\"ns/b\"]}  preempt victims,\n"
	      "        {\"pod\":\"ns/name\",\"node\":\"n1\",\"victims\":[]}             fits as is,\n"
	      "        {\"pod\":\"ns/name\",\"node\":null,\"reason\":\"...\"}          neither.\n"
	      "      --pod NAMESPACE/NAME  the pending pod (NAME alone: namespace \"default\"); not\n"
	      "                            needed when the POD_FILES hold exactly one pod\n"
	      "      --explain             why each node was rejected or chosen, on stderr\n"
	      "      --now TIME            RFC 3339 time that pods without status.startTime started\n"
	      "                            (default: the current time)\n"
	      "      --pdb prefer|strict   prefer (default): PodDisruptionBudgets steer the choice of\n"
	      "                            victims, as kube-scheduler's; strict: no victim beyond what a\n"
	      "                            budget allows, as preemptd --pdb strict decides\n"
	      "  schedule CLUSTER [MORE_FILES...] [--until-idle] [--max-time DURATION] [--now TIME]\n"
	      "      Run the scheduling queue over every pending pod in simulated time, one JSON\n"
	      "      line per event (see preemptctl schedule --help).\n"
	      "  check CLUSTER [MORE_FILES...]\n"
	      "      Validate every object (quantities, PriorityClass rules, priority admission of\n"
	      "      every pod, references) and report every problem.\n"
	      "\n"
	      "  --kubeconfig FILE  (every command) read the cluster from the API server of FILE's\n"
	      "                     current context instead of, or before, CLUSTER files: its\n"
	      "                     PriorityClasses, Nodes, Pods and PodDisruptionBudgets, listed\n"
	      "                     page by page (CA, client certificate/key or token; no exec plugin)\n"
	      "  --admission-config FILE\n"
	      "                     (every command) kube-apiserver's admission configuration: the\n"
	      "                     ResourceQuota plugin's limitedResources. Pods of the input that\n"
	      "                     are not created yet (no creationTimestamp, no nodeName) go through\n"
	      "                     ResourceQuota admission first, in input order; preempt answers\n"
	      "                     {\"pod\":...,\"node\":null,\"refused\":\"ResourceQuota\",\"reason\":\"...\"}\n"
	      "                     for a refused pod, with the API server's message\n"
	      "\n"
	      "Options:\n"
	      "  -h, --help     this text\n"
	      "  -V, --version  the version\n"
	      "\n"
	      "Exit status: 0 decision printed (or input valid), 1 input rejected, 2 usage error.\n",
	      f);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("preemptctl: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'preemptctl --help'.\n", stderr);
	return EXIT_USAGE;
}

/* The command line once parsed: the command, its options, and every other argument a file. */
struct cli {
	const char *command, *pod, *now, *kubeconfig, *admission, *pdb;
	bool explain;
	const char **files;
	size_t nfiles;
};

static int run_check(const struct cli *o)
{
	if (o->pod || o->explain || o->now || o->pdb)
		return usage_error("%s", "check takes no --pod, --explain, --now or --pdb");
	if (!o->nfiles && !o->kubeconfig)
		return usage_error("%s", "check needs a CLUSTER file (or --kubeconfig)");
	return cmd_check(o->kubeconfig, o->admission, o->files, o->nfiles, stdout, stderr);
}

static int run_preempt(const struct cli *o)
{
	struct preempt_args a = { .kubeconfig = o->kubeconfig, .admission_config = o->admission, .files = o->files,
		                  .nfiles = o->nfiles, .explain = o->explain };
	const char *pod = o->pod, *now = o->now;
	char *ns = NULL;
	const char *slash = pod ? strchr(pod, '/') : NULL;
	pp_err perr = { "" };
	int status;

	if (!o->nfiles && !o->kubeconfig) {
		status = usage_error("%s", "preempt needs a CLUSTER file (or --kubeconfig)");
	} else if (pod && !*pod) {
		status = usage_error("%s", "preempt needs --pod NAMESPACE/NAME");
	} else if (slash && (slash == pod || !slash[1] || strchr(slash + 1, '/'))) {
		status = usage_error("--pod '%s': expected NAMESPACE/NAME", pod);
	} else if (o->pdb && pp_pdb_policy_parse(o->pdb, &a.pdb_policy, &perr) < 0) {
		status = usage_error("--pdb: %s", perr.msg);
	} else if (now && k8s_parse_time(now, &a.now_ns) < 0) {
		status = usage_error("--now '%s': expected an RFC 3339 time such as 2024-05-01T10:00:00Z", now);
	} else if (slash && !(ns = strndup(pod, (size_t)(slash - pod)))) {
		fputs("preemptctl: out of memory\n", stderr);
		status = EXIT_REJECTED;
	} else {
		/* no --pod: the pod file's one pod (cmd_preempt) */
		a.namespace_ = ns ? ns : "default";
		a.name = !pod ? NULL : slash ? slash + 1 : pod;
		if (!now)
			a.now_ns = clock_wall_ns();
		status = cmd_preempt(&a, stdout, stderr);
	}
	free(ns);
	return status;
}

/* Parses the options into o; -1 to go on, else the exit status (--help, --version, a usage error). */
static int parse_args(int argc, char **argv, struct cli *o)
{
	enum { OPT_POD = 0x100, OPT_EXPLAIN, OPT_NOW, OPT_KUBECONFIG, OPT_ADMISSION_CONFIG, OPT_PDB };
	static const struct option options[] = {
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "admission-config", required_argument, NULL, OPT_ADMISSION_CONFIG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "pod", required_argument, NULL, OPT_POD },
		{ "explain", no_argument, NULL, OPT_EXPLAIN },
		{ "now", required_argument, NULL, OPT_NOW },
		{ "pdb", required_argument, NULL, OPT_PDB },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	/* "-": non-options come back in order as 1, so options may go anywhere. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-:hV", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("preemptctl %s (libpreempt %d.%d)\n", PREEMPTCTL_VERSION, PP_VERSION_MAJOR,
			       PP_VERSION_MINOR);
			return 0;
		case OPT_POD:
			o->pod = optarg;
			break;
		case OPT_EXPLAIN:
			o->explain = true;
			break;
		case OPT_NOW:
			o->now = optarg;
			break;
		case OPT_PDB:
			o->pdb = optarg;
			break;
		case OPT_KUBECONFIG:
			o->kubeconfig = optarg;
			break;
		case OPT_ADMISSION_CONFIG:
			if (o->admission)
				return usage_error("%s", "--admission-config given twice");
			o->admission = optarg;
			break;
		case 1:
			if (!o->command)
				o->command = optarg;
			else
				o->files[o->nfiles++] = optarg;
			break;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	for (; optind < argc; optind++) /* after "--" */
		if (!o->command)
			o->command = argv[optind];
		else
			o->files[o->nfiles++] = argv[optind];
	if (!o->command)
		return usage_error("%s", "missing command (preempt, schedule or check)");
	return -1;
}

int main(int argc, char **argv)
{
	/* every non-option argument after the command is a file */
	struct cli o = { .files = calloc((size_t)argc + 1, sizeof(*o.files)) };
	int status;

	if (!o.files) {
		fputs("preemptctl: out of memory\n", stderr);
		return EXIT_REJECTED;
	}
	/* `schedule` parses its own options (cmd_schedule.c). */
	if (argc > 1 && !strcmp(argv[1], "schedule")) {
		free(o.files);
		return cmd_schedule_main(argc - 1, argv + 1);
	}
	/* --help, --version and usage errors end here */
	if ((status = parse_args(argc, argv, &o)) < 0) {
		if (!strcmp(o.command, "check"))
			status = run_check(&o);
		else if (!strcmp(o.command, "preempt"))
			status = run_preempt(&o);
		else
			status = usage_error("unknown command '%s' (preempt, schedule or check)", o.command);
	}
	free(o.files);
	return status;
}
