/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: victim records (<run-directory>/inflight/<uid>.json, act/inflight.h), through
 * inflight_parse() exactly as evictd reads them at start. The records are evictd's own, but a
 * restart must survive whatever a crash, a full disk or a hand edit left there.
 * Invariants: a rejected record says why; an accepted one has a valid uid, an absolute cgroup, a
 * known phase (a reclaiming one with a reclaiming reclaim state) and, written back with
 * inflight_save() and read again, is the same record (nothing is lost or invented on the way
 * through a restart).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inflight.h"
#include "fuzz-common.h"

/* fuzz-links: agent lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The boot id the seeds carry: records of "this boot" for the parser. */
#define FUZZ_BOOT "fuzz-boot-0000"

static char if_dir[256], if_boot[40];

static void if_setup(void)
{
	if (if_dir[0])
		return;
	snprintf(if_dir, sizeof(if_dir), "%s/fuzz-inflight.%d", fuzz_tmpdir(), (int)getpid());
	FUZZ_ASSERT(mkdir(if_dir, 0755) == 0 || errno == EEXIST);
	/* inflight_save writes the running kernel's boot id: the record read back carries it */
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, if_boot, sizeof(if_boot) - 1) : -1;
	if (fd >= 0)
		close(fd);
	FUZZ_ASSERT(n > 0);
	while (n > 0 && (if_boot[n - 1] == '\n' || if_boot[n - 1] == ' '))
		n--;
	if_boot[n] = '\0';
}

static void same_reclaim(const reclaim_entry *a, const reclaim_entry *b)
{
	FUZZ_ASSERT(strcmp(a->uid, b->uid) == 0 && strcmp(a->cgroup, b->cgroup) == 0 && strcmp(a->pod, b->pod) == 0);
	FUZZ_ASSERT(a->signal == b->signal && a->hard == b->hard && a->dry_run == b->dry_run);
	FUZZ_ASSERT(strcmp(a->volumes, b->volumes) == 0 && strcmp(a->logs, b->logs) == 0);
	for (int p = 0; p < _RECLAIM_PART_MAX; p++) {
		FUZZ_ASSERT(a->part_back[p] == b->part_back[p]);
		if (p != RECLAIM_PART_CGROUP)
			FUZZ_ASSERT(a->part_bytes[p] == b->part_bytes[p] && a->part_inodes[p] == b->part_inodes[p]);
	}
	FUZZ_ASSERT(a->reclaiming == b->reclaiming && a->gone_usec == b->gone_usec && a->deadline_usec == b->deadline_usec);
	FUZZ_ASSERT(a->bound_set == b->bound_set && a->rekills == b->rekills);
	for (int s = 0; s < _SIGNAL_MAX; s++) {
		FUZZ_ASSERT(a->expected[s] == b->expected[s] && a->relieved[s] == b->relieved[s]);
		FUZZ_ASSERT(a->observed_known[s] == b->observed_known[s] && (!a->observed_known[s] || a->observed[s] == b->observed[s]));
		FUZZ_ASSERT(a->base_known[s] == b->base_known[s] && (!a->base_known[s] || a->base[s] == b->base[s]));
		/* the value once gone is kept only once it was taken (bound_set) */
		bool ga = a->bound_set && a->gone_known[s], gb = b->bound_set && b->gone_known[s];
		FUZZ_ASSERT(ga == gb && (!ga || a->gone[s] == b->gone[s]));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if_setup();
	char *text = fuzz_strndup(data, size);
	inflight_record *r = malloc(sizeof(*r)), *back = malloc(sizeof(*back));
	FUZZ_ASSERT(text && r && back);
	const char *why = inflight_parse(text, FUZZ_BOOT, r);
	if (why) {
		FUZZ_ASSERT(why[0] != '\0');
		goto out;
	}
	FUZZ_ASSERT(inflight_uid_valid(r->uid) && r->cgroup[0] == '/');
	FUZZ_ASSERT((unsigned)r->phase < _INFLIGHT_PHASE_MAX && (r->version == 1 || r->version == INFLIGHT_VERSION));
	FUZZ_ASSERT(r->phase != INFLIGHT_RECLAIMING || (r->has_reclaim && r->reclaim.reclaiming));
	FUZZ_ASSERT(!r->has_reclaim || (r->reclaim.signal >= 0 && r->reclaim.signal < _SIGNAL_MAX));

	/* through a restart: written as evictd writes it, read as evictd reads it */
	int k = inflight_save(if_dir, r);
	FUZZ_ASSERT(k == 0);
	char path[512];
	snprintf(path, sizeof(path), "%s/%s.json", if_dir, r->uid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	FUZZ_ASSERT(fd >= 0);
	static char saved[1 << 17];
	ssize_t n = read(fd, saved, sizeof(saved) - 1);
	close(fd);
	FUZZ_ASSERT(n > 0 && n < (ssize_t)sizeof(saved) - 1);
	saved[n] = '\0';
	const char *again = inflight_parse(saved, if_boot, back);
	FUZZ_CHECK(!again, "its own record refused: %s", again);
	FUZZ_ASSERT(back->version == INFLIGHT_VERSION && back->phase == r->phase);
	FUZZ_ASSERT(strcmp(back->uid, r->uid) == 0 && strcmp(back->cgroup, r->cgroup) == 0);
	FUZZ_ASSERT(back->failures == r->failures && back->retry_mono_usec == r->retry_mono_usec);
	if (r->phase == INFLIGHT_TERMINATING || r->phase == INFLIGHT_KILLING || r->phase == INFLIGHT_EXEC) {
		FUZZ_ASSERT(strcmp(back->namespace_, r->namespace_) == 0 && strcmp(back->name, r->name) == 0);
		FUZZ_ASSERT(strcmp(back->signal, r->signal) == 0 && back->hard == r->hard && back->exec == r->exec);
		FUZZ_ASSERT(back->priority == r->priority && back->grace_usec == r->grace_usec && back->usage == r->usage);
		FUZZ_ASSERT(back->expected_reclaim == r->expected_reclaim && back->refused == r->refused);
		FUZZ_ASSERT(back->started_real_usec == r->started_real_usec && back->deadline_real_usec == r->deadline_real_usec);
	}
	FUZZ_ASSERT(back->has_reclaim == r->has_reclaim);
	if (r->has_reclaim)
		same_reclaim(&r->reclaim, &back->reclaim);
	unlink(path);
out:
	free(text);
	free(r);
	free(back);
	return 0;
}
