/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The eviction spool: evictd → evictd-kube. One JSON file per eviction evictd starts, in
 * [kubernetes] spool-dir, named "<start-realtime-usec, 20 digits>-<uid>.json" so that a sorted
 * listing is the order of the evictions; written to a temporary name and renamed (a reader never
 * sees half a record); root 0644; at most spool-max records (the oldest undelivered are dropped,
 * logged). evictd-kube reports each to the API server and removes it once delivered.
 *
 * A second kind, "<usec>-node-<signal>.json", asks for the node Event EvictionThresholdMet when
 * a threshold is first met; a third, "<usec>-cond-<Type>.json", sets evictd's own Node condition.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

#define SPOOL_RECORD_MAX (64 * 1024)

typedef struct spool_container {
	const char *name;
	int64_t usage;   /* -1 unknown */
	int64_t request; /* -1 none */
	const char *request_str; /* the request as the pod spec wrote it ("1G"), NULL: not known */
} spool_container;

typedef struct spool_eviction {
	const pod_info *pod;
	const char *signal;    /* "memory.available" */
	bool hard;
	int64_t threshold, observed; /* in the signal's unit; resolved threshold and available */
	bool threshold_percent;  /* the threshold was a percentage (the kubelet prints those BinarySI) */
	int64_t usage;         /* the pod's usage for the signal, -1 unknown */
	uint64_t grace_usec;
	uint64_t started_real_usec;
	const spool_container *containers; /* per-container figures (memory/disk signals) */
	size_t n_containers;
} spool_eviction;

/* "memory", "ephemeral-storage", "inodes", "pids": what the kubelet names as starved. */
const char *spool_signal_resource(const char *signal);

/* A Kubernetes canonical quantity for a BinarySI value: "100Mi", "80Mi", "1288490188", "0". */
const char *spool_quantity(int64_t v, char *buf, size_t size);

/* The same for a DecimalSI value (counts: inodes, pids): "5k", "1200", "1500k", "0". */
const char *spool_quantity_decimal(int64_t v, char *buf, size_t size);

/*
 * The kubelet's eviction message (pkg/kubelet/eviction/helpers.go evictionMessage), byte for
 * byte, trailing space included. Counts (inodes, pids) print DecimalSI as the kubelet's
 * observations do (a percentage threshold BinarySI, as its GetThresholdQuantity); a container's
 * request prints as the pod spec wrote it when known; container sentences only for memory and
 * ephemeral-storage. PSI signals (beyond the kubelet) are no quantity: their message is the first
 * sentence and the container sentences, without "Threshold quantity". Example:
 * "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container
 * web was using 1258291Ki, request is 512Mi, has larger consumption of memory. "
 * Containers are listed only when their usage exceeds their request, as the kubelet does.
 */
int spool_message(const spool_eviction *ev, char *buf, size_t size);

/* Writes the record into dirfd. Returns 0, or -errno with why[] set. */
int spool_write_eviction(int dirfd, unsigned max_records, const spool_eviction *ev, char *why, size_t why_size);

/* The node event request for a newly met threshold. */
int spool_write_threshold(int dirfd, unsigned max_records, const char *signal, bool hard, int64_t threshold,
                          int64_t observed, uint64_t real_usec, char *why, size_t why_size);

/*
 * The node condition evictd-kube sets on its Node's status ("<usec>-cond-<Type>.json"): evictd's
 * own type for a kubelet condition (MemoryPressure -> EvictdMemoryPressure, never the kubelet's
 * type, which the kubelet rewrites on every status update), status "True", "False" or "Unknown",
 * reason (NULL: the kubelet-style reason of a True or False status) and message. Written when a
 * condition changes, for every condition once after evictd starts, and on an orderly stop (reason
 * SPOOL_REASON_STOPPED).
 */
int spool_write_condition(int dirfd, unsigned max_records, const char *condition, const char *status,
                          const char *reason, const char *message, uint64_t real_usec, char *why, size_t why_size);

/* The reason of the records evictd writes as it stops: nothing relieves pressure from then on. */
#define SPOOL_REASON_STOPPED "EvictdStopped"

/* "EvictdMemoryPressure" for "MemoryPressure", and the reasons for true and false. */
const char *spool_condition_type(const char *condition, char *buf, size_t size);
const char *spool_condition_reason(const char *condition, bool status);

/*
 * Per-container memory working sets under the pod cgroup (fd pod_fd), for containers whose
 * runtime id is known: "<runtime>://<id>" → cri-containerd-<id>.scope, crio-<id>.scope,
 * docker-<id>.scope or <id> (cgroupfs driver). out[i].usage = -1 when not found.
 */
void spool_container_usage(int pod_fd, const pod_info *pod, bool memory, spool_container *out);
