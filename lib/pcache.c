/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "pcache.h"

struct pcache *pp__pcache_new(void)
{
	struct pcache *pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	atomic_flag_clear(&pc->busy);
	pc->gen = 1;
	return pc;
}

void pp__pcache_free(struct pcache *pc)
{
	if (!pc)
		return;
	free(pc->shape);
	free(pc->e);
	free(pc);
}

void pp__pcache_node_changed(const pp_cluster *c, const struct node *n)
{
	if (n->idx < c->pcache->n)
		c->pcache->e[n->idx].gen = 0;
}

void pp__pcache_reset(const pp_cluster *c)
{
	c->pcache->gen++;
}

/* ---- the preemptor's shape, as a byte string -------------------------------------------- */

struct sig {
	unsigned char *b;
	size_t len, cap;
	bool oom;
};

static void put(struct sig *s, const void *p, size_t n)
{
	if (s->oom)
		return;
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 256;
		while (cap < s->len + n)
			cap *= 2;
		unsigned char *b = realloc(s->b, cap);
		if (!b) {
			s->oom = true;
			return;
		}
		s->b = b;
		s->cap = cap;
	}
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

static void put_size(struct sig *s, size_t v)
{
	put(s, &v, sizeof(v));
}

static void put_str(struct sig *s, const char *str)
{
	/* length-prefixed, so that concatenations cannot collide; NULL differs from "" */
	size_t n = str ? strlen(str) : SIZE_MAX;
	put_size(s, n);
	if (str)
		put(s, str, n);
}

static void put_requirements(struct sig *s, const pp_requirement *r, size_t n)
{
	put_size(s, n);
	for (size_t i = 0; i < n; i++) {
		put_str(s, r[i].key);
		put(s, &r[i].op, sizeof(r[i].op));
		put_size(s, r[i].n_values);
		for (size_t j = 0; j < r[i].n_values; j++)
			put_str(s, r[i].values[j]);
	}
}

/* Everything of the pod that the filters and victim selection read (affinity pods are not
 * cached at all, so their terms are left out). */
static void shape_of(const struct pod *p, struct sig *s)
{
	put(s, &p->priority, sizeof(p->priority));
	put(s, &p->zero_request, sizeof(p->zero_request));
	put(s, p->req, sizeof(p->req));
	put_size(s, p->n_scalar);
	for (size_t i = 0; i < p->n_scalar; i++) {
		put(s, &p->scalar[i].id, sizeof(p->scalar[i].id));
		put(s, &p->scalar[i].value, sizeof(p->scalar[i].value));
	}
	put_size(s, p->n_tolerations);
	for (size_t i = 0; i < p->n_tolerations; i++) {
		const pp_toleration *t = &p->tolerations[i];
		put_str(s, t->key);
		put(s, &t->op, sizeof(t->op));
		put_str(s, t->value);
		put(s, &t->effect, sizeof(t->effect));
	}
	put_size(s, p->n_node_selector);
	for (size_t i = 0; i < p->n_node_selector; i++) {
		put_str(s, p->node_selector[i].key);
		put_str(s, p->node_selector[i].value);
	}
	put(s, &p->has_node_affinity, sizeof(p->has_node_affinity));
	put_size(s, p->n_node_affinity);
	for (size_t i = 0; i < p->n_node_affinity; i++) {
		put_requirements(s, p->node_affinity[i].match_expressions, p->node_affinity[i].n_match_expressions);
		put_requirements(s, p->node_affinity[i].match_fields, p->node_affinity[i].n_match_fields);
	}
}

bool pp__pcache_acquire(struct pcache *pc, const pp_cluster *c, const struct pod *pre)
{
	if (atomic_flag_test_and_set_explicit(&pc->busy, memory_order_acquire))
		return false;
	if (pc->n < c->n_nodes) {
		size_t n = c->n_nodes + c->n_nodes / 4 + 16;
		struct pc_entry *e = realloc(pc->e, n * sizeof(*e));
		if (!e)
			goto busy;
		memset(e + pc->n, 0, (n - pc->n) * sizeof(*e));
		pc->e = e;
		pc->n = n;
	}
	struct sig s = { 0 };
	shape_of(pre, &s);
	if (s.oom) {
		free(s.b);
		goto busy;
	}
	if (s.len != pc->shape_len || !pc->shape || memcmp(s.b, pc->shape, s.len) != 0) {
		free(pc->shape);
		pc->shape = s.b;
		pc->shape_len = s.len;
		pc->gen++;
	} else
		free(s.b);
	return true;
busy:
	atomic_flag_clear_explicit(&pc->busy, memory_order_release);
	return false;
}

void pp__pcache_release(struct pcache *pc)
{
	atomic_flag_clear_explicit(&pc->busy, memory_order_release);
}
