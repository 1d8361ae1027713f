/* SPDX-License-Identifier: MIT */
/*
 * The bodies of the Kubernetes API writes, for both programs: preemptd sends them as kube-scheduler
 * does, evictd-kube as the kubelet does (reference: kube-scheduler-preemption §12, node-agents-k8s).
 * One writer makes them all: yajl's generator.
 *
 * Return contract of every k8s_body_* that returns char *: a malloc'ed NUL-terminated JSON text
 * the caller frees, or NULL with errno set: ENOMEM, or E2BIG when the body would pass
 * K8S_BODY_MAX. Strings go out as given when they are UTF-8; a byte that is not becomes U+FFFD,
 * which is what the API server's JSON decoder makes of it anyway, so no write is lost to one
 * byte. NULL string arguments are written as JSON null. Times: Unix nanoseconds.
 */
#ifndef KUBE_K8S_BODY_H
#define KUBE_K8S_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Far above any body here (an Event's note is cut to 1 KiB, a message to what its writer keeps),
 * far below the API server's 3 MiB request limit. */
#define K8S_BODY_MAX (128u * 1024u)

/* v1 Binding for POST pods/NAME/binding: the pod's uid makes the API server refuse a pod that was
 * replaced under the same name. */
char *k8s_body_binding(const char *ns, const char *name, const char *uid, const char *node);

/* One PodCondition; transition_ns 0 leaves lastTransitionTime out (the API server keeps the old). */
typedef struct k8s_body_condition {
	const char *type, *status, *reason, *message;
	int64_t transition_ns;
} k8s_body_condition;

/*
 * Strategic-merge patch of pods/NAME/status: {"metadata":{"uid"},"status":{...}} with cond (NULL:
 * none) as the only entry of status.conditions (they merge by type) and, when set_nomination,
 * status.nominatedNodeName = node (NULL: cleared). metadata.uid guards it: the API server refuses a
 * patch that would change the uid (a pod replaced under the same name).
 */
char *k8s_body_pod_status_patch(const char *uid, const k8s_body_condition *cond, bool set_nomination,
                                const char *node);

/* One NodeCondition as the Node's status carries it; times already formatted (metav1.Time). */
typedef struct k8s_body_node_condition {
	const char *type, *status, *reason, *message, *heartbeat_time, *transition_time;
} k8s_body_node_condition;
/* Strategic-merge patch of nodes/NAME/status: status.conditions = conds (merged by type). */
char *k8s_body_node_conditions_patch(const k8s_body_node_condition *conds, size_t n);

/* v1 DeleteOptions with preconditions.uid; grace_period_s < 0 leaves gracePeriodSeconds out (the
 * pod's own applies). 0 is a forced deletion: callers that mean "now" send 1, as the kubelet does. */
char *k8s_body_delete_options(const char *uid, int64_t grace_period_s);
/* policy/v1 Eviction for POST pods/NAME/eviction; its deleteOptions as k8s_body_delete_options
 * without apiVersion/kind (the field names its type). */
char *k8s_body_eviction(const char *ns, const char *name, const char *uid, int64_t grace_period_s);

/* events.k8s.io/v1 Event, as kube-scheduler's recorder writes it. */
typedef struct k8s_body_event {
	const char *ns, *name, *uid;                         /* regarding */
	const char *regarding_api_version, *regarding_kind; /* NULL: v1 Pod */
	const char *related_ns, *related_name, *related_uid; /* related pod, or NULL */
	const char *type, *reason, *action, *note;
	const char *controller, *instance; /* reportingController, reportingInstance */
	int64_t now_ns;                    /* eventTime, and the Event's name */
} k8s_body_event;
/* Named k8s_body_event_name(name, now_ns); the note is cut to the API's 1024 bytes the way
 * kube-scheduler cuts it (" ..." ending, on a UTF-8 boundary). */
char *k8s_body_event_v1(const k8s_body_event *e);
/* {"series":{"count","lastObservedTime"}}: client-go's strategic-merge patch that grows a series. */
char *k8s_body_event_series_patch(int32_t count, int64_t last_observed_ns);

/* A core/v1 Event, as the kubelet's recorder writes it (involvedObject, source, count 1). */
typedef struct k8s_body_core_event {
	const char *ns, *name;                   /* metadata; name from k8s_body_event_name */
	const char *object_kind, *object_name, *object_ns, *object_uid; /* involvedObject (v1); ns NULL: none */
	const char *type, *reason, *message;
	const char *component, *host;            /* source; reportingComponent/Instance */
	const char *first_time, *last_time;      /* metav1.Time */
	const char *const *annotations;          /* key, value, ..., NULL; NULL: no annotations */
} k8s_body_core_event;
char *k8s_body_core_event_v1(const k8s_body_core_event *e);

/* An Event's metadata.name: "<object>.<nanoseconds in hex>", client-go's "%v.%x"; the object's
 * name is cut so that the result stays within the 253 characters a name may have. */
void k8s_body_event_name(const char *object, int64_t ns, char *buf, size_t size);

/* A coordination.k8s.io/v1 Lease; resource_version NULL when creating. */
typedef struct k8s_body_lease {
	const char *ns, *name, *resource_version;
	const char *holder;
	int32_t duration_s, transitions;
	const char *acquire_time, *renew_time; /* MicroTime */
} k8s_body_lease;
char *k8s_body_lease_v1(const k8s_body_lease *l);

/* metav1.Time ("2024-05-01T10:00:00Z") and metav1.MicroTime ("2024-05-01T10:00:00.123456Z"). */
void k8s_body_time(int64_t ns, char *buf, size_t size);
void k8s_body_micro_time(int64_t ns, char *buf, size_t size);

#endif
