/* SPDX-License-Identifier: MIT */
/*
 * evictd-kube — evictd's link to the Kubernetes API server, as its own small service.
 *
 * It holds what evictd must not: the node's credentials (the kubelet's kubeconfig, read-only)
 * and the network; and nothing evictd has: no CAP_KILL, no cgroup writes. It keeps one pod
 * descriptor per pod bound to this node in [kubernetes] descriptor-dir (evictd ranks with them)
 * and reports the evictions evictd queues in [kubernetes] spool-dir (Event, DisruptionTarget
 * condition, DELETE with a UID precondition, or the Eviction API).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "descdir.h"
#include "http.h"
#include "kmulti.h"
#include "kubeconfig.h"
#include "log.h"
#include "nodecond.h"
#include "podwatch.h"
#include "reporter.h"

typedef struct options {
	const char *config_path;
	bool config_explicit;
	const char *kubeconfig, *node_name, *descriptor_dir, *spool_dir;
	logging_target log;
} options;

static void usage(FILE *f)
{
	fputs("Usage: evictd-kube [OPTIONS]\n"
	      "Pod metadata from the Kubernetes API server for evictd, and evictd's evictions reported to it.\n\n"
	      "  --config FILE          configuration (default " EVICTD_CONFIG_PATH "; the [kubernetes] section)\n"
	      "  --kubeconfig FILE      overrides [kubernetes] kubeconfig\n"
	      "  --node-name NAME       overrides [kubernetes] node-name\n"
	      "  --descriptor-dir DIR   overrides [kubernetes] descriptor-dir\n"
	      "  --spool-dir DIR        overrides [kubernetes] spool-dir\n"
	      "  --log-target T         auto | journal | stderr (default auto)\n"
	      "  -h, --help             this text\n"
	      "  -V, --version          the version\n",
	      f);
}

static int parse_args(int argc, char **argv, options *o)
{
	enum { OPT_CONFIG = 256, OPT_KUBECONFIG, OPT_NODE, OPT_DESC, OPT_SPOOL, OPT_LOG };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "kubeconfig", required_argument, NULL, OPT_KUBECONFIG },
		{ "node-name", required_argument, NULL, OPT_NODE },
		{ "descriptor-dir", required_argument, NULL, OPT_DESC },
		{ "spool-dir", required_argument, NULL, OPT_SPOOL },
		{ "log-target", required_argument, NULL, OPT_LOG },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	o->config_path = EVICTD_CONFIG_PATH;
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) >= 0) {
		switch (c) {
		case OPT_CONFIG:
			o->config_path = optarg;
			o->config_explicit = true;
			break;
		case OPT_KUBECONFIG:
			o->kubeconfig = optarg;
			break;
		case OPT_NODE:
			o->node_name = optarg;
			break;
		case OPT_DESC:
			o->descriptor_dir = optarg;
			break;
		case OPT_SPOOL:
			o->spool_dir = optarg;
			break;
		case OPT_LOG:
			if (logging_target_parse(optarg, &o->log) < 0) {
				fprintf(stderr, "evictd-kube: --log-target: expected auto, journal or stderr\n");
				return -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		case 'V':
			/* evictd's version: the two services are one release and must be upgraded together
			 * (they share the spool and descriptor formats). */
			puts("evictd-kube " EVICTD_VERSION);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "evictd-kube: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* The kubelet's default node name: the hostname, lower-cased (nodeutil.GetHostname). */
static int default_node_name(char *buf, size_t size)
{
	if (gethostname(buf, size) < 0)
		return -errno;
	buf[size - 1] = '\0';
	for (char *p = buf; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return buf[0] ? 0 : -EINVAL;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)si;
	(void)userdata;
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

int main(int argc, char **argv)
{
	options o = { 0 };
	evictd_config *cfg = NULL;
	config_error cerr;
	kube_config *kc = NULL;
	kube_client *client = NULL;
	kube_multi *multi = NULL;
	descdir *dir = NULL;
	podwatch *pw = NULL;
	reporter *rep = NULL;
	nodecond *conds = NULL;
	sd_event *e = NULL;
	char node[256], err[768];
	sigset_t ss;
	int r;

	if (parse_args(argc, argv, &o) < 0)
		return 2;
	log_set_identifier("evictd-kube");
	log_setup(o.log);
	r = config_load(o.config_path, o.config_explicit, &cfg, &cerr);
	if (r < 0) {
		log_msg(LOG_ERR, "Configuration rejected: %s", cerr.text[0] ? cerr.text : strerror(-r));
		return 1;
	}
	if (!cfg->kube.enable && !o.kubeconfig) {
		/* Name what was read, as evictd's "Configuration loaded" does: a file that does not exist
		 * cannot be where enable = no was written. */
		if (cfg->sources && *cfg->sources)
			log_msg(LOG_NOTICE, "Kubernetes integration is off ([kubernetes] enable = no in %s): nothing to do",
			        cfg->sources);
		else
			log_msg(LOG_NOTICE, "Kubernetes integration is off ([kubernetes] enable = no, the default: no %s): "
			        "nothing to do", o.config_path);
		config_free(cfg);
		/* Type=notify: exiting before READY=1 is a protocol failure to systemd, and
		 * Restart=on-failure would start it again every RestartSec. The barrier makes systemd
		 * read READY before it sees the exit. */
		(void)sd_notify(0, "READY=1\nSTATUS=Kubernetes integration is off");
		(void)sd_notify_barrier(0, 5 * 1000000ULL);
		return 0;
	}
	if (o.node_name)
		snprintf(node, sizeof(node), "%s", o.node_name);
	else if (cfg->kube.node_name)
		snprintf(node, sizeof(node), "%s", cfg->kube.node_name);
	else if ((r = default_node_name(node, sizeof(node))) < 0) {
		log_msg(LOG_ERR, "Cannot determine the node name (set [kubernetes] node-name): %s", strerror(-r));
		goto out;
	}
	r = kubeconfig_load(o.kubeconfig ? o.kubeconfig : cfg->kube.kubeconfig,
	                    o.kubeconfig ? "is this a Kubernetes node? --kubeconfig names the kubelet's kubeconfig"
	                                 : "is this a Kubernetes node? set [kubernetes] kubeconfig",
	                    &kc, err, sizeof(err));
	if (r < 0) {
		log_msg(LOG_ERR, "%s", err);
		goto out;
	}
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	kube_client_opts copts = { .request_timeout_ms = (long)(cfg->kube.request_timeout_usec / 1000),
	                           .user_agent = "evictd-kube" };
	if ((r = kube_client_new(kc, &copts, &client)) < 0 || (r = sd_event_default(&e)) < 0 ||
	    (r = kube_multi_new(e, client, &multi)) < 0) {
		log_msg(LOG_ERR, "Cannot set up: %s", strerror(-r));
		goto out;
	}
	const char *ddir = o.descriptor_dir ? o.descriptor_dir : cfg->kube.descriptor_dir;
	r = descdir_open(ddir, &dir);
	if (r < 0) {
		log_msg(LOG_ERR, "Descriptor directory %s: %s", ddir, strerror(-r));
		goto out;
	}
	podwatch_opts po = { .node_name = node, .watch_timeout_usec = cfg->kube.watch_timeout_usec,
	                     .retry_max_usec = cfg->kube.retry_max_usec };
	reporter_opts ro = { .spool_dir = o.spool_dir ? o.spool_dir : cfg->kube.spool_dir, .node_name = node,
	                     .eviction_api = cfg->kube.eviction_api, .retry_max_usec = cfg->kube.retry_max_usec };
	/* evictd's status file, as evictd finds it: [agent] status-file of the same configuration */
	nodecond_opts no = { .node_name = node, .status_path = cfg->status_file,
	                     .heartbeat_usec = cfg->kube.condition_heartbeat_usec, .retry_max_usec = cfg->kube.retry_max_usec };
	if ((r = podwatch_new(e, multi, dir, &po, &pw)) < 0 || (r = nodecond_new(e, multi, &no, &conds)) < 0 ||
	    (r = reporter_new(e, multi, conds, &ro, &rep)) < 0) {
		log_msg(LOG_ERR, "Cannot set up (spool %s, evictd's status file %s): %s", ro.spool_dir, cfg->status_file,
		        strerror(-r));
		goto out;
	}
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if ((r = sd_event_add_signal(e, NULL, SIGTERM, on_signal, NULL)) < 0 ||
	    (r = sd_event_add_signal(e, NULL, SIGINT, on_signal, NULL)) < 0) {
		log_msg(LOG_ERR, "Cannot set up signals: %s", strerror(-r));
		goto out;
	}
	(void)sd_event_set_watchdog(e, true);
	log_msg(LOG_INFO, "Started: node %s, API server %s (context %s), descriptors in %s, spool %s, %s",
	        node, kc->server, kc->context, ddir, ro.spool_dir,
	        cfg->kube.eviction_api ? "evictions through the Eviction API" : "evicted pods deleted with a UID precondition");
	podwatch_start(pw);
	nodecond_start(conds);
	(void)sd_notify(0, "READY=1\nSTATUS=Following the pods of this node");
	r = sd_event_loop(e);
	(void)sd_notify(0, "STOPPING=1");
out:
	/* the watch and any call in flight are dropped; unfinished reports stay in the spool */
	podwatch_free(pw);
	nodecond_free(conds); /* before the reporter, which it asks about the spool */
	reporter_free(rep);
	kube_multi_free(multi);
	descdir_free(dir);
	sd_event_unref(e);
	kube_client_free(client);
	kubeconfig_free(kc);
	config_free(cfg);
	return r < 0 ? 1 : 0;
}
