/* SPDX-License-Identifier: MIT */
#pragma once

/* `evictd --once`: what one scan and one decision saw, as text or as one JSON object. */

#include <stdbool.h>
#include <stdio.h>

#include "cgdiscover.h"
#include "config.h"
#include "decide.h"
#include "snapshot.h"

int report_text(FILE *f, const cg_info *cg, const evictd_config *c, const snapshot *s, const decision *d);
int report_json(FILE *f, const cg_info *cg, const evictd_config *c, const snapshot *s, const decision *d);

