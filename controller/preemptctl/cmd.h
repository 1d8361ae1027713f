/* SPDX-License-Identifier: MIT */
/* preemptctl's commands. Each returns the process exit status (DESIGN §4): 0 decision printed /
 * input valid, 1 input rejected, 2 usage. */
#ifndef CTL_CMD_H
#define CTL_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <preempt.h>

#define EXIT_REJECTED 1
#define EXIT_USAGE 2

struct preempt_args {
	const char *kubeconfig; /* a live cluster, or NULL */
	const char *admission_config; /* --admission-config, or NULL */
	const char *const *files;
	size_t nfiles;
	const char *namespace_, *name;
	bool explain;
	int64_t now_ns;
	pp_pdb_policy pdb_policy; /* --pdb */
};

int cmd_check(const char *kubeconfig, const char *admission_config, const char *const *files, size_t nfiles,
              FILE *out, FILE *err);
int cmd_preempt(const struct preempt_args *a, FILE *out, FILE *err);

#endif
