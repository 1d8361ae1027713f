/* SPDX-License-Identifier: MIT */
#ifndef PP_PDB_H
#define PP_PDB_H

#include "cluster_model.h"

/* status.disruptionsAllowed, given or as the disruption controller computes it. */
int32_t pp__pdb_disruptions_allowed(const pp_cluster *c, const struct pdb *pdb);

#endif
