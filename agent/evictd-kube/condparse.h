/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What evictd-kube reads to keep evictd's Node conditions, parsed (yajl), without any I/O: evictd's
 * status file (liveness.h) and a Node object's conditions (nodecond.h). Both come from outside
 * evictd-kube — the status file from evictd, the Node from the API server — and are fuzzed
 * (tests/fuzz/fuzz-condparse.c).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The fields of evictd's status file that tell its liveness. */
typedef struct evictd_status {
	pid_t pid;
	char state[16];          /* "running", "stopping" */
	bool dry_run;
	uint64_t updated_usec;   /* CLOCK_REALTIME */
	uint64_t heartbeat_usec; /* 0 when the file has none (an older evictd) */
	char conditions[128];    /* the conditions listed as holding, space-separated */
} evictd_status;

/* text: the status file's content, NUL-terminated. 0, or -EBADMSG: not an evictd status file. */
int condparse_status(const char *text, evictd_status *ret);

/* One of evictd's conditions as a Node has it (present false: the Node has none of that type). */
typedef struct nodecond_value {
	bool present;
	char status[8];
	char reason[64];
	char message[1024];
	char time[40]; /* lastTransitionTime */
} nodecond_value;

/* evictd's condition types, in this order: EvictdMemoryPressure, EvictdDiskPressure, EvictdPIDPressure. */
#define NODECOND_TYPES 3
const char *condparse_type_name(int i);
/* The index of one of evictd's types, -1 for any other (or NULL). */
int condparse_type_index(const char *type);

/*
 * evictd's conditions in a Node object (the API's JSON, NUL-terminated), by type; the Node's other
 * conditions are skipped, fields too long are cut. -EBADMSG when body is not a JSON object.
 */
int condparse_node(const char *body, nodecond_value out[NODECOND_TYPES]);
