/* Host executor of the forwarding schedules of src/fwd.h (two-phase Bruck,
 * padded Bruck, TuNA, TuNA_l^g): PMPI point-to-point on the call's private
 * communicator, round by round, metadata (block sizes) then data.  The
 * algorithm table (src/core) calls these; each run returns MPI_SUCCESS or an
 * MPI error code and never falls back on its own. */
#ifndef SKEWSHIM_EXEC_FORWARD_H
#define SKEWSHIM_EXEC_FORWARD_H

#include <stdint.h>
#include "call.h"

int skewshim_run_bruck2(skewshim_call *c);
int skewshim_run_padded_bruck(skewshim_call *c);
int skewshim_run_tuna(skewshim_call *c);
int skewshim_run_tuna_hier(skewshim_call *c);

/* Upper bounds of the temp each run requests, from rank-invariant facts
 * only (c->size, c->ag.max_block_bytes, c->params, the topology). */
uint64_t skewshim_temp_bruck2(const skewshim_call *c);
uint64_t skewshim_temp_padded_bruck(const skewshim_call *c);
uint64_t skewshim_temp_tuna(const skewshim_call *c);
uint64_t skewshim_temp_tuna_hier(const skewshim_call *c);

/* TuNA_l^g needs nodes of equal size: SKEWSHIM_REASON_UNEVEN_NODES
 * otherwise (rank-invariant: from the topology). */
skewshim_reason skewshim_tuna_hier_check(const skewshim_call *c);

#endif
