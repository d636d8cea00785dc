/* Planner entry points.  Pure C: no MPI, no CUDA.  One algorithm per file in
 * src/plan/.  A planner that needs only this rank's row and column (a local
 * planner) builds this rank's slice; one that needs the whole size matrix
 * builds the global schedule that every rank computes identically from the
 * same matrix.  Moves address user blocks by index (see sched.h), so no
 * planner sees the user's displacements.
 */
#ifndef SKEWSHIM_PLAN_H
#define SKEWSHIM_PLAN_H

#include "schedule/sched.h"
#include "topology/topo.h"
#include "policy.h"

/* This rank's view: sizes of its P send and receive blocks, in bytes. */
typedef struct skewshim_local {
    int rank, nranks;
    const uint64_t *sbytes, *rbytes;
} skewshim_local;

/* What a global planner reports for the log. */
typedef struct skewshim_plan_report {
    int regime;                   /* SABRE: 1 highly skewed, 0 lightly; -1 n/a */
    int stages;                   /* stages of the schedule (Birkhoff stages for FAST) */
    double mtm;                   /* the MTM the planner decided on, when it did */
} skewshim_plan_report;

/* A planner from the whole size matrix (SABRE, FAST, spread-out).  nics is
 * the NICs per node (m).  Builds the global schedule in out (initialised by
 * the caller with skewshim_sched_init(out, P, -1)). */
typedef int (*skewshim_global_planner)(const skewshim_matrix *m, const skewshim_topo *t,
                                       const skewshim_params *p, int nics,
                                       skewshim_sched *out, skewshim_plan_report *rep);

/* scattered (MPICH): batches of block_count Isend/Irecv pairs in rotated order. */
int skewshim_plan_scattered(const skewshim_local *l, int block_count, skewshim_sched *out);
/* pairwise (Open MPI): round k sends to rank+k, receives from rank-k. */
int skewshim_plan_pairwise(const skewshim_local *l, skewshim_sched *out);

/* Global planners (src/plan/sabre.c, fast.c, spread.c).  Same signature
 * as skewshim_global_planner. */
int skewshim_plan_sabre(const skewshim_matrix *m, const skewshim_topo *t,
                        const skewshim_params *p, int nics,
                        skewshim_sched *out, skewshim_plan_report *rep);
int skewshim_plan_fast(const skewshim_matrix *m, const skewshim_topo *t,
                       const skewshim_params *p, int nics,
                       skewshim_sched *out, skewshim_plan_report *rep);
/* Slice planners: exactly skewshim_sched_slice(global plan, rank), move for
 * move and stage for stage, without building the global plan.  out_slice
 * is initialised by the caller with skewshim_sched_init(out_slice, P, rank).
 * *max_tmp_all_ranks (when not NULL) receives the largest tmp_bytes of any
 * rank in the global plan, the same number on every rank, so the memory cap
 * is decided alike everywhere.  rep as for the global planner.  Work per
 * call: the rank-invariant decision (FAST's Birkhoff stages, SABRE's MTM
 * and, in its highly skewed regime, Algorithm 1 for every node pair) plus a
 * pass over the matrix for the temp layout, and the moves of only the tiles
 * that touch the rank's node.  Returns 0, or -1 on bad arguments or
 * allocation failure. */
int skewshim_plan_fast_slice(const skewshim_matrix *m, const skewshim_topo *t,
                             const skewshim_params *p, int nics, int rank,
                             skewshim_sched *out_slice, uint64_t *max_tmp_all_ranks,
                             skewshim_plan_report *rep);
int skewshim_plan_sabre_slice(const skewshim_matrix *m, const skewshim_topo *t,
                              const skewshim_params *p, int nics, int rank,
                              skewshim_sched *out_slice, uint64_t *max_tmp_all_ranks,
                              skewshim_plan_report *rep);

/* Spread-out (FAST's baseline): every pair directly, in N-1 inter-node
 * diagonal stages; for the simulator. */
int skewshim_plan_spread(const skewshim_matrix *m, const skewshim_topo *t,
                         const skewshim_params *p, int nics,
                         skewshim_sched *out, skewshim_plan_report *rep);

#endif
