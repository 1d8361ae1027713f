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
#include <string.h>

#include <preempt.h>

#include "karena.h"
#include "diag.h"
#include "kstream.h"
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

/* The quantity of a resource in a list, or NULL. */
static inline const char *k8s_rlist_get(const k8s_rlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].key, name) == 0)
			return l->v[i].value;
	return NULL;
}

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
	k8s_rlist requests; /* with the limits it lacks copied in, as the API server defaults them */
	k8s_rlist limits;
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
	bool has_deletion_grace;         /* metadata.deletionGracePeriodSeconds */
	int64_t deletion_grace_seconds;
	bool has_active_deadline;        /* spec.activeDeadlineSeconds (the Terminating quota scope) */
	int64_t active_deadline_seconds;
	bool cross_namespace_affinity;   /* a pod (anti-)affinity term with namespaces or namespaceSelector */
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
	k8s_rlist pod_requests; /* spec.resources.requests (pod-level resources; limits copied in) */
	k8s_rlist pod_limits;   /* spec.resources.limits */

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
	/* condition DisruptionTarget=True, reason EvictionByEvictionAPI: the API server's mark of an
	 * eviction it let through (preemptd --pdb strict evicts its victims that way) */
	bool evicted_by_api;
	const char *preemption_message; /* that condition's message ("SCHEDULER: preempting ..."), NULL */
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

/* A ScopedResourceSelectorRequirement (ResourceQuota scopeSelector, the plugin's matchScopes). */
struct k8s_scope_req {
	const char *scope_name, *op; /* op NULL when absent */
	size_t nvalues;
	const char **values;
};

struct k8s_quota {
	struct diag_loc loc;
	const char *namespace_, *name;
	k8s_rlist hard; /* spec.hard */
	size_t nscopes;
	const char **scopes; /* spec.scopes */
	size_t nselector;
	struct k8s_scope_req *selector; /* spec.scopeSelector.matchExpressions */
	bool has_status; /* status.hard present: what the quota controller wrote */
	k8s_rlist status_hard, status_used;
};

/* One limitedResources entry of the ResourceQuota admission plugin's configuration. */
struct k8s_limited_resource {
	struct diag_loc loc;
	const char *api_group, *resource; /* api_group "" when absent; resource NULL when absent */
	size_t ncontains;
	const char **contains;
	size_t nscopes;
	struct k8s_scope_req *scopes;
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
	K8S_ARRAY(struct k8s_quota, quotas);
	size_t nignored; /* objects of other kinds */
	/* --admission-config: the ResourceQuota plugin's configuration (k8s_load_admission_config) */
	const char *admission_file; /* NULL: none given */
	K8S_ARRAY(struct k8s_limited_resource, limited);
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
 * Lists PriorityClasses, Nodes, Pods, PodDisruptionBudgets and ResourceQuotas from the API server of a kubeconfig
 * (current context; CA, client certificate/key or token; an exec plugin is refused), paginated,
 * streamed into c. Errors through d: the kubeconfig's, HTTP status with the server's message,
 * TLS or connection failures, bad objects (located at URL:LINE). 0, -EINVAL, -ENOMEM.
 */
int k8s_load_api(k8s_cluster *c, const char *kubeconfig, diag *d);

/* The same over a string (tests); name is used in messages. */
int k8s_load_string(k8s_cluster *c, const char *name, const char *text, size_t len, diag *d);

/*
 * kube-apiserver's --admission-control-config-file: an AdmissionConfiguration
 * (apiserver.config.k8s.io/v1, v1alpha1, or the older apiserver.k8s.io/v1alpha1), decoded strictly
 * as kube-apiserver does (an unknown field is an error). Of its plugins, the first named
 * ResourceQuota is read: its configuration inline, or the file its path names (relative to the
 * admission file's directory) — a ResourceQuotaConfiguration (apiserver.config.k8s.io/v1) or the
 * older Configuration (resourcequota.admission.k8s.io/v1beta1, v1alpha1). Its limitedResources go
 * into c->limited; c->admission_file is set. Errors through d name the file, line and field.
 * Returns 0, -EINVAL (reported), -ENOMEM, or another -errno when a file cannot be read.
 */
int k8s_load_admission_config(k8s_cluster *c, const char *path, diag *d);
/* The same over a string; name is the file name used in messages and for relative paths. */
int k8s_load_admission_string(k8s_cluster *c, const char *name, const char *text, size_t len, diag *d);

/* Every object of a file ("-": standard input) through fn, streamed (kstream.h); name is used in
 * messages and must live as long as the objects' locations. 0, -EINVAL, -ENOMEM, -errno. */
int k8s_read_file(const char *path, const char *name, diag *d, kstream_item_fn fn, void *userdata);
/* The same over text[0..len). */
int k8s_read_string(const char *name, const char *text, size_t len, diag *d, kstream_item_fn fn, void *userdata);

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

/* A resource list as libpreempt's pp_quantity_kv array, in a (NULL when empty); *oom set when
 * out of memory. */
const pp_quantity_kv *k8s_quantities(karena *a, const k8s_rlist *l, bool *oom);

/*
 * The pod as the quota system sees it (libpreempt pp_quota_pod): containers then init containers
 * with requests and limits, pod-level resources, overhead, qosClass, activeDeadlineSeconds,
 * cross-namespace affinity, terminal phase, deletion grace. class_name: the priorityClassName after
 * Priority admission. Arrays in a; strings borrowed from p. 0 or -ENOMEM.
 */
int k8s_quota_pod(const struct k8s_pod *p, const char *class_name, karena *a, pp_quota_pod *ret);

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
