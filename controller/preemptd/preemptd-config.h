/* SPDX-License-Identifier: MIT */
/*
 * preemptd's settings: built-in defaults, then the ini file (--config, default
 * /etc/evictd/preemptd.conf, section [preemptd]), then the command line — every key of the file is
 * also a flag of the same name (--leader-elect-lease-duration 15s), and a flag wins. Errors name
 * the file and line, or the flag, and what is wrong.
 */
#ifndef CTL_CONFIG_H
#define CTL_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <preempt.h>

#include "journal.h"

#define PREEMPTD_CONFIG_PATH "/etc/evictd/preemptd.conf"

typedef struct preemptd_config {
	char *config_path;
	bool config_explicit;
	char *kubeconfig;        /* NULL: the in-cluster service account */
	char *scheduler_name;
	bool leader_elect;
	char *lease_namespace, *lease_name;
	char *identity;          /* NULL: hostname_<random> */
	uint64_t lease_duration_usec, renew_deadline_usec, retry_period_usec;
	char *listen;            /* "" : no HTTP endpoints */
	logging_target log_target;
	int log_level;           /* syslog priority */
	uint64_t pod_initial_backoff_usec, pod_max_backoff_usec, max_unschedulable_usec;
	unsigned max_in_flight;
	uint64_t retry_max_usec;
	uint64_t watch_timeout_usec;
	unsigned page_limit;
	bool shadow;             /* decide for shadow_scheduler's pods, write nothing, compare */
	char *shadow_scheduler;
	pp_pdb_policy pdb_policy; /* --pdb prefer|strict */
	/* beyond kube-scheduler (issue 28): reservations that end, brakes on preemption */
	uint64_t nomination_timeout_usec;     /* > 0: a fixed timeout */
	uint64_t nomination_after_grace_usec; /* else > 0: the victims' grace periods + this; both 0: never */
	unsigned max_victims_per_minute;      /* 0: no limit */
	char *pool_label;                     /* NULL: no budget per pool */
	unsigned max_victims_per_pool;
	uint64_t min_runtime_usec;            /* 0: off */
} preemptd_config;

/*
 * Parses argv and the file. Returns 0, 1 when --help or --version was answered (exit 0), or
 * -EINVAL with the message already on stderr (exit 2). cfg must be freed with config_free.
 */
int preemptd_config_parse(int argc, char **argv, preemptd_config *cfg);
void preemptd_config_free(preemptd_config *cfg);
/* Sets cfg->identity when none was given: the host name, "_" and a random suffix (kube-scheduler
 * appends a UUID; two instances on one host stay apart). 0 or -ENOMEM. */
int preemptd_config_default_identity(preemptd_config *cfg);
void preemptd_config_usage(FILE *f);

#endif
