/* SPDX-License-Identifier: MIT */
/*
 * Kubernetes objects as preemptctl and the node agent read them: PriorityClasses, Nodes, Pods and
 * PodDisruptionBudgets, decoded from JSON or YAML (kubectl output, `List`s, multi-document
 * manifests, API server lists and watch events, streamed by kstream.h) into plain structs. Only the fields that matter for priority and preemption are
 * kept; everything else is ignored, as the API server's decoder would ignore unknown fields.
 *
 * Quantities are kept as the strings the user wrote (validated, blanks trimmed) so that the
 * library can sum them exactly before rounding, as Kubernetes does.
 */
#ifndef KUBE_K8S_H
#define KUBE_K8S_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <preempt.h>

#include "arena.h"
#include "diag.h"
#include "kval.h"

struct k8s_kv {
	const char *key, *value;
};

/* A map[string]string (labels, nodeSelector, matchLabels, resource lists), in input order. */
struct k8s_map {
	size_t n;
	struct k8s_kv *v;
};

/* ResourceList: name -> quantity string (validated, non-negative). */
typedef struct k8s_map k8s_rlist;

/* NodeSelectorRequirement and LabelSelectorRequirement alike. */
struct k8s_req {
	const char *key, *op;
	size_t nvalues;
	const char **values;
};

struct k8s_label_selector {
	bool present;   /* false: the field was absent or null (matches nothing in preemption) */
	struct k8s_map match_labels;
	size_t nexprs;
	struct k8s_req *exprs;
};

struct k8s_node_selector_term {
	size_t nexprs, nfields;
	struct k8s_req *exprs, *fields;
};

struct k8s_pod_affinity_term {
	struct k8s_label_selector selector;
	const char *topology_key;
	size_t nnamespaces;
	const char **namespaces;
	struct k8s_label_selector namespace_selector;
};

struct k8s_taint {
	const char *key, *value, *effect; /* value may be "" */
};

struct k8s_toleration {
	const char *key, *op, *value, *effect; /* "" when absent; op "" means Equal */
	bool has_seconds;
	int64_t seconds;
};

struct k8s_container {
	const char *name;
	k8s_rlist requests;
	bool restartable; /* an init container with restartPolicy: Always (a sidecar) */
};

/* Optional scalars keep a has_ flag: "absent" and "zero" differ for admission and PDBs. */

struct k8s_priority_class {
	struct diag_loc loc;
	const char *name;
	int32_t value;
	bool global_default;
	const char *preemption_policy; /* NULL when absent */
	const char *description;       /* NULL when absent */
	/* read back from a cluster (metadata.creationTimestamp, uid or resourceVersion set), not a
	 * manifest to create: a second globalDefault is then a fact to warn about, not an error */
	bool existing;
};

struct k8s_node {
	struct diag_loc loc;
	const char *name;
	struct k8s_map labels;
	k8s_rlist allocatable; /* status.allocatable, or status.capacity when that is absent */
	size_t ntaints;
	struct k8s_taint *taints;
	bool unschedulable;
};

enum k8s_pod_phase {
	K8S_PHASE_UNKNOWN = 0, /* absent, "", "Unknown" */
	K8S_PHASE_PENDING,
	K8S_PHASE_RUNNING,
	K8S_PHASE_SUCCEEDED,
	K8S_PHASE_FAILED,
};

/* status.containerStatuses[] (k8s_decode_pod only) */
struct k8s_container_status {
	const char *name;
	const char *container_id; /* "containerd://<id>"; NULL before the container was created */
};

struct k8s_pod {
	struct diag_loc loc;
	const char *namespace_, *name; /* namespace_ is "default" when absent */
	struct k8s_map labels;
	/* k8s_decode_pod only (the node agent's fields; preemptctl's cluster loader skips them) */
	const char *uid;                 /* NULL when absent */
	const char *resource_version;    /* metadata.resourceVersion, NULL when absent */
	const char *scheduler_name;      /* spec.schedulerName, NULL when absent */
	size_t nscheduling_gates;        /* spec.schedulingGates: the pod may not be scheduled yet */
	struct k8s_map annotations;      /* kubernetes.io/config.mirror, config.source... */
	const char *qos_class;           /* status.qosClass: Guaranteed, Burstable, BestEffort; NULL */
	size_t ncontainer_statuses;
	struct k8s_container_status *container_statuses;
	size_t ninit_container_statuses; /* init and sidecar containers (node decoding only) */
	struct k8s_container_status *init_container_statuses;

	bool has_creation, has_deletion, has_start;
	int64_t creation_ns, deletion_ns, start_ns; /* Unix time in nanoseconds */

	const char *priority_class_name; /* NULL when absent */
	bool has_priority;
	int32_t priority;
	const char *preemption_policy;   /* NULL when absent */
	const char *node_name;           /* NULL: pending */
	const char *nominated_node_name; /* NULL when absent */

	size_t ncontainers, ninit_containers;
	struct k8s_container *containers, *init_containers;
	k8s_rlist overhead;
	k8s_rlist pod_requests; /* spec.resources.requests (pod-level resources) */

	size_t ntolerations;
	struct k8s_toleration *tolerations;
	struct k8s_map node_selector;
	bool has_node_affinity; /* requiredDuringScheduling... present */
	size_t nnode_terms;
	struct k8s_node_selector_term *node_terms;
	size_t naffinity, nanti_affinity;
	struct k8s_pod_affinity_term *affinity, *anti_affinity;

	bool has_grace;
	int64_t grace_seconds;
	enum k8s_pod_phase phase;
	bool ready_false; /* a Ready condition with a status other than True */
	/* condition DisruptionTarget=True, reason PreemptionByScheduler: deleted by a preemption */
	bool preempted_by_scheduler;
	/* condition PodScheduled as it stands (NULL when absent): a scheduler writes it only when it
	 * changes */
	const char *scheduled_status, *scheduled_reason, *scheduled_message;
};

/* An IntOrString: minAvailable / maxUnavailable. */
struct k8s_intstr {
	bool present;
	bool percent; /* "N%" */
	int32_t value;
};

struct k8s_pdb {
	struct diag_loc loc;
	const char *namespace_, *name;
	struct k8s_label_selector selector;
	struct k8s_intstr min_available, max_unavailable;
	bool has_disruptions_allowed;
	int32_t disruptions_allowed;
	size_t ndisrupted;
	const char **disrupted_pods; /* names (status.disruptedPods keys) */
};

#define K8S_ARRAY(type, name) \
	size_t n##name;       \
	size_t cap_##name;    \
	type *name

typedef struct k8s_cluster {
	karena arena;
	K8S_ARRAY(struct k8s_priority_class, classes);
	K8S_ARRAY(struct k8s_node, nodes);
	K8S_ARRAY(struct k8s_pod, pods);
	K8S_ARRAY(struct k8s_pdb, pdbs);
	size_t nignored; /* objects of other kinds */
	/* PriorityClasses rejected by the decoder: pods naming them get one clear error */
	K8S_ARRAY(const char *, rejected_classes);
} k8s_cluster;

void k8s_cluster_init(k8s_cluster *c);
void k8s_cluster_done(k8s_cluster *c);

/*
 * Reads every object in a file ("-" is standard input) into the cluster. Syntax errors and
 * object errors are reported through d (every problem, not only the first).
 * Returns 0 when the file was read without errors, -EINVAL when d received errors, -ENOMEM, or
 * another -errno when the file cannot be read (also reported through d).
 */
int k8s_load_file(k8s_cluster *c, const char *path, diag *d);

/*
 * Lists PriorityClasses, Nodes, Pods and PodDisruptionBudgets from the API server of a kubeconfig
 * (current context; CA, client certificate/key or token; an exec plugin is refused), paginated,
 * streamed into c. Errors through d: the kubeconfig's, HTTP status with the server's message,
 * TLS or connection failures, bad objects (located at URL:LINE). 0, -EINVAL, -ENOMEM.
 */
int k8s_load_api(k8s_cluster *c, const char *kubeconfig, diag *d);

/* The same over a string (tests); name is used in messages. */
int k8s_load_string(k8s_cluster *c, const char *name, const char *text, size_t len, diag *d);

/* Whether a PriorityClass of that name was in the input but rejected. */
bool k8s_class_rejected(const k8s_cluster *c, const char *name);

/*
 * One Pod object (an item from kstream.h: a Pod, or a watch event's "object") into *ret, with the
 * node agent's fields too (uid, annotations, qosClass, containerStatuses). Strings and arrays are
 * allocated in a; file names the source in locations and messages (it must outlive *ret). Errors
 * are reported through d naming the pod and the field. Returns 0, -EINVAL (reported), -ENOMEM,
 * -EMEDIUMTYPE when obj is not a Pod (kind set to something else; nothing reported).
 */
int k8s_decode_pod(karena *a, diag *d, const char *file, const kval *obj, struct k8s_pod *ret);

/*
 * The pod's resource requests exactly as kube-scheduler computes them (containers, init
 * containers and sidecars, pod-level resources, overhead: libpreempt's pp_pod_requests), as a
 * pp_resource array in a. Returns 0, -EINVAL (err says why; quantities were validated by the
 * decoder, so this is about their sums), -ENOMEM.
 */
int k8s_pod_requests(const struct k8s_pod *p, karena *a, pp_resource **ret, size_t *ret_n, pp_err *err);

/* The pod named ns/name, or NULL. */
const struct k8s_pod *k8s_cluster_find_pod(const k8s_cluster *c, const char *namespace_,
                                           const char *name);

/* "pods/ns/name" style labels for messages fit in this many bytes (longer names are cut). */
#define K8S_LABEL_MAX 320

/* "pods/ns/name" style labels for messages. */
int k8s_pod_label(const struct k8s_pod *p, char *buf, size_t size);

/* RFC 3339 timestamps as Kubernetes writes them ("2024-05-01T10:00:00Z", fractions, offsets). */
int k8s_parse_time(const char *s, int64_t *ret_ns);

#endif
