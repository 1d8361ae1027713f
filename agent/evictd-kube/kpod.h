/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A Pod as evictd-kube needs it, decoded by kube/'s decoder (k8s_decode_pod, k8s_pod_requests:
 * the one preemptctl uses) from an item of a streamed list page or watch event (kstream.h), and
 * the pod descriptor evictd reads (podmeta.h) written from it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "karena.h"
#include "kval.h"

#define KPOD_CONTAINERS_MAX 32

typedef struct kpod_container {
	char name[64];
	char id[128];
	int64_t memory, storage, cpu_milli; /* -1 when no request */
	char memory_str[32], storage_str[32]; /* the requests as the pod spec wrote them, "" when none */
} kpod_container;

typedef struct kpod {
	char uid[64], namespace_[64], name[254], node_name[254];
	bool has_priority;
	int32_t priority;
	char priority_class[254];
	char preemption_policy[32]; /* "" when unset */
	char qos[16];               /* status.qosClass, "" when unset */
	bool deleting;              /* metadata.deletionTimestamp set */
	bool static_or_mirror;      /* the kubelet's IsStaticPod || IsMirrorPod */
	bool has_grace;
	int64_t grace_seconds;
	/* the scheduler's effective requests (libpreempt pp_pod_requests); -1 when absent */
	int64_t req_memory, req_cpu_milli, req_storage;
	kpod_container containers[KPOD_CONTAINERS_MAX];
	size_t n_containers;
} kpod;

/*
 * Decodes a Pod object (a list item or a watch event's "object"); its strings are copied, a is
 * scratch (reset it after the call). source names the input in messages (a URL). Returns 0,
 * -EMEDIUMTYPE when kind is set and is not Pod (err unset), -ENOMEM, or -EINVAL with err[]
 * saying "SOURCE:LINE: pods/NS/NAME: FIELD: what is wrong" (or "FIELD: what is wrong").
 */
int kpod_decode(const kval *obj, karena *a, const char *source, kpod *p, char *err, size_t err_size);

/* Whether the kubelet would call it critical (never evicted): static/mirror, or priority >= 2e9. */
bool kpod_critical(const kpod *p);

/* The descriptor text for evictd ([pod] ...). Returns the length, or -ENOBUFS. */
int kpod_descriptor(const kpod *p, char *buf, size_t size);
