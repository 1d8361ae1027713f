/* SPDX-License-Identifier: MIT */
/*
 * preemptd's whole controller loop, without an API server: recorded watch streams in (the bytes a
 * watch sends, decoded by the same reflector path), the model, the queue, the cycle, the act
 * stage's request bodies and chains out into a counting sink that answers every request at once —
 * so that the figures are preemptd's, not a server's.
 *
 *   bench-preemptd DIR     DIR from tests/bench/gen-cluster.py --watch-dir (tests/bench/bench-preemptd.sh)
 *
 * Phases, each at the cluster of DIR (scheduler_perf's shape: 5000 nodes of 4 cpu, 4 pods of 900m
 * on each):
 *   load      the classes, nodes and bound pods replayed; the heap the live model takes, beside
 *             the heap of the same objects decoded and built as preemptctl does (model_build)
 *   schedule  the "fit" stream (pods of 100m) replayed in 64 KiB chunks, the loop run after each
 *             chunk as the daemon runs it; pods/s from the first byte to the last binding request
 *   latency   pods one at a time: from its watch event handed in to its binding request in the
 *             sink; median and p99
 *   preempt   a fresh loop at the same cluster, the "preempt" stream (priority 10, 3000m: three
 *             victims each); preemptions/s to the last request — three times: as kube-scheduler
 *             (nominations never end), with preemptd's default nomination timeout (a deadline
 *             per nomination on the scheduler's timer heap), and with a budget too large to hold
 *             anything (the gate's cost alone: every preemption counted in the sliding minute)
 *   budgets   the same with the "pdbs" stream too (250 PodDisruptionBudgets over the bound pods,
 *             every tenth allowing no disruption): --pdb prefer (victims deleted), then --pdb strict
 *             (victims evicted one at a time; the sink refuses every 20th eviction with the API
 *             server's 429, naming the victim's budget, so that preemptions are withdrawn and
 *             retried). In both, after every 20th victim the watch brings its budget anew, as the
 *             disruption controller's status updates would. Preemptions completed per second until
 *             the loop is quiet
 *   shadow    what --shadow costs: the decisions of the two phases before, recorded, are replayed
 *             as another scheduler's (the cluster loaded afresh, then one pod at a time: its
 *             ADDED event, then its binding as spec.nodeName; a preemptor's nominatedNodeName, its
 *             victims terminating and deleted, then its binding) into a shadow of that scheduler,
 *             which decides for each itself and compares; pods per CPU-second with the events
 *             decoded, beside the loop's own figures above; every decision must agree
 *   relist    start-up through the lists the reflector asks (resourceVersion=0&limit=500, then
 *             continue), answered in pages by the bench as an API server listing from storage
 *             ("storage"), then again answered whole as the watch cache answers ("watch cache");
 *             every preemptor of the "preempt" stream nominated; then 410 Gone on the pods' watch
 *             and the relist the reflector asks, in pages, of what the server holds by then (half
 *             the victims gone, every 100th other bound pod deleted): how long preemptd is blind
 *             (the 410 to the model synced), and that the queue and the nominations are the same
 *             after it and the deleted pods gone (BENCH_ONLY=relist: this phase alone)
 * Every request is counted by kind; each phase checks that every pod got exactly what it should.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act.h"
#include "cycle.h"
#include "evict.h"
#include "journal.h"
#include "model.h"
#include "shadow.h"
#include "watch.h"

#define CHUNK (64 * 1024)
#define T0 (1714557600LL * 1000000000LL)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the process: on a machine shared with other work, the figure that does not depend
 * on how much of the cores the benchmark got. */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* --- the counting sink -------------------------------------------------------------------------- */

struct pending_answer {
	transport_done_fn done;
	void *userdata;
	int refuse_node; /* >= 0: answer a 429 naming the budget of the pods of this node */
};

struct sink {
	transport t;
	struct pending_answer *q;
	size_t n, cap;
	unsigned long bindings, patches, deletes, events, evictions, refused, other;
	/* every Nth victim request (DELETE or eviction): the watch brings the victim's budget anew after
	 * its answer, as the disruption controller's status update would; an eviction is refused */
	unsigned long every, victims;
	int rewatch[1024]; /* budgets to bring anew */
	size_t n_rewatch;
	/* the pod of the latency phase, and when its binding request came */
	const char *watch_for;
	double seen_at;
};

static int sink_start(transport *t, const transport_request *rq, transport_done_fn done, void *userdata,
                      void **ret_handle)
{
	struct sink *s = (struct sink *)t;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct pending_answer *q = realloc(s->q, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		s->q = q;
		s->cap = cap;
	}
	if (!strcmp(rq->method, "POST") && strstr(rq->path, "/binding")) {
		s->bindings++;
		if (s->watch_for && strstr(rq->path, s->watch_for))
			s->seen_at = now_s();
	} else if ((!strcmp(rq->method, "POST") && strstr(rq->path, "/eviction")) || !strcmp(rq->method, "DELETE")) {
		bool evict = !strcmp(rq->method, "POST");
		int node = -1;
		s->evictions += evict;
		s->deletes += !evict;
		/* .../pods/bench-NNNNN-K[/eviction]: the budget of node NNNNN's pods */
		const char *pod = strstr(rq->path, "/pods/");
		if (s->every && ++s->victims % s->every == 0 && s->n_rewatch < sizeof(s->rewatch) / sizeof(s->rewatch[0]) &&
		    pod && sscanf(pod + 6, "bench-%d-", &node) == 1)
			s->rewatch[s->n_rewatch++] = node % 250;
		if (evict && node >= 0)
			s->refused++;
		s->q[s->n++] = (struct pending_answer){ done, userdata, evict ? node : -1 };
		*ret_handle = &s->q[s->n - 1];
		return 0;
	} else if (!strcmp(rq->method, "PATCH"))
		s->patches++;
	else if (strstr(rq->path, "/events"))
		s->events++;
	else
		s->other++;
	s->q[s->n++] = (struct pending_answer){ done, userdata, -1 };
	*ret_handle = &s->q[s->n - 1];
	return 0;
}

static void sink_cancel(transport *t, void *handle)
{
	(void)t;
	((struct pending_answer *)handle)->done = NULL;
}

/* Answers everything asked so far (answers may ask more: those too). */
static void sink_drain(struct sink *s)
{
	static const char ok[] = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\",\"code\":201}";
	char refusal[512];
	for (size_t i = 0; i < s->n; i++) {
		struct pending_answer a = s->q[i];
		if (!a.done)
			continue;
		transport_answer ans = { .status = 201, .body = ok, .len = sizeof(ok) - 1, .retry_after_s = -1 };
		if (a.refuse_node >= 0) {
			int n = snprintf(refusal, sizeof(refusal),
			                 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"Cannot "
			                 "evict pod as it would violate the pod's disruption budget.\",\"reason\":"
			                 "\"TooManyRequests\",\"details\":{\"causes\":[{\"reason\":\"DisruptionBudget\","
			                 "\"message\":\"The disruption budget w%04d needs 77 healthy pods and has 77 "
			                 "currently\"}]},\"code\":429}", a.refuse_node % 250);
			ans = (transport_answer){ .status = 429, .body = refusal, .len = (size_t)n, .retry_after_s = -1 };
		}
		a.done(a.userdata, &ans);
	}
	s->n = 0;
}

/* --- one controller loop ------------------------------------------------------------------------ */

/* --- what a scheduler decided, to be replayed as another scheduler's ----------------------------- */

struct choice {
	char *pod, *node;
	char **victims;
	size_t n_victims;
};

struct record {
	struct choice *c;
	size_t n, cap;
};

static void *must(void *p)
{
	if (!p) {
		fprintf(stderr, "bench-preemptd: out of memory\n");
		exit(1);
	}
	return p;
}

static void record_decision(struct record *r, const decision *d)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->c = must(realloc(r->c, r->cap * sizeof(*r->c)));
	}
	struct choice *c = &r->c[r->n++];
	c->pod = must(strdup(d->pod.name));
	c->node = must(strdup(d->node));
	c->n_victims = d->kind == DECISION_PREEMPT ? d->n_victims : 0;
	c->victims = must(calloc(c->n_victims + 1, sizeof(*c->victims)));
	for (size_t i = 0; i < c->n_victims; i++)
		c->victims[i] = must(strdup(d->victims[i].pod.name));
}

static void record_done(struct record *r)
{
	for (size_t i = 0; i < r->n; i++) {
		for (size_t k = 0; k < r->c[i].n_victims; k++)
			free(r->c[i].victims[k]);
		free(r->c[i].victims);
		free(r->c[i].pod);
		free(r->c[i].node);
	}
	free(r->c);
}

struct loop {
	struct sink sink;
	queue *q;
	cluster *c;
	cycle *cy;
	watch *w;
	act *a;
	shadow *sh;          /* the shadow phase: a shadow of the pods' scheduler */
	struct record *rec;  /* the decisions, recorded for the shadow phase (NULL: not) */
	decision d;
	unsigned long decisions[DECISION_NOMINATION_EXPIRED + 1];
	const char *pdbs; /* the budgets' stream, when the watch is to bring refused ones anew */
};

static int64_t bench_clock(void)
{
	return T0;
}

static void loop_init(struct loop *l, pp_pdb_policy policy, bool shadowing)
{
	memset(l, 0, sizeof(*l));
	l->sink.t = (transport){ .start = sink_start, .cancel = sink_cancel };
	cluster_opts co = { .scheduler_name = "preemptd", .pdb_policy = policy };
	act_opts ao = { .scheduler_name = "preemptd", .identity = "bench", .writer = { .max_in_flight = 1u << 30 },
		        .pdb_policy = policy };
	shadow_opts so = { .scheduler_name = "preemptd", .clock = bench_clock };
	if (queue_new(NULL, T0, &l->q) < 0 || cluster_new(l->q, &co, &l->c) < 0 || cycle_new(l->q, l->c, &l->cy) < 0 ||
	    watch_new(NULL, NULL, l->c, NULL, &l->w) < 0 || act_new(NULL, &l->sink.t, l->c, &ao, &l->a) < 0 ||
	    (shadowing && shadow_new(l->q, l->c, &so, &l->sh) < 0)) {
		fprintf(stderr, "bench-preemptd: out of memory\n");
		exit(1);
	}
	cycle_decision_init(&l->d);
}

static void loop_done(struct loop *l)
{
	cycle_decision_done(&l->d);
	shadow_free(l->sh);
	act_free(l->a);
	watch_free(l->w);
	cycle_free(l->cy);
	cluster_free(l->c);
	queue_free(l->q);
	free(l->sink.q);
}

/* The "pdbs" stream's line of budget k (they are in order), for the watch to bring it anew. */
static void rewatch_budget(struct loop *l, const char *pdbs, int k)
{
	const char *line = pdbs;
	for (int i = 0; i < k && line; i++)
		if ((line = strchr(line, '\n')))
			line++;
	const char *end = line ? strchr(line, '\n') : NULL;
	if (!end || watch_replay(l->w, CLUSTER_PDBS, line, (size_t)(end - line) + 1) < 0) {
		fprintf(stderr, "bench-preemptd: budget %d: replay failed\n", k);
		exit(1);
	}
}

/* What the daemon does after watch events: cycles while activeQ has pods, decisions to the act
 * stage, the answers in (and the budgets they refused, anew from the watch). */
static void loop_run(struct loop *l)
{
	pp_err err = { "" };
	int r;

	while ((r = cycle_run_one(l->cy, &l->d, &err)) > 0) {
		l->decisions[l->d.kind]++;
		if (l->rec && (l->d.kind == DECISION_BIND || l->d.kind == DECISION_PREEMPT))
			record_decision(l->rec, &l->d);
		act_decision(l->a, &l->d, T0);
	}
	if (r < 0) {
		fprintf(stderr, "bench-preemptd: cycle: %s\n", err.msg);
		exit(1);
	}
	sink_drain(&l->sink);
	for (size_t i = 0; l->pdbs && i < l->sink.n_rewatch; i++)
		rewatch_budget(l, l->pdbs, l->sink.rewatch[i]);
	l->sink.n_rewatch = 0;
}

/* Until nothing more happens: answers may send pods back to activeQ (a withdrawn preemption). */
static void loop_settle(struct loop *l)
{
	do
		loop_run(l);
	while (l->sink.n || queue_has_active(l->q));
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "re")) || fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "bench-preemptd: %s: cannot read\n", path);
		exit(1);
	}
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

static void replay(struct loop *l, cluster_kind k, const char *buf, size_t len, bool run_between)
{
	for (size_t off = 0; off < len; off += CHUNK) {
		size_t n = len - off < CHUNK ? len - off : CHUNK;
		if (watch_replay(l->w, k, buf + off, n) < 0) {
			fprintf(stderr, "bench-preemptd: replay failed\n");
			exit(1);
		}
		if (run_between)
			loop_run(l);
	}
}

static void load(struct loop *l, const char *dir, bool with_budgets)
{
	static const struct { const char *file; cluster_kind kind; } streams[] = {
		{ "priorityclasses", CLUSTER_CLASSES }, { "nodes", CLUSTER_NODES }, { "pods", CLUSTER_PODS },
		{ "pdbs", CLUSTER_PDBS } };
	for (size_t i = 0; i < (with_budgets ? 4u : 3u); i++) {
		size_t len;
		char *buf = slurp(dir, streams[i].file, &len);
		replay(l, streams[i].kind, buf, len, false);
		free(buf);
	}
}

/* --- the shadow phase ------------------------------------------------------------------------- */

/* The start of each line of a stream. */
static const char **lines_of(char *buf, size_t *n)
{
	size_t cap = 1024;
	const char **v = must(malloc(cap * sizeof(*v)));

	*n = 0;
	for (char *p = buf; *p;) {
		char *nl = strchr(p, '\n');
		if (*n == cap)
			v = must(realloc(v, (cap *= 2) * sizeof(*v)));
		v[(*n)++] = p;
		p = nl ? nl + 1 : p + strlen(p);
	}
	return v;
}

/* The line of gen-cluster.py's stream of pods named FORMAT % i, by its number (the streams are in
 * that order). */
/* The bound pods a node of the streams holds (gen-cluster.py --pods-per-node), from the load. */
static size_t pods_per_node = 4;

static const char *line_named(const char **lines, size_t n, const char *name, const char *format)
{
	unsigned a = 0, b = 0;
	int k = sscanf(name, format, &a, &b);
	size_t i = k == 2 ? (size_t)a * pods_per_node + b : (size_t)a; /* bench-NODE-K */
	if (k < 1 || i >= n) {
		fprintf(stderr, "bench-preemptd: no pod %s in the streams\n", name);
		exit(1);
	}
	return lines[i];
}

/* Feeds one watch event: LINE (an ADDED event of the streams) as TYPE, with INSERT placed right
 * after the first "AT" of it (NULL: none). */
static void feed(struct loop *l, const char *line, const char *type, const char *at, const char *insert)
{
	static const char added[] = "{\"type\":\"ADDED\",";
	size_t len = strcspn(line, "\n"), used = 0;
	char *ev = NULL;
	FILE *f = must(open_memstream(&ev, &used));
	const char *body = line + sizeof(added) - 1, *cut = at ? strstr(body, at) : NULL;

	if (strncmp(line, added, sizeof(added) - 1) || (at && (!cut || cut >= line + len))) {
		fprintf(stderr, "bench-preemptd: unexpected stream line\n");
		exit(1);
	}
	if (!cut)
		cut = line + len;
	else
		cut += strlen(at);
	fprintf(f, "{\"type\":\"%s\",%.*s%s%.*s\n", type, (int)(cut - body), body, insert ? insert : "",
	        (int)(line + len - cut), cut);
	fclose(f);
	if (watch_replay(l->w, CLUSTER_PODS, ev, used) < 0) {
		fprintf(stderr, "bench-preemptd: shadow replay failed\n");
		exit(1);
	}
	free(ev);
}

/* Another scheduler's decisions (r: a loop's record of its own), one pod at a time, as its watch
 * shows them, to a shadow of it on a fresh loop; the CPU time of it all, and the shadow's verdicts. */
static double shadow_replay(const char *dir, const char *stream, const char *format, const struct record *r,
                            shadow_stats *st)
{
	struct loop l;
	size_t len, n_pending, n_bound;
	char *pending = slurp(dir, stream, &len), *bound = slurp(dir, "pods", &len), ins[256];
	const char **pl = lines_of(pending, &n_pending), **bl = lines_of(bound, &n_bound);
	double c0;

	loop_init(&l, PP_PDB_PREFER, true);
	load(&l, dir, false);
	c0 = cpu_s();
	for (size_t i = 0; i < r->n; i++) {
		const struct choice *c = &r->c[i];
		const char *line = line_named(pl, n_pending, c->pod, format);
		feed(&l, line, "ADDED", NULL, NULL);
		if (c->n_victims) {
			snprintf(ins, sizeof(ins), "\"nominatedNodeName\":\"%s\",", c->node);
			feed(&l, line, "MODIFIED", "\"status\":{", ins);
		}
		for (size_t k = 0; k < c->n_victims; k++) {
			const char *v = line_named(bl, n_bound, c->victims[k], "bench-%u-%u");
			feed(&l, v, "MODIFIED", "\"metadata\":{",
			     "\"deletionTimestamp\":\"2024-05-01T10:01:00Z\",\"deletionGracePeriodSeconds\":30,");
			feed(&l, v, "DELETED", NULL, NULL);
		}
		snprintf(ins, sizeof(ins), "\"nodeName\":\"%s\",", c->node);
		feed(&l, line, "MODIFIED", "\"spec\":{", ins);
	}
	double cpu = cpu_s() - c0;
	shadow_get_stats(l.sh, st);
	loop_done(&l);
	free(pl);
	free(bl);
	free(pending);
	free(bound);
	return cpu;
}

static int shadow_phase(const char *dir, const struct record *binds, const struct record *preempts)
{
	static const char *const kinds[] = { "bind", "preempt" };
	const struct record *recs[] = { binds, preempts };
	static const char *const streams[] = { "fit", "preempt" }, *const formats[] = { "fit-%u", "preemptor-%u" };
	int failed = 0;

	for (int k = 0; k < 2; k++) {
		shadow_stats st;
		double cpu = shadow_replay(dir, streams[k], formats[k], recs[k], &st);
		unsigned long agree = (unsigned long)st.decisions[k][1], disagree = 0;
		for (int j = 0; j < SHADOW_KINDS; j++)
			disagree += (unsigned long)st.decisions[j][0] + (j == k ? 0 : (unsigned long)st.decisions[j][1]);
		printf("shadow: %zu %s decisions of another scheduler compared in %.3f s of CPU: %.0f per CPU-second "
		       "(%lu agree, %lu not, %lu uncompared; their watch events decoded and applied too)\n",
		       recs[k]->n, kinds[k], cpu, (double)recs[k]->n / cpu, agree, disagree,
		       (unsigned long)st.uncompared);
		if (agree != recs[k]->n)
			failed = 1;
	}
	if (failed)
		fprintf(stderr, "bench-preemptd: the shadow disagrees with the loop's own decisions\n");
	return failed;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* --- preemptctl's decoded cluster, for the memory comparison ------------------------------------ */

/* The objects of the streams as one List, decoded and built as preemptctl builds a snapshot. */
static size_t snapshot_heap(const char *dir)
{
	static const char *const files[] = { "priorityclasses", "nodes", "pods" };
	size_t before = heap_bytes(), total = 0, used;
	char *list;
	FILE *f = open_memstream(&list, &total);
	k8s_cluster kc;
	model m = { 0 };
	diag d;

	fputs("{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[", f);
	bool first = true;
	for (size_t i = 0; i < 3; i++) {
		size_t len;
		char *buf = slurp(dir, files[i], &len);
		for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
			char *obj = strstr(line, "\"object\":");
			size_t ol;
			if (!obj)
				continue;
			obj += strlen("\"object\":");
			ol = strlen(obj);
			if (ol && obj[ol - 1] == '}')
				ol--; /* the event's closing brace */
			fprintf(f, "%s%.*s", first ? "" : ",", (int)ol, obj);
			first = false;
		}
		free(buf);
	}
	fputs("]}", f);
	fclose(f);
	before = heap_bytes() - total; /* the text is not the decoded cluster */
	diag_init(&d, stderr);
	k8s_cluster_init(&kc);
	if (k8s_load_string(&kc, "snapshot", list, total, &d) < 0 || model_build(&m, &kc, T0, &d) < 0) {
		fprintf(stderr, "bench-preemptd: the snapshot does not load\n");
		exit(1);
	}
	free(list);
	used = heap_bytes() - before;
	model_done(&m);
	k8s_cluster_done(&kc);
	return used;
}

/* Victims each preemptor needs: 3 at scheduler_perf's 4 pods a node, more when the nodes hold more
 * and smaller pods (BENCH_VICTIMS, from gen-cluster.py --victims-needed). */
static unsigned long victims_each = 3;

/* What issue 28 adds to a preemption: a deadline per nomination, the budget's gate. */
struct brakes {
	const char *name;
	int64_t after_grace_s;       /* 0: nominations never end */
	unsigned victims_per_minute; /* 0: no budget */
};

/* One run of the preempt stream with brakes b; rec: where its decisions are recorded (NULL: not). */
static int bench_preempt(const char *dir, const struct brakes *b, struct record *rec)
{
	struct loop l;
	budget *bu = NULL;
	size_t len;
	char *pre;
	double t0, t1, c0, c1;

	loop_init(&l, PP_PDB_PREFER, false);
	load(&l, dir, false);
	l.rec = rec;
	if (cycle_set_nomination_timeout(l.cy, 0, b->after_grace_s * 1000000000LL) < 0)
		return -1;
	if (b->victims_per_minute) {
		budget_opts bo = { .per_minute = b->victims_per_minute };
		if (budget_new(&bo, &bu) < 0)
			return -1;
		cycle_set_budget(l.cy, bu);
	}
	pre = slurp(dir, "preempt", &len);
	t0 = now_s();
	c0 = cpu_s();
	replay(&l, CLUSTER_PODS, pre, len, true);
	loop_run(&l);
	t1 = now_s();
	c1 = cpu_s();
	unsigned long n = l.decisions[DECISION_PREEMPT];
	printf("preempt, %s: %lu preemptions in %.3f s: %.0f preemptions/s; %.3f s of CPU: %.0f per CPU-second (%lu "
	       "victims deleted, %lu status patches, %lu events)\n",
	       b->name, n, t1 - t0, (double)n / (t1 - t0), c1 - c0, (double)n / (c1 - c0), l.sink.deletes,
	       l.sink.patches, l.sink.events);
	int r = 0;
	if (!n || l.sink.deletes != victims_each * n || l.decisions[DECISION_UNSCHEDULABLE] || l.decisions[DECISION_POSTPONED]) {
		fprintf(stderr, "bench-preemptd: %lu preemptions, %lu deletes, %lu unschedulable, %lu postponed\n", n,
		        l.sink.deletes, l.decisions[DECISION_UNSCHEDULABLE], l.decisions[DECISION_POSTPONED]);
		r = -1;
	}
	free(pre);
	loop_done(&l);
	budget_free(bu);
	return r;
}

/* budgets: the same preemptions beside 250 PodDisruptionBudgets, --pdb prefer then strict. */
static int budgets(const char *dir, char *pre, size_t len)
{
	static const pp_pdb_policy policies[] = { PP_PDB_PREFER, PP_PDB_STRICT };
	int status = 0;
	size_t plen;
	char *pdbs = slurp(dir, "pdbs", &plen);

	for (size_t k = 0; k < 2; k++) {
		struct loop l;
		if (policies[k] == PP_PDB_STRICT && victims_each > 3) {
			/* the budgets allow 3 disruptions each and every node's pods are under one budget */
			printf("budgets, --pdb strict: not run (%lu victims a preemptor, budgets allow 3)\n", victims_each);
			continue;
		}
		double t0, t1, c0, c1;
		loop_init(&l, policies[k], false);
		load(&l, dir, true);
		l.sink.every = 20;
		l.pdbs = pdbs;
		t0 = now_s();
		c0 = cpu_s();
		replay(&l, CLUSTER_PODS, pre, len, true);
		loop_settle(&l);
		t1 = now_s();
		c1 = cpu_s();
		evict_stats es;
		evict_get_stats(act_evictor(l.a), &es);
		cluster_counts cc;
		cluster_get_counts(l.c, &cc);
		unsigned long done = policies[k] == PP_PDB_STRICT ? (unsigned long)es.completed : l.decisions[DECISION_PREEMPT];
		printf("budgets, --pdb %s: %lu preemptions in %.3f s: %.0f/s; %.3f s of CPU: %.0f per CPU-second (%lu "
		       "decisions, %lu victims deleted, %lu evictions, %lu refused, %lu withdrawn and retried, %lu "
		       "unschedulable attempts, %zu pods protected, %lu status patches, %lu events)\n",
		       pp_pdb_policy_name(policies[k]), done, t1 - t0, (double)done / (t1 - t0), c1 - c0,
		       (double)done / (c1 - c0), l.decisions[DECISION_PREEMPT], l.sink.deletes, l.sink.evictions,
		       l.sink.refused, (unsigned long)(es.withdrawn + es.withdrawn_partial),
		       l.decisions[DECISION_UNSCHEDULABLE], cc.protected_, l.sink.patches, l.sink.events);
		/* every preemptor preempted once in the end; strict never past a budget, nor through a DELETE */
		if (done != 2000 || (policies[k] == PP_PDB_STRICT &&
		                     (l.sink.deletes || !l.sink.refused || es.withdrawn + es.withdrawn_partial != l.sink.refused ||
		                      es.evicted + l.sink.refused != l.sink.evictions))) {
			fprintf(stderr, "bench-preemptd: --pdb %s: %lu preemptions completed, %lu deletes, %lu evictions, %lu "
			        "refused\n", pp_pdb_policy_name(policies[k]), done, l.sink.deletes, l.sink.evictions,
			        l.sink.refused);
			status = 1;
		}
		loop_done(&l);
	}
	free(pre);
	free(pdbs);
	return status;
}

/* --- the relist phase: a list answered in pages, a relist after 410 Gone ------------------------- */

/* One object of a list: a span of a stream's line, with text inserted after the first "at" of it. */
struct item {
	const char *p;
	size_t n;
	const char *at, *insert; /* NULL: as it is */
};

/* The objects of a stream of ADDED events, in order. */
static struct item *items_of(const char *buf, size_t *n)
{
	size_t cap = 1024;
	struct item *v = must(malloc(cap * sizeof(*v)));

	*n = 0;
	for (const char *line = buf; *line;) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *obj = strstr(line, "\"object\":");
		if (obj && obj < end) {
			obj += strlen("\"object\":");
			if (*n == cap)
				v = must(realloc(v, (cap *= 2) * sizeof(*v)));
			/* the event's closing brace is not the object's */
			v[(*n)++] = (struct item){ .p = obj, .n = (size_t)(end - obj) - 1 };
		}
		line = nl ? nl + 1 : end;
	}
	return v;
}

/* What the API server was asked and answered for one list. */
struct served {
	unsigned long pages, items;
	size_t bytes;
	char first[512], second[512], watch[512]; /* the first two pages' requests, the watch after */
	unsigned long bad_pages; /* after the first: without continue, or with a resourceVersion */
	double build_s, build_cpu_s; /* the bench's own time making the pages, not preemptd's */
};

static const char *const list_kinds[CLUSTER_KINDS] = {
	[CLUSTER_CLASSES] = "PriorityClassList", [CLUSTER_NODES] = "NodeList",
	[CLUSTER_PDBS] = "PodDisruptionBudgetList", [CLUSTER_PODS] = "PodList" };

/* Answers the lists the reflector of kind k asks until it asks for the watch: the items (skip[i]
 * set: not listed) in pages of the limit it asks, continue tokens as offsets, as an API server
 * whose list comes from storage pages them — or whole whatever the limit, as the watch cache
 * answers (whole); the loop run between chunks as the daemon runs it after every read
 * (run_between). */
static void serve_list(struct loop *l, cluster_kind k, const struct item *items, size_t n, const char *skip,
                       const char *rv, bool whole, bool run_between, struct served *sv)
{
	memset(sv, 0, sizeof(*sv));
	for (;;) {
		const char *rq = watch_replay_request(l->w, k), *lim, *cont;
		if (!rq) {
			fprintf(stderr, "bench-preemptd: %s: the reflector asks nothing\n", list_kinds[k]);
			exit(1);
		}
		if (strstr(rq, "watch=1")) {
			snprintf(sv->watch, sizeof(sv->watch), "%s", rq);
			return;
		}
		double b0 = now_s(), c0 = cpu_s();
		if (sv->pages == 0)
			snprintf(sv->first, sizeof(sv->first), "%s", rq);
		else if (sv->pages == 1)
			snprintf(sv->second, sizeof(sv->second), "%s", rq);
		if (sv->pages && (!strstr(rq, "continue=") || strstr(rq, "resourceVersion=")))
			sv->bad_pages++;
		sv->pages++;
		size_t limit = !whole && (lim = strstr(rq, "limit=")) ? strtoul(lim + 6, NULL, 10) : 0, off = 0;
		if ((cont = strstr(rq, "continue=page-")))
			off = strtoul(cont + strlen("continue=page-"), NULL, 10);
		/* this page's items end before e; the next page starts at the next listed one */
		size_t e = off, listed = 0;
		for (; e < n && (!limit || listed < limit); e++)
			listed += !(skip && skip[e]);
		size_t next = e;
		while (next < n && skip && skip[next])
			next++;
		char *body = NULL;
		size_t blen = 0;
		FILE *f = must(open_memstream(&body, &blen));
		/* metadata before items, as the API server writes them */
		fprintf(f, "{\"kind\":\"%s\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%s\"", list_kinds[k], rv);
		if (next < n)
			fprintf(f, ",\"continue\":\"page-%zu\"", next);
		fputs("},\"items\":[", f);
		bool first = true;
		for (size_t i = off; i < e; i++) {
			const struct item *it = &items[i];
			const char *cut = it->at ? strstr(it->p, it->at) : NULL;
			if (skip && skip[i])
				continue;
			fputs(first ? "" : ",", f);
			first = false;
			if (cut && cut < it->p + it->n) {
				cut += strlen(it->at);
				fprintf(f, "%.*s%s%.*s", (int)(cut - it->p), it->p, it->insert, (int)(it->p + it->n - cut), cut);
			} else
				fprintf(f, "%.*s", (int)it->n, it->p);
		}
		fputs("]}", f);
		fclose(f);
		sv->items += listed;
		sv->bytes += blen;
		sv->build_s += now_s() - b0;
		sv->build_cpu_s += cpu_s() - c0;
		for (size_t o = 0; o < blen; o += CHUNK) {
			if (watch_replay(l->w, k, body + o, blen - o < CHUNK ? blen - o : CHUNK) < 0) {
				fprintf(stderr, "bench-preemptd: %s page %lu: does not decode\n", list_kinds[k], sv->pages);
				exit(1);
			}
			if (run_between)
				loop_run(l);
		}
		free(body);
		if (watch_replay_end(l->w, k, 200) < 0) {
			fprintf(stderr, "bench-preemptd: %s: the list does not end\n", list_kinds[k]);
			exit(1);
		}
	}
}

/* The preemptors of the record nominated in the model as recorded; the pods queued. */
static size_t nominated_as_recorded(struct loop *l, const struct record *rec)
{
	size_t n = 0;
	for (size_t i = 0; i < rec->n; i++) {
		pp_pod_info pi;
		if (rec->c[i].n_victims && pp_cluster_pod_info(queue_cluster(l->q), "default", rec->c[i].pod, &pi) == 0 &&
		    !pi.node_name && pi.nominated_node_name && !strcmp(pi.nominated_node_name, rec->c[i].node))
			n++;
	}
	return n;
}

static size_t queued(struct loop *l)
{
	queue_counts qc;
	queue_get_counts(l->q, &qc);
	return qc.active + qc.backoff + qc.unschedulable;
}

/*
 * relist: start-up through lists (every kind listed as the reflector asks, in pages), then the
 * "preempt" stream through the watch until every preemptor is nominated and waits for its victims;
 * then the pods' watch says 410 Gone and the reflector relists, answered in pages of the limit it
 * asks, with what the API server holds by then: each preemptor with its nomination, the victims of
 * the second half of the preemptions terminating, those of the first half gone (their grace period
 * ended while preemptd was blind) and every 100th other bound pod deleted by someone else.
 * Blind: from the 410 to the list's end (the model synced, the watch asked anew), the loop run
 * between chunks as the daemon runs it; then the loop's first turn after it.
 */
static int relist_phase(const char *dir, bool whole)
{
	static const char *const files[CLUSTER_KINDS] = { [CLUSTER_CLASSES] = "priorityclasses",
		[CLUSTER_NODES] = "nodes", [CLUSTER_PDBS] = NULL, [CLUSTER_PODS] = "pods" };
	static const cluster_kind order[] = { CLUSTER_CLASSES, CLUSTER_NODES, CLUSTER_PDBS, CLUSTER_PODS };
	struct loop l;
	struct record rec = { 0 };
	char *buf[CLUSTER_KINDS] = { 0 };
	struct item *items[CLUSTER_KINDS] = { 0 };
	size_t n_items[CLUSTER_KINDS] = { 0 }, len;
	struct served sv[CLUSTER_KINDS], re;
	unsigned long pages = 0, items_listed = 0;
	double build = 0, build_cpu = 0;
	int status = 0;

	loop_init(&l, PP_PDB_PREFER, false);
	for (cluster_kind k = 0; k < CLUSTER_KINDS; k++)
		if (files[k]) {
			buf[k] = slurp(dir, files[k], &len);
			items[k] = items_of(buf[k], &n_items[k]);
		}

	/* start-up: the first lists, as the reflector asks them */
	double t0 = now_s(), c0 = cpu_s();
	watch_start(l.w);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		cluster_kind k = order[i];
		serve_list(&l, k, items[k], n_items[k], NULL, "5000", whole, false, &sv[k]);
		pages += sv[k].pages;
		items_listed += sv[k].items;
		build += sv[k].build_s;
		build_cpu += sv[k].build_cpu_s;
	}
	double t1 = now_s(), c1 = cpu_s();
	cluster_counts cc;
	cluster_get_counts(l.c, &cc);
	const char *name = whole ? "relist, watch cache" : "relist, storage";
	printf("%s, start-up: %lu objects in %lu list pages (pods: %lu pages, %.1f MiB) to synced in %.3f s, %.3f s "
	       "of CPU (the bench's page making taken out); first page %s, then %s\n",
	       name, items_listed, pages, sv[CLUSTER_PODS].pages, sv[CLUSTER_PODS].bytes / 1048576.0, t1 - t0 - build,
	       c1 - c0 - build_cpu, sv[CLUSTER_PODS].first, sv[CLUSTER_PODS].second);
	if (!watch_synced(l.w) || cc.pods != n_items[CLUSTER_PODS] || cc.nodes != n_items[CLUSTER_NODES] ||
	    !strstr(sv[CLUSTER_PODS].first, "resourceVersion=0&limit=500") || sv[CLUSTER_PODS].bad_pages ||
	    !strstr(sv[CLUSTER_PODS].watch, "resourceVersion=5000")) {
		fprintf(stderr, "bench-preemptd: %s, start-up: synced %d, %zu pods, %zu nodes, first request %s, %lu pages "
		        "without continue, watch %s\n", name, watch_synced(l.w), cc.pods, cc.nodes, sv[CLUSTER_PODS].first,
		        sv[CLUSTER_PODS].bad_pages, sv[CLUSTER_PODS].watch);
		status = 1;
		goto out;
	}
	size_t ppn = cc.nodes ? cc.pods / cc.nodes : 4;

	/* the preemptors, through the watch, until every one is nominated */
	l.rec = &rec;
	char *pre = slurp(dir, "preempt", &len);
	replay(&l, CLUSTER_PODS, pre, len, true);
	loop_run(&l);
	l.rec = NULL;
	size_t n_pre = 0;
	struct item *pre_items = items_of(pre, &n_pre);
	size_t nominated0 = nominated_as_recorded(&l, &rec), queued0 = queued(&l), pods0;
	cluster_get_counts(l.c, &cc);
	pods0 = cc.pods;

	/* what the API server holds when preemptd lists again */
	size_t n_bound = n_items[CLUSTER_PODS], n_all = n_bound + n_pre, gone = 0;
	struct item *all = must(calloc(n_all, sizeof(*all)));
	char *skip = must(calloc(n_all, 1)), (*noms)[128] = must(calloc(rec.n, sizeof(*noms)));
	memcpy(all, items[CLUSTER_PODS], n_bound * sizeof(*all));
	for (size_t i = 0; i < rec.n; i++)
		for (size_t v = 0; v < rec.c[i].n_victims; v++) {
			unsigned node, k;
			if (sscanf(rec.c[i].victims[v], "bench-%u-%u", &node, &k) != 2 || node * ppn + k >= n_bound)
				continue;
			size_t at = node * ppn + k;
			if (i < rec.n / 2)
				skip[at] = 1;
			else
				all[at].at = "\"metadata\":{",
				all[at].insert = "\"deletionTimestamp\":\"2024-05-01T10:01:00Z\",\"deletionGracePeriodSeconds\":30,";
		}
	for (size_t i = 0; i < n_bound; i += 100)
		if (!all[i].at)
			skip[i] = 1;
	for (size_t i = 0; i < n_bound; i++)
		gone += skip[i];
	for (size_t i = 0; i < n_pre; i++)
		all[n_bound + i] = pre_items[i];
	for (size_t i = 0; i < rec.n; i++) {
		unsigned p;
		if (!rec.c[i].n_victims || sscanf(rec.c[i].pod, "preemptor-%u", &p) != 1 || p >= n_pre)
			continue;
		snprintf(noms[i], sizeof(noms[i]), "\"nominatedNodeName\":\"%s\",", rec.c[i].node);
		all[n_bound + p].at = "\"status\":{";
		all[n_bound + p].insert = noms[i];
	}

	/* 410 Gone on the pods' watch, as the API server ends it */
	static const char gone410[] = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
	                              "\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: 2000 "
	                              "(6000)\",\"reason\":\"Expired\",\"code\":410}}\n";
	unsigned long preempted0 = l.decisions[DECISION_PREEMPT], bound0 = l.decisions[DECISION_BIND];
	t0 = now_s();
	c0 = cpu_s();
	if (watch_replay(l.w, CLUSTER_PODS, gone410, sizeof(gone410) - 1) < 0 || watch_replay_end(l.w, CLUSTER_PODS, 200) < 0) {
		fprintf(stderr, "bench-preemptd: the 410 does not replay\n");
		status = 1;
		goto out_relist;
	}
	serve_list(&l, CLUSTER_PODS, all, n_all, skip, "6000", whole, true, &re);
	t1 = now_s();
	c1 = cpu_s();
	size_t nominated1 = nominated_as_recorded(&l, &rec), queued1 = queued(&l), still = 0;
	cluster_get_counts(l.c, &cc);
	for (size_t i = 0; i < n_bound; i++) {
		pp_pod_info pi;
		char pod[64];
		const char *nm = strstr(all[i].p, "\"name\":\"");
		if (!skip[i] || !nm)
			continue;
		nm += strlen("\"name\":\"");
		snprintf(pod, sizeof(pod), "%.*s", (int)strcspn(nm, "\""), nm);
		still += pp_cluster_pod_info(queue_cluster(l.q), "default", pod, &pi) == 0;
	}
	unsigned long during = l.decisions[DECISION_PREEMPT] - preempted0;
	/* the loop's first turn after it, the clock past any backoff (10 s at most): the preemptors
	 * whose victims left while preemptd was blind bind to their nominated nodes */
	queue_counts qc;
	queue_get_counts(l.q, &qc);
	pp_err err = { "" };
	double t2 = now_s();
	if (cycle_advance(l.cy, T0 + 11000000000LL, NULL, NULL, &err) < 0) {
		fprintf(stderr, "bench-preemptd: relist: %s\n", err.msg);
		status = 1;
		goto out_relist;
	}
	loop_run(&l);
	double t3 = now_s();
	unsigned long bound = l.decisions[DECISION_BIND] - bound0;
	printf("%s: 410 Gone -> model synced in %.3f s, %.3f s of CPU (%lu pages, %lu pods, %.1f MiB; the bench's "
	       "page making taken out); then the loop's first turn %.3f s (%lu preemptors bound, their victims gone); "
	       "queued %zu -> %zu (active %zu, backoff %zu, unschedulable %zu), nominated %zu -> %zu, %zu deleted while "
	       "blind (%zu still in the model), pods %zu -> %zu, %lu preemptions while relisting; relist asked %s, "
	       "then %s\n",
	       name, t1 - t0 - re.build_s, c1 - c0 - re.build_cpu_s, re.pages, re.items, re.bytes / 1048576.0, t3 - t2, bound,
	       queued0, queued1, qc.active, qc.backoff, qc.unschedulable, nominated0, nominated1, gone, still, pods0,
	       cc.pods, during, re.first, re.second);
	if (queued1 != queued0 || nominated1 != nominated0 || nominated0 != rec.n || still || cc.pods != pods0 - gone ||
	    bound != rec.n / 2 ||
	    during || re.bad_pages || !strstr(re.watch, "resourceVersion=6000") ||
	    /* the relist asks for pages only from a server that paged the first list */
	    (whole ? strstr(re.first, "limit=") || re.pages != 1 : !strstr(re.first, "limit=500"))) {
		fprintf(stderr, "bench-preemptd: %s: queue %zu -> %zu, nominations %zu -> %zu of %zu, %zu deleted "
		        "pods kept, pods %zu -> %zu (%zu gone), %lu preemptions while relisting, %lu bound after (of "
		        "%zu), %lu pages without continue, relist %s, watch %s\n", name, queued0, queued1, nominated0, nominated1, rec.n,
		        still, pods0, cc.pods, gone, during, bound, rec.n / 2, re.bad_pages, re.first, re.watch);
		status = 1;
	}
out_relist:
	free(noms);
	free(skip);
	free(all);
	free(pre_items);
	free(pre);
out:
	record_done(&rec);
	loop_done(&l);
	for (cluster_kind k = 0; k < CLUSTER_KINDS; k++) {
		free(items[k]);
		free(buf[k]);
	}
	return status;
}

int main(int argc, char **argv)
{
	struct loop l;
	size_t len;
	char *fit;
	double t0, t1, c0, c1;

	if (argc != 2) {
		fprintf(stderr, "usage: bench-preemptd DIR (from tests/bench/gen-cluster.py --watch-dir DIR)\n");
		return 2;
	}
	const char *ve = getenv("BENCH_VICTIMS");
	if (ve && (victims_each = strtoul(ve, NULL, 10)) == 0) {
		fprintf(stderr, "bench-preemptd: BENCH_VICTIMS=%s: not a positive number\n", ve);
		return 2;
	}
	journal_setup(LOGGING_STDERR, "bench-preemptd");
	logging_set_max_priority(LOG_WARNING);
	const char *only = getenv("BENCH_ONLY");
	if (only && strcmp(only, "relist")) {
		fprintf(stderr, "bench-preemptd: BENCH_ONLY=%s: only \"relist\" is known\n", only);
		return 2;
	}
	if (only)
		return relist_phase(argv[1], false) | relist_phase(argv[1], true);

	/* load */
	size_t heap0 = heap_bytes();
	struct record bound = { 0 }, preempted = { 0 };
	loop_init(&l, PP_PDB_PREFER, false);
	l.rec = &bound;
	t0 = now_s();
	load(&l, argv[1], false);
	t1 = now_s();
	size_t live = heap_bytes() - heap0;
	cluster_counts cc;
	cluster_get_counts(l.c, &cc);
	if (cc.nodes)
		pods_per_node = cc.pods / cc.nodes;
	size_t snap = snapshot_heap(argv[1]);
	printf("load: %zu nodes, %zu pods replayed in %.3f s; live model %.1f MiB, preemptctl's decoded cluster "
	       "%.1f MiB (%.2fx)\n",
	       cc.nodes, cc.pods, t1 - t0, live / 1048576.0, snap / 1048576.0, (double)live / (double)snap);

	/* schedule: the fit stream, the loop between chunks */
	fit = slurp(argv[1], "fit", &len);
	size_t split = len;
	/* the last 1000 pods are kept for the latency phase */
	for (int k = 0, i = (int)len - 1; i > 0; i--)
		if (fit[i - 1] == '\n' && ++k == 1000) {
			split = (size_t)i;
			break;
		}
	t0 = now_s();
	c0 = cpu_s();
	replay(&l, CLUSTER_PODS, fit, split, true);
	loop_run(&l);
	t1 = now_s();
	c1 = cpu_s();
	unsigned long binds = l.sink.bindings;
	printf("schedule: %lu pods bound in %.3f s: %.0f pods/s; %.3f s of CPU: %.0f pods per CPU-second (stream in, "
	       "decode, queue, decide, %lu requests out)\n",
	       binds, t1 - t0, (double)binds / (t1 - t0), c1 - c0, (double)binds / (c1 - c0),
	       l.sink.bindings + l.sink.events);
	if (l.decisions[DECISION_BIND] != binds || l.sink.events != binds) {
		fprintf(stderr, "bench-preemptd: %lu binding decisions, %lu bindings, %lu events\n",
		        l.decisions[DECISION_BIND], binds, l.sink.events);
		return 1;
	}

	/* latency: one pod at a time */
	double lat[1000];
	size_t nlat = 0;
	for (char *p = fit + split; *p && nlat < 1000;) {
		char *nl = strchr(p, '\n'), name[64];
		const char *nm = strstr(p, "\"name\":\"");
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		snprintf(name, sizeof(name), "/pods/%.*s/binding", (int)(strchr(nm + 8, '"') - (nm + 8)), nm + 8);
		l.sink.watch_for = name;
		l.sink.seen_at = 0;
		t0 = now_s();
		if (watch_replay(l.w, CLUSTER_PODS, p, n) < 0)
			return 1;
		loop_run(&l);
		if (l.sink.seen_at == 0) {
			fprintf(stderr, "bench-preemptd: %s: no binding request\n", name);
			return 1;
		}
		lat[nlat++] = l.sink.seen_at - t0;
		p += n;
	}
	qsort(lat, nlat, sizeof(lat[0]), cmp_double);
	printf("latency: pod watch event -> binding request, %zu pods one at a time: median %.1f us, p99 %.1f us\n",
	       nlat, lat[nlat / 2] * 1e6, lat[nlat * 99 / 100] * 1e6);
	free(fit);
	loop_done(&l);

	/* preempt: a fresh loop at the same cluster for each setting, as kube-scheduler (nominations that
	 * never end, no budget: its decisions recorded for the shadow) and with issue 28's side by side */
	static const struct brakes runs[] = {
		{ "kube-scheduler's (nomination-timeout never)", 0, 0 },
		{ "preemptd's default (nomination-timeout grace+30s)", 30, 0 },
		{ "grace+30s and max-victims-per-minute 1000000", 30, 1000000 },
	};
	if (bench_preempt(argv[1], &runs[0], &preempted) < 0)
		return 1;

	/* shadow: the same decisions, as another scheduler's */
	int r = shadow_phase(argv[1], &bound, &preempted);
	record_done(&bound);
	record_done(&preempted);
	for (size_t i = 1; i < sizeof(runs) / sizeof(runs[0]); i++)
		if (bench_preempt(argv[1], &runs[i], NULL) < 0)
			r = 1;
	char *pre = slurp(argv[1], "preempt", &len);
	int b = budgets(argv[1], pre, len);
	int rl = relist_phase(argv[1], false);
	rl |= relist_phase(argv[1], true);
	return rl || b || r;
}
