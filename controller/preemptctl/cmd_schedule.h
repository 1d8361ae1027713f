/* SPDX-License-Identifier: MIT */
/* preemptctl schedule (cmd_schedule.c). */
#ifndef CTL_CMD_SCHEDULE_H
#define CTL_CMD_SCHEDULE_H

/* argv[0] is "schedule"; parses its own options. Returns the exit status (cmd.h). */
int cmd_schedule_main(int argc, char **argv);

#endif
