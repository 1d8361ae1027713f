/* SPDX-License-Identifier: MIT */
/*
 * Kubernetes objects for controller unit tests, written as the API server sends them (JSON), and
 * a feeder that decodes them with kube/'s decoder into the live model — the path a watch event
 * takes, without a server. Static functions: include it from one test file.
 */
#ifndef TESTS_CONTROLLER_OBJECTS_H
#define TESTS_CONTROLLER_OBJECTS_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model-cluster.h"
#include "k8s.h"
#include "k8s_decode.h"
#include "kstream.h"

struct feed {
	cluster *c;
	int last; /* the model's answer for the last object */
	char err[1024];
};

static int feed_item(void *userdata, const kval *obj)
{
	struct feed *f = userdata;
	const char *kind = kval_str(kval_get(obj, "kind"));
	karena a = { 0 };
	diag d;
	int r;

	diag_init(&d, stderr);
	if (!strcmp(kind, "Pod")) {
		struct k8s_pod p;
		r = k8s_decode_pod(&a, &d, "test", obj, &p);
		if (r == 0)
			r = cluster_put_pod(f->c, &p, f->err, sizeof(f->err));
	} else {
		k8s_cluster kc;
		k8s_cluster_init(&kc);
		r = k8s_decode_object(&kc, &d, "test", obj, 0);
		if (r == 0 && kc.nnodes)
			r = cluster_put_node(f->c, &kc.nodes[0], f->err, sizeof(f->err));
		else if (r == 0 && kc.npdbs)
			r = cluster_put_pdb(f->c, &kc.pdbs[0], f->err, sizeof(f->err));
		else if (r == 0 && kc.nclasses)
			r = cluster_put_class(f->c, &kc.classes[0], f->err, sizeof(f->err));
		k8s_cluster_done(&kc);
	}
	karena_free(&a);
	f->last = r;
	return 0;
}

/* Decodes the JSON text (printf format) and puts the object into the model; returns the model's
 * answer (0, -EINVAL refused...). */
__attribute__((format(printf, 2, 3), unused))
static int put(cluster *c, const char *fmt, ...)
{
	char text[8192];
	struct feed f = { .c = c, .last = -EBADMSG };
	diag d;
	kstream *s = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	diag_init(&d, stderr);
	if (kstream_new(&s, KSTREAM_JSON, "test", &d, feed_item, &f) < 0)
		return -ENOMEM;
	if (kstream_feed(s, text, strlen(text)) < 0 || kstream_end(s) < 0)
		f.last = -EBADMSG;
	kstream_free(s);
	return f.last;
}

#define NODE_JSON(name, cpu)                                                                                   \
	"{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" name "\",\"labels\":"              \
	"{\"kubernetes.io/hostname\":\"" name "\"}},\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\","           \
	"\"memory\":\"32Gi\",\"pods\":\"110\"}}}"

/* A pod: ns/name, uid, resourceVersion, schedulerName, priority, cpu request, then the rest of
 * "spec" and "status" as JSON members (may be empty). */
__attribute__((unused))
static int put_pod(cluster *c, const char *name, const char *uid, unsigned rv, const char *scheduler, int prio,
                   const char *cpu, const char *spec_extra, const char *status)
{
	return put(c,
	           "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"default\",\"name\":\"%s\","
	           "\"uid\":\"%s\",\"resourceVersion\":\"%u\",\"creationTimestamp\":\"2024-05-01T10:00:00Z\"},"
	           "\"spec\":{\"schedulerName\":\"%s\",\"priority\":%d,\"containers\":[{\"name\":\"c\","
	           "\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]%s%s},\"status\":{%s}}",
	           name, uid, rv, scheduler, prio, cpu, spec_extra && *spec_extra ? "," : "", spec_extra ? spec_extra : "",
	           status ? status : "");
}

#endif
