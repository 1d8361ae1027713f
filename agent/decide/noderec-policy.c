/* SPDX-License-Identifier: MIT */
#include "noderec-policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idindex.h"

const threshold_eval *noderec_acted_on(const evaluation *ev, evictd_signal s)
{
	if (ev->t[THRESHOLD_HARD][s].actionable)
		return &ev->t[THRESHOLD_HARD][s];
	return ev->t[THRESHOLD_SOFT][s].actionable ? &ev->t[THRESHOLD_SOFT][s] : NULL;
}

bool noderec_any_disk(const evaluation *ev)
{
	for (int s = 0; s < _SIGNAL_MAX; s++)
		if (noderec_disk_signal((evictd_signal)s) && noderec_acted_on(ev, (evictd_signal)s))
			return true;
	return false;
}

/* --- refusals -------------------------------------------------------------------------------- */

void noderec_refusals_prune(noderec_refusals *r, uint64_t now_usec)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++) {
		if (now_usec >= r->v[i].until_usec)
			free(r->v[i].image_id);
		else
			r->v[k++] = r->v[i];
	}
	r->n = k;
}

int noderec_refusals_add(noderec_refusals *r, const char *image_id, uint64_t now_usec)
{
	noderec_refusals_prune(r, now_usec);
	if (r->n == NODEREC_REFUSALS_MAX) {
		free(r->v[0].image_id);
		memmove(r->v, r->v + 1, (r->n - 1) * sizeof(*r->v));
		r->n--;
	}
	noderec_refusal *n = realloc(r->v, (r->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	r->v = n;
	n[r->n] = (noderec_refusal){ .image_id = strdup(image_id), .until_usec = now_usec + NODEREC_REFUSAL_BACKOFF_USEC };
	if (!n[r->n].image_id)
		return -ENOMEM;
	r->n++;
	return 0;
}

int noderec_refusals_mark(const noderec_refusals *r, const cri_listing *l, bool *backed_off)
{
	id_index ids = { 0 };
	size_t v;

	memset(backed_off, 0, l->n_images * sizeof(*backed_off));
	if (!r->n)
		return 0;
	if (id_index_init(&ids, r->n) < 0)
		return -ENOMEM;
	/* hashed once: linear in the listing, however many refusals are remembered */
	for (size_t i = 0; i < r->n; i++)
		id_index_put(&ids, r->v[i].image_id, NULL, i);
	for (size_t i = 0; i < l->n_images; i++)
		backed_off[i] = id_index_get(&ids, l->images[i].id, NULL, &v);
	id_index_done(&ids);
	return 0;
}

void noderec_refusals_done(noderec_refusals *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].image_id);
	free(r->v);
	*r = (noderec_refusals){ 0 };
}

/* --- images' history ------------------------------------------------------------------------ */

static int by_record_id(const void *a, const void *b)
{
	return strcmp(((const image_record *)a)->id, ((const image_record *)b)->id);
}

const image_record *noderec_record_find(const image_record *records, size_t n, const char *id)
{
	image_record key = { .id = (char *)id };
	return n ? bsearch(&key, records, n, sizeof(key), by_record_id) : NULL;
}

void noderec_history_of(const image_record *records, size_t n, const cri_listing *l, uint64_t now_usec,
                        image_history *h)
{
	for (size_t i = 0; i < l->n_images; i++) {
		const image_record *r = noderec_record_find(records, n, l->images[i].id);
		h[i] = r ? r->h : (image_history){ .first_seen_usec = now_usec };
	}
}

int noderec_records_follow(image_record **records, size_t *n, const cri_listing *l, uint64_t now_usec)
{
	image_record *next = calloc(l->n_images ? l->n_images : 1, sizeof(*next));
	size_t k = 0, kept = 0, v;
	id_index used = { 0 };

	if (!next || id_index_init(&used, l->n_containers) < 0) {
		free(next);
		return -ENOMEM;
	}
	/* the images the containers name, indexed once: linear, not images × containers */
	for (size_t c = 0; c < l->n_containers; c++)
		if (l->containers[c].image_id)
			id_index_put(&used, l->containers[c].image_id, NULL, c);
	for (size_t i = 0; i < l->n_images; i++) {
		const image_record *old = noderec_record_find(*records, *n, l->images[i].id);
		if (!(next[k].id = strdup(l->images[i].id)))
			continue;
		next[k].h = old ? old->h : (image_history){ .first_seen_usec = now_usec };
		if (id_index_get(&used, l->images[i].id, NULL, &v))
			next[k].h.last_used_usec = now_usec;
		kept += old && old->h.last_used_usec == next[k].h.last_used_usec;
		k++;
	}
	id_index_done(&used);
	qsort(next, k, sizeof(*next), by_record_id);
	bool changed = kept != k || k != *n;
	noderec_records_free(*records, *n);
	*records = next;
	*n = k;
	return changed;
}

void noderec_records_free(image_record *records, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(records[i].id);
	free(records);
}

/* --- counts ---------------------------------------------------------------------------------- */

bool noderec_settle(noderec_memory *m, const evaluation *ev, bool ended[_SIGNAL_MAX])
{
	bool any = false;

	for (int si = 0; si < _SIGNAL_MAX; si++) {
		evictd_signal s = (evictd_signal)si;
		bool over = !(noderec_disk_signal(s) && noderec_acted_on(ev, s));
		if (ended)
			ended[s] = over;
		if (!over)
			continue;
		any |= m->pending_since[s] != 0;
		m->pending_since[s] = 0;
	}
	return any;
}

int64_t noderec_vanished_still(noderec_memory *m, evictd_signal s, const signal_obs *o, int64_t dead_now,
                               uint64_t now_usec)
{
	if (!o) {
		m->vanished[s] = m->last_dead[s] = 0;
		return 0;
	}
	if (m->last_dead[s] > dead_now) {
		m->vanished[s] = m->last_dead[s] - dead_now;
		m->vanished_base[s] = o->available;
		m->vanished_until[s] = now_usec + NODEREC_VANISHED_USEC;
	}
	m->last_dead[s] = dead_now;
	if (!m->vanished[s])
		return 0;
	int64_t back = o->available - m->vanished_base[s];
	if (now_usec >= m->vanished_until[s] || back >= m->vanished[s]) {
		m->vanished[s] = 0;
		return 0;
	}
	return m->vanished[s] - (back > 0 ? back : 0);
}

noderec_count noderec_pending_window(noderec_memory *m, evictd_signal s, bool counts, uint64_t now_usec,
                                     bool *changed)
{
	if (!counts) {
		*changed |= m->pending_since[s] != 0;
		m->pending_since[s] = 0;
		return NODEREC_COUNT_NONE;
	}
	/* a time ahead of now came from another boot's clock: the window starts now */
	if (!m->pending_since[s] || m->pending_since[s] > now_usec) {
		m->pending_since[s] = now_usec;
		*changed = true;
	}
	return now_usec - m->pending_since[s] >= KUBELET_CONTAINER_GC_PERIOD_USEC ? NODEREC_COUNT_EXPIRED
	                                                                         : NODEREC_COUNT_PENDING;
}

int64_t noderec_need(const threshold_eval *te, const signal_obs *o, int64_t counted, const pending_reclaim *pods_pending,
                     evictd_signal s)
{
	if (!te)
		return 0;
	return te->threshold + te->min_reclaim - o->available - counted -
	       (pods_pending && pods_pending->sources[s] ? pods_pending->amount[s] : 0);
}

/* --- one decision ---------------------------------------------------------------------------- */

/* What s counts as pending from the plan, and the window it opens or closes. */
static void count_signal(const noderec_plan *p, const noderec_situation *sit, const threshold_eval *te,
                         const signal_obs *o, evictd_signal s, uint64_t now_usec, noderec_memory *m,
                         noderec_outcome *out)
{
	runtime_signal_plan *sp = &out->s[s];

	sp->steps = sit->mode == NODE_RECLAIM_OFF ? 0 : noderec_steps(sit->layout, s);
	sp->n_dead = sp->steps & NODEREC_CONTAINERS ? p->n_dead : 0;
	sp->dead = noderec_dead_for(p, sit->layout, s);
	if (sp->steps & NODEREC_IMAGES) {
		sp->n_images = p->n_images;
		sp->images_bytes = p->images_bytes;
	}
	int64_t dead = sp->steps & NODEREC_CONTAINERS ? sp->dead : 0;
	/* an image's inode count is not known: counted for bytes signals only */
	int64_t counted = dead + (sit->mode == NODE_RECLAIM_ACCOUNT && !noderec_inode_signal(s) ? sp->images_bytes : 0);
	counted += noderec_vanished_still(m, s, te && o->known ? o : NULL, dead, now_usec);
	int64_t kt = noderec_kubelet_threshold(sit->kubelet_hard, sit->kubelet_read, s, o->capacity);
	sp->kubelet_reached = o->known && kt >= 0 && o->available < kt;
	out->count[s] = noderec_pending_window(m, s, te && counted > 0 && !sp->kubelet_reached, now_usec,
	                                       &out->pending_changed);
	sp->expired = out->count[s] == NODEREC_COUNT_EXPIRED;
	out->counted[s] = counted;
	sp->pending = out->count[s] == NODEREC_COUNT_PENDING ? counted : 0;
}

/* The images s's need calls for, and what they ask of the runtime. */
static void images_for_signal(const noderec_plan *p, const cri_listing *l, const noderec_situation *sit,
                              const threshold_eval *te, const signal_obs *o, evictd_signal s,
                              const pending_reclaim *pods_pending, noderec_outcome *out)
{
	runtime_signal_plan *sp = &out->s[s];
	int64_t need = noderec_need(te, o, sp->pending, pods_pending, s);

	if (sit->mode == NODE_RECLAIM_IMAGES && te && o->known)
		sp->n_remove = noderec_images_for(p, l, sit->layout, s, need, &sp->remove_bytes);
	out->images_matter[s] = te && (sp->steps & NODEREC_IMAGES);
	if ((sit->removal_running || out->call == NODEREC_CALL_REMOVE) && (sp->steps & NODEREC_IMAGES))
		out->hold[s] = NODEREC_HOLD_REMOVAL;
	else if (!sp->n_remove)
		return;
	else if (sit->dry_run)
		/* a dry run removes nothing: what it would remove counts as if it were gone */
		sp->pending += sp->remove_bytes;
	else if (!sit->listing_for_removal || sit->sandbox_asking) {
		/* not from a listing older than the wish to remove: a container started since keeps its
		 * image; nor before the runtime has said which is its sandbox image */
		if (!sit->listing_for_removal && !sit->failed_recently)
			out->call = NODEREC_CALL_LIST_FOR_REMOVAL;
		out->hold[s] = NODEREC_HOLD_LISTING;
	} else {
		out->call = NODEREC_CALL_REMOVE;
		out->call_signal = s;
		out->call_n = sp->n_remove;
		out->call_before = o->available;
		out->hold[s] = NODEREC_HOLD_REMOVAL;
	}
}

void noderec_decide(const noderec_plan *p, const cri_listing *l, const noderec_situation *sit, const evaluation *ev,
                    const node_signals *node, const pending_reclaim *pods_pending, uint64_t now_usec,
                    noderec_memory *m, noderec_outcome *out)
{
	*out = (noderec_outcome){ 0 };
	if (!sit->listing_usable || !p || !l) {
		/* the kubelet measures after its reclaim: no disk eviction before the runtime has answered */
		if (noderec_any_disk(ev) && !sit->failed_recently)
			out->call = NODEREC_CALL_LIST;
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (noderec_disk_signal((evictd_signal)s))
				out->hold[s] = NODEREC_HOLD_ANSWER;
		return;
	}
	for (int si = 0; si < _SIGNAL_MAX; si++) {
		evictd_signal s = (evictd_signal)si;
		const threshold_eval *te = noderec_acted_on(ev, s);
		if (!noderec_disk_signal(s))
			continue;
		count_signal(p, sit, te, &node->s[s], s, now_usec, m, out);
		images_for_signal(p, l, sit, te, &node->s[s], s, pods_pending, out);
	}
	/* a removal for one signal holds every signal whose image step it serves */
	if (out->call == NODEREC_CALL_REMOVE || sit->removal_running)
		for (int s = 0; s < _SIGNAL_MAX; s++)
			if (out->s[s].steps & NODEREC_IMAGES)
				out->hold[s] = NODEREC_HOLD_REMOVAL;
}
