/* SPDX-License-Identifier: MIT */
/*
 * PriorityClasses (pkg/apis/scheduling/validation) and the Priority admission plugin
 * (plugin/pkg/admission/priority): validation, globalDefault uniqueness, pod priority resolution.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "strmap.h"

/* Classes stay in insertion order (pp_pcset_get); the map makes lookups O(1), so loading n
 * classes is linear (a list of tens of thousands is an input size a controller may see). */
struct pp_pcset {
	pp_priority_class *classes; /* name and description are owned copies */
	size_t n, cap;
	struct strmap by_name; /* name (borrowed from classes[i]) -> i + 1 */
	size_t def;            /* index + 1 of the lowest-valued globalDefault class, 0 = none */
};

static const struct {
	const char *name;
	int32_t value;
} system_classes[] = {
	{ "system-cluster-critical", PP_SYSTEM_CLUSTER_CRITICAL },
	{ "system-node-critical", PP_SYSTEM_NODE_CRITICAL },
};

int pp_preemption_policy_parse(const char *s, pp_preemption_policy *ret, pp_err *err)
{
	if (!s)
		return pp_fail(err, -EINVAL, "missing preemptionPolicy");
	if (strcmp(s, "PreemptLowerPriority") == 0)
		*ret = PP_PREEMPT_LOWER_PRIORITY;
	else if (strcmp(s, "Never") == 0)
		*ret = PP_PREEMPT_NEVER;
	else
		return pp_fail(err, -EINVAL,
		               "invalid preemptionPolicy \"%s\": supported values: \"Never\", \"PreemptLowerPriority\"", s);
	return 0;
}

const char *pp_preemption_policy_name(pp_preemption_policy p)
{
	switch (p) {
	case PP_PREEMPT_LOWER_PRIORITY:
		return "PreemptLowerPriority";
	case PP_PREEMPT_NEVER:
		return "Never";
	}
	return NULL;
}

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters. */
/*
 * One dot-separated part of a subdomain. No length of its own: Kubernetes' IsDNS1123Subdomain
 * checks the regex and 253 characters overall, not 63 per label (that is IsDNS1123Label's), so
 * a PriorityClass named with a 64-character label is valid there and must be here.
 */
static bool is_subdomain_part(const char *s, size_t len)
{
	if (len == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

bool pp_is_dns_subdomain(const char *s)
{
	if (!s)
		return false;
	size_t len = strlen(s);
	if (len == 0 || len > 253)
		return false;
	/* A subdomain is dot-separated labels, each starting and ending alphanumeric. */
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		if (!is_subdomain_part(p, l))
			return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

static pp_priority_class *find(const pp_pcset *s, const char *name)
{
	uintptr_t i = (uintptr_t)pp__strmap_get(&s->by_name, name);
	return i ? &s->classes[i - 1] : NULL;
}

static int index_put(pp_pcset *s, size_t i)
{
	return pp__strmap_put(&s->by_name, s->classes[i].name, (void *)(uintptr_t)(i + 1));
}

static int append(pp_pcset *s, const char *name, int32_t value, bool global_default,
                  pp_preemption_policy policy, const char *description)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		pp_priority_class *c = realloc(s->classes, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		s->classes = c;
		s->cap = cap;
	}
	char *n = strdup(name), *d = strdup(description ? description : "");
	if (!n || !d) {
		free(n);
		free(d);
		return -ENOMEM;
	}
	s->classes[s->n] = (pp_priority_class){
		.name = n, .value = value, .global_default = global_default, .policy = policy, .description = d,
	};
	int r = index_put(s, s->n);
	if (r < 0) {
		free(n);
		free(d);
		return r;
	}
	if (global_default && (!s->def || value < s->classes[s->def - 1].value))
		s->def = s->n + 1;
	s->n++;
	return 0;
}

int pp_pcset_new(pp_pcset **ret)
{
	if (!ret)
		return -EINVAL;
	pp_pcset *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < PP_ELEMENTSOF(system_classes); i++) {
		int r = append(s, system_classes[i].name, system_classes[i].value, false, PP_PREEMPT_LOWER_PRIORITY,
		               "Used for system critical pods that must not be moved from their current node.");
		if (r < 0) {
			pp_pcset_free(s);
			return r;
		}
	}
	*ret = s;
	return 0;
}

pp_pcset *pp_pcset_free(pp_pcset *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->n; i++) {
		free((char *)s->classes[i].name);
		free((char *)s->classes[i].description);
	}
	free(s->classes);
	pp__strmap_done(&s->by_name);
	free(s);
	return NULL;
}

/*
 * The globalDefault class with the lowest value (the first of equals), except `except`. The API
 * server checks "only one default" against its cache only, so a cluster can hold several; the
 * priority admission plugin (getDefaultPriorityClass) then picks the lowest value. A set holds
 * several only through pp_pcset_add_existing().
 */
static const pp_priority_class *scan_default(const pp_pcset *s, const pp_priority_class *except)
{
	const pp_priority_class *d = NULL;
	for (size_t i = 0; i < s->n; i++) {
		if (&s->classes[i] == except || !s->classes[i].global_default)
			continue;
		if (!d || s->classes[i].value < d->value)
			d = &s->classes[i];
	}
	return d;
}

/* Admission asks for every class-less pod: cached (s->def), kept by add, update and remove. */
static const pp_priority_class *default_class(const pp_pcset *s, const pp_priority_class *except)
{
	if (except)
		return scan_default(s, except);
	return s->def ? &s->classes[s->def - 1] : NULL;
}

static void refresh_default(pp_pcset *s)
{
	const pp_priority_class *d = scan_default(s, NULL);
	s->def = d ? (size_t)(d - s->classes) + 1 : 0;
}

static int validate(const pp_pcset *s, const char *name, int32_t value, bool global_default,
                    pp_preemption_policy policy, pp_err *err)
{
	if (!name || !*name)
		return pp_fail(err, -EINVAL, "priorityclass: metadata.name: Required value: name is required");
	if (!pp_is_dns_subdomain(name))
		return pp_fail(err, -EINVAL,
		               "priorityclasses/%.200s: metadata.name: Invalid value: a lowercase RFC 1123 subdomain "
		               "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
		               "with an alphanumeric character", name);
	if (policy != PP_PREEMPT_LOWER_PRIORITY && policy != PP_PREEMPT_NEVER)
		return pp_fail(err, -EINVAL, "priorityclasses/%s: preemptionPolicy: Unsupported value", name);
	if (strncmp(name, "system-", 7) == 0) {
		for (size_t i = 0; i < PP_ELEMENTSOF(system_classes); i++)
			if (strcmp(name, system_classes[i].name) == 0 && value == system_classes[i].value && !global_default)
				return 0;
		return pp_fail(err, -EINVAL,
		               "priorityclasses/%s: metadata.name: Forbidden: priority class names with 'system-' "
		               "prefix are reserved for system use only", name);
	}
	if (value > PP_HIGHEST_USER_PRIORITY)
		return pp_fail(err, -EINVAL,
		               "priorityclasses/%s: value: Forbidden: maximum allowed value of a user defined priority "
		               "is %d", name, PP_HIGHEST_USER_PRIORITY);
	(void)s;
	return 0;
}

/* existing: the class is in a cluster already (several defaults possible), not being created */
static int add(pp_pcset *s, const char *name, int32_t value, bool global_default, pp_preemption_policy policy,
               const char *description, bool existing, pp_err *err)
{
	if (!s)
		return -EINVAL;
	int r = validate(s, name, value, global_default, policy, err);
	if (r < 0)
		return r;
	const pp_priority_class *old = find(s, name);
	if (old) {
		/* The API server creates the system classes itself; listing them back is not a duplicate. */
		if (strncmp(name, "system-", 7) == 0 && old->policy == policy)
			return 0;
		return pp_fail(err, -EEXIST, "priorityclasses/%s: already exists", name);
	}
	if (global_default && !existing) {
		const pp_priority_class *d = default_class(s, NULL);
		if (d)
			return pp_fail(err, -EEXIST,
			               "priorityclasses/%s: globalDefault: Forbidden: PriorityClass %s is already marked as "
			               "default. Only one default can exist", name, d->name);
	}
	return append(s, name, value, global_default, policy, description);
}

int pp_pcset_add_full(pp_pcset *s, const char *name, int32_t value, bool global_default,
                      pp_preemption_policy policy, const char *description, pp_err *err)
{
	return add(s, name, value, global_default, policy, description, false, err);
}

int pp_pcset_add_existing(pp_pcset *s, const char *name, int32_t value, bool global_default,
                          pp_preemption_policy policy, const char *description, pp_err *err)
{
	return add(s, name, value, global_default, policy, description, true, err);
}

int pp_pcset_add(pp_pcset *s, const char *name, int32_t value, bool global_default,
                 pp_preemption_policy policy, pp_err *err)
{
	return pp_pcset_add_full(s, name, value, global_default, policy, NULL, err);
}

int pp_pcset_update(pp_pcset *s, const char *name, int32_t value, bool global_default,
                    pp_preemption_policy policy, const char *description, pp_err *err)
{
	if (!s || !name)
		return -EINVAL;
	pp_priority_class *c = find(s, name);
	if (!c)
		return pp_fail(err, -ENOENT, "priorityclasses/%s: not found", name);
	if (c->value != value)
		return pp_fail(err, -EINVAL, "priorityclasses/%s: value: Forbidden: may not be changed in an update.", name);
	if (c->policy != policy)
		return pp_fail(err, -EINVAL,
		               "priorityclasses/%s: preemptionPolicy: Invalid value: field is immutable", name);
	int r = validate(s, name, value, global_default, policy, err);
	if (r < 0)
		return r;
	if (global_default && !c->global_default) {
		const pp_priority_class *d = default_class(s, c);
		if (d)
			return pp_fail(err, -EEXIST,
			               "priorityclasses/%s: globalDefault: Forbidden: PriorityClass %s is already marked as "
			               "default. Only one default can exist", name, d->name);
	}
	if (description) {
		char *d = strdup(description);
		if (!d)
			return -ENOMEM;
		free((char *)c->description);
		c->description = d;
	}
	c->global_default = global_default;
	refresh_default(s);
	return 0;
}

int pp_pcset_remove(pp_pcset *s, const char *name, pp_err *err)
{
	if (!s || !name)
		return -EINVAL;
	pp_priority_class *c = find(s, name);
	if (!c)
		return pp_fail(err, -ENOENT, "priorityclasses/%s: not found", name);
	if (strncmp(name, "system-", 7) == 0)
		return pp_fail(err, -EPERM, "priorityclasses/%s: the system priority classes cannot be deleted", name);
	size_t i = (size_t)(c - s->classes);
	(void)pp__strmap_remove(&s->by_name, name);
	free((char *)c->name);
	free((char *)c->description);
	memmove(c, c + 1, (s->n - i - 1) * sizeof(*c));
	s->n--;
	/* The classes after it moved down by one. O(n) like the memmove (insertion order is the
	 * iteration order), but a plain pass over the slots: no hashing, no allocation. */
	for (size_t j = 0; j < s->by_name.cap; j++) {
		uintptr_t v = (uintptr_t)s->by_name.slots[j].value;
		if (v > i + 1)
			s->by_name.slots[j].value = (void *)(v - 1);
	}
	refresh_default(s);
	return 0;
}

size_t pp_pcset_count(const pp_pcset *s)
{
	return s ? s->n : 0;
}

const pp_priority_class *pp_pcset_get(const pp_pcset *s, size_t i)
{
	return s && i < s->n ? &s->classes[i] : NULL;
}

const pp_priority_class *pp_pcset_find(const pp_pcset *s, const char *name)
{
	return s && name ? find(s, name) : NULL;
}

const pp_priority_class *pp_pcset_default(const pp_pcset *s)
{
	return s ? default_class(s, NULL) : NULL;
}

int pp_pcset_admit(const pp_pcset *s, const char *class_name, const int32_t *spec_priority,
                   const pp_preemption_policy *spec_policy, int32_t *ret_priority, pp_preemption_policy *ret_policy,
                   const char **ret_class_name, pp_err *err)
{
	const pp_priority_class *c = NULL;
	int32_t prio = 0;
	pp_preemption_policy policy = PP_PREEMPT_LOWER_PRIORITY;

	if (!s)
		return -EINVAL;
	if (class_name && *class_name) {
		c = find(s, class_name);
		if (!c)
			return pp_fail(err, -ENOENT, "spec.priorityClassName: no PriorityClass with name %.200s was found",
			               class_name);
	} else
		c = default_class(s, NULL);
	if (c) {
		prio = c->value;
		policy = c->policy;
	}
	if (spec_priority && *spec_priority != prio)
		return pp_fail(err, -EINVAL,
		               "spec.priority: Forbidden: the integer value of priority (%d) must not be provided in pod "
		               "spec; priority admission controller computed %d from the given PriorityClass name",
		               (int)*spec_priority, (int)prio);
	/* Only a class that carries a policy can conflict; without a class the pod's own choice stands. */
	if (spec_policy) {
		if (c && *spec_policy != policy)
			return pp_fail(err, -EINVAL,
			               "spec.preemptionPolicy: Forbidden: the preemptionPolicy (%s) must not differ from "
			               "the one of PriorityClass %s (%s)",
			               pp_preemption_policy_name(*spec_policy) ? pp_preemption_policy_name(*spec_policy) : "?",
			               c->name, pp_preemption_policy_name(policy));
		policy = *spec_policy;
	}
	if (ret_priority)
		*ret_priority = prio;
	if (ret_policy)
		*ret_policy = policy;
	if (ret_class_name)
		*ret_class_name = c ? c->name : NULL;
	return 0;
}

int pp_pcset_resolve(const pp_pcset *s, const char *class_name, const int32_t *spec_priority,
                     int32_t *ret_priority, pp_preemption_policy *ret_policy, pp_err *err)
{
	return pp_pcset_admit(s, class_name, spec_priority, NULL, ret_priority, ret_policy, NULL, err);
}
