/* SPDX-License-Identifier: MIT */
/* The daemon's parts, for the files of preemptd/ that read them (preemptd-daemon.c wires, scrape.c reports). */
#ifndef CTL_DAEMON_STATE_H
#define CTL_DAEMON_STATE_H

#include <stdbool.h>

#include "act.h"
#include "model-cluster.h"
#include "preemptd-config.h"
#include "cycle.h"
#include "preemptd-daemon.h"
#include "httpd.h"
#include "kmulti.h"
#include "lease.h"
#include "metrics.h"
#include "objmap.h"
#include "queue.h"
#include "shadow.h"
#include "transport.h"
#include "watch.h"

enum { RESULT_SCHEDULED, RESULT_UNSCHEDULABLE, RESULT_ERROR, RESULTS };
/* scheduler_pod_scheduling_sli_duration_seconds by attempts: 1..SLI_ATTEMPTS_MAX, the last one
 * holding every pod that needed as many or more */
#define SLI_ATTEMPTS_MAX 16

struct preemptd {
	sd_event *event;
	const preemptd_config *cfg;
	char *identity;
	const char *token_dir;
	kube_client *client;
	kube_multi *multi;
	transport *transport;
	queue *queue;
	cluster *cluster;
	cycle *cycle;
	budget *budget; /* NULL without a preemption budget */
	bool budget_restored; /* from the cluster, on the first turn this instance wrote */
	watch *watch;
	act *act;
	lease *lease; /* NULL without leader election */
	shadow *shadow; /* --shadow: decisions compared, nothing written */
	httpd *httpd;
	decision decision;
	sd_event_source *sched, *post, *due, *token_timer, *stop_timer;
	uint64_t stop_grace_usec; /* how long the Lease release may take */
	bool synced, stopping;
	/* metrics kept here (the stages keep their own counters) */
	uint64_t attempts[RESULTS];
	histogram attempt_duration[RESULTS];
	uint64_t preemption_attempts;
	histogram victims;
	histogram pod_attempts;  /* scheduler_pod_scheduling_attempts: cycles of each pod bound */
	histogram bind_duration[2]; /* the Bind extension point, by status: Success, Error */
	histogram sli[SLI_ATTEMPTS_MAX]; /* by attempts - 1 */
	objmap first_attempt; /* "ns/name" -> int64_t: CLOCK_MONOTONIC of the pod's first attempt */
	unsigned first_attempts_added;
	char *reporting_instance; /* Events' reportingInstance: <scheduler-name>-<hostname> */
};

/* scrape.c: the HTTP endpoints. */
int scrape_handler(void *userdata, const char *path, FILE *out, const char **content_type);
/* scrape-evict.c: the evictions of --pdb strict. */
void scrape_evictions(struct preemptd *d, FILE *f);
/* scrape-brakes.c: the budget's and the reservations' metrics. */
void scrape_brakes(preemptd *d, FILE *f);
/* Whether this instance may write now (the Lease held and fresh, or no election). */
bool preemptd_may_write(struct preemptd *d, long *ret_timeout_ms);

#endif
