/* SPDX-License-Identifier: MIT */
/*
 * libpreempt — Kubernetes pod priority, scheduling queue, preemption and kubelet eviction
 * ranking, as a C library (libc only).
 *
 * Conventions, for every function below:
 *   - int returns are >= 0 on success and a negative errno on failure;
 *   - ret_* out-parameters are written only on success;
 *   - *_free() accepts NULL and returns NULL;
 *   - a pp_err *err argument may be NULL; on failure, when given, it receives a one-line,
 *     human-readable reason (it is left untouched on success);
 *   - the library keeps no global state and never logs.
 */
#ifndef PREEMPT_H
#define PREEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PP_EXPORT __attribute__((visibility("default")))
#else
#define PP_EXPORT
#endif

#define PP_VERSION_MAJOR 0
#define PP_VERSION_MINOR 1

/* Why a call failed, for humans. Fixed size so that callers can keep it on the stack. */
typedef struct pp_err {
	char msg[256];
} pp_err;

/* ---------------------------------------------------------------------------------------------
 * Quantities and durations
 * ------------------------------------------------------------------------------------------- */

/*
 * Parses a Kubernetes resource.Quantity ("100m", "1.5", "128Mi", "1G", "1e3", ".5Ki", ...).
 * ret_value receives Value(): the quantity rounded up (away from zero) to an integer, as the
 * scheduler does for memory, ephemeral-storage, pods and extended resources.
 * Returns -EINVAL for malformed input, -ERANGE when the result does not fit in int64.
 */
PP_EXPORT int pp_quantity_parse(const char *s, int64_t *ret_value, pp_err *err);

/* The same, returning MilliValue() (ceil(1000 * x)): cpu in millicores. */
PP_EXPORT int pp_quantity_parse_milli(const char *s, int64_t *ret_milli, pp_err *err);

/*
 * Parses a Go time.Duration string ("30s", "1m30s", "1.5h", "300ms", "0") into nanoseconds.
 * Negative durations are rejected with -EINVAL (nothing in this domain can be negative).
 */
PP_EXPORT int pp_duration_parse(const char *s, int64_t *ret_nsec, pp_err *err);

/* ---------------------------------------------------------------------------------------------
 * PriorityClasses and priority admission
 * ------------------------------------------------------------------------------------------- */

#define PP_SYSTEM_CLUSTER_CRITICAL 2000000000
#define PP_SYSTEM_NODE_CRITICAL    2000001000
#define PP_HIGHEST_USER_PRIORITY   1000000000
/* Pods at or above this priority are critical: never evicted by the kubelet (nor by evictd). */
#define PP_SYSTEM_CRITICAL_PRIORITY 2000000000

typedef enum pp_preemption_policy {
	PP_PREEMPT_LOWER_PRIORITY = 0, /* "PreemptLowerPriority", the default */
	PP_PREEMPT_NEVER = 1,          /* "Never" */
} pp_preemption_policy;

/* Parses "PreemptLowerPriority" or "Never" (exact spelling, as the API server requires). */
PP_EXPORT int pp_preemption_policy_parse(const char *s, pp_preemption_policy *ret, pp_err *err);
PP_EXPORT const char *pp_preemption_policy_name(pp_preemption_policy p);

/* A set of PriorityClasses. A new set holds the two built-in system classes. */
typedef struct pp_pcset pp_pcset;

PP_EXPORT int pp_pcset_new(pp_pcset **ret);
PP_EXPORT pp_pcset *pp_pcset_free(pp_pcset *s);

/*
 * Adds a class, validated as the API server does: DNS-subdomain name, "system-" prefix
 * reserved, value <= PP_HIGHEST_USER_PRIORITY for user classes, at most one globalDefault.
 * -EINVAL for an invalid class, -EEXIST for a duplicate name or a second globalDefault.
 */
PP_EXPORT int pp_pcset_add(pp_pcset *s, const char *name, int32_t value, bool global_default,
                           pp_preemption_policy policy, pp_err *err);

/*
 * Priority admission: resolves a pod's priority and preemption policy.
 *   class_name      spec.priorityClassName, or NULL/"" when unset;
 *   spec_priority   spec.priority when the pod sets it, else NULL.
 * Unknown class -> -ENOENT; spec.priority disagreeing with the class -> -EINVAL.
 * Without a class: the globalDefault class, else priority 0 and PreemptLowerPriority.
 */
PP_EXPORT int pp_pcset_resolve(const pp_pcset *s, const char *class_name,
                               const int32_t *spec_priority, int32_t *ret_priority,
                               pp_preemption_policy *ret_policy, pp_err *err);

/* ---------------------------------------------------------------------------------------------
 * Kubelet eviction ranking (shared with evictd)
 * ------------------------------------------------------------------------------------------- */

typedef enum pp_evict_signal {
	PP_EVICT_MEMORY = 0, /* exceeds request, then priority, then usage - request */
	PP_EVICT_DISK = 1,   /* the same over disk usage and ephemeral-storage request */
	PP_EVICT_PID = 2,    /* priority, then process count */
} pp_evict_signal;

typedef struct pp_evict_pod {
	const char *namespace_; /* may be "" */
	const char *name;
	const char *uid;
	int32_t priority;
	bool has_stats; /* false: usage unknown (see pp_evict_rank) */
	int64_t usage;  /* bytes for memory/disk, processes for pid */
	int64_t request;/* bytes; 0 when the pod has none */
} pp_evict_pod;

/*
 * Orders pods "evict first" as the kubelet's comparator chains do, with deterministic ties
 * (namespace, then name, then uid). ret_order receives n indices into pods.
 * Deviation from the kubelet: pods without stats are ranked last, not first — an agent must not
 * evict what it cannot measure.
 */
PP_EXPORT int pp_evict_rank(pp_evict_signal signal, const pp_evict_pod *pods, size_t n,
                            size_t *ret_order);

/* Whether the usage of a pod exceeds its request for this signal (always false for pid). */
PP_EXPORT bool pp_evict_exceeds_request(pp_evict_signal signal, const pp_evict_pod *pod);

/* Critical pods (priority >= PP_SYSTEM_CRITICAL_PRIORITY) are ranked but never evicted. */
PP_EXPORT bool pp_priority_is_critical(int32_t priority);

#ifdef __cplusplus
}
#endif
#endif
