/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: node-level reclaim's state (<run-directory>/node-reclaim.json,
 * agent/evictd/noderec-state.h), through noderec_state_parse() exactly as evictd reads it at start.
 * The file is evictd's own, but a restart must survive whatever a crash, a full disk or a hand edit
 * left there.
 * Invariants: a refused file says why and leaves nothing; an accepted one has known signals, times
 * no later than now, valid unique image ids in order, no image used before it was first seen, and,
 * written back with noderec_state_save() and read again, is the same state (nothing is lost or
 * invented on the way through a restart).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "boot-id.h"
#include "noderec-state.h"
#include "fuzz-common.h"

/* fuzz-links: agent lib cri */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The boot id the seeds carry, and "now" for them: times above it are refused. */
#define FUZZ_BOOT "fuzz-boot-0000"
#define FUZZ_NOW UINT64_C(1000000000000000)

static char ns_dir[256], ns_boot[40];

static void ns_setup(void)
{
	if (ns_dir[0])
		return;
	fuzz_private_dir(ns_dir, sizeof(ns_dir), "noderec-state");
	/* noderec_state_save writes the running kernel's boot id: the file read back carries it */
	FUZZ_ASSERT(boot_id_read(ns_boot) == 0);
}

static void well_formed(const noderec_state *st)
{
	for (size_t i = 0; i < st->n_images; i++) {
		const image_record *im = &st->images[i];
		FUZZ_ASSERT(noderec_image_id_valid(im->id));
		FUZZ_ASSERT(i == 0 || strcmp(st->images[i - 1].id, im->id) < 0);
		FUZZ_ASSERT(im->h.first_seen_usec >= 1 && im->h.first_seen_usec <= FUZZ_NOW);
		FUZZ_ASSERT(im->h.last_used_usec == 0 ||
		            (im->h.last_used_usec >= im->h.first_seen_usec && im->h.last_used_usec <= FUZZ_NOW));
	}
	for (int s = 0; s < _SIGNAL_MAX; s++)
		FUZZ_ASSERT(st->pending_since[s] <= FUZZ_NOW);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	noderec_state st, back;
	char path[512];

	ns_setup();
	char *text = fuzz_strndup(data, size);
	FUZZ_ASSERT(text);
	const char *why = noderec_state_parse(text, FUZZ_BOOT, FUZZ_NOW, &st);
	if (why) {
		FUZZ_ASSERT(why[0] != '\0' && st.n_images == 0 && !st.images);
		goto out;
	}
	well_formed(&st);

	/* through a restart: written as evictd writes it, read as evictd reads it */
	FUZZ_ASSERT(noderec_state_save(ns_dir, &st) == 0);
	snprintf(path, sizeof(path), "%s/%s", ns_dir, NODEREC_STATE_FILE);
	static char saved[1 << 21];
	fuzz_read_back(path, saved, sizeof(saved));
	const char *again = noderec_state_parse(saved, ns_boot, FUZZ_NOW, &back);
	FUZZ_CHECK(!again, "its own state refused: %s", again);
	FUZZ_ASSERT(memcmp(back.pending_since, st.pending_since, sizeof(st.pending_since)) == 0);
	FUZZ_ASSERT(back.n_images == st.n_images);
	for (size_t i = 0; i < st.n_images; i++) {
		FUZZ_ASSERT(strcmp(back.images[i].id, st.images[i].id) == 0);
		FUZZ_ASSERT(back.images[i].h.first_seen_usec == st.images[i].h.first_seen_usec);
		FUZZ_ASSERT(back.images[i].h.last_used_usec == st.images[i].h.last_used_usec);
	}
	noderec_state_done(&back);
	noderec_state_done(&st);
	unlink(path);
out:
	free(text);
	return 0;
}
