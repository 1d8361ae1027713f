/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: what a container runtime sends evictd (cri/): the gRPC answer as curl hands it
 * over (header lines, trailers, body bytes; grpc.c) and every CRI message decoder (decode.c). The
 * first byte picks the decoder, the rest is the input.
 * Invariants: a refused answer says why and changes nothing; an accepted one holds only what the
 * decoders promise — non-empty printable ids, clean absolute log paths and mount points, sizes
 * below 2^63, containers sorted by id without duplicates, at most CRI_ITEMS_MAX items; an
 * accepted gRPC frame is exactly the announced message, inside the bound.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cri.h"
#include "grpc.h"
#include "fuzz-common.h"

/* fuzz-links: cri lib */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_token(const char *s, bool empty_ok)
{
	FUZZ_ASSERT(s != NULL);
	FUZZ_ASSERT(empty_ok || s[0]);
	for (const char *c = s; *c; c++)
		FUZZ_ASSERT((unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f);
}

static void check_path(const char *p)
{
	FUZZ_ASSERT(p != NULL);
	if (!p[0])
		return;
	FUZZ_ASSERT(p[0] == '/');
	FUZZ_ASSERT(!strstr(p, "/../") && !strstr(p, "/./"));
}

static void check_listing(const cri_listing *l)
{
	FUZZ_ASSERT(l->n_images <= CRI_ITEMS_MAX && l->n_containers <= CRI_ITEMS_MAX && l->n_sandboxes <= CRI_ITEMS_MAX);
	for (size_t i = 0; i < l->n_image_fs; i++)
		check_path(l->image_fs[i].mountpoint);
	for (size_t i = 0; i < l->n_container_fs; i++)
		check_path(l->container_fs[i].mountpoint);
	for (size_t i = 0; i < l->n_images; i++) {
		check_token(l->images[i].id, false);
		FUZZ_ASSERT(l->images[i].size <= INT64_MAX);
		for (size_t t = 0; t < l->images[i].n_tags; t++)
			check_token(l->images[i].tags[t], false);
	}
	for (size_t i = 0; i < l->n_sandboxes; i++) {
		check_token(l->sandboxes[i].id, false);
		check_token(l->sandboxes[i].uid, true);
	}
	for (size_t i = 0; i < l->n_containers; i++) {
		const cri_container *c = &l->containers[i];
		check_token(c->id, false);
		check_token(c->pod_uid, true);
		check_token(c->image_id, true);
		FUZZ_ASSERT(c->state <= CRI_UNKNOWN);
		FUZZ_ASSERT(c->rootfs_bytes <= INT64_MAX && c->rootfs_inodes <= INT64_MAX);
		if (i)
			FUZZ_ASSERT(strcmp(l->containers[i - 1].id, c->id) < 0);
		FUZZ_ASSERT(cri_listing_container(l, c->id) == c);
	}
}

/* The answer parser: lines up to an empty one are headers, then body bytes up to a NUL, then trailers. */
static void fuzz_answer(const uint8_t *data, size_t size)
{
	grpc_answer a = { .max_message = 4096 };
	size_t i = 0;
	const uint8_t *msg;
	size_t len;
	char why[256];

	while (i < size) {
		const uint8_t *nl = memchr(data + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - (data + i)) + 1 : size - i;
		if (n == 1) { /* the blank line: the body follows, up to a NUL */
			i += n;
			const uint8_t *z = memchr(data + i, 0xff, size - i);
			size_t b = z ? (size_t)(z - (data + i)) : size - i;
			(void)grpc_answer_body(&a, data + i, b);
			i += b + (z ? 1 : 0);
			continue;
		}
		grpc_answer_header(&a, (const char *)data + i, n);
		i += n;
	}
	int r = grpc_answer_finish(&a, &msg, &len, why, sizeof(why));
	if (r == 0) {
		FUZZ_ASSERT(a.http_status == 200 && a.grpc_content && a.has_status && a.grpc_status == 0);
		FUZZ_ASSERT(len <= a.max_message && msg == a.body + 5 && len + 5 == a.len);
	} else {
		FUZZ_ASSERT(r == -EPROTO || r == -EREMOTEIO || r == -ETIMEDOUT || r == -EBADMSG || r == -EFBIG);
		FUZZ_ASSERT(why[0] != '\0');
	}
	for (const char *c = a.grpc_message; *c; c++)
		FUZZ_ASSERT((unsigned char)*c >= 0x20 && *c != 0x7f);
	grpc_answer_done(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cri_listing l = { 0 };
	char why[512] = "", runtime[128] = "";
	int r = 0;

	if (size < 1)
		return 0;
	uint8_t which = data[0] % 8;
	data++, size--;
	switch (which) {
	case 0:
		fuzz_answer(data, size);
		return 0;
	case 1:
		r = cri_decode_version(data, size, runtime, sizeof(runtime), why, sizeof(why));
		break;
	case 2:
		r = cri_decode_fs_info(data, size, &l, why, sizeof(why));
		break;
	case 3:
		r = cri_decode_images(data, size, &l, why, sizeof(why));
		break;
	case 4:
		r = cri_decode_sandboxes(data, size, &l, why, sizeof(why));
		break;
	case 5:
	case 6:
		r = cri_decode_containers(data, size, &l, why, sizeof(why));
		/* the stats of the same bytes against the containers just decoded, as a listing would */
		if (r == 0 && which == 6)
			r = cri_decode_stats(data, size, &l, why, sizeof(why));
		break;
	default: {
		char *p = NULL;
		r = cri_decode_status_log_path(data, size, &p, why, sizeof(why));
		if (r == 0)
			check_path(p);
		free(p);
		break;
	}
	}
	if (r < 0) {
		FUZZ_ASSERT(r == -EBADMSG || r == -E2BIG || r == -ENOMEM);
		FUZZ_ASSERT(r == -ENOMEM || why[0] != '\0');
		if (which != 6)
			FUZZ_ASSERT(l.n_images == 0 && l.n_containers == 0 && l.n_sandboxes == 0 && l.n_image_fs == 0);
	} else
		check_listing(&l);
	cri_listing_free(&l);
	return 0;
}
