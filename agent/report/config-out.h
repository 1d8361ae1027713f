/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The effective configuration with the origin of every setting (`evictd --dump-config`, and the
 * configuration part of `evictd --once`), and what evictd knows about the kubelet beside it: the
 * kubelet configuration read (or the warning that it was not), and every signal on which the
 * kubelet would act at or before evictd.
 */

#include <stdint.h>
#include <stdio.h>

#include "config.h"

/* capacity[]: per signal, -1 unknown (NULL: none known; see config_kubelet_conflicts). */
int config_out_text(FILE *f, const evictd_config *c, const int64_t *capacity);
/* ,"configuration":[...],"kubelet":{...} — to be placed inside an object. */
void config_out_json_members(FILE *f, const evictd_config *c, const int64_t *capacity);
