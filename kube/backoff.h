/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

/*
 * Jittered exponential backoff: *cur doubles from 500 ms up to max; the delay returned is random
 * in [cur/2, cur], so that the nodes of a cluster do not reconnect to a restarted API server in
 * step. Reset with *cur = 0 after a success.
 */
uint64_t backoff_next(uint64_t *cur, uint64_t max);
