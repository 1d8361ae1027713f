/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * evictd's log: one structured journal entry per decision (MESSAGE_ID per kind, EVICTD_* fields, a
 * readable MESSAGE), or its MESSAGE as one line on stderr when there is no journal (a terminal, a
 * log file: the fields are the journal's). The target is chosen once at startup (log_setup).
 * Where an entry goes and how (never blocking; one write(2) per stderr line) is the common log
 * core's, base/logging.h; this is evictd's vocabulary over it and its entry builder.
 *
 * All MESSAGE_IDs evictd uses are defined here (catalog: systemd/evictd.catalog).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

#include "logging.h"

/* A threshold is met (hard: at once; soft: reported when first crossed, acted on after grace). */
#define MSGID_THRESHOLD_MET        "f7c5f6af75cd48aeb357803bdd6de3c4"
/* A threshold that was met is no longer met (min-reclaim hysteresis included). */
#define MSGID_THRESHOLD_CLEARED    "a47c3e5bc2d04704990c35a35319257f"
/* MemoryPressure / DiskPressure / PIDPressure became true or false. */
#define MSGID_CONDITION_CHANGED    "4e4f4c2ac74a4eb1ad6e957b7578a127"
/* A pod was chosen for eviction (the decision, with signal, rank, usage and request). */
#define MSGID_POD_CHOSEN           "a303a0f905e14500a87462de5e5e36fb"
/* The eviction action started (SIGTERM sent / command run / dry-run: what would be done). */
#define MSGID_EVICTION_STARTED     "ddd52a80a54f4fc8ba4f5b6f851a0e41"
/* The pod's processes are gone (or the command succeeded): duration; its reclaim is pending. */
#define MSGID_EVICTION_FINISHED    "0651b0dd2c3347a1a2bcdd650890bdf6"
/* An evicted pod's resources are back: its pod cgroup is gone (the signal's measured change). */
#define MSGID_EVICTION_RECLAIMED   "df4e95020acb41b694cb18cd725febc5"
/* An evicted pod's cgroup was still there after reclaim-timeout: its reclaim no longer counts. */
#define MSGID_RECLAIM_TIMEOUT      "43dbda9dde214bdab7341cc2cf76fbff"
/* Processes reappeared in an evicted pod's cgroup (containers restarted): killed again. */
#define MSGID_VICTIM_RESTARTED     "a581fbf17bab48f3a7ff1190af5a0f16"
/* The action failed (command exit status, kill error). */
#define MSGID_EVICTION_FAILED      "46c580319dc046efbfc12795e324cec2"
/* A configuration file was rejected; the previous configuration (or none, at startup) stays. */
#define MSGID_CONFIG_REJECTED      "66c4dcae33c544ab98841e90cf502d80"
/* A configuration was loaded (startup or reload). */
#define MSGID_CONFIG_LOADED        "7fa6fd181a6747859af23d487c11872e"
/* A signal cannot be observed on this machine (reported once per change). */
#define MSGID_SIGNAL_UNAVAILABLE   "133c3393db274688a873b9a7e35b0948"
/* A pod descriptor was ignored (untrusted owner/mode/symlink, malformed). */
#define MSGID_POD_METADATA_REJECTED "518656f5093e49cf9a0bc60bf7fac6fc"
/* A pod's statistics file (memory.current, memory.stat, ...) or cgroup cannot be used. */
#define MSGID_POD_STATS_UNAVAILABLE "ae0c829e16b44f07942e904841fe9f57"
/* ... and can be used again. */
#define MSGID_POD_STATS_RECOVERED  "5d459d61d6af4a82802a17cc216ce619"
/* A pod's nodefs usage (emptyDir volumes, logs) is only a lower bound: the walk hit its limits. */
#define MSGID_POD_DISK_PARTIAL     "26463dfb36d645f0b0654e3f29128bcf"
/* An eviction recorded by a previous evictd process (crash, restart) was taken over. */
#define MSGID_EVICTION_RESUMED     "a6b0895935574068ad84b4fc62ee0212"

/* Node-level reclaim: unused images removed through the CRI before a disk eviction (one entry per step). */
#define MSGID_NODE_RECLAIM_IMAGES  "a4f66582d18e434398317e0f4e92b276"
/* Node-level reclaim: what the kubelet's container GC (or, with node-reclaim = account, its image GC)
 * will free covers a disk signal's need: no pod is evicted for it. */
#define MSGID_NODE_RECLAIM_PENDING "c5993dbfb40d40c8b727d3b09f362030"
/* The container runtime: reachable (at start), or not (what is not done, and why). */
#define MSGID_RUNTIME_STATUS       "91d3378316bd47e8926cc2d501ab150c"

/* Journal fields (DESIGN §5). */
#define FIELD_POD            "EVICTD_POD"            /* "namespace/name" (or the UID) */
#define FIELD_POD_UID        "EVICTD_POD_UID"
#define FIELD_NAMESPACE      "EVICTD_NAMESPACE"
#define FIELD_PRIORITY       "EVICTD_PRIORITY"
#define FIELD_CGROUP         "EVICTD_CGROUP"
#define FIELD_SIGNAL         "EVICTD_SIGNAL"
#define FIELD_THRESHOLD_KIND "EVICTD_THRESHOLD_KIND" /* hard | soft */
#define FIELD_OBSERVED       "EVICTD_OBSERVED"       /* available, in the signal's unit */
#define FIELD_THRESHOLD      "EVICTD_THRESHOLD"      /* resolved threshold, same unit */
#define FIELD_MIN_RECLAIM    "EVICTD_MIN_RECLAIM"
#define FIELD_UNIT           "EVICTD_UNIT"           /* bytes | inodes | pids | centipercent */
#define FIELD_USAGE_BYTES    "EVICTD_USAGE_BYTES"    /* memory working set */
#define FIELD_REQUEST_BYTES  "EVICTD_REQUEST_BYTES"
#define FIELD_PROCESSES      "EVICTD_PROCESSES"
#define FIELD_EXPECTED_RECLAIM "EVICTD_EXPECTED_RECLAIM"
#define FIELD_RANK           "EVICTD_RANK"           /* 1 = evicted first */
#define FIELD_GRACE_SEC      "EVICTD_GRACE_SEC"
#define FIELD_DRY_RUN        "EVICTD_DRY_RUN"        /* 0 | 1 */
#define FIELD_CONDITION      "EVICTD_CONDITION"
#define FIELD_CONDITION_STATUS "EVICTD_CONDITION_STATUS" /* True | False */
#define FIELD_REASON         "EVICTD_REASON"
#define FIELD_CONFIG_FILE    "EVICTD_CONFIG_FILE"
#define FIELD_CONFIG_LINE    "EVICTD_CONFIG_LINE"
#define FIELD_ACTION         "EVICTD_ACTION"         /* kill | exec | dry-run */
#define FIELD_DURATION_MSEC  "EVICTD_DURATION_MSEC"
#define FIELD_RECLAIM_MSEC   "EVICTD_RECLAIM_MSEC"   /* processes gone -> pod cgroup gone (or timeout) */
#define FIELD_RECLAIMED      "EVICTD_RECLAIMED"      /* the signal's measured change, in its unit */
#define FIELD_THRESHOLDS     "EVICTD_THRESHOLDS"     /* the thresholds in force, after a (re)load */
#define FIELD_FILE           "EVICTD_FILE"           /* a pod's statistics file ("." = its cgroup) */
#define FIELD_DISK_BYTES     "EVICTD_DISK_BYTES"     /* a pod's usage for the disk signal, as the layout says:
                                                       * nodefs emptyDir + logs (+ writable layers on one disk),
                                                       * imagefs writable layers (+ logs on one disk) */
#define FIELD_DISK_INODES    "EVICTD_DISK_INODES"
#define FIELD_IMAGES         "EVICTD_IMAGES"         /* node-level reclaim: the images removed (tags or ids) */
#define FIELD_IMAGES_COUNT   "EVICTD_IMAGES_COUNT"
#define FIELD_FREED_BYTES    "EVICTD_FREED_BYTES"    /* the runtime's sizes of what was removed */
#define FIELD_OBSERVED_AFTER "EVICTD_OBSERVED_AFTER" /* the signal measured again after the step */
#define FIELD_PENDING        "EVICTD_PENDING"        /* node-level reclaim pending for the signal, its unit */
#define FIELD_CONTAINERS_COUNT "EVICTD_CONTAINERS_COUNT"
#define FIELD_RUNTIME        "EVICTD_RUNTIME"        /* "containerd 1.6.20 (CRI v1)" */
#define FIELD_ENDPOINT       "EVICTD_ENDPOINT"       /* the runtime's socket */

/*
 * Where entries go, the priority limit and the journal's dropped entries are the common log core's
 * (base/logging.h: logging_get_target, logging_target_parse, logging_set_max_priority,
 * logging_flush_dropped, ...); this adds evictd's style to it: "evictd: warning: message" on
 * stderr, and auto also takes the journal when stderr is not a terminal and
 * /run/systemd/journal/socket is a socket.
 */
void log_setup(logging_target t);
/* SYSLOG_IDENTIFIER and the stderr prefix (default "evictd"); a static string. */
void log_set_identifier(const char *ident);

#define LOG_FIELDS_MAX 24
#define LOG_FIELD_SIZE 512

typedef struct log_entry {
	int priority;
	const char *message_id; /* NULL: a plain message */
	size_t n;
	char fields[LOG_FIELDS_MAX][LOG_FIELD_SIZE]; /* "KEY=value" */
} log_entry;

void log_entry_init(log_entry *e, int priority, const char *message_id);
/* Adds KEY=value; values longer than LOG_FIELD_SIZE are cut with "…" (fields are informative). */
void log_entry_add(log_entry *e, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Sets MESSAGE and sends the entry. */
void log_entry_send(log_entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A plain message (no MESSAGE_ID). */
void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error with its errno (error may be negative, -errno style): "message: strerror". */
void log_error_errno(int error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "1.2Gi", "80Mi", "512Ki", "900" — a human-readable binary-unit quantity. */
const char *log_format_bytes(int64_t v, char *buf, size_t size);
