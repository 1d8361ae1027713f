/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What evictd knows of the container runtime, as plain data: its image and container
 * filesystems (ImageFsInfo), images, pod sandboxes and containers, each container with its
 * writable layer (ListContainerStats) and log file (ContainerStatus). Decoded from the CRI v1
 * messages of cri/api.proto (protobuf-c) and checked strictly: an answer with a malformed message,
 * an identifier that is empty, too long or not printable, a relative or dotted log path, a size
 * beyond int64, a duplicate container, or more items than CRI_ITEMS_MAX is refused whole, with the
 * reason; nothing half-decoded is used.
 *
 * No I/O here (the fuzz target and the unit tests call the decoders directly); client.c makes the
 * calls.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Items per list answer: 110 pods × a few containers on a kubelet node, with generous room. */
#define CRI_ITEMS_MAX 65536
/* Longest identifier, tag, name or label value kept (sha256 ids are 71 bytes). */
#define CRI_STRING_MAX 1024
/* The CRI's own bound: containerd's default max_recv_message_size (16 MiB). */
#define CRI_MESSAGE_MAX (16u * 1024 * 1024)
/*
 * Memory one answer may take while protobuf-c unpacks it, its bookkeeping included: twice the
 * largest answer accepted (a real node's take a few times their size on the wire, well under
 * 1 MiB). What would need more (16 MiB of empty nested items: over 1 GB) is refused.
 */
#define CRI_DECODE_BUDGET (32u * 1024 * 1024)

typedef enum cri_state {
	CRI_CREATED = 0,
	CRI_RUNNING = 1,
	CRI_EXITED = 2,
	CRI_UNKNOWN = 3, /* also any state a newer runtime adds */
} cri_state;

typedef struct cri_fs_usage {
	char *mountpoint;  /* "" when the runtime did not say */
	bool has_used, has_inodes;
	uint64_t used_bytes, inodes_used;
} cri_fs_usage;

typedef struct cri_image {
	char *id;          /* "sha256:<config digest>" for containerd */
	char **tags;       /* repo_tags, for the journal */
	size_t n_tags;
	uint64_t size;     /* bytes, as the runtime counts them (containerd: the content size) */
	bool pinned;       /* exempt from garbage collection (the sandbox image) */
} cri_image;

typedef struct cri_sandbox {
	char *id;
	char *uid;         /* metadata.uid, else label io.kubernetes.pod.uid */
	char *name, *namespace_;
	bool ready;
	int64_t created_at; /* ns */
} cri_sandbox;

typedef struct cri_container {
	char *id;
	char *sandbox_id;
	char *name;          /* metadata.name */
	char *pod_uid;       /* label io.kubernetes.pod.uid; "" without it (not the kubelet's) */
	char *image_id;      /* image_id when set, else image_ref: what an Image's id is compared with */
	char *image;         /* the image as the pod spec named it */
	cri_state state;
	uint32_t attempt;
	int64_t created_at;  /* ns */
	/* ListContainerStats */
	bool has_rootfs;
	uint64_t rootfs_bytes, rootfs_inodes;
	/* ContainerStatus; NULL until asked (client.c caches it: a container's log path never changes) */
	char *log_path;
	/* Filled by the user of the listing from the file system (evictd: observe/runtime-disk.c). */
	bool has_log;
	int64_t log_bytes, log_inodes;  /* running: its log directory; dead: its own file(s) */
} cri_container;

typedef struct cri_listing {
	cri_fs_usage *image_fs, *container_fs;
	size_t n_image_fs, n_container_fs;
	cri_image *images;
	size_t n_images;
	cri_sandbox *sandboxes;
	size_t n_sandboxes;
	cri_container *containers; /* sorted by id */
	size_t n_containers;
	char runtime[128];         /* "containerd 1.6.20~ds1 (CRI v1)" */
} cri_listing;

void cri_listing_free(cri_listing *l);
/* The container with that id, or NULL (binary search: containers are sorted). */
cri_container *cri_listing_container(const cri_listing *l, const char *id);
const char *cri_state_name(cri_state s);

/*
 * Decoders of one answer message each. 0, or -EBADMSG (not a valid message of that type, or it
 * fails a check; why says which item and what), -E2BIG (more than CRI_ITEMS_MAX items, counted on
 * the wire before anything is unpacked, or more than CRI_DECODE_BUDGET to unpack), -ENOMEM.
 * On failure the listing is left as it was.
 */
int cri_decode_version(const uint8_t *msg, size_t len, char *runtime, size_t size, char *why, size_t why_size);
int cri_decode_fs_info(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size);
int cri_decode_images(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size);
int cri_decode_sandboxes(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size);
int cri_decode_containers(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size);
/* Writable layers into the listing's containers (by id); stats of unknown containers are ignored. */
int cri_decode_stats(const uint8_t *msg, size_t len, cri_listing *l, char *why, size_t why_size);
/* The log path of one ContainerStatus answer: *ret a new string ("" when the runtime has none). */
int cri_decode_status_log_path(const uint8_t *msg, size_t len, char **ret, char *why, size_t why_size);

/* info[key] of a verbose Status answer: *ret a new string, NULL when the runtime sent no such key. */
int cri_decode_status_info(const uint8_t *msg, size_t len, const char *key, char **ret, char *why, size_t why_size);

/* Requests, serialized: *ret malloc'd (free it), *len its size. 0 or -ENOMEM. */
int cri_encode_version(uint8_t **ret, size_t *len);
int cri_encode_status(const char *container_id, uint8_t **ret, size_t *len);
int cri_encode_remove_image(const char *image, uint8_t **ret, size_t *len);
int cri_encode_runtime_status(bool verbose, uint8_t **ret, size_t *len);

/* --- the client: calls on an sd-event loop (client.c) --------------------------------------- */

#include <systemd/sd-event.h>

typedef struct cri_client cri_client;

typedef struct cri_client_opts {
	uint64_t timeout_usec;   /* a whole listing's deadline (its calls are cancelled at it), a single call's */
	size_t max_message;      /* the largest answer accepted; 0: CRI_MESSAGE_MAX */
	unsigned status_parallel; /* ContainerStatus calls in flight at once; 0: 4, at most 8 */
} cri_client_opts;

/* socket: the unix socket's path (the endpoint without "unix://"). Connects only when called. */
int cri_client_new(sd_event *e, const char *socket, const cri_client_opts *o, cri_client **ret);
/* Aborts what is in flight without calling back. */
cri_client *cri_client_free(cri_client *c);
const char *cri_client_socket(const cri_client *c);

/* A call ended: error 0 and text (the runtime's "name version", or ""), or -errno and text why. */
typedef void (*cri_text_fn)(int error, const char *text, void *userdata);
/* A listing ended: error 0 and *l handed over (the callee frees it with cri_listing_free), or -errno. */
typedef void (*cri_list_fn)(int error, cri_listing *l, const char *why, void *userdata);

enum {
	CRI_LIST_FS = 1 << 0,         /* ImageFsInfo */
	CRI_LIST_IMAGES = 1 << 1,     /* ListImages */
	CRI_LIST_SANDBOXES = 1 << 2,  /* ListPodSandbox */
	CRI_LIST_CONTAINERS = 1 << 3, /* ListContainers */
	CRI_LIST_STATS = 1 << 4,      /* ListContainerStats (with CONTAINERS) */
	CRI_LIST_LOGS = 1 << 5,       /* ContainerStatus log paths (with CONTAINERS), cached by container id */
	CRI_LIST_ALL = (1 << 6) - 1,
};

/* done gets -ECANCELED when the client is freed first (start nothing then). */
int cri_client_version(cri_client *c, cri_text_fn done, void *userdata);
/*
 * What `what` says, in parallel on one HTTP/2 connection, within one deadline (timeout_usec from
 * now). -EBUSY while a listing runs; done is called exactly once otherwise (0 returned). A
 * container gone between ListContainers and its ContainerStatus (NOT_FOUND) keeps no log path; any
 * other failure, or the deadline, fails the listing and cancels what is still in flight; the log
 * paths known by then are cached all the same.
 */
int cri_client_list(cri_client *c, unsigned what, cri_list_fn done, void *userdata);
bool cri_client_listing(const cri_client *c);
int cri_client_remove_image(cri_client *c, const char *id, cri_text_fn done, void *userdata);
/*
 * Status with verbose: done gets info["config"] (containerd's and CRI-O's configuration as JSON:
 * where the sandbox image is named) as text, NULL when the runtime sent none; or -errno and why.
 */
typedef void (*cri_info_fn)(int error, const char *config, const char *why, void *userdata);
int cri_client_runtime_config(cri_client *c, cri_info_fn done, void *userdata);
/* Calls made since the client was created (benchmarks, tests). */
unsigned long cri_client_calls(const cri_client *c);
