/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: pod descriptor files (/run/evictd/pods/<uid>.conf), read through
 * podmeta_apply_descriptor() from a private directory exactly as evictd reads them.
 * Invariants: a rejected descriptor changes nothing and says why; an accepted one yields a valid
 * namespace/name, a priority that agrees with its class, and non-negative requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "podmeta.h"
#include "fuzz-common.h"

/* fuzz-links: agent lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int pm_dirfd = -1;
static pp_pcset *pm_pcset;

static void pm_setup(void)
{
	char path[256];
	if (pm_dirfd >= 0)
		return;
	snprintf(path, sizeof(path), "%s/fuzz-podmeta.%d", fuzz_tmpdir(), (int)getpid());
	FUZZ_ASSERT(mkdir(path, 0755) == 0 || errno == EEXIST);
	pm_dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	FUZZ_ASSERT(pm_dirfd >= 0);
	FUZZ_ASSERT(pp_pcset_new(&pm_pcset) == 0);
	FUZZ_ASSERT(pp_pcset_add(pm_pcset, "high-priority", 1000000, false, PP_PREEMPT_LOWER_PRIORITY, NULL) == 0);
	FUZZ_ASSERT(pp_pcset_add(pm_pcset, "low", -10, true, PP_PREEMPT_NEVER, NULL) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[512] = "";
	pod_info pod;
	int fd, r;

	pm_setup();
	/* Written as root, mode 0644: the trusted case, so that parsing is what gets explored. */
	fd = openat(pm_dirfd, "fuzz.conf", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FUZZ_ASSERT(fd >= 0);
	FUZZ_ASSERT(fchmod(fd, 0644) == 0);
	FUZZ_ASSERT(size == 0 || write(fd, data, size) == (ssize_t)size);
	close(fd);

	memset(&pod, 0, sizeof(pod));
	snprintf(pod.uid, sizeof(pod.uid), "fuzz");
	pod.namespace_ = strdup("");
	pod.name = strdup("fuzz");
	pod.priority = 77;
	pod.memory_request = 88;
	pod.cpu_request_milli = 99;
	pod.termination_grace_usec = POD_DEFAULT_GRACE_USEC;
	FUZZ_ASSERT(pod.namespace_ && pod.name);

	r = podmeta_apply_descriptor(pm_dirfd, &pod, pm_pcset, &pod, why, sizeof(why));
	if (r < 0) {
		FUZZ_CHECK(why[0], "rejected (%d) without a reason", r);
		FUZZ_CHECK(size > POD_DESCRIPTOR_MAX ? r == -EFBIG : r == -EINVAL, "r = %d for %zu bytes: %s", r, size,
		           why);
		FUZZ_CHECK(pod.priority == 77 && pod.memory_request == 88 && pod.cpu_request_milli == 99 &&
		                   strcmp(pod.name, "fuzz") == 0 && !pod.has_descriptor,
		           "a rejected descriptor changed the pod: %s", why);
	} else {
		FUZZ_CHECK(r == 1, "r = %d for an existing descriptor", r);
		FUZZ_ASSERT(pod.has_descriptor);
		FUZZ_ASSERT(pod.namespace_ && pod.name);
		FUZZ_CHECK(pod.namespace_[0] == 0 || pp_is_dns_subdomain(pod.namespace_), "namespace \"%s\"",
		           pod.namespace_);
		FUZZ_CHECK(pp_is_dns_subdomain(pod.name) || strcmp(pod.name, "fuzz") == 0, "name \"%s\"", pod.name);
		FUZZ_ASSERT(pod.memory_request >= 0 && pod.cpu_request_milli >= 0 && pod.storage_request >= 0);
		if (pod.priority_class) {
			const pp_priority_class *c = pp_pcset_find(pm_pcset, pod.priority_class);
			FUZZ_CHECK(c && c->value == pod.priority, "class %s but priority %d", pod.priority_class,
			           (int)pod.priority);
		}
	}
	/* every field the descriptor may fill (containers came with evictd-kube's descriptors) */
	snapshot_pod_info_done(&pod);
	return 0;
}
