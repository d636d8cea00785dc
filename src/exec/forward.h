/* Host executor of the forwarding plans of src/schedule/forwarding.h (two-phase Bruck,
 * padded Bruck, TuNA, TuNA_l^g): PMPI point-to-point on the private
 * communicator, round by round, metadata (block sizes) then data.  The core
 * plans (the schedule and its temp layout, from rank-invariant facts) and
 * hands the plan and the buffers over; the run returns MPI_SUCCESS or an
 * MPI error code and never falls back on its own. */
#ifndef SKEWSHIM_EXEC_FORWARD_H
#define SKEWSHIM_EXEC_FORWARD_H

#include "exec.h"
#include "schedule/forwarding.h"

/* plan: a skewshim_fwd_plan whose layout x->tmp holds (x->tmp_cap >= L.total).
 * Reports x->stats, x->meta_bytes and x->tmp_bytes. */
int skewshim_exec_forward(const void *plan, skewshim_xargs *x);

#endif
