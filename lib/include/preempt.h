/* SPDX-License-Identifier: MIT */
/*
 * libpreempt — Kubernetes pod priority, scheduling queue, preemption and kubelet eviction
 * ranking, as a C library (libc only).
 *
 * One header on purpose, the whole public API (a consumer includes one file and pkg-config gives
 * one -l): quantities, PriorityClasses, pod requests, the cluster model, preemption, eviction
 * ranking, the scheduling queue, ResourceQuotas and their admission — each section self-contained.
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

/* A class as stored in a set. Strings are owned by the set and live until it is freed or the
 * class is removed. */
typedef struct pp_priority_class {
	const char *name;
	int32_t value;
	bool global_default;
	pp_preemption_policy policy;
	const char *description; /* "" when none */
} pp_priority_class;

/* pp_pcset_add() with a description (NULL = none). Adding one of the two built-in system classes
 * with exactly its built-in values is accepted and changes nothing (`kubectl get` lists them). */
PP_EXPORT int pp_pcset_add_full(pp_pcset *s, const char *name, int32_t value, bool global_default,
                                pp_preemption_policy policy, const char *description, pp_err *err);

/*
 * pp_pcset_add_full() for a class that exists already in a cluster (read back from the API server
 * or a snapshot of it), not one being created: the same validation, but a second globalDefault is
 * accepted — the API server checks "only one default" against its cache only, so real clusters
 * can hold several, and admission then uses the one with the lowest value (pp_pcset_default()).
 * -EEXIST only for a duplicate name. Check pp_pcset_default() before adding to warn about it.
 */
PP_EXPORT int pp_pcset_add_existing(pp_pcset *s, const char *name, int32_t value, bool global_default,
                                    pp_preemption_policy policy, const char *description, pp_err *err);

/*
 * Updates a class as ValidatePriorityClassUpdate allows: value and preemptionPolicy are immutable
 * (-EINVAL when they differ), globalDefault may change (-EEXIST if another default exists),
 * description is replaced unless NULL. -ENOENT for an unknown class.
 */
PP_EXPORT int pp_pcset_update(pp_pcset *s, const char *name, int32_t value, bool global_default,
                              pp_preemption_policy policy, const char *description, pp_err *err);

/* Deletes a class (-ENOENT unknown, -EPERM for the system classes). Pods keep the priority they
 * were admitted with: the cluster model stores resolved priorities, never class references. */
PP_EXPORT int pp_pcset_remove(pp_pcset *s, const char *name, pp_err *err);

/* Iteration and lookup; the pointers stay valid until the set changes. */
PP_EXPORT size_t pp_pcset_count(const pp_pcset *s);
PP_EXPORT const pp_priority_class *pp_pcset_get(const pp_pcset *s, size_t i);
PP_EXPORT const pp_priority_class *pp_pcset_find(const pp_pcset *s, const char *name);
/* The globalDefault class (lowest value if several), or NULL. */
PP_EXPORT const pp_priority_class *pp_pcset_default(const pp_pcset *s);

/*
 * Full Priority admission of a pod (plugin/pkg/admission/priority, admitPod):
 *   spec_policy     spec.preemptionPolicy when the pod sets it, else NULL; it must equal the
 *                   resolved class's policy (-EINVAL otherwise); without any class it is kept.
 *   ret_class_name  the class actually used (the globalDefault when class_name is unset), or NULL
 *                   when none; points into the set.
 * Every ret_* may be NULL.
 */
PP_EXPORT int pp_pcset_admit(const pp_pcset *s, const char *class_name, const int32_t *spec_priority,
                             const pp_preemption_policy *spec_policy, int32_t *ret_priority,
                             pp_preemption_policy *ret_policy, const char **ret_class_name, pp_err *err);

/* Whether s is a DNS-1123 subdomain (metadata.name of most Kubernetes objects). */
PP_EXPORT bool pp_is_dns_subdomain(const char *s);

/* ---------------------------------------------------------------------------------------------
 * Pod requests (resource.PodRequests)
 * ------------------------------------------------------------------------------------------- */

/* Well-known resource names. cpu is always in millicores, everything else in units (bytes, pods). */
#define PP_RESOURCE_CPU               "cpu"
#define PP_RESOURCE_MEMORY            "memory"
#define PP_RESOURCE_EPHEMERAL_STORAGE "ephemeral-storage"
#define PP_RESOURCE_PODS              "pods"

/* One integer resource amount. name is borrowed: it points at the caller's (or the library's)
 * string, see each function. */
typedef struct pp_resource {
	const char *name;
	int64_t value;
} pp_resource;

/* One quantity as written in a manifest, e.g. { "cpu", "250m" }. */
typedef struct pp_quantity_kv {
	const char *name;
	const char *value;
} pp_quantity_kv;

typedef enum pp_container_kind {
	PP_CONTAINER = 0,      /* spec.containers[] */
	PP_INIT_CONTAINER = 1, /* spec.initContainers[] */
	PP_SIDECAR = 2,        /* spec.initContainers[] with restartPolicy: Always */
} pp_container_kind;

typedef struct pp_container_requests {
	pp_container_kind kind; /* init containers and sidecars in spec.initContainers order */
	const pp_quantity_kv *requests;
	size_t n_requests;
} pp_container_requests;

/*
 * The scheduler's effective pod request (reference §3.2–3.3), computed exactly from quantity
 * strings: Σ containers, init containers with restartable sidecars (peak = own + sidecars started
 * before it), max of the two, pod-level requests (spec.resources.requests: cpu, memory and
 * hugepages-* replace the aggregate), plus spec.overhead — then rounded once per pod (cpu up to
 * millicores, the rest up to units). Only resources the scheduler accounts are returned: cpu,
 * memory, ephemeral-storage and scalar resources (extended "domain/name", hugepages-*,
 * attachable-volumes-*, names containing "kubernetes.io/"); others (e.g. "pods") are ignored, as Kubernetes does.
 *   pod_level, overhead   may be NULL with n = 0;
 *   ret                   at least max entries; names point at the caller's name strings;
 *   ret_n                 number of entries written (zero values included only when written).
 * -EINVAL for a malformed quantity or a negative one (err names the field, e.g.
 * "initContainers[1].resources.requests.cpu: invalid quantity \"1x\": ..."), -ERANGE for an
 * overflow, -ENOBUFS when more than max distinct resources.
 */
PP_EXPORT int pp_pod_requests(const pp_container_requests *containers, size_t n_containers,
                              const pp_quantity_kv *pod_level, size_t n_pod_level,
                              const pp_quantity_kv *overhead, size_t n_overhead,
                              pp_resource *ret, size_t max, size_t *ret_n, pp_err *err);

/* Whether the scheduler accounts for a resource name (cpu, memory, ephemeral-storage, pods, or a
 * scalar resource as schedutil.IsScalarResourceName). */
PP_EXPORT bool pp_resource_is_accounted(const char *name);

/* ---------------------------------------------------------------------------------------------
 * Cluster model: nodes, pods, PodDisruptionBudgets
 *
 * All *_spec structs are read during the call only: the cluster copies what it keeps. Strings
 * must be non-NULL unless documented otherwise. Names are unique: nodes by name, pods and PDBs by
 * namespace/name. Every mutation keeps the per-node aggregates (requested resources, pod count,
 * pods ordered by importance, prefix sums) up to date, in O(pods on the node) at worst.
 * A pp_cluster is not thread-safe; concurrent read-only calls (pp_cluster_preempt) are safe
 * when no mutation runs at the same time.
 * ------------------------------------------------------------------------------------------- */

typedef struct pp_cluster pp_cluster;

typedef struct pp_label {
	const char *key;
	const char *value;
} pp_label;

typedef enum pp_taint_effect {
	PP_EFFECT_ANY = 0, /* tolerations only: empty effect matches every effect */
	PP_EFFECT_NO_SCHEDULE = 1,
	PP_EFFECT_PREFER_NO_SCHEDULE = 2,
	PP_EFFECT_NO_EXECUTE = 3,
} pp_taint_effect;

typedef struct pp_taint {
	const char *key;
	const char *value; /* may be NULL = "" */
	pp_taint_effect effect; /* not PP_EFFECT_ANY */
} pp_taint;

typedef enum pp_toleration_op {
	PP_TOLERATION_EQUAL = 0, /* "Equal" or empty */
	PP_TOLERATION_EXISTS = 1,
} pp_toleration_op;

typedef struct pp_toleration {
	const char *key; /* NULL or "" with Exists: tolerates every taint */
	pp_toleration_op op;
	const char *value; /* may be NULL = "" */
	pp_taint_effect effect; /* PP_EFFECT_ANY = empty */
} pp_toleration;

typedef enum pp_selector_op {
	PP_OP_IN = 0,
	PP_OP_NOT_IN = 1,
	PP_OP_EXISTS = 2,
	PP_OP_DOES_NOT_EXIST = 3,
	PP_OP_GT = 4, /* node selectors only */
	PP_OP_LT = 5, /* node selectors only */
} pp_selector_op;

typedef struct pp_requirement {
	const char *key;
	pp_selector_op op;
	const char *const *values;
	size_t n_values;
} pp_requirement;

/* One nodeSelectorTerm: all expressions and fields ANDed; an empty term matches nothing.
 * match_fields supports only key "metadata.name" with In/NotIn and one value (anything else
 * makes the term match nothing, as in Kubernetes). */
typedef struct pp_node_selector_term {
	const pp_requirement *match_expressions;
	size_t n_match_expressions;
	const pp_requirement *match_fields;
	size_t n_match_fields;
} pp_node_selector_term;

/* A metav1.LabelSelector. present = false is a nil selector; present with nothing inside is {}. */
typedef struct pp_label_selector {
	bool present;
	const pp_label *match_labels;
	size_t n_match_labels;
	const pp_requirement *match_expressions; /* In/NotIn/Exists/DoesNotExist only */
	size_t n_match_expressions;
} pp_label_selector;

/* A required pod (anti-)affinity term. Namespaces empty = the pod's own namespace
 * (namespaceSelector is not modelled). Any topologyKey works; hostname topology
 * ("kubernetes.io/hostname") needs that label on the nodes, as in Kubernetes. */
typedef struct pp_pod_affinity_term {
	pp_label_selector selector;
	const char *topology_key;
	const char *const *namespaces;
	size_t n_namespaces;
} pp_pod_affinity_term;

typedef struct pp_node_spec {
	const char *name;
	const pp_label *labels;
	size_t n_labels;
	const pp_taint *taints;
	size_t n_taints;
	/* status.allocatable: cpu in millicores, others in units; "pods" is the pod limit (absent =
	 * the node admits no pod, as in Kubernetes). Unknown names are kept as scalar resources. */
	const pp_resource *allocatable;
	size_t n_allocatable;
	bool unschedulable; /* spec.unschedulable */
} pp_node_spec;

typedef struct pp_pod_spec {
	const char *namespace_;
	const char *name;
	const pp_label *labels;
	size_t n_labels;
	int32_t priority; /* resolved: see pp_pcset_admit() */
	pp_preemption_policy preemption_policy;
	/* effective requests, e.g. from pp_pod_requests(); cpu in millicores; duplicates -EINVAL */
	const pp_resource *requests;
	size_t n_requests;
	const char *node_name;           /* NULL or "" = pending */
	const char *nominated_node_name; /* status.nominatedNodeName, NULL or "" = none */
	bool has_start_time;             /* false: counts as "now" (pp_preempt_options.now_ns) */
	int64_t start_time_ns;           /* status.startTime, ns since the epoch */
	bool terminating;                /* metadata.deletionTimestamp set */
	int64_t deletion_time_ns;
	/* condition DisruptionTarget=True reason PreemptionByScheduler (eligibility rule §7.1(2)) */
	bool preempted_by_scheduler;
	bool not_ready; /* has a Ready condition other than True (PDB healthy-pod count) */
	int64_t termination_grace_period_s; /* < 0 = unset (Kubernetes' default is 30) */
	const pp_toleration *tolerations;
	size_t n_tolerations;
	const pp_label *node_selector; /* spec.nodeSelector */
	size_t n_node_selector;
	/* requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (ORed); has_node_affinity
	 * with 0 terms matches no node, as the API would reject it anyway */
	bool has_node_affinity;
	const pp_node_selector_term *node_affinity;
	size_t n_node_affinity;
	const pp_pod_affinity_term *affinity; /* required podAffinity terms */
	size_t n_affinity;
	const pp_pod_affinity_term *anti_affinity; /* required podAntiAffinity terms */
	size_t n_anti_affinity;
} pp_pod_spec;

typedef enum pp_int_or_percent_kind {
	PP_IOP_UNSET = 0,
	PP_IOP_INT = 1,
	PP_IOP_PERCENT = 2, /* value is the percentage, "50%" -> 50 */
} pp_int_or_percent_kind;

typedef struct pp_int_or_percent {
	pp_int_or_percent_kind kind;
	int32_t value;
} pp_int_or_percent;

typedef struct pp_pdb_spec {
	const char *namespace_;
	const char *name;
	pp_label_selector selector;
	pp_int_or_percent min_available;
	pp_int_or_percent max_unavailable;
	/* status.disruptionsAllowed when the snapshot has it; else computed as the disruption
	 * controller does over the bound, non-terminal pods of the namespace (reference §10) */
	bool has_disruptions_allowed;
	int32_t disruptions_allowed;
	const char *const *disrupted_pods; /* status.disruptedPods: pod names */
	size_t n_disrupted_pods;
} pp_pdb_spec;

PP_EXPORT int pp_cluster_new(pp_cluster **ret);
PP_EXPORT pp_cluster *pp_cluster_free(pp_cluster *c);

/* -EEXIST duplicate name, -EINVAL invalid spec (err names the field). */
PP_EXPORT int pp_cluster_add_node(pp_cluster *c, const pp_node_spec *node, pp_err *err);
/* Replaces labels, taints, allocatable and unschedulable of the node with that name (-ENOENT);
 * when they are all as before (a heartbeat), nothing is touched. */
PP_EXPORT int pp_cluster_update_node(pp_cluster *c, const pp_node_spec *node, pp_err *err);
/* -ENOENT unknown, -EBUSY while pods are bound to it. */
PP_EXPORT int pp_cluster_remove_node(pp_cluster *c, const char *name, pp_err *err);

/* -EEXIST duplicate namespace/name, -ENOENT node_name not in the cluster, -EINVAL bad spec. */
PP_EXPORT int pp_cluster_add_pod(pp_cluster *c, const pp_pod_spec *pod, pp_err *err);
/* Replaces the pod with the same namespace/name (remove + add, atomically: on failure the old
 * pod stays). An update that changes nothing the model keeps (a status the filters do not read)
 * leaves the pod and its node's cached results untouched. */
PP_EXPORT int pp_cluster_update_pod(pp_cluster *c, const pp_pod_spec *pod, pp_err *err);
PP_EXPORT int pp_cluster_remove_pod(pp_cluster *c, const char *namespace_, const char *name, pp_err *err);
/* Binds a pending pod to a node (-EBUSY if already bound, -ENOENT unknown pod or node); clears its
 * nominated node, as binding does. */
PP_EXPORT int pp_cluster_bind_pod(pp_cluster *c, const char *namespace_, const char *name, const char *node,
                                  pp_err *err);
/* Sets (node non-NULL) or clears (NULL) status.nominatedNodeName. The node must exist. */
PP_EXPORT int pp_cluster_set_nominated_node(pp_cluster *c, const char *namespace_, const char *name,
                                            const char *node, pp_err *err);
/*
 * What a pod's lifecycle and a scheduler's own writes change, without the rest of its spec: the
 * binding, the nomination, the start, the deletion, readiness and the preemption condition.
 * pp_sched_set_pod_state() applies it in place.
 */
typedef struct pp_pod_state {
	const char *node_name;           /* NULL or "": pending */
	const char *nominated_node_name; /* NULL or "": none (ignored for a bound pod) */
	bool has_start_time;
	int64_t start_time_ns;
	bool terminating;
	int64_t deletion_time_ns;
	bool preempted_by_scheduler;
	bool not_ready;
} pp_pod_state;

/* Sets metadata.deletionTimestamp (and the PreemptionByScheduler condition when
 * by_preemption). A terminating pod still occupies its node until removed. */
PP_EXPORT int pp_cluster_mark_terminating(pp_cluster *c, const char *namespace_, const char *name,
                                          int64_t deletion_time_ns, bool by_preemption, pp_err *err);

PP_EXPORT int pp_cluster_add_pdb(pp_cluster *c, const pp_pdb_spec *pdb, pp_err *err);
/* Replaces the PDB of that namespace/name (-ENOENT). A status update (the same selector, as the
 * disruption controller writes one after every change of the pods it covers) costs O(1): the pods
 * it covers stay; a new selector costs what removing and adding it does. */
PP_EXPORT int pp_cluster_update_pdb(pp_cluster *c, const pp_pdb_spec *pdb, pp_err *err);
PP_EXPORT int pp_cluster_remove_pdb(pp_cluster *c, const char *namespace_, const char *name, pp_err *err);

/* Read access. Returned strings belong to the cluster and stay valid until the object changes. */
PP_EXPORT size_t pp_cluster_node_count(const pp_cluster *c);
PP_EXPORT size_t pp_cluster_pod_count(const pp_cluster *c);
/* Nodes in ascending name order, i < pp_cluster_node_count(). */
PP_EXPORT const char *pp_cluster_node_name(const pp_cluster *c, size_t i);

typedef struct pp_pod_info {
	const char *namespace_;
	const char *name;
	int32_t priority;
	pp_preemption_policy preemption_policy;
	const char *node_name;           /* NULL when pending */
	const char *nominated_node_name; /* NULL when none */
	bool terminating;
	bool has_start_time;
	int64_t start_time_ns;
	int64_t termination_grace_period_s;
} pp_pod_info;

/* -ENOENT when the pod is not in the cluster. */
PP_EXPORT int pp_cluster_pod_info(const pp_cluster *c, const char *namespace_, const char *name,
                                  pp_pod_info *ret);

/* The disruptionsAllowed a PDB has right now (given or computed). -ENOENT unknown PDB. */
PP_EXPORT int pp_cluster_pdb_disruptions_allowed(const pp_cluster *c, const char *namespace_, const char *name,
                                                 int32_t *ret);

/* The value of a node's label (NULL: the node has no such label, or there is no such node); it
 * stays valid until the node changes. */
PP_EXPORT const char *pp_cluster_node_label(const pp_cluster *c, const char *node, const char *key);

/* ---------------------------------------------------------------------------------------------
 * Preemption decision (DefaultPreemption, made deterministic: DESIGN.md §3)
 * ------------------------------------------------------------------------------------------- */

typedef struct pp_preempt_options {
	/* "now" for pods without a start time (they count as started now: the youngest). */
	int64_t now_ns;
	/* Fill per-node explanation records (pp_preemption_node_*). Costs memory per node. */
	bool explain;
} pp_preempt_options;

typedef enum pp_outcome {
	PP_OUTCOME_FITS = 0,    /* fits without preemption: node = smallest feasible name */
	PP_OUTCOME_PREEMPT = 1, /* preempt victims on node */
	PP_OUTCOME_NONE = 2,    /* no node: reason says why */
} pp_outcome;

/*
 * Whether the pending pod may preempt at all (kube's PodEligibleToPreemptOthers, returned as a
 * value rather than worded only): the eligibility of a PP_OUTCOME_NONE decision that stopped
 * before looking for victims. A caller acts on it without reading pp_preemption_reason(): a pod
 * not eligible keeps its nomination, and a second search would say the same.
 */
typedef enum pp_eligibility {
	PP_ELIGIBLE = 0,               /* preemption was attempted, or not needed (FITS, PREEMPT), or
	                                  there was no node to attempt it on */
	PP_NOT_ELIGIBLE_NEVER = 1,     /* preemptionPolicy: Never */
	PP_NOT_ELIGIBLE_TERMINATING = 2, /* a lower-priority pod on its nominated node is terminating
	                                    after a preemption: that earlier preemption is under way */
} pp_eligibility;
/* kube-scheduler's words, as in pp_preemption_reason(): "not eligible due to
 * preemptionPolicy=Never."; "" for PP_ELIGIBLE. */
PP_EXPORT const char *pp_eligibility_reason(pp_eligibility e);

/* Which best-candidate criterion (reference §7.4, then DESIGN §3) decided the winner. */
typedef enum pp_criterion {
	PP_CRIT_NONE = 0,             /* no preemption decision */
	PP_CRIT_SINGLE_CANDIDATE = 1, /* only one candidate node */
	PP_CRIT_PDB_VIOLATIONS = 2,   /* fewest PDB-violating victims */
	PP_CRIT_HIGHEST_PRIORITY = 3, /* lowest highest-victim priority */
	PP_CRIT_PRIORITY_SUM = 4,     /* lowest Σ(priority + 2^31) */
	PP_CRIT_VICTIM_COUNT = 5,     /* fewest victims */
	PP_CRIT_START_TIME = 6,       /* latest earliest start among the highest-priority victims */
	PP_CRIT_NODE_NAME = 7,        /* smallest node name (DESIGN §3) */
} pp_criterion;
PP_EXPORT const char *pp_criterion_name(pp_criterion c); /* e.g. "fewest PDB violations" */

/* Per-node verdict of one decision. */
typedef enum pp_node_verdict {
	PP_NODE_FITS = 0,         /* the pod fits as the node is */
	PP_NODE_UNRESOLVABLE = 1, /* a filter failed that preemption cannot fix */
	PP_NODE_NOT_HELPFUL = 2,  /* resolvable failure, but removing every lower-priority pod is not enough
	                             (or there is none) */
	PP_NODE_CANDIDATE = 3,    /* preemption works here; victims below */
} pp_node_verdict;

typedef struct pp_victim {
	const char *namespace_;
	const char *name;
	int32_t priority;
	int64_t start_time_ns; /* now_ns when the pod has none */
	bool terminating;      /* already being deleted: no second delete is needed */
	bool violates_pdb;     /* counted in num_pdb_violations */
} pp_victim;

typedef struct pp_node_explain {
	const char *node;
	pp_node_verdict verdict;
	/* the failures as Kubernetes words them, "; "-separated ("Insufficient cpu; Too many pods",
	 * "node(s) had untolerated taint {dedicated: gpu}"); for a candidate, "" */
	const char *reason;
	/* candidates only: */
	const pp_victim *victims; /* descending importance (MoreImportantPod) */
	size_t n_victims;
	size_t num_pdb_violations;
	int64_t priority_sum; /* Σ(priority + 2^31), criterion 3 */
	/* the criterion at which this candidate lost (PP_CRIT_NONE for the winner and non-candidates) */
	pp_criterion lost_at;
	/* PP_NODE_FITS: the node's LeastAllocated score (0-100), by which the scheduling cycle picks
	 * among feasible nodes (pp_cluster_bind_nodes); -1 otherwise */
	int64_t score;
} pp_node_explain;

/* A candidate node of a preemption decision: its values of the best-candidate criteria. */
typedef struct pp_candidate {
	const char *node;
	size_t num_pdb_violations; /* criterion 1 */
	int32_t highest_priority;  /* criterion 2: the priority of its first (most important) victim */
	int64_t priority_sum;      /* criterion 3: Σ(priority + 2^31) */
	size_t n_victims;          /* criterion 4 */
	/* criterion 5: the earliest start among its highest-priority victims (a pod without
	 * status.startTime counts as started at pp_preempt_options.now_ns) */
	int64_t earliest_start_ns;
} pp_candidate;

/* One PodDisruptionBudget that selects a victim (in the preemption sense: its namespace, a
 * non-empty selector matching the victim's labels), as the decision counted it. */
typedef struct pp_victim_pdb {
	const char *namespace_;
	const char *name;
	int32_t disruptions_allowed; /* status.disruptionsAllowed at the decision (given or computed) */
	/* the victim is in status.disruptedPods: already counted, so not charged to the budget */
	bool disrupted;
	/* the victim is beyond the budget: the more important pods it selects on the node took what
	 * the budget allows (reference §7.3) */
	bool violated;
} pp_victim_pdb;

typedef struct pp_preemption pp_preemption;

/*
 * Decides, for the pending pod namespace_/name of the cluster, what kube-scheduler's
 * DefaultPreemption would do after a failed scheduling cycle: every node is evaluated; if the pod
 * fits somewhere the result is PP_OUTCOME_FITS (smallest feasible node name); else eligibility,
 * candidates, victims and the best candidate as in the reference §7 with DESIGN §3's tie-breaks.
 * The cluster is not modified. opts may be NULL (now = 0, no explanation).
 * -ENOENT unknown pod, -EINVAL the pod is already bound.
 */
PP_EXPORT int pp_cluster_preempt(const pp_cluster *c, const char *namespace_, const char *name,
                                 const pp_preempt_options *opts, pp_preemption **ret, pp_err *err);
PP_EXPORT pp_preemption *pp_preemption_free(pp_preemption *p);

PP_EXPORT pp_outcome pp_preemption_outcome(const pp_preemption *p);
/* PP_OUTCOME_NONE without an attempt: why (its words are in the reason too); else PP_ELIGIBLE. */
PP_EXPORT pp_eligibility pp_preemption_eligibility(const pp_preemption *p);
/* The chosen node, NULL for PP_OUTCOME_NONE. */
PP_EXPORT const char *pp_preemption_node(const pp_preemption *p);
/* PP_OUTCOME_NONE: Kubernetes-style reason ("not eligible due to preemptionPolicy=Never.",
 * "0/3 nodes are available: ... preemption: 0/3 nodes are available: ..."); else "". */
PP_EXPORT const char *pp_preemption_reason(const pp_preemption *p);
/* Victims on the chosen node in the order Kubernetes returns them (descending importance). */
PP_EXPORT size_t pp_preemption_victim_count(const pp_preemption *p);
PP_EXPORT const pp_victim *pp_preemption_victim(const pp_preemption *p, size_t i);
PP_EXPORT size_t pp_preemption_pdb_violations(const pp_preemption *p);
PP_EXPORT pp_criterion pp_preemption_criterion(const pp_preemption *p);
/* Lower-priority pods nominated to the chosen node, whose nomination Kubernetes clears. */
PP_EXPORT size_t pp_preemption_cleared_nomination_count(const pp_preemption *p);
PP_EXPORT const pp_pod_info *pp_preemption_cleared_nomination(const pp_preemption *p, size_t i);
/* Explanation records (opts->explain), one per node in ascending name order; 0/NULL otherwise. */
PP_EXPORT size_t pp_preemption_node_count(const pp_preemption *p);
PP_EXPORT const pp_node_explain *pp_preemption_node_explain(const pp_preemption *p, size_t i);
/*
 * PP_OUTCOME_PREEMPT, with or without opts->explain: rank 0, the chosen node's values; rank 1, the
 * runner-up — the best of the other candidates (by the criteria, then the smaller name), which
 * the chosen node beat at pp_preemption_criterion(); NULL when it was the only candidate, for
 * other ranks and other outcomes.
 */
PP_EXPORT const pp_candidate *pp_preemption_candidate(const pp_preemption *p, size_t rank);
/* The PodDisruptionBudgets that select victim i of the chosen node (pp_preemption_victim), in
 * the cluster's order; 0/NULL when none. */
PP_EXPORT size_t pp_preemption_victim_pdb_count(const pp_preemption *p, size_t i);
PP_EXPORT const pp_victim_pdb *pp_preemption_victim_pdb(const pp_preemption *p, size_t i, size_t k);
/*
 * PP_OUTCOME_NONE after a preemption attempt: the failures of the nodes where preemption cannot
 * help (a taint, a cordon, a node selector or affinity, a request above the node's allocatable:
 * what kube-scheduler's message words as "Preemption is not helpful for scheduling"), counted
 * over nodes and sorted as the FitError's ("2 node(s) had untolerated taint {a: b}, 1 Insufficient
 * memory"); "" when there are none, or preemption was not attempted.
 */
PP_EXPORT const char *pp_preemption_unresolvable(const pp_preemption *p);

/*
 * Where the scheduling cycle would bind the pending pod now without preempting
 * (pp_sched_schedule_one's choice): its nominated node when it fits there (the cycle tries that
 * first), else every feasible node with the highest LeastAllocated score — several when they tie
 * (in name order: the cycle takes the first, kube-scheduler any of them, at random). Calls fn for
 * each and returns how many (0: it fits nowhere), or -ENOENT unknown pod, -EINVAL bound, -ENOMEM.
 */
PP_EXPORT int pp_cluster_bind_nodes(const pp_cluster *c, const char *namespace_, const char *name,
                                    void (*fn)(const char *node, void *userdata), void *userdata, pp_err *err);

/* ---------------------------------------------------------------------------------------------
 * PodDisruptionBudgets in preemption: preferred (kube-scheduler) or strict
 *
 * kube-scheduler deletes its victims directly, so a budget only steers the choice (fewest
 * violations first, reference §7.3–7.4) and a preemption may break it. A scheduler that evicts
 * through the Eviction API instead has every budget enforced by the API server; its dry run must
 * then choose only victims the API server will let go, or its preemptions are refused half-way.
 * The strict policy is that dry run: kube-scheduler's victim selection on each node, with the
 * victims counted against every budget that covers them (each victim counts, as the API server
 * decrements disruptionsAllowed once per eviction — not kube's split, which charges the budget to
 * the most important pods whether they are victims or not). When the victims exceed a budget, the
 * most important of that budget's victims beyond what it allows are kept on the node (as if they
 * had the preemptor's priority) and the selection is repeated; a node where the pods the budgets
 * let go are not enough is no candidate, its reason naming the budget ("node(s) would need more
 * evictions than PodDisruptionBudget NS/NAME allows"). Victims already terminating count against
 * nothing: no eviction is sent for them. So a strict decision has no PDB violation at all, and
 * where kube-scheduler's own choice breaks no budget, the strict one is the same.
 * Budgets cover pods as in kube-scheduler's preemption (a non-empty selector matching the pod's
 * labels); the API server's eviction is wider (a {} selector covers the whole namespace): what the
 * dry run cannot foresee, the API server refuses, and the caller marks that pod protected.
 * ------------------------------------------------------------------------------------------- */

typedef enum pp_pdb_policy {
	PP_PDB_PREFER = 0, /* kube-scheduler: budgets steer the choice, never forbid a victim (default) */
	PP_PDB_STRICT = 1, /* no victim beyond what a budget allows (above) */
} pp_pdb_policy;

/* "prefer", "strict"; NULL for an unknown value. */
PP_EXPORT const char *pp_pdb_policy_name(pp_pdb_policy p);
/* Parses "prefer" or "strict" (-EINVAL otherwise, err says what is expected). */
PP_EXPORT int pp_pdb_policy_parse(const char *s, pp_pdb_policy *ret, pp_err *err);

/* The policy of every later pp_cluster_preempt() on c. -EINVAL for an unknown policy. */
PP_EXPORT int pp_cluster_set_pdb_policy(pp_cluster *c, pp_pdb_policy policy);
PP_EXPORT pp_pdb_policy pp_cluster_pdb_policy(const pp_cluster *c);

/*
 * Marks a pod that is never a victim (protected true), whatever its priority and the policy, or
 * makes it one like any other again (false): what a scheduler learns when the API server refuses
 * its eviction for a reason the dry run cannot see (a budget matched as the API server matches,
 * two budgets over one pod). The mark stays while the pod does (an update keeps it); the caller
 * lifts it when the reason may have gone (a budget of its namespace changed). -ENOENT unknown pod.
 */
PP_EXPORT int pp_cluster_set_pod_protected(pp_cluster *c, const char *namespace_, const char *name, bool protected_,
                                           pp_err *err);
PP_EXPORT bool pp_cluster_pod_protected(const pp_cluster *c, const char *namespace_, const char *name);

/*
 * The budget as observed: sets the PDB's status.disruptionsAllowed (e.g. 0 after the API server
 * refused an eviction with 429 TooManyRequests, before the watch shows the budget spent). It
 * holds until the PDB is updated or replaced with its new status. -ENOENT unknown PDB.
 */
PP_EXPORT int pp_cluster_set_pdb_disruptions_allowed(pp_cluster *c, const char *namespace_, const char *name,
                                                     int32_t disruptions_allowed, pp_err *err);

/* A PodDisruptionBudget as a pod sees it. Strings belong to the cluster (valid until it changes). */
typedef struct pp_pdb_info {
	const char *namespace_;
	const char *name;
	int32_t disruptions_allowed; /* now: given, observed, or computed (pp_cluster_pdb_disruptions_allowed) */
} pp_pdb_info;

/* The i-th budget covering the pod in preemption's sense (in the order the budgets were added):
 * -ENOENT unknown pod, -ERANGE no i-th. */
PP_EXPORT int pp_cluster_pod_pdb(const pp_cluster *c, const char *namespace_, const char *name, size_t i,
                                 pp_pdb_info *ret);

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

/* ---- Scheduling queue and cycle ---- */
/*
 * kube-scheduler's scheduling queue and scheduling cycle over a pp_cluster, in simulated time
 * (reference §5–6, §7.5). The scheduler owns the cluster; every change goes through pp_sched_*
 * so that the queue sees the cluster events that may make pending pods schedulable.
 *
 * Queue: activeQ (higher priority first, then earlier queue time, then arrival order), backoffQ
 * (1 s doubled per failed attempt, capped at 10 s), unschedulable pods (moved back by events
 * that may help them — an assigned pod deleted, a node added or changed, ... — or after 5 min).
 * preemptionPolicy: Never pods are queued by priority like the others; they never preempt.
 *
 * Cycle (pp_sched_schedule_one): the nominated node is tried first; every node is filtered with
 * the nominated pods of equal or higher priority counted on their nominated node, and again
 * without them when any were added (both passes must succeed). A feasible pod is bound to the
 * node with the highest NodeResourcesLeastAllocated score over cpu and memory (equal weights:
 * score = mean over the two of (allocatable − requested − pod) × 100 / allocatable, integer
 * arithmetic as kube), ties to the smaller node name. Otherwise preemption runs
 * (pp_cluster_preempt): the preemptor is nominated, its victims start terminating and keep their
 * resources until their grace period has passed, and lower-priority pods nominated to that node
 * lose their nomination when they no longer fit beside it.
 * Deviation from Kubernetes: kube clears every lower-priority nomination on the node without
 * checking (reference §7.5), which makes pods that would still fit preempt again elsewhere.
 *
 * Times are nanoseconds on the caller's clock (e.g. Unix time); the library never reads a clock.
 */

typedef struct pp_sched pp_sched;

typedef struct pp_sched_options {
	int64_t initial_backoff_ns;   /* podInitialBackoffSeconds; 0 = 1 s */
	int64_t max_backoff_ns;       /* podMaxBackoffSeconds; 0 = 10 s */
	int64_t max_unschedulable_ns; /* podMaxInUnschedulablePodsDuration; 0 = 5 min */
	/* false (simulation): victims are removed by pp_sched_advance() once their
	 * terminationGracePeriodSeconds (default 30) has passed; true: the caller removes them with
	 * pp_sched_remove_pod() when the API server reports them gone. */
	bool external_termination;
} pp_sched_options;

typedef enum pp_sched_event_kind {
	PP_SCHED_BIND = 0,             /* pod bound to node */
	PP_SCHED_NOMINATE = 1,         /* pod nominated to node, victims terminating */
	PP_SCHED_VICTIM_GONE = 2,      /* victim pod removed from node (grace period over) */
	PP_SCHED_CLEAR_NOMINATION = 3, /* pod lost its nomination to node */
	PP_SCHED_UNSCHEDULABLE = 4,    /* pod fits nowhere and preemption does not help */
	/* pod's nomination to node outlived its deadline (pp_sched_set_nomination_timeout): cleared,
	 * the pod back in activeQ; victims: the pods it waited for that are still terminating there,
	 * now deemed stuck */
	PP_SCHED_NOMINATION_EXPIRED = 5,
	/* a preemption the gate postponed (pp_sched_set_preemption_gate): nothing changed; node and
	 * victims say what it would have done, message the FitError and why it waits */
	PP_SCHED_POSTPONED = 6,
} pp_sched_event_kind;

/* "bind", "nominate", "victim-gone", "clear-nomination", "unschedulable", "nomination-expired",
 * "postponed". */
PP_EXPORT const char *pp_sched_event_name(pp_sched_event_kind k);

/* One filter failure and on how many nodes it happened. */
typedef struct pp_sched_reason {
	const char *reason; /* "Insufficient cpu", "node(s) had untolerated taint {k: v}", ... */
	size_t nodes;
} pp_sched_reason;

/* Every pointer is borrowed and valid only during the callback. */
typedef struct pp_sched_event {
	pp_sched_event_kind kind;
	int64_t time_ns;
	const char *namespace_; /* the pod the event is about */
	const char *name;
	const char *node; /* bind, nominate, victim-gone (where it ran), clear-nomination and
	                   * nomination-expired (the node it lost), postponed (where it would
	                   * preempt); NULL for unschedulable */
	/* nominate, postponed: the victims, descending importance (already terminating ones
	 * included); nomination-expired: the pods still terminating that it waited for */
	const pp_victim *victims;
	size_t n_victims;
	/* clear-nomination: the preemptor that took the node; victim-gone: the preemptor it made
	 * room for; NULL otherwise (or when that preemptor is gone) */
	const char *by_namespace;
	const char *by_name;
	/* unschedulable: kube's FitError message ("0/5 nodes are available: 2 Insufficient cpu, 3
	 * node(s) had untolerated taint {a: b}. preemption: ..."), and the filter failures counted
	 * over nodes, in the message's order; nominate: the FitError of the filter pass that made the
	 * preemptor preempt, without a preemption part ("0/5 nodes are available: 5 Insufficient
	 * cpu."), what kube-scheduler writes into its PodScheduled condition (reasons not set);
	 * postponed: that FitError, then "preemption postponed: " and the gate's reason */
	const char *message;
	const pp_sched_reason *reasons;
	size_t n_reasons;
	/* nominate, postponed, and unschedulable after a preemption attempt: the preemption decision, with its
	 * per-node records (pp_preemption_node_explain) when pp_sched_set_explain() is on; NULL
	 * otherwise */
	const pp_preemption *preemption;
	/* the events of pp_sched_schedule_one() about the pod of the cycle: how many times it left
	 * the queue, this cycle included (kube's QueuedPodInfo.Attempts, which
	 * scheduler_pod_scheduling_attempts observes at binding); 0 otherwise */
	unsigned attempts;
} pp_sched_event;

typedef void (*pp_sched_event_fn)(const pp_sched_event *ev, void *userdata);

/*
 * Creates a scheduler that takes the cluster over (on success only: pp_sched_free() frees it).
 * Every pending pod of the cluster enters activeQ at now_ns, in (priority, namespace, name)
 * order; pods already terminating are removed after their grace period counted from now_ns.
 * fn (may be NULL) receives every event, synchronously. opts may be NULL.
 */
PP_EXPORT int pp_sched_new(pp_cluster *c, const pp_sched_options *opts, int64_t now_ns,
                           pp_sched_event_fn fn, void *userdata, pp_sched **ret, pp_err *err);
PP_EXPORT pp_sched *pp_sched_free(pp_sched *s);

/* Preemption decisions explained (pp_preempt_options.explain: memory per node), handed to the
 * nominate and unschedulable events as pp_sched_event.preemption. Off by default. */
PP_EXPORT void pp_sched_set_explain(pp_sched *s, bool explain);

/* kube 1.33+'s SchedulerPopFromBackoffQ (on by default there; off by default here, as kube
 * before it, which the simulations reproduce): with activeQ empty, pp_sched_schedule_one() pops
 * the pod whose backoff expires first instead of waiting for it to expire (a pod backing off
 * after an error — a pod whose binding was refused, pp_sched_update_pod — still waits). */
PP_EXPORT void pp_sched_set_pop_from_backoff(pp_sched *s, bool on);
/* Whether pp_sched_schedule_one() has a pod to pop now (activeQ, or backoffQ with the above). */
PP_EXPORT bool pp_sched_has_poppable(const pp_sched *s);

/*
 * Reservations that end (off by default: kube-scheduler keeps a nomination until its pod binds,
 * is deleted or preempts elsewhere, and a preemptor whose victims never terminate waits forever —
 * kubernetes#106780, #95752). A nomination made by pp_sched_schedule_one() expires after_grace_ns
 * after the latest time its victims are due to be gone (a victim deleted now: now + its grace
 * period; one terminating already: its deletion time, metadata.deletionTimestamp); with
 * timeout_ns > 0, timeout_ns after it was made instead. A nomination the scheduler did not make
 * (a pod added or updated with one, as after a restart) expires after_grace_ns after the latest
 * deletion time of the lower-priority pods terminating on its node with the preemption condition,
 * counted from when it was first seen at the earliest (timeout_ns after it was first seen, with
 * timeout_ns > 0). On expiry (pp_sched_advance): the lower-priority pods with the preemption
 * condition still terminating there are deemed stuck — they keep their room, but no preemption
 * counts on it any more (they are no victims, and do not make a preemptor wait) until they are
 * removed; the nomination is cleared (PP_SCHED_NOMINATION_EXPIRED) and the pod goes to activeQ,
 * where it may preempt on another node. When none of them is left, the nomination stays and the
 * pod just goes to activeQ (it was only backing off). Both 0: nominations never expire. -EINVAL
 * negative.
 */
PP_EXPORT int pp_sched_set_nomination_timeout(pp_sched *s, int64_t timeout_ns, int64_t after_grace_ns,
                                              pp_err *err);

/*
 * Young pods are spared (off by default): a pod that has run less than min_runtime_ns (from its
 * start time; a pod without one has not run at all) is no victim as long as a preemption without
 * it is possible; only when there is none does the decision take what kube-scheduler would (the
 * victim search runs a second time, as kube's). 0: off. -EINVAL negative.
 */
PP_EXPORT int pp_sched_set_min_runtime(pp_sched *s, int64_t min_runtime_ns, pp_err *err);

/*
 * Asked before a preemption is carried out, with the nominate event it would emit (pod, node,
 * victims, the FitError, the decision). Returns 0 to go ahead; 1 to postpone it: *ret_until_ns
 * receives when the pod is to be tried again (later than now: else after the initial backoff)
 * and reason (reason_size bytes, NUL-terminated) why, for the postponed event. A postponed pod
 * changes nothing: it waits among the unschedulable pods (cluster events may retry it earlier)
 * until then.
 */
typedef int (*pp_sched_gate_fn)(const pp_sched_event *plan, void *userdata, int64_t *ret_until_ns, char *reason,
                                size_t reason_size);
/* fn NULL: no gate (the default). */
PP_EXPORT void pp_sched_set_preemption_gate(pp_sched *s, pp_sched_gate_fn fn, void *userdata);
/* Pods waiting for a postponed preemption's retry. */
PP_EXPORT size_t pp_sched_postponed_count(const pp_sched *s);

/* The cluster as the scheduler sees it (read-only; change it through pp_sched_*). */
PP_EXPORT const pp_cluster *pp_sched_cluster(const pp_sched *s);
PP_EXPORT int64_t pp_sched_now(const pp_sched *s);

/* Cluster events, as pp_cluster_* plus queue moves. A pending pod added enters activeQ; a
 * pending pod updated is re-queued (activeQ, or backoffQ while backing off); a pod removed
 * leaves the queue, and when it was bound (or nominated), pods it may have blocked move. An
 * update that changes nothing the model keeps moves nothing (a kubelet's status report, a node's
 * heartbeat), nor does one that changes only a pod's lifecycle state (start, readiness, deletion
 * under way: nothing is freed until the pod is removed). A node added or changed moves only the
 * unschedulable pods it may help, pod by pod as kube's QueueingHints judge it: one whose
 * allocatable holds the pod (and, changed, a resource the pod requests grew), or that now
 * tolerates it, matches its node affinity, is no longer cordoned. */
PP_EXPORT int pp_sched_add_node(pp_sched *s, const pp_node_spec *node, pp_err *err);
PP_EXPORT int pp_sched_update_node(pp_sched *s, const pp_node_spec *node, pp_err *err);
PP_EXPORT int pp_sched_remove_node(pp_sched *s, const char *name, pp_err *err);
/* A node whose Node object was deleted (or is not known yet) while pods are still bound to it
 * (pp_sched_remove_node refuses it, -EBUSY): kept for its pods' resources, but no pod is placed
 * there and it is counted nowhere — not in the N of "0/N nodes are available", as kube's
 * snapshot keeps only nodes whose Node exists. pp_sched_update_node (the Node back) clears it.
 * -ENOENT unknown node. */
PP_EXPORT int pp_sched_set_node_absent(pp_sched *s, const char *name, bool absent);
PP_EXPORT int pp_sched_add_pod(pp_sched *s, const pp_pod_spec *pod, pp_err *err);
PP_EXPORT int pp_sched_update_pod(pp_sched *s, const pp_pod_spec *pod, pp_err *err);
PP_EXPORT int pp_sched_remove_pod(pp_sched *s, const char *namespace_, const char *name, pp_err *err);
/*
 * The pod's state as given, its spec as it is (pp_pod_state): what a live scheduler applies when
 * its own write fails or when the API server's view overrides the one it had assumed. Queue moves
 * as pp_sched_update_pod; a pod that was bound and is pending again (its binding refused) goes to
 * backoffQ, as after a failed attempt. -ENOENT unknown pod or node.
 */
PP_EXPORT int pp_sched_set_pod_state(pp_sched *s, const char *namespace_, const char *name,
                                     const pp_pod_state *state, pp_err *err);
PP_EXPORT int pp_sched_add_pdb(pp_sched *s, const pp_pdb_spec *pdb, pp_err *err);
PP_EXPORT int pp_sched_update_pdb(pp_sched *s, const pp_pdb_spec *pdb, pp_err *err);
PP_EXPORT int pp_sched_remove_pdb(pp_sched *s, const char *namespace_, const char *name, pp_err *err);
/*
 * pp_cluster_set_pdb_policy(), pp_cluster_set_pod_protected() and
 * pp_cluster_set_pdb_disruptions_allowed() as scheduler events. Under the strict policy a budget
 * decides whether preemption can help, so a budget added, updated, removed or observed, a
 * protection lifted or the policy changed move the pods whose preemption failed (prefer: a
 * budget only steers the choice, nothing moves; a pod that may not preempt, or whose victims are
 * still terminating, has nothing to gain either).
 */
PP_EXPORT int pp_sched_set_pdb_policy(pp_sched *s, pp_pdb_policy policy);
PP_EXPORT int pp_sched_set_pod_protected(pp_sched *s, const char *namespace_, const char *name, bool protected_,
                                         pp_err *err);
PP_EXPORT int pp_sched_set_pdb_disruptions_allowed(pp_sched *s, const char *namespace_, const char *name,
                                                   int32_t disruptions_allowed, pp_err *err);

/*
 * Moves the clock to now_ns (-EINVAL if earlier than pp_sched_now()): victims whose grace period
 * has ended are removed (victim-gone events, then the pods they blocked move), and backoffQ pods
 * whose backoff has expired and unschedulable pods older than max_unschedulable go to activeQ.
 */
PP_EXPORT int pp_sched_advance(pp_sched *s, int64_t now_ns, pp_err *err);

/* One scheduling cycle at pp_sched_now(): pops the head of activeQ and binds, nominates or
 * parks it, emitting the events. Returns 1 when a pod was tried, 0 when activeQ is empty. */
PP_EXPORT int pp_sched_schedule_one(pp_sched *s, pp_err *err);

/*
 * When something becomes due without outside events: the end of a victim's grace period, of a
 * backoff, of a nomination or of a postponement (INT64_MAX: nothing). The 5-minute flush of unschedulable pods is not counted: it
 * retries pods whose situation has not changed, so a simulation is idle without it.
 */
PP_EXPORT int64_t pp_sched_next_wakeup(const pp_sched *s);

/*
 * When the oldest unschedulable pod is due for the periodic flush back to activeQ
 * (max_unschedulable after its last attempt; INT64_MAX: none). A live scheduler arms a timer for
 * it (kube-scheduler flushes every 30 s); pp_sched_advance() past it does the flush.
 */
PP_EXPORT int64_t pp_sched_next_flush(const pp_sched *s);

/*
 * Simulates until idle: cycles while activeQ has pods, then advances to pp_sched_next_wakeup(),
 * until nothing is due or the next wakeup is after until_ns (INT64_MAX: no limit).
 * Returns 1 when it stopped idle, 0 when it stopped at until_ns.
 */
PP_EXPORT int pp_sched_run(pp_sched *s, int64_t until_ns, pp_err *err);

typedef struct pp_sched_stats {
	size_t active, backoff, unschedulable; /* queued pods */
	size_t terminating;                    /* victims waiting for their grace period */
	uint64_t cycles, binds, preemptions, unschedulable_attempts;
} pp_sched_stats;

PP_EXPORT void pp_sched_get_stats(const pp_sched *s, pp_sched_stats *ret);

/*
 * kube-scheduler's scheduler_queue_incoming_pods_total{queue, event}: how many times a pod
 * entered one of the three queues, by the event that moved it, with kube's labels
 * (pp_sched_queue_name, pp_sched_queue_event_name). A pod the scheduler pops and tries again is
 * counted each time it comes back, as kube counts it.
 */
typedef enum pp_sched_queue {
	PP_SCHED_QUEUE_ACTIVE = 0,        /* "active" */
	PP_SCHED_QUEUE_BACKOFF = 1,       /* "backoff" */
	PP_SCHED_QUEUE_UNSCHEDULABLE = 2, /* "unschedulable" */
	PP_SCHED_QUEUE_COUNT
} pp_sched_queue;

typedef enum pp_sched_queue_event {
	PP_SCHED_QE_POD_ADD = 0,                /* "PodAdd": a new pending pod */
	PP_SCHED_QE_SCHEDULE_ATTEMPT_FAILURE,   /* "ScheduleAttemptFailure": back after a failed attempt */
	PP_SCHED_QE_BACKOFF_COMPLETE,           /* "BackoffComplete": backoffQ to activeQ */
	PP_SCHED_QE_UNSCHEDULABLE_TIMEOUT,      /* "UnschedulableTimeout": the periodic flush */
	PP_SCHED_QE_FORCE_ACTIVATE,             /* "ForceActivate": kube's Activate */
	PP_SCHED_QE_UNSCHEDULABLE_POD_UPDATE,   /* "UnschedulablePodUpdate": a queued pod's spec changed */
	PP_SCHED_QE_UNSCHEDULABLE_POD_DELETE,   /* "UnschedulablePodDelete": a nominated pod went */
	PP_SCHED_QE_ASSIGNED_POD_ADD,           /* "AssignedPodAdd": a pod bound */
	PP_SCHED_QE_ASSIGNED_POD_UPDATE,        /* "AssignedPodUpdate" */
	PP_SCHED_QE_ASSIGNED_POD_DELETE,        /* "AssignedPodDelete": a bound pod (or victim) went */
	PP_SCHED_QE_NODE_ADD,                   /* "NodeAdd" */
	PP_SCHED_QE_NODE_UPDATE,                /* "NodeUpdate": kube names the change, libpreempt does not */
	PP_SCHED_QE_NOMINATION_CLEARED,         /* "NominationCleared" (libpreempt only): a nomination dropped */
	PP_SCHED_QE_DISRUPTION_BUDGET_CHANGE,   /* "DisruptionBudgetChange" (libpreempt only): PDBs, strict policy */
	PP_SCHED_QE_COUNT
} pp_sched_queue_event;

/* The labels above; NULL out of range. */
PP_EXPORT const char *pp_sched_queue_name(pp_sched_queue queue);
PP_EXPORT const char *pp_sched_queue_event_name(pp_sched_queue_event event);
/* The count since pp_sched_new (0 out of range). */
PP_EXPORT uint64_t pp_sched_incoming_pods(const pp_sched *s, pp_sched_queue queue, pp_sched_queue_event event);

/* ---------------------------------------------------------------------------------------------
 * ResourceQuotas and the ResourceQuota admission plugin
 *
 * What kube-apiserver decides when a pod is created in a namespace with ResourceQuotas
 * (apiserver/pkg/admission/plugin/resourcequota and the pod evaluator of
 * pkg/quota/v1/evaluator/core): which quotas match the pod (spec.scopes, spec.scopeSelector:
 * PriorityClass, BestEffort, NotBestEffort, Terminating, NotTerminating,
 * CrossNamespacePodAffinity), what the pod uses (pods, count/pods, cpu, memory,
 * ephemeral-storage, requests.*, limits.*, hugepages-*, requests.<extended>), and the refusal,
 * with the API server's own message, when a quota would be exceeded or when the plugin's
 * configuration (limitedResources: matchScopes, matchContains) limits something that no quota of
 * the namespace covers.
 *
 * Where Kubernetes leaves the order to chance (the quotas of a namespace come from a cache), the
 * quotas of a namespace are considered in name order: with several refusing quotas, the message
 * names the first by name.
 * ------------------------------------------------------------------------------------------- */

typedef struct pp_quotas pp_quotas;

/* One ScopedResourceSelectorRequirement. */
typedef struct pp_scope_requirement {
	const char *scope_name; /* "PriorityClass", "BestEffort", "NotBestEffort", "Terminating",
	                         * "NotTerminating", "CrossNamespacePodAffinity" (or the PVC-only
	                         * "VolumeAttributesClass", which matches no pod) */
	const char *operator_;  /* "In", "NotIn", "Exists", "DoesNotExist"; NULL = "" */
	const char *const *values;
	size_t n_values;
} pp_scope_requirement;

typedef struct pp_quota_spec {
	const char *namespace_;
	const char *name;
	const pp_quantity_kv *hard; /* spec.hard */
	size_t n_hard;
	const char *const *scopes; /* spec.scopes */
	size_t n_scopes;
	const pp_scope_requirement *scope_selector; /* spec.scopeSelector.matchExpressions */
	size_t n_scope_selector;
	/* status, as the quota controller wrote it (status.hard present). Without it (a manifest, a
	 * quota not synced yet) the library plays the controller: status.hard is spec.hard and
	 * status.used is counted from the pods given to pp_quotas_count_pod(). */
	bool has_status;
	const pp_quantity_kv *status_hard;
	size_t n_status_hard;
	const pp_quantity_kv *status_used;
	size_t n_status_used;
} pp_quota_spec;

PP_EXPORT int pp_quotas_new(pp_quotas **ret);
PP_EXPORT pp_quotas *pp_quotas_free(pp_quotas *q);

/* Adds a quota, validated as the API server validates one (ValidateResourceQuota: resource names,
 * non-negative and, where required, integer quantities, scopes valid for the resources, no
 * conflicting scopes, scope selector operators and values). -EINVAL (err names the field, e.g.
 * "spec.scopeSelector.matchExpressions[0].values: ..."), -EEXIST duplicate namespace/name. */
PP_EXPORT int pp_quotas_add(pp_quotas *q, const pp_quota_spec *spec, pp_err *err);

/* One limitedResources entry of the plugin's configuration (apiserver.config.k8s.io/v1
 * ResourceQuotaConfiguration), added in configuration order. */
typedef struct pp_limited_resource {
	const char *api_group; /* NULL or "": the core group */
	const char *resource;  /* e.g. "pods" (required) */
	const char *const *match_contains;
	size_t n_match_contains;
	const pp_scope_requirement *match_scopes;
	size_t n_match_scopes;
} pp_limited_resource;

/* -EINVAL when the entry has no resource, or a match scope that kube-apiserver cannot evaluate
 * (an unknown scope name, an operator other than Exists on a scope without values, In/NotIn
 * without values...): kube-apiserver accepts those and then silently never matches (or, for an
 * invalid PriorityClass operator, admits every pod); a configuration meant to restrict must not
 * be read that way. err names the field as "limitedResources[N].matchScopes[M]...". */
PP_EXPORT int pp_quotas_add_limited_resource(pp_quotas *q, const pp_limited_resource *lr, pp_err *err);

/* A container's resources as the API server stores them: limits already copied into the
 * requests they lack (SetDefaults_Pod). */
typedef struct pp_container_resources {
	pp_container_kind kind;
	const char *name;
	const pp_quantity_kv *requests;
	size_t n_requests;
	const pp_quantity_kv *limits;
	size_t n_limits;
} pp_container_resources;

typedef struct pp_quota_pod {
	const char *namespace_;
	const char *name;
	/* spec.priorityClassName after Priority admission (the globalDefault's name for a pod that
	 * names none); NULL or "": none */
	const char *priority_class_name;
	/* spec.containers and spec.initContainers (sidecars as PP_SIDECAR), each in spec order */
	const pp_container_resources *containers;
	size_t n_containers;
	const pp_quantity_kv *pod_requests; /* spec.resources (pod-level resources) */
	size_t n_pod_requests;
	const pp_quantity_kv *pod_limits;
	size_t n_pod_limits;
	const pp_quantity_kv *overhead; /* spec.overhead */
	size_t n_overhead;
	const char *qos_class; /* status.qosClass; NULL: computed from the resources */
	bool has_active_deadline; /* spec.activeDeadlineSeconds: Terminating when >= 0 */
	int64_t active_deadline_s;
	bool cross_namespace_affinity; /* a pod (anti-)affinity term naming namespaces or a selector */
	/* Existing pods only (pp_quotas_count_pod): */
	bool terminal; /* status.phase Succeeded or Failed: counts in count/pods only */
	bool has_deletion_grace; /* metadata.deletionTimestamp with deletionGracePeriodSeconds */
	int64_t deletion_time_ns;
	int64_t deletion_grace_s;
} pp_quota_pod;

/*
 * Counts a pod that exists already into the quotas of its namespace that have no status, as the
 * quota controller does: the quotas whose scopes all match it, terminal pods and pods stuck
 * terminating past their grace period (at now_ns) in count/pods only. Call it for every existing
 * pod before admitting new ones. -EINVAL bad quantities (checked only when a quota of the pod's
 * namespace counts pods).
 */
PP_EXPORT int pp_quotas_count_pod(pp_quotas *q, const pp_quota_pod *pod, int64_t now_ns, pp_err *err);

typedef enum pp_refusal {
	PP_REFUSAL_NONE = 0,                /* admitted */
	PP_REFUSAL_EXCEEDED = 1,            /* "exceeded quota: NAME, requested: ..., used: ..., limited: ..." */
	PP_REFUSAL_UNCOVERED_SCOPES = 2,    /* "insufficient quota to match these scopes: [...]" */
	PP_REFUSAL_UNCOVERED_RESOURCES = 3, /* "insufficient quota to consume: ..." */
	PP_REFUSAL_CONSTRAINTS = 4,         /* "failed quota: NAME: must specify ..." */
	PP_REFUSAL_STATUS_UNKNOWN = 5,      /* "status unknown for quota: NAME, resources: ..." */
} pp_refusal;

typedef struct pp_admission pp_admission;

/* Admission without charging the quotas (the request's dryRun). */
#define PP_ADMIT_DRY_RUN 0x1u
/* Only the checks that do not depend on usage (limitedResources coverage), for a pod that exists
 * already: "would it be refused if it were created again (by its ReplicaSet, DaemonSet...)?".
 * Implies PP_ADMIT_DRY_RUN. */
#define PP_ADMIT_COVERAGE_ONLY 0x2u

/*
 * The ResourceQuota admission plugin on the creation of pod (CheckRequest for a Create):
 * *ret tells admitted or refused and why. Admitted, the matching quotas are charged (their used
 * grows by the pod's usage) unless flags has PP_ADMIT_DRY_RUN. The pod's terminal/deletion
 * fields are ignored: a pod being created is neither. -EINVAL bad quantities (checked only where
 * a quota or the configuration has something to check), -ENOMEM.
 */
PP_EXPORT int pp_quotas_admit(pp_quotas *q, const pp_quota_pod *pod, unsigned flags, pp_admission **ret,
                              pp_err *err);
PP_EXPORT pp_admission *pp_admission_free(pp_admission *a);
PP_EXPORT pp_refusal pp_admission_refusal(const pp_admission *a);
/* The API server's Status message, byte for byte ("pods \"web\" is forbidden: exceeded quota:
 * ..." or "insufficient quota to match these scopes: [{PriorityClass In [a]}]"); "" admitted. */
PP_EXPORT const char *pp_admission_message(const pp_admission *a);
/* The HTTP status of the refusal: 403 (Forbidden), or 500 for the scope refusal, which the plugin
 * returns as a plain error; 0 when admitted. */
PP_EXPORT int pp_admission_http_status(const pp_admission *a);
/* The quota the message names (exceeded, constraints, status unknown), else NULL. */
PP_EXPORT const char *pp_admission_quota(const pp_admission *a);

/* The quotas, by namespace then name; i < pp_quotas_count(). Strings live until the next call
 * on q. */
typedef struct pp_quota_info {
	const char *namespace_;
	const char *name;
	bool computed;        /* the input had no status: used was counted from the pods */
	const char *hard;     /* status.hard as the API server prints a ResourceList: "pods=10,requests.cpu=4" */
	const char *used;     /* status.used, the same way (what admitted pods added included) */
	const char *exceeded; /* the resources whose usage is above hard, "pods,requests.cpu"; "" none */
} pp_quota_info;

PP_EXPORT size_t pp_quotas_count(const pp_quotas *q);
PP_EXPORT int pp_quotas_info(pp_quotas *q, size_t i, pp_quota_info *ret);

#ifdef __cplusplus
}
#endif
#endif
