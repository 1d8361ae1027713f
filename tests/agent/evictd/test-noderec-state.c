/* SPDX-License-Identifier: MIT */
/*
 * Node-level reclaim's state across restarts (agent/evictd/noderec-state.h): what one evictd saves
 * the next one of the same boot reads back whole; a missing file is a fresh start; a corrupt one,
 * one of another boot or one from the future is a fresh start too, and is removed with the
 * temporary file of an interrupted write. Then the fuzz target's saved inputs are replayed
 * (tests/fuzz/fuzz-noderec-state.c).
 */
#define LLVMFuzzerTestOneInput fuzz_noderec_state_one
#include "../../fuzz/fuzz-noderec-state.c"
#undef LLVMFuzzerTestOneInput

#include "../../fuzz/replay.h"

#define NOW UINT64_C(500000000)

static char dir[128];

static void write_file(const char *name, const char *text)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static bool exists(const char *name)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void test_round_trip(void **state)
{
	(void)state;
	image_record ims[] = {
		{ .id = (char *)"sha256:aa", .h = { .first_seen_usec = 10, .last_used_usec = 0 } },
		{ .id = (char *)"sha256:bb", .h = { .first_seen_usec = 20, .last_used_usec = 400 } },
	};
	noderec_state st = { .images = ims, .n_images = 2 }, back;
	st.pending_since[SIGNAL_NODEFS_AVAILABLE] = 123;
	assert_int_equal(noderec_state_save(dir, &st), 0);
	assert_int_equal(noderec_state_load(dir, NOW, &back), 0);
	assert_int_equal(back.pending_since[SIGNAL_NODEFS_AVAILABLE], 123);
	assert_int_equal(back.pending_since[SIGNAL_IMAGEFS_AVAILABLE], 0);
	assert_int_equal(back.n_images, 2);
	assert_string_equal(back.images[1].id, "sha256:bb");
	assert_int_equal(back.images[1].h.first_seen_usec, 20);
	assert_int_equal(back.images[1].h.last_used_usec, 400);
	noderec_state_done(&back);
	assert_true(exists(NODEREC_STATE_FILE));
}

static void test_missing_is_fresh(void **state)
{
	noderec_state st;
	(void)state;
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", dir, NODEREC_STATE_FILE);
	unlink(p);
	assert_int_equal(noderec_state_load(dir, NOW, &st), 0);
	assert_int_equal(st.n_images, 0);
	assert_int_equal(st.pending_since[SIGNAL_NODEFS_AVAILABLE], 0);
}

/* Each unusable file: a fresh start, the file gone, and with it an interrupted write's leftover. */
static void test_unusable_is_fresh_and_removed(void **state)
{
	char boot[40], text[512];
	(void)state;
	assert_int_equal(boot_id_read(boot), 0);
	const char *bad[] = {
		"{\"version\":1,\"boot_id\":\"",                                      /* truncated */
		"{\"version\":1,\"boot_id\":\"0-other-boot\",\"pending_since_monotonic_usec\":{},\"images\":[]}",
		"{\"version\":1,\"boot_id\":\"%s\",\"pending_since_monotonic_usec\":{\"nodefs.available\":600000000},"
		"\"images\":[]}",                                                     /* later than now */
		"{\"version\":1,\"boot_id\":\"%s\",\"pending_since_monotonic_usec\":{\"disk\":1},\"images\":[]}",
		"{\"version\":1,\"boot_id\":\"%s\",\"pending_since_monotonic_usec\":{},\"images\":[{\"id\":\"a b\","
		"\"first_seen_monotonic_usec\":1,\"last_used_monotonic_usec\":0}]}",
		"[]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		noderec_state st;
		snprintf(text, sizeof(text), bad[i], boot);
		write_file(NODEREC_STATE_FILE, text);
		write_file(NODEREC_STATE_FILE ".Ab12Cd", "{");
		assert_int_equal(noderec_state_load(dir, NOW, &st), 0);
		assert_int_equal(st.n_images, 0);
		for (int s = 0; s < _SIGNAL_MAX; s++)
			assert_int_equal(st.pending_since[s], 0);
		assert_false(exists(NODEREC_STATE_FILE));
		assert_false(exists(NODEREC_STATE_FILE ".Ab12Cd"));
	}
}

/* A directory in the file's place: moved aside once (an empty one removed), the state saved. */
static void test_directory_in_place(void **state)
{
	char p[512], aside[600], inside[700];
	struct stat sb;
	noderec_state st = { 0 }, back;
	(void)state;
	snprintf(p, sizeof(p), "%s/%s", dir, NODEREC_STATE_FILE);
	snprintf(aside, sizeof(aside), "%s~unusable", p);
	unlink(p);
	/* an empty one while running: removed, the save goes through */
	assert_int_equal(mkdir(p, 0755), 0);
	st.pending_since[SIGNAL_NODEFS_AVAILABLE] = 7;
	assert_int_equal(noderec_state_save(dir, &st), 0);
	assert_int_equal(lstat(p, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	/* one with something in it, found at start: moved aside, the next save goes through */
	unlink(p);
	assert_int_equal(mkdir(p, 0755), 0);
	write_file(NODEREC_STATE_FILE "/kept", "x");
	assert_int_equal(noderec_state_load(dir, NOW, &back), 0);
	assert_int_equal(back.n_images, 0);
	assert_int_equal(lstat(aside, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(noderec_state_save(dir, &st), 0);
	assert_int_equal(lstat(p, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	snprintf(inside, sizeof(inside), "%s/kept", aside);
	unlink(inside);
	rmdir(aside);
}

static void test_replay(void **state)
{
	(void)state;
	replay_target("noderec-state", fuzz_noderec_state_one);
}

static int setup(void **state)
{
	if (replay_group_setup(state) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/state", replay_tmpdir);
	return mkdir(dir, 0755);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_missing_is_fresh),
		cmocka_unit_test(test_unusable_is_fresh_and_removed),
		cmocka_unit_test(test_directory_in_place),
		cmocka_unit_test(test_replay),
	};
	return cmocka_run_group_tests(tests, setup, replay_group_teardown);
}
