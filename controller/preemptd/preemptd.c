/* SPDX-License-Identifier: MIT */
/*
 * preemptd — a second Kubernetes scheduler for the pods that name it: kube-scheduler's queue,
 * filters and DefaultPreemption (libpreempt), acting on the API server as kube-scheduler does, with
 * a Lease for high availability (DESIGN §8).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preemptd-config.h"
#include "preemptd-daemon.h"
#include "incluster.h"
#include "journal.h"
#include "kexec.h"

#ifndef PREEMPTD_VERSION
#define PREEMPTD_VERSION "0.1.0"
#endif

int main(int argc, char **argv)
{
	preemptd_config cfg;
	kube_config *kc = NULL;
	kube_client *client = NULL;
	sd_event *e = NULL;
	preemptd *d = NULL;
	char err[768], agent[400];
	sigset_t ss;
	int r;

	r = preemptd_config_parse(argc, argv, &cfg);
	if (r != 0) {
		preemptd_config_free(&cfg);
		return r > 0 ? 0 : 2;
	}
	journal_setup(cfg.log_target, "preemptd");
	logging_set_max_priority(cfg.log_level);
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	if (cfg.kubeconfig)
		r = kubeconfig_load_as(cfg.kubeconfig, "--kubeconfig or kubeconfig = in the configuration names it",
		                       KUBECONFIG_CLUSTER_USER, &kc, err, sizeof(err));
	else
		r = incluster_config(NULL, &kc, err, sizeof(err));
	if (r < 0) {
		journal_msg(LOG_ERR, "%s", err);
		preemptd_config_free(&cfg);
		return 1;
	}
	/* said once: every later API error (an unreachable server, a CA that does not match) names
	 * only the request, and this line tells where it went and with what */
	journal_msg(LOG_INFO, "API server %s from %s%s%s (context %s, user %s): CA %s%s, credential %s%s%s%s",
	            kc->server, cfg.kubeconfig ? "kubeconfig " : "", cfg.kubeconfig ? cfg.kubeconfig : "the service account",
	            kc->proxy_url ? " through proxy-url" : "", kc->context, kc->user,
	            kc->ca.path ? kc->ca.path : kc->ca.data ? "certificate-authority-data" : "the system's trust store",
	            kc->tls_server_name ? " (tls-server-name)" : "",
	            kc->exec ? "from exec plugin " : kc->cert.path || kc->cert.data ? "a client certificate" : "a bearer token",
	            kc->exec ? "\"" : "", kc->exec ? kc->exec->argv[0] : "", kc->exec ? "\"" : "");
	if (preemptd_config_default_identity(&cfg) < 0) {
		journal_msg(LOG_ERR, "out of memory");
		preemptd_config_free(&cfg);
		kubeconfig_free(kc);
		return 1;
	}
	/* the instance in the User-Agent: an audit log (and the stand-in's) tells who wrote */
	snprintf(agent, sizeof(agent), "preemptd/%s (%s)", PREEMPTD_VERSION, cfg.identity);
	kube_client_opts copts = { .user_agent = agent };
	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	if ((r = kube_client_new(kc, &copts, &client)) < 0 || (r = sd_event_default(&e)) < 0 ||
	    (r = preemptd_new(e, &cfg, client, cfg.kubeconfig ? NULL : INCLUSTER_DIR, &d)) < 0) {
		journal_msg(LOG_ERR, "Cannot set up: %s", strerror(-r));
		goto out;
	}
	r = preemptd_run(d);
	if (r < 0)
		journal_msg(LOG_ERR, "Event loop failed: %s", strerror(-r));
out:
	preemptd_free(d);
	sd_event_unref(e);
	kube_client_free(client);
	kubeconfig_free(kc);
	preemptd_config_free(&cfg);
	return r < 0 ? 1 : 0;
}
