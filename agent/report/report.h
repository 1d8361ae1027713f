/* SPDX-License-Identifier: MIT */
#pragma once

/* `evictd --once`: what one scan and one decision saw, as text or as one JSON object. */

#include <stdbool.h>
#include <stdio.h>

#include "cgdiscover.h"
#include "config.h"
#include "decide.h"
#include "noderec.h"
#include "snapshot.h"

/* plan: node-level reclaim as planned from the runtime's listing; NULL without a runtime. */
int report_text(FILE *f, const cg_info *cg, const evictd_config *c, const snapshot *s, const decision *d,
                const runtime_plan *plan);
int report_json(FILE *f, const cg_info *cg, const evictd_config *c, const snapshot *s, const decision *d,
                const runtime_plan *plan);

