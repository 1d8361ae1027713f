/* SPDX-License-Identifier: MIT */
#include "refusal.h"

#include <errno.h>

#include "jsonw.h"
#include "k8s.h"

const char *refusal_plugin(const pp_admission *a)
{
	(void)a; /* the one admission plugin modelled so far besides Priority, whose refusals reject the input */
	return "ResourceQuota";
}

static const char *why(const pp_admission *a)
{
	switch (pp_admission_refusal(a)) {
	case PP_REFUSAL_UNCOVERED_SCOPES:
		return "the admission configuration (limitedResources.matchScopes) allows these scopes only in a "
		       "namespace where the scopes of a ResourceQuota cover them, and none here does";
	case PP_REFUSAL_UNCOVERED_RESOURCES:
		return "the admission configuration (limitedResources.matchContains) allows these resources only in a "
		       "namespace where a ResourceQuota limits them, and none here does";
	case PP_REFUSAL_EXCEEDED:
		return "creating it would take the ResourceQuota above its hard limits";
	case PP_REFUSAL_CONSTRAINTS:
		return "the ResourceQuota limits cpu or memory, so every container must state them";
	case PP_REFUSAL_STATUS_UNKNOWN:
		return "the ResourceQuota limits resources its status does not count yet (the quota controller has not "
		       "synced it)";
	case PP_REFUSAL_NONE:
		break;
	}
	return "";
}

void refusal_explain(FILE *f, const char *namespace_, const char *name, const pp_admission *a)
{
	const char *quota = pp_admission_quota(a);
	fprintf(f, "pod %s/%s: refused at admission by the %s plugin (HTTP %d): %s\n", namespace_, name,
	        refusal_plugin(a), pp_admission_http_status(a), pp_admission_message(a));
	fprintf(f, "  why: %s%s%s\n", why(a), quota ? ": " : "", quota ? quota : "");
	fprintf(f, "decision: refused at admission: the pod is never created, so nothing is scheduled and nothing "
	           "is preempted\n");
}

static void put_pod(FILE *out, const char *namespace_, const char *name)
{
	char pod[K8S_LABEL_MAX];
	snprintf(pod, sizeof(pod), "%s/%s", namespace_, name);
	jsonw_fput_string(out, pod);
}

/* {HEAD"pod":"ns/name",MIDDLE"PLUGIN_KEY":"ResourceQuota","MESSAGE_KEY":"..."} and a newline */
static int write_refusal(FILE *out, const char *head, const char *namespace_, const char *name, const char *middle,
                         const char *plugin_key, const char *message_key, const pp_admission *a)
{
	fprintf(out, "{%s\"pod\":", head);
	put_pod(out, namespace_, name);
	fprintf(out, ",%s\"%s\":", middle, plugin_key);
	jsonw_fput_string(out, refusal_plugin(a));
	fprintf(out, ",\"%s\":", message_key);
	jsonw_fput_string(out, pp_admission_message(a));
	fputs("}\n", out);
	return ferror(out) ? -EIO : 0;
}

int refusal_json(FILE *out, const char *namespace_, const char *name, const pp_admission *a)
{
	if (write_refusal(out, "", namespace_, name, "\"node\":null,", "refused", "reason", a) < 0)
		return -EIO;
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}

int refusal_event(FILE *out, const char *namespace_, const char *name, const pp_admission *a)
{
	return write_refusal(out, "\"time\":0,\"event\":\"refused\",", namespace_, name, "", "plugin", "message", a);
}
