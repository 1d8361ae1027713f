/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A Pod as evictd-kube needs it, decoded from the API server's JSON (a yajl tree: watch events
 * are one small object per line, list pages are bounded by limit=), and the pod descriptor
 * evictd reads (podmeta.h) written from it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#define KPOD_CONTAINERS_MAX 32

typedef struct kpod_container {
	char name[64];
	char id[128];
	int64_t memory, storage, cpu_milli; /* -1 when no request */
} kpod_container;

typedef struct kpod {
	char uid[64], namespace_[64], name[254], node_name[254];
	char resource_version[64];
	bool has_priority;
	int32_t priority;
	char priority_class[254];
	char preemption_policy[32]; /* "" when unset */
	char qos[16];               /* status.qosClass, "" when unset */
	char phase[16];
	bool deleting;              /* metadata.deletionTimestamp set */
	bool static_or_mirror;      /* the kubelet's IsStaticPod || IsMirrorPod */
	bool has_grace;
	int64_t grace_seconds;
	/* the scheduler's effective requests (libpreempt pp_pod_requests); -1 when absent */
	int64_t req_memory, req_cpu_milli, req_storage;
	kpod_container containers[KPOD_CONTAINERS_MAX];
	size_t n_containers;
} kpod;

/* Decodes a Pod object. Returns 0, or -EINVAL with err[] saying "field: what is wrong". */
int kpod_decode(yajl_val obj, kpod *p, char *err, size_t err_size);

/* Whether the kubelet would call it critical (never evicted): static/mirror, or priority >= 2e9. */
bool kpod_critical(const kpod *p);

/* The descriptor text for evictd ([pod] ...). Returns the length, or -ENOBUFS. */
int kpod_descriptor(const kpod *p, char *buf, size_t size);

/* Small JSON helpers over yajl trees. */
yajl_val ytree_get(yajl_val v, const char *a, const char *b, const char *c);
const char *ytree_str(yajl_val v, const char *a, const char *b, const char *c);
