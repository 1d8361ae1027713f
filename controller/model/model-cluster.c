/* SPDX-License-Identifier: MIT */
/*
 * The live model's bookkeeping (model-cluster.h): every watch event applied in place to the queue's
 * pp_sched, and this scheduler's writes laid over the API's view until the API shows them.
 * Over ~700 lines on purpose: a pod's API view, its place in the library's model and our pending
 * writes (assumed binding, nomination, deletion, condition) are one record (struct mpod) that the
 * watch side and the write side both change; split between files, each half would reach into the
 * other's fields and the rule "the API's view wins once it shows our write" would live in two
 * places. Conversion of objects is convert.c, budgets budget.c, the maps objmap.c.
 */
#include "model-cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "karena.h"
#include "budget.h"
#include "convert.h"
#include "objmap.h"
#include "grow.h"

#define DEFAULT_SCHEDULER "default-scheduler"

/* A pod as the model follows it: the API's view of its state, and this scheduler's decisions
 * laid over it until the API shows them. */
struct mpod {
	char *ns, *name; /* name points into ns's allocation */
	char *uid;
	uint64_t rv;  /* numeric metadata.resourceVersion, 0 when it is not a number */
	unsigned gen; /* relist generation last seen in */
	bool ours;    /* spec.schedulerName is ours */
	bool in_lib;  /* in the scheduler's model (bound pods, our pending pods) */
	bool gated;   /* our pending pod with schedulingGates */
	bool held;    /* our binding was refused (409): out of the queue until the API says more */
	uint64_t held_rv;
	/* the API's view of the pod's state */
	char *api_node, *api_nominated;
	bool has_start, terminating, preempted, not_ready;
	bool preempted_by_us; /* the preemption condition names this scheduler */
	int64_t start_ns, deletion_ns;
	int64_t deleted_ns; /* when the DELETE came: deletionTimestamp - deletionGracePeriodSeconds */
	char *condition; /* PodScheduled=False message as the API (or our write) has it */
	/* decisions of ours the API does not show yet */
	char *assumed_node;
	bool nom_set;
	char *nom_node; /* NULL: cleared */
	uint64_t nom_rv; /* the resourceVersion our nomination write returned */
	bool deleting;
	int64_t deleting_ns;
};

struct mobj { /* a node, PDB or class: what a relist needs */
	unsigned gen;
	bool placeholder; /* nodes: known only from a pod bound to it */
	bool deleted;     /* nodes: deleted with pods still bound (they keep their resources) */
};

struct cluster {
	queue *q;
	pp_sched *s;
	char *scheduler;
	pp_pcset *classes;
	objmap pods, nodes, pdbs, class_gens;
	objmap refused; /* "KIND/NS/NAME" refused since last accepted */
	unsigned gen[CLUSTER_KINDS];
	karena scratch;
	uint64_t n_refused;
	cluster_observer observer;
	bool strict;              /* --pdb strict */
	budget_memory *budgets;   /* what refused evictions taught (budget.c) */
	/* Placeholder and deleted nodes: kept only while a pod is bound or nominated to them. The
	 * scheduler's cycle ends nominations itself (a binding, a preemption elsewhere), with no API
	 * event naming the node left, so after each change they are tried again (few: a sweep). */
	char **lingering;
	size_t n_lingering, lingering_cap;
};

const char *cluster_kind_name(cluster_kind k)
{
	static const char *const names[] = { "priorityclasses", "nodes", "poddisruptionbudgets", "pods" };
	return (unsigned)k < CLUSTER_KINDS ? names[k] : "objects";
}

/* --- small helpers ----------------------------------------------------------------------------- */

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Replaces *dst with a copy of s (NULL or "" → NULL). 0 or -ENOMEM. */
static int set_str(char **dst, const char *s)
{
	char *n = NULL;

	if (s && *s && !(n = strdup(s)))
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

static uint64_t rv_number(const char *s)
{
	uint64_t v = 0;

	if (!s || !*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	return v;
}

static void pod_key(char *buf, size_t size, const char *ns, const char *name)
{
	snprintf(buf, size, "%s/%s", ns ? ns : "", name);
}

static void mpod_free(struct mpod *m)
{
	if (!m)
		return;
	free(m->ns);
	free(m->uid);
	free(m->api_node);
	free(m->api_nominated);
	free(m->condition);
	free(m->assumed_node);
	free(m->nom_node);
	free(m);
}

static struct mpod *find_pod(const cluster *c, const char *ns, const char *name)
{
	char key[K8S_LABEL_MAX];

	pod_key(key, sizeof(key), ns, name);
	return objmap_get(&c->pods, key);
}

/* --- refusals ---------------------------------------------------------------------------------- */

static void refusal_key(char *buf, size_t size, cluster_kind k, const char *ns, const char *name)
{
	snprintf(buf, size, "%s/%s%s%s", cluster_kind_name(k), ns ? ns : "", ns ? "/" : "", name);
}

bool cluster_first_refusal(cluster *c, cluster_kind k, const char *ns, const char *name)
{
	char key[K8S_LABEL_MAX + 32];

	c->n_refused++;
	refusal_key(key, sizeof(key), k, ns, name);
	if (objmap_get(&c->refused, key))
		return false;
	/* the value only marks presence; out of memory merely means it is told again */
	(void)objmap_put(&c->refused, key, c);
	return true;
}

static void accepted(cluster *c, cluster_kind k, const char *ns, const char *name)
{
	char key[K8S_LABEL_MAX + 32];

	if (!objmap_count(&c->refused))
		return;
	refusal_key(key, sizeof(key), k, ns, name);
	(void)objmap_remove(&c->refused, key);
}

/* Formats the library's message for the log: "KIND/NS/NAME: what" (it names the object itself
 * most of the time; then once is enough). */
static int refuse(char *err, size_t err_size, const char *label, const char *msg, int r)
{
	size_t n = strlen(label);

	if (strncmp(msg, label, n) == 0 && msg[n] == ':')
		snprintf(err, err_size, "%s", msg);
	else
		snprintf(err, err_size, "%s: %s", label, msg);
	return r == -ENOMEM ? r : -EINVAL;
}

/* --- creation ---------------------------------------------------------------------------------- */

int cluster_new(queue *q, const cluster_opts *o, cluster **ret)
{
	cluster *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->q = q;
	c->s = queue_sched(q);
	c->scheduler = strdup(o && o->scheduler_name ? o->scheduler_name : "preemptd");
	if (!c->scheduler) {
		free(c);
		return -ENOMEM;
	}
	r = pp_pcset_new(&c->classes);
	if (r >= 0)
		r = budget_memory_new(&c->budgets);
	if (r >= 0)
		r = pp_sched_set_pdb_policy(c->s, o ? o->pdb_policy : PP_PDB_PREFER);
	if (r < 0) {
		cluster_free(c);
		return r;
	}
	c->strict = o && o->pdb_policy == PP_PDB_STRICT;
	*ret = c;
	return 0;
}

int cluster_eviction_refused(cluster *c, const char *ns, const char *name, const char *pdb, cluster_refusal *ret)
{
	return budget_memory_refused(c->budgets, c->s, ns, name, pdb, ret);
}

int cluster_pod_budget(const cluster *c, const char *ns, const char *name, int32_t *ret_allowed, const char **ret_pdb)
{
	return budget_tightest(pp_sched_cluster(c->s), ns, name, ret_allowed, ret_pdb);
}

static void free_pod_value(const char *key, void *value, void *userdata)
{
	(void)key;
	(void)userdata;
	mpod_free(value);
}

static void free_value(const char *key, void *value, void *userdata)
{
	(void)key;
	(void)userdata;
	free(value);
}

cluster *cluster_free(cluster *c)
{
	if (!c)
		return NULL;
	objmap_foreach(&c->pods, free_pod_value, NULL);
	objmap_foreach(&c->nodes, free_value, NULL);
	objmap_foreach(&c->pdbs, free_value, NULL);
	objmap_foreach(&c->class_gens, free_value, NULL);
	objmap_done(&c->pods);
	objmap_done(&c->nodes);
	objmap_done(&c->pdbs);
	objmap_done(&c->class_gens);
	objmap_done(&c->refused);
	for (size_t i = 0; i < c->n_lingering; i++)
		free(c->lingering[i]);
	free(c->lingering);
	pp_pcset_free(c->classes);
	budget_memory_free(c->budgets);
	karena_free(&c->scratch);
	free(c->scheduler);
	free(c);
	return NULL;
}

/* The object record of a node, PDB or class, created on first sight. */
static struct mobj *mobj_get(objmap *m, const char *key, bool create)
{
	struct mobj *o = objmap_get(m, key);

	if (o || !create)
		return o;
	o = calloc(1, sizeof(*o));
	if (o && objmap_put(m, key, o) < 0) {
		free(o);
		return NULL;
	}
	return o;
}

/* --- PriorityClasses --------------------------------------------------------------------------- */

int cluster_put_class(cluster *c, const struct k8s_priority_class *pc, char *err, size_t err_size)
{
	char label[K8S_LABEL_MAX];
	pp_preemption_policy policy = PP_PREEMPT_LOWER_PRIORITY;
	pp_err perr = { "" };
	int r = 0;

	snprintf(label, sizeof(label), "priorityclasses/%s", pc->name);
	if (pc->preemption_policy && (r = pp_preemption_policy_parse(pc->preemption_policy, &policy, &perr)) < 0)
		return refuse(err, err_size, label, perr.msg, r);
	if (pp_pcset_find(c->classes, pc->name))
		r = pp_pcset_update(c->classes, pc->name, pc->value, pc->global_default, policy, pc->description, &perr);
	else
		r = pp_pcset_add_existing(c->classes, pc->name, pc->value, pc->global_default, policy, pc->description,
		                          &perr);
	if (r < 0)
		return refuse(err, err_size, label, perr.msg, r);
	struct mobj *o = mobj_get(&c->class_gens, pc->name, true);
	if (!o)
		return -ENOMEM;
	o->gen = c->gen[CLUSTER_CLASSES];
	accepted(c, CLUSTER_CLASSES, NULL, pc->name);
	return 0;
}

/* --- nodes ------------------------------------------------------------------------------------- */

static int linger(cluster *c, const char *name)
{
	char *copy = strdup(name);

	if (!copy || grow_array((void **)&c->lingering, &c->lingering_cap, c->n_lingering + 1, sizeof(*c->lingering)) < 0) {
		free(copy);
		return -ENOMEM;
	}
	c->lingering[c->n_lingering++] = copy;
	return 0;
}

static void stop_lingering(cluster *c, const char *name)
{
	for (size_t i = 0; i < c->n_lingering; i++)
		if (!strcmp(c->lingering[i], name)) {
			free(c->lingering[i]);
			c->lingering[i] = c->lingering[--c->n_lingering];
			return;
		}
}

/* A node the model must have for a pod bound to it, until the real one is seen: it admits no
 * pod (no allocatable), so nothing is scheduled onto what is not known. */
static int add_placeholder(cluster *c, const char *name)
{
	pp_node_spec spec = { .name = name, .unschedulable = true };
	struct mobj *o = mobj_get(&c->nodes, name, true);
	int r;

	if (!o)
		return -ENOMEM;
	r = pp_sched_add_node(c->s, &spec, NULL);
	if (r < 0 && r != -EEXIST) {
		free(objmap_remove(&c->nodes, name));
		return r;
	}
	if (linger(c, name) < 0) {
		if (r >= 0)
			(void)pp_sched_remove_node(c->s, name, NULL);
		free(objmap_remove(&c->nodes, name));
		return -ENOMEM;
	}
	/* no Node object: out of kube's snapshot, so out of every count */
	(void)pp_sched_set_node_absent(c->s, name, true);
	o->placeholder = true;
	o->gen = c->gen[CLUSTER_NODES];
	return 0;
}

/* A placeholder or deleted node goes once no pod is bound to it any more. */
static void drop_node_if_empty(cluster *c, const char *name)
{
	struct mobj *o = name ? objmap_get(&c->nodes, name) : NULL;

	if (o && (o->placeholder || o->deleted) && pp_sched_remove_node(c->s, name, NULL) >= 0) {
		free(objmap_remove(&c->nodes, name));
		stop_lingering(c, name); /* last: name may be the list's own copy */
	}
}

/* Every placeholder or deleted node nothing holds any more goes (the scheduler's cycle may have
 * ended the last nomination to it). */
static void drop_unused_nodes(cluster *c)
{
	for (size_t i = c->n_lingering; i-- > 0;)
		if (i < c->n_lingering)
			drop_node_if_empty(c, c->lingering[i]);
}

int cluster_put_node(cluster *c, const struct k8s_node *n, char *err, size_t err_size)
{
	char label[K8S_LABEL_MAX];
	pp_node_spec spec;
	pp_err perr = { "" };
	struct mobj *o = objmap_get(&c->nodes, n->name);
	int r;

	snprintf(label, sizeof(label), "nodes/%s", n->name);
	r = conv_node(&c->scratch, n, &spec);
	if (r >= 0)
		r = o ? pp_sched_update_node(c->s, &spec, &perr) : pp_sched_add_node(c->s, &spec, &perr);
	karena_reset(&c->scratch);
	if (r < 0)
		return refuse(err, err_size, label, perr.msg[0] ? perr.msg : strerror(-r), r);
	if (!o && !(o = mobj_get(&c->nodes, n->name, true))) {
		(void)pp_sched_remove_node(c->s, n->name, NULL);
		return -ENOMEM;
	}
	if (o->placeholder || o->deleted)
		stop_lingering(c, n->name);
	o->placeholder = o->deleted = false;
	o->gen = c->gen[CLUSTER_NODES];
	accepted(c, CLUSTER_NODES, NULL, n->name);
	return 0;
}

static void delete_node(cluster *c, const char *name)
{
	struct mobj *o = objmap_get(&c->nodes, name);

	if (!o)
		return;
	accepted(c, CLUSTER_NODES, NULL, name);
	if (pp_sched_remove_node(c->s, name, NULL) >= 0) {
		free(objmap_remove(&c->nodes, name));
		return;
	}
	/* Pods are still bound to it (the garbage collector deletes them later): they keep their
	 * resources, and nothing more goes there. */
	pp_node_spec gone = { .name = name, .unschedulable = true };
	(void)pp_sched_update_node(c->s, &gone, NULL);
	/* kube's snapshot keeps only nodes whose Node exists: not in "0/N nodes are available" */
	(void)pp_sched_set_node_absent(c->s, name, true);
	/* out of memory, it is only tried again when one of its own pods leaves */
	if (!o->deleted && !o->placeholder)
		(void)linger(c, name);
	o->deleted = true;
}

/* --- PDBs -------------------------------------------------------------------------------------- */

int cluster_put_pdb(cluster *c, const struct k8s_pdb *p, char *err, size_t err_size)
{
	char key[K8S_LABEL_MAX], label[K8S_LABEL_MAX + 32];
	pp_pdb_spec spec;
	pp_err perr = { "" };
	struct mobj *o;
	int r;

	pod_key(key, sizeof(key), p->namespace_, p->name);
	snprintf(label, sizeof(label), "poddisruptionbudgets/%s", key);
	bool known = objmap_get(&c->pdbs, key) != NULL;
	o = mobj_get(&c->pdbs, key, true);
	if (!o)
		return -ENOMEM;
	budget_memory_pdb_changed(c->budgets, c->s, p->namespace_);
	r = conv_pdb(&c->scratch, p, &spec);
	/* a budget's status (disruptionsAllowed) changes all the time: updated in place */
	if (r >= 0)
		r = known ? pp_sched_update_pdb(c->s, &spec, &perr) : pp_sched_add_pdb(c->s, &spec, &perr);
	karena_reset(&c->scratch);
	if (r < 0) {
		/* refused: the model keeps no version of it (as a replaced budget was dropped before) */
		(void)pp_sched_remove_pdb(c->s, p->namespace_, p->name, NULL);
		free(objmap_remove(&c->pdbs, key));
		return refuse(err, err_size, label, perr.msg[0] ? perr.msg : strerror(-r), r);
	}
	o->gen = c->gen[CLUSTER_PDBS];
	accepted(c, CLUSTER_PDBS, p->namespace_, p->name);
	return 0;
}

/* --- pods -------------------------------------------------------------------------------------- */

/* The state the scheduler's model gets: the API's, with this scheduler's decisions over it. */
static void effective_state(const struct mpod *m, pp_pod_state *st)
{
	const char *node = m->api_node ? m->api_node : m->assumed_node;

	*st = (pp_pod_state){
		.node_name = node,
		.nominated_node_name = node ? NULL : m->nom_set ? m->nom_node : m->api_nominated,
		.has_start_time = m->has_start,
		.start_time_ns = m->start_ns,
		.terminating = m->terminating || m->deleting,
		.deletion_time_ns = m->terminating ? m->deletion_ns : m->deleting_ns,
		.preempted_by_scheduler = m->preempted || m->deleting,
		.not_ready = m->not_ready,
	};
}

/* Whether the pod belongs in the scheduler's model now. */
static bool wants_lib(const struct mpod *m)
{
	if (m->api_node || m->assumed_node)
		return true;
	return m->ours && !m->gated && !m->held;
}

/* The node the scheduler's model has the pod nominated to (a copy), NULL when none. */
static char *lib_nomination(cluster *c, const struct mpod *m)
{
	pp_pod_info pi;

	if (!m->in_lib || pp_cluster_pod_info(queue_cluster(c->q), m->ns, m->name, &pi) < 0 || !pi.nominated_node_name)
		return NULL;
	return strdup(pi.nominated_node_name);
}

/* The library keeps a node while a pod is nominated to it: a deleted or placeholder node goes
 * when its last nominated pod moves away too, not only its last bound one. Frees old. */
static void drop_old_nomination(cluster *c, const struct mpod *m, char *old)
{
	pp_pod_info pi;

	if (old && (!m || pp_cluster_pod_info(queue_cluster(c->q), m->ns, m->name, &pi) < 0 ||
	            !str_eq(pi.nominated_node_name, old)))
		drop_node_if_empty(c, old);
	free(old);
}

static void lib_remove(cluster *c, struct mpod *m)
{
	if (!m->in_lib)
		return;
	char *nominated = lib_nomination(c, m);
	(void)pp_sched_remove_pod(c->s, m->ns, m->name, NULL);
	m->in_lib = false;
	drop_node_if_empty(c, m->api_node ? m->api_node : m->assumed_node);
	drop_old_nomination(c, NULL, nominated);
}

/* Puts the effective state into the scheduler's model (after an assumption changed). */
static void restate(cluster *c, struct mpod *m)
{
	pp_pod_state st;

	if (!m->in_lib)
		return;
	if (!wants_lib(m)) {
		lib_remove(c, m);
		return;
	}
	effective_state(m, &st);
	if (st.nominated_node_name && !objmap_get(&c->nodes, st.nominated_node_name))
		st.nominated_node_name = NULL;
	char *nominated = lib_nomination(c, m);
	(void)pp_sched_set_pod_state(c->s, m->ns, m->name, &st, NULL);
	drop_old_nomination(c, m, nominated);
}

void cluster_set_observer(cluster *c, const cluster_observer *o)
{
	c->observer = o ? *o : (cluster_observer){ 0 };
}

static void api_view(const struct mpod *m, cluster_pod_before *b)
{
	*b = (cluster_pod_before){ .uid = m->uid, .node = m->api_node, .nominated = m->api_nominated,
		                   .condition = m->condition, .terminating = m->terminating, .preempted = m->preempted };
}

static void delete_pod(cluster *c, struct mpod *m)
{
	char key[K8S_LABEL_MAX];

	if (c->observer.pod_leaving) {
		cluster_pod_before b;
		api_view(m, &b);
		c->observer.pod_leaving(c->observer.userdata, m->ns, m->name, &b);
	}
	pod_key(key, sizeof(key), m->ns, m->name);
	accepted(c, CLUSTER_PODS, m->ns, m->name);
	lib_remove(c, m);
	budget_memory_forget(c->budgets, m->ns, m->name);
	objmap_remove(&c->pods, key);
	mpod_free(m);
}

/* spec.priority as admitted; a pod without it (a manifest, an old API) through the classes. */
static int admit(cluster *c, const struct k8s_pod *p, int32_t *prio, pp_preemption_policy *policy, pp_err *err)
{
	pp_preemption_policy spec_policy = PP_PREEMPT_LOWER_PRIORITY;
	int r;

	if (p->preemption_policy && (r = pp_preemption_policy_parse(p->preemption_policy, &spec_policy, err)) < 0)
		return r;
	if (p->has_priority) {
		*prio = p->priority;
		*policy = spec_policy;
		return 0;
	}
	return pp_pcset_admit(c->classes, p->priority_class_name, NULL, p->preemption_policy ? &spec_policy : NULL,
	                      prio, policy, NULL, err);
}

/* "SCHEDULER: preempting to accommodate a higher priority pod", as kube-scheduler and we write it */
static bool preempted_by(const char *message, const char *scheduler)
{
	size_t n = strlen(scheduler);

	return message && !strncmp(message, scheduler, n) && message[n] == ':';
}

/* Takes the API's view of the pod's state; drops the assumptions it now shows (or overrides).
 * evictions_preempt: a pod the API server is evicting counts as preempted (--pdb strict: this
 * scheduler's victims carry the eviction's DisruptionTarget, and a preemptor must not preempt
 * again while they terminate — across a restart too). */
static int take_api_state(struct mpod *m, const struct k8s_pod *p, bool evictions_preempt)
{
	uint64_t rv = rv_number(p->resource_version);

	if (set_str(&m->api_node, p->node_name) < 0 || set_str(&m->api_nominated, p->nominated_node_name) < 0)
		return -ENOMEM;
	m->rv = rv;
	m->has_start = p->has_start;
	m->start_ns = p->start_ns;
	m->terminating = p->has_deletion;
	m->deletion_ns = p->deletion_ns;
	m->preempted = p->preempted_by_scheduler || (evictions_preempt && p->evicted_by_api);
	m->deleted_ns = p->deletion_ns - (p->has_deletion_grace ? p->deletion_grace_seconds * 1000000000LL : 0);
	m->not_ready = p->ready_false;
	if (p->scheduled_status && !strcmp(p->scheduled_status, "False")) {
		if (set_str(&m->condition, p->scheduled_message ? p->scheduled_message : "") < 0)
			return -ENOMEM;
	} else if (p->scheduled_status) {
		(void)set_str(&m->condition, NULL);
	}
	if (m->assumed_node && m->api_node)
		(void)set_str(&m->assumed_node, NULL); /* bound, by us or by someone else */
	if (m->nom_set && (str_eq(m->nom_node, m->api_nominated) || m->api_node || (m->nom_rv && rv >= m->nom_rv)))
		m->nom_set = false; /* the API shows our nomination, or what came after it */
	if (m->deleting && m->terminating)
		m->deleting = false;
	if (m->held && (!m->held_rv || rv > m->held_rv))
		m->held = false; /* news about it: its turn again */
	return 0;
}

static int new_mpod(cluster *c, const struct k8s_pod *p, const char *key, struct mpod **ret)
{
	struct mpod *m = calloc(1, sizeof(*m));
	size_t lns = strlen(p->namespace_), lname = strlen(p->name);

	if (!m || !(m->ns = malloc(lns + lname + 2)) || (p->uid && !(m->uid = strdup(p->uid)))) {
		mpod_free(m);
		return -ENOMEM;
	}
	memcpy(m->ns, p->namespace_, lns + 1);
	m->name = m->ns + lns + 1;
	memcpy(m->name, p->name, lname + 1);
	if (objmap_put(&c->pods, key, m) < 0) {
		mpod_free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

int cluster_put_pod(cluster *c, const struct k8s_pod *p, char *err, size_t err_size)
{
	char key[K8S_LABEL_MAX], label[K8S_LABEL_MAX + 8];
	struct mpod *m;
	pp_resource *req = NULL;
	size_t nreq = 0;
	int32_t prio = 0;
	pp_preemption_policy policy = PP_PREEMPT_LOWER_PRIORITY;
	pp_pod_spec spec;
	pp_pod_state st;
	pp_err perr = { "" };
	char *nominated = NULL;
	int r;

	pod_key(key, sizeof(key), p->namespace_, p->name);
	snprintf(label, sizeof(label), "pods/%s", key);
	m = objmap_get(&c->pods, key);
	if (m && p->uid && !str_eq(m->uid, p->uid)) {
		/* the same name, another pod: the old one was deleted while the watch was away */
		delete_pod(c, m);
		m = NULL;
	}
	if (p->phase == K8S_PHASE_SUCCEEDED || p->phase == K8S_PHASE_FAILED) {
		/* finished: no longer on the node (the field selector drops it from the watch too) */
		if (m)
			delete_pod(c, m);
		return 0;
	}
	if ((r = admit(c, p, &prio, &policy, &perr)) < 0 ||
	    (r = k8s_pod_requests(p, &c->scratch, &req, &nreq, &perr)) < 0) {
		karena_reset(&c->scratch);
		return refuse(err, err_size, label, perr.msg, r);
	}
	if (c->observer.pod_changing) {
		cluster_pod_before b;
		if (m)
			api_view(m, &b);
		c->observer.pod_changing(c->observer.userdata, p, m ? &b : NULL);
	}
	if (!m && (r = new_mpod(c, p, key, &m)) < 0) {
		karena_reset(&c->scratch);
		return r;
	}
	m->gen = c->gen[CLUSTER_PODS];
	m->ours = str_eq(p->scheduler_name ? p->scheduler_name : DEFAULT_SCHEDULER, c->scheduler);
	m->gated = p->nscheduling_gates > 0;
	if ((r = take_api_state(m, p, c->strict)) < 0) {
		karena_reset(&c->scratch);
		return r;
	}
	m->preempted_by_us = m->preempted && preempted_by(p->preemption_message, c->scheduler);
	if (!wants_lib(m)) {
		/* another scheduler's pending pod, a gated one, or one held after a refused binding */
		lib_remove(c, m);
		karena_reset(&c->scratch);
		accepted(c, CLUSTER_PODS, p->namespace_, p->name);
		return 0;
	}
	effective_state(m, &st);
	if (st.node_name && !objmap_get(&c->nodes, st.node_name) && (r = add_placeholder(c, st.node_name)) < 0) {
		karena_reset(&c->scratch);
		return r;
	}
	/* a nomination to a node the model does not have is one the scheduler would drop */
	if (st.nominated_node_name && !objmap_get(&c->nodes, st.nominated_node_name))
		st.nominated_node_name = NULL;
	r = conv_pod(&c->scratch, p, prio, policy, req, nreq, st.nominated_node_name, &spec);
	if (r >= 0) {
		spec.node_name = st.node_name;
		spec.terminating = st.terminating;
		spec.deletion_time_ns = st.deletion_time_ns;
		spec.preempted_by_scheduler = st.preempted_by_scheduler;
		nominated = lib_nomination(c, m);
		r = m->in_lib ? pp_sched_update_pod(c->s, &spec, &perr) : pp_sched_add_pod(c->s, &spec, &perr);
	}
	karena_reset(&c->scratch);
	if (r < 0) {
		free(nominated);
		return refuse(err, err_size, label, perr.msg[0] ? perr.msg : strerror(-r), r);
	}
	m->in_lib = true;
	drop_old_nomination(c, m, nominated);
	accepted(c, CLUSTER_PODS, p->namespace_, p->name);
	return 0;
}

void cluster_delete(cluster *c, cluster_kind k, const char *ns, const char *name)
{
	char key[K8S_LABEL_MAX];

	switch (k) {
	case CLUSTER_PODS: {
		struct mpod *m = find_pod(c, ns, name);
		if (m)
			delete_pod(c, m);
		break;
	}
	case CLUSTER_NODES:
		delete_node(c, name);
		break;
	case CLUSTER_PDBS:
		pod_key(key, sizeof(key), ns, name);
		(void)pp_sched_remove_pdb(c->s, ns, name, NULL);
		budget_memory_pdb_changed(c->budgets, c->s, ns);
		free(objmap_remove(&c->pdbs, key));
		accepted(c, k, ns, name);
		break;
	case CLUSTER_CLASSES:
		/* pods keep the priority they were admitted with; the built-in classes stay */
		(void)pp_pcset_remove(c->classes, name, NULL);
		free(objmap_remove(&c->class_gens, name));
		accepted(c, k, NULL, name);
		break;
	default:
		break;
	}
}

/* --- relists ----------------------------------------------------------------------------------- */

void cluster_relist_begin(cluster *c, cluster_kind k)
{
	c->gen[k]++;
}

struct prune {
	cluster *c;
	cluster_kind kind;
	char **keys;
	size_t n, cap;
	bool oom;
};

static void collect_stale(const char *key, void *value, void *userdata)
{
	struct prune *pr = userdata;
	unsigned gen = pr->kind == CLUSTER_PODS ? ((struct mpod *)value)->gen : ((struct mobj *)value)->gen;

	if (gen == pr->c->gen[pr->kind] || pr->oom)
		return;
	if (pr->kind == CLUSTER_NODES && ((struct mobj *)value)->placeholder)
		return; /* it stands for pods, not for a Node object */
	if (GROW_ARRAY(&pr->keys, &pr->cap, pr->n + 1) < 0) {
		pr->oom = true;
		return;
	}
	if (!(pr->keys[pr->n] = strdup(key)))
		pr->oom = true;
	else
		pr->n++;
}

size_t cluster_relist_end(cluster *c, cluster_kind k)
{
	struct prune pr = { .c = c, .kind = k };
	objmap *m = k == CLUSTER_PODS ? &c->pods : k == CLUSTER_NODES ? &c->nodes : k == CLUSTER_PDBS ? &c->pdbs
	                                                                                                 : &c->class_gens;
	objmap_foreach(m, collect_stale, &pr);
	for (size_t i = 0; i < pr.n; i++) {
		char *slash = k == CLUSTER_PODS || k == CLUSTER_PDBS ? strchr(pr.keys[i], '/') : NULL;
		if (slash) {
			*slash = '\0';
			cluster_delete(c, k, pr.keys[i], slash + 1);
		} else {
			cluster_delete(c, k, NULL, pr.keys[i]);
		}
		free(pr.keys[i]);
	}
	free(pr.keys);
	return pr.n;
}

/* --- decisions and writes ---------------------------------------------------------------------- */

const char *cluster_pod_uid(const cluster *c, const char *ns, const char *name)
{
	const struct mpod *m = find_pod(c, ns, name);
	return m ? m->uid : NULL;
}

const char *cluster_pod_condition_message(const cluster *c, const char *ns, const char *name)
{
	const struct mpod *m = find_pod(c, ns, name);
	return m ? m->condition : NULL;
}

void cluster_assume_bound(cluster *c, const char *ns, const char *name, const char *node)
{
	struct mpod *m = find_pod(c, ns, name);

	if (m && !m->api_node)
		(void)set_str(&m->assumed_node, node);
	drop_unused_nodes(c);
}

void cluster_assume_nominated(cluster *c, const char *ns, const char *name, const char *node)
{
	struct mpod *m = find_pod(c, ns, name);

	if (!m)
		return;
	if (set_str(&m->nom_node, node) >= 0) {
		m->nom_set = true;
		m->nom_rv = 0;
	}
	/* the scheduler has moved the nomination already: a deleted node it named may go now */
	drop_unused_nodes(c);
}

void cluster_assume_deleting(cluster *c, const char *ns, const char *name)
{
	struct mpod *m = find_pod(c, ns, name);

	pp_pod_info pi;

	if (m && !m->terminating) {
		/* the deletionTimestamp the API server will set: when the pod is due to be gone */
		int64_t grace = pp_cluster_pod_info(queue_cluster(c->q), ns, name, &pi) >= 0 &&
		                        pi.termination_grace_period_s >= 0 ? pi.termination_grace_period_s : 30;
		if (grace > 3153600000LL) /* a century: the sum stays in range, and it is "never" anyway */
			grace = 3153600000LL;
		m->deleting = true;
		m->deleting_ns = queue_now(c->q) + grace * 1000000000LL;
	}
}

void cluster_assume_condition(cluster *c, const char *ns, const char *name, const char *message)
{
	struct mpod *m = find_pod(c, ns, name);

	if (m)
		(void)set_str(&m->condition, message);
}

bool cluster_write_wanted(const cluster *c, cluster_write w, const char *ns, const char *name, const char *uid)
{
	if (w == CLUSTER_WRITE_LEASE_EVENT)
		return true;
	const struct mpod *m = find_pod(c, ns, name);

	if (!m || !str_eq(m->uid, uid))
		return false;
	switch (w) {
	case CLUSTER_WRITE_BIND:
		return !m->api_node && m->assumed_node;
	case CLUSTER_WRITE_STATUS:
		return !m->api_node && !m->assumed_node;
	case CLUSTER_WRITE_CONDITION:
	case CLUSTER_WRITE_DELETE:
	case CLUSTER_WRITE_EVICT:
		return !m->terminating;
	case CLUSTER_WRITE_EVENT:
	default:
		return true;
	}
}

void cluster_write_landed(cluster *c, cluster_write w, const char *ns, const char *name, const char *uid,
                          const char *rv)
{
	struct mpod *m = find_pod(c, ns, name);

	if (!m || !str_eq(m->uid, uid))
		return;
	if (w == CLUSTER_WRITE_STATUS && m->nom_set)
		m->nom_rv = rv_number(rv);
}

/* The binding this scheduler assumed is off: the pod is pending again (or held), and a node that
 * is gone or only a placeholder may go with it. */
static void unassume_bind(cluster *c, struct mpod *m)
{
	char *node = m->assumed_node;

	m->assumed_node = NULL;
	restate(c, m);
	drop_node_if_empty(c, node);
	free(node);
}

void cluster_write_failed(cluster *c, cluster_write w, const char *ns, const char *name, const char *uid,
                          bool conflict)
{
	struct mpod *m = find_pod(c, ns, name);

	if (!m || !str_eq(m->uid, uid))
		return;
	switch (w) {
	case CLUSTER_WRITE_BIND:
		if (conflict) {
			m->held = true;
			m->held_rv = m->rv;
		}
		unassume_bind(c, m);
		return;
	case CLUSTER_WRITE_STATUS:
		m->nom_set = false;
		(void)set_str(&m->condition, NULL);
		break;
	case CLUSTER_WRITE_CONDITION:
	case CLUSTER_WRITE_DELETE:
	case CLUSTER_WRITE_EVICT:
		m->deleting = false;
		break;
	default:
		return;
	}
	restate(c, m);
	drop_unused_nodes(c);
}

bool cluster_withdraw_nomination(cluster *c, const char *ns, const char *name)
{
	struct mpod *m = find_pod(c, ns, name);

	if (!m || m->api_node || m->assumed_node)
		return false;
	/* assumed cleared until the API shows it: the pod is pending without a nomination now, and a
	 * nomination's change sends it to activeQ (the library requeues a pod that lost one) */
	(void)set_str(&m->nom_node, NULL);
	m->nom_set = true;
	m->nom_rv = 0;
	restate(c, m);
	drop_unused_nodes(c);
	return m->api_nominated != NULL;
}

static void forget(const char *key, void *value, void *userdata)
{
	struct mpod *m = value;

	(void)key;
	/* a pod held after a refused binding stays held: that refusal was the API server's */
	if (!m->assumed_node && !m->nom_set && !m->deleting)
		return;
	m->nom_set = m->deleting = false;
	unassume_bind(userdata, m);
}

void cluster_forget_assumptions(cluster *c)
{
	objmap_foreach(&c->pods, forget, c);
	drop_unused_nodes(c);
}

struct victims_since {
	int64_t since;
	void (*fn)(const char *node, int64_t deleted_ns, void *userdata);
	void *userdata;
};

static void victim_since(const char *key, void *value, void *userdata)
{
	const struct mpod *m = value;
	const struct victims_since *v = userdata;

	(void)key;
	if (m->terminating && m->preempted_by_us && m->api_node && m->deleted_ns > v->since)
		v->fn(m->api_node, m->deleted_ns, v->userdata);
}

void cluster_foreach_victim_since(cluster *c, int64_t since_ns,
                                  void (*fn)(const char *node, int64_t deleted_ns, void *userdata), void *userdata)
{
	struct victims_since v = { since_ns, fn, userdata };

	objmap_foreach(&c->pods, victim_since, &v);
}

static void count_pod(const char *key, void *value, void *userdata)
{
	const struct mpod *m = value;
	cluster_counts *n = userdata;

	(void)key;
	n->gated += m->ours && m->gated && !m->api_node;
	n->held += m->held;
	n->assumed += m->assumed_node || m->nom_set || m->deleting;
}

void cluster_get_counts(const cluster *c, cluster_counts *ret)
{
	*ret = (cluster_counts){
		.nodes = objmap_count(&c->nodes),
		.pods = objmap_count(&c->pods),
		.pdbs = objmap_count(&c->pdbs),
		.classes = pp_pcset_count(c->classes),
		.refused = c->n_refused,
		.protected_ = budget_memory_count(c->budgets),
	};
	objmap_foreach((objmap *)&c->pods, count_pod, ret);
}
