/* SPDX-License-Identifier: MIT */
#pragma once

/* evictd-kube's MESSAGE_IDs and journal fields (the rest are agent/log.h's EVICTD_* fields). */

#include "log.h"

/* Every API call's outcome (verb, path, HTTP status, pod fields when about a pod). */
#define MSGID_KUBE_API_CALL      "c4b807f89fca4097820f4eedb97aeb62"
/* An eviction was reported to the API server (all steps done or permanently refused). */
#define MSGID_KUBE_REPORTED      "facadd06e42f459495da5605b11923ff"
/* A pod's descriptor was written / removed from the API server's data. */
#define MSGID_KUBE_POD_UPDATED   "3fd672fb8bd747818b7042d5ce5776a3"
#define MSGID_KUBE_POD_REMOVED   "4acf77086b9d4c48a547798aa29ca82a"

#define FIELD_KUBE_VERB   "EVICTD_KUBE_VERB"   /* GET LIST WATCH POST PATCH DELETE */
#define FIELD_KUBE_PATH   "EVICTD_KUBE_PATH"
#define FIELD_KUBE_STATUS "EVICTD_KUBE_STATUS" /* HTTP status, 0 when none came */
#define FIELD_KUBE_STEP   "EVICTD_KUBE_STEP"   /* event | condition | delete | eviction | node-event */
