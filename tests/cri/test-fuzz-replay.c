/* SPDX-License-Identifier: MIT */
/*
 * Replays every saved input of the CRI fuzz target (tests/fuzz/fuzz-cri.c: the gRPC answer parser
 * and the CRI decoders) in the normal and sanitizer builds: the regressions (a fuzz-found crash:
 * an image filesystem refused with its list freed as if it had been kept) and the seeds.
 * Then the amplifying shapes at the largest size an answer may have (CRI_MESSAGE_MAX): 16 MiB of
 * empty repeated items, at the top or nested in one item, valid protobuf that took 1.4 GB to
 * unpack. Each decoder must refuse them, with a peak resident size under DECODE_PEAK_MAX.
 */
#define LLVMFuzzerTestOneInput fuzz_cri_one
#include "../fuzz/fuzz-cri.c"
#undef LLVMFuzzerTestOneInput

#include <sys/resource.h>

#include "../fuzz/replay.h"

/* The 16 MiB message itself, the decode budget, and the test program: what "bounded" means here. */
#define DECODE_PEAK_MAX (64u << 20)

static void test_cri(void **state)
{
	(void)state;
	replay_target("cri", fuzz_cri_one);
}

typedef int (*decoder_fn)(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size);

static size_t put_varint(uint8_t *p, size_t v)
{
	size_t n = 0;
	for (; v >= 0x80; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

/*
 * The shape: head (an item's own fields) then 2-byte empty entries of tag, up to size bytes in
 * all, wrapped in depth length-delimited field-1 frames; depth 0 and no head: top-level items.
 */
static uint8_t *shape(size_t size, const char *head, uint8_t tag, unsigned depth, size_t *len)
{
	uint8_t *b = malloc(size);
	size_t frame = 6 * depth, hl = strlen(head), n = (size - frame - hl) / 2, o = frame;

	assert_non_null(b);
	memcpy(b + o, head, hl);
	o += hl;
	for (size_t i = 0; i < n; i++) {
		b[o++] = tag;
		b[o++] = 0;
	}
	/* frames written backwards in front of the payload */
	for (size_t start = frame; depth > 0; depth--) {
		uint8_t pre[8];
		size_t pl = put_varint(pre + 1, o - start) + 1;
		pre[0] = 0x0a;
		start -= pl;
		memcpy(b + start, pre, pl);
		if (depth == 1) {
			memmove(b, b + start, o - start);
			o -= start;
		}
	}
	*len = o;
	return b;
}

static void check_shape(const char *name, decoder_fn decode, const char *head, uint8_t tag, unsigned depth)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(stdout); /* not printed twice by the child */
	pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		cri_listing l = { 0 };
		char why[256] = "";
		size_t len;
		uint8_t *msg = shape(CRI_MESSAGE_MAX, head, tag, depth, &len);
		int r = decode(msg, len, &l, why, sizeof(why));
		printf("# %s (%zu bytes): %d %s\n", name, len, r, why);
		fflush(stdout);
		_exit(r == -E2BIG && why[0] && l.n_containers == 0 && l.n_images == 0 && l.n_sandboxes == 0 ? 0 : 1);
	}
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	printf("# %s: peak resident %ld KiB\n", name, ru.ru_maxrss);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_true((unsigned long)ru.ru_maxrss * 1024 < DECODE_PEAK_MAX);
}

static void test_amplifying_shapes(void **state)
{
	(void)state;
	check_shape("ListContainers, empty containers", cri_decode_containers, "", 0x0a, 0);
	check_shape("ListContainers, one container's empty labels", cri_decode_containers, "\x0a\x01" "c", 0x42, 1);
	check_shape("ListImages, empty images", cri_decode_images, "", 0x0a, 0);
	check_shape("ListImages, one image's empty tags", cri_decode_images, "\x0a\x01" "i", 0x12, 1);
	check_shape("ListPodSandbox, empty sandboxes", cri_decode_sandboxes, "", 0x0a, 0);
	check_shape("ListPodSandbox, one sandbox's empty labels", cri_decode_sandboxes, "\x0a\x01" "s", 0x2a, 1);
	check_shape("ListContainerStats, empty stats", cri_decode_stats, "", 0x0a, 0);
	check_shape("ListContainerStats, one stat's empty labels", cri_decode_stats, "\x0a\x01" "c", 0x1a, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_cri), cmocka_unit_test(test_amplifying_shapes) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
