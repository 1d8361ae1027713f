/* SPDX-License-Identifier: MIT */
#include "snapshot.h"

#include <stdio.h>
#include <stdlib.h>

static void pod_free_strings(pod_info *p)
{
	free(p->cgroup);
	free(p->namespace_);
	free(p->name);
	free(p->priority_class);
	free(p->containers);
	p->cgroup = p->namespace_ = p->name = p->priority_class = NULL;
	p->containers = NULL;
	p->n_containers = 0;
}

void snapshot_pod_info_done(pod_info *p)
{
	if (p)
		pod_free_strings(p);
}

void snapshot_done(snapshot *s)
{
	for (size_t i = 0; i < s->n_pods; i++)
		snapshot_pod_info_done(&s->pods[i]);
	free(s->pods);
	s->pods = NULL;
	s->n_pods = 0;
}

const char *snapshot_pod_display_name(const pod_info *p, char *buf, size_t size)
{
	const char *name = p->name ? p->name : p->uid;
	if (p->namespace_ && p->namespace_[0])
		snprintf(buf, size, "%s/%s", p->namespace_, name);
	else
		snprintf(buf, size, "%s", name);
	return buf;
}

const char *snapshot_pod_qos_name(pod_qos q)
{
	static const char *const n[] = { "", "Guaranteed", "Burstable", "BestEffort" };
	return q <= QOS_BESTEFFORT ? n[q] : "";
}

const char *snapshot_disk_layout_name(disk_layout l)
{
	switch (l) {
	case LAYOUT_SINGLE:
		return "single filesystem";
	case LAYOUT_DEDICATED:
		return "dedicated imagefs";
	case LAYOUT_SPLIT:
		return "split (images apart from writable layers)";
	default:
		return "unknown";
	}
}
