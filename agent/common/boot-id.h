/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The kernel's boot id. What evictd keeps under its run directory with CLOCK_MONOTONIC times
 * (victim records, node-level reclaim's ages) names the boot it was written in: the same clock
 * for every process of one boot, meaningless after a reboot.
 */

/* Fills buf with /proc/sys/kernel/random/boot_id, trimmed. Returns 0 or -errno. */
int boot_id_read(char buf[static 40]);
