/* SPDX-License-Identifier: MIT */
/*
 * The bodies of preemptd's API writes, as kube-scheduler sends them (reference §12), generated
 * with yajl's generator. Each returns a malloc'ed NUL-terminated JSON text, or NULL when out of
 * memory. Times: Unix nanoseconds.
 */
#ifndef CTL_REQUESTS_H
#define CTL_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* v1 Binding for POST pods/NAME/binding: the pod's uid makes the API server refuse a pod that was
 * replaced under the same name. */
char *req_binding(const char *ns, const char *name, const char *uid, const char *node);

/*
 * Strategic-merge patch of pods/NAME/status: PodScheduled=False, reason Unschedulable, the
 * FitError message (transition_ns: the condition's lastTransitionTime, 0 to leave it out) and,
 * when set_nomination, status.nominatedNodeName = node (NULL: cleared). metadata.uid guards it:
 * the API server refuses a patch that would change the uid (a replaced pod).
 */
char *req_unschedulable_patch(const char *uid, const char *message, int64_t transition_ns, bool set_nomination,
                              const char *node);
/* {"status":{"nominatedNodeName":null}} (kube's clearNominatedNodeName), uid-guarded. */
char *req_clear_nomination_patch(const char *uid);
/* The victim's condition: DisruptionTarget=True, PreemptionByScheduler,
 * "<scheduler>: preempting to accommodate a higher priority pod". */
char *req_disruption_patch(const char *uid, const char *scheduler, int64_t now_ns);
/* DeleteOptions with preconditions.uid; no grace period: the pod's own applies. */
char *req_delete_options(const char *uid);
/* policy/v1 Eviction for POST pods/NAME/eviction (--pdb strict): deleteOptions.preconditions.uid
 * makes the API server refuse a pod replaced under the same name; no grace period: the pod's own. */
char *req_eviction(const char *ns, const char *name, const char *uid);

typedef struct req_event {
	const char *ns, *name, *uid;           /* regarding: the pod */
	const char *regarding_api_version, *regarding_kind; /* NULL: v1 Pod (a Lease's LeaderElection) */
	const char *related_ns, *related_name, *related_uid; /* related pod, or NULL */
	const char *type, *reason, *action, *note;
	const char *controller, *instance;     /* reportingController, reportingInstance */
	int64_t now_ns;
} req_event;
/* events.k8s.io/v1 Event (name NAME.<hex nanoseconds>, as client-go's recorder names them); the
 * note is cut to the API's 1024 bytes the way kube-scheduler cuts it ("... " ending). */
char *req_event_body(const req_event *e);
/* An Event's metadata.name: the regarding object's name and the Event's time. */
void req_event_name(const char *regarding, int64_t now_ns, char *buf, size_t size);

/* A coordination.k8s.io/v1 Lease; resource_version NULL when creating. */
typedef struct req_lease {
	const char *ns, *name, *resource_version;
	const char *holder;
	int32_t duration_s, transitions;
	const char *acquire_time, *renew_time; /* MicroTime */
} req_lease;
char *req_lease_body(const req_lease *l);

/* metav1.Time ("2024-05-01T10:00:00Z") and metav1.MicroTime ("2024-05-01T10:00:00.123456Z"). */
void req_time(int64_t ns, char *buf, size_t size);
void req_micro_time(int64_t ns, char *buf, size_t size);

#endif
