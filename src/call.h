/* One intercepted MPI_Alltoallv, from description to log.  This is the MPI
 * side of the shim: everything here may call PMPI_*, nothing here defines an
 * MPI_ symbol (only intercept.c does).
 */
#ifndef SKEWSHIM_CALL_H
#define SKEWSHIM_CALL_H

#include <mpi.h>
#include <stdint.h>
#include "exec.h"
#include "schedule/forwarding.h"
#include "policy.h"
#include "schedule/sched.h"
#include "topology/topo.h"
#include "vocab.h"

struct skewshim_comm;

/* What the one agreement collective yields: identical on every rank. */
typedef struct skewshim_agreed {
    int valid;                    /* 0 when no agreement ran */
    uint64_t max_block_bytes;
    uint64_t max_send, sum_send;  /* per-rank totals, all traffic; sum_send is the call's total */
    uint64_t max_recv, sum_recv;
    uint64_t max_isend, sum_isend;/* per-rank inter-node totals */
    uint64_t max_irecv, sum_irecv;
    uint64_t sum_nonempty;        /* blocks of one byte or more, over all ranks */
    uint64_t max_msgs;            /* the busiest rank's non-empty blocks to or from others */
    uint64_t max_phase2;          /* the busiest rank's tuna_hier inter-node messages (topo.h) */
    uint64_t any_unsupported;     /* max over ranks of the local reason */
    uint64_t any_device, any_host;
    uint64_t repeats;             /* agreed calls in a row before with this matrix */
    int held;                     /* every rank's current plan is for this very matrix */
    skewshim_skew skew;           /* MTMs derived from the above */
} skewshim_agreed;

/* Extra per-call facts a planner reports for the log (SABRE/FAST). */
typedef struct skewshim_plan_info {
    int regime;                   /* SABRE: 1 high, 0 low; -1 n/a */
    int nics;                     /* SABRE: the NICs per node it planned for; 0 n/a */
    int stages;
    int cache_hit;                /* -1 n/a */
    double t_pred, t_lb;          /* model seconds; 0 when n/a */
    uint64_t meta_bytes;          /* matrix exchange bytes sent by this rank */
    double meta_time;             /* seconds spent in it */
} skewshim_plan_info;

typedef struct skewshim_call {
    /* the user's arguments */
    const void *sendbuf;
    void *recvbuf;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype stype, rtype;
    MPI_Comm comm;
    /* described */
    struct skewshim_comm *cs;
    int rank, size;
    int type_size;                /* bytes per send element */
    int rtype_size;               /* bytes per receive element */
    int spack, rpack;             /* this rank's send / receive type is not one
                                     ordered run: packed around the schedule */
    MPI_Aint sextent, rextent;
    uint64_t *sbytes, *soff;      /* [P] bytes and byte offsets, this rank */
    uint64_t *rbytes, *roff;
    int buffers;                  /* SKEWSHIM_BUF_HOST or _DEVICE */
    skewshim_reason local_reason; /* why this rank alone cannot run it */
    int nomem;                    /* this rank alone ran out of memory */
    int in_place;                 /* MPI_IN_PLACE: the send side is the
                                     receive side, staged (core/inplace.c) */
    /* agreed and chosen */
    skewshim_agreed ag;
    int matrix_ready;             /* the size matrix of this call is gathered */
    int matrix_repeat;            /* ... or is the plan cache's current one (core/global.c) */
    /* Set by the pay-back guard: the most a plan-cache miss may cost in
     * planning (the predicted gain of the schedule once the matrix is
     * gathered); unguarded calls plan whatever it costs. */
    int plan_guarded;
    double plan_budget, plan_cost;  /* seconds; the cost of a miss */
    skewshim_algo_id algo;
    int why, rule;
    int decided;                  /* SKEWSHIM_DECIDED_*: how the choice was made */
    int repeats_decide;           /* the agreed repeat count could change the choice */
    uint32_t repeats_horizon;     /* calls on until it first could (0: never) */
    const skewshim_params *params;
    /* planned (the plan step, after the choice) */
    const void *plan;             /* what the algorithm's executor runs */
    uint64_t plan_tmp;            /* this rank's temp for it */
    skewshim_fwd_plan fwd;        /* forwarding plans live here */
    skewshim_sched local;         /* local planners' slice (local_planned: free it) */
    int local_planned;
    /* reported by the algorithm */
    skewshim_sched_stats stats;
    skewshim_plan_info info;
    uint64_t tmp_bytes;
} skewshim_call;

/* One entry of the algorithm table (src/core/algos.c), which drives the
 * pipeline's dispatch: what buffers an algorithm takes, whether it needs the
 * agreed facts even when forced, whether it gathers the whole size matrix,
 * its rank-invariant check, its plan step, and its executors.
 *
 * plan() builds this call's plan into c->plan (and c->plan_tmp, this rank's
 * temp) and returns the temp bound the memory cap reads: computed from
 * rank-invariant facts (agreed values, comm size, topology, the gathered
 * matrix), the same number on every rank, so the cap is decided alike
 * everywhere without a collective of its own.  NULL: nothing to plan.
 * The executors (exec.h) take the plan and a skewshim_xargs; run_host
 * also serves device buffers through host staging when run_device is NULL
 * (or NCCL is not ready).  They must not fall back on their own. */
typedef struct skewshim_algo {
    skewshim_algo_id id;
    const char *desc;
    unsigned buffers;             /* bit SKEWSHIM_BUF_HOST / _DEVICE supported */
    int needs_agreement;          /* needs agreed facts even when forced */
    int needs_matrix;             /* plans from the whole size matrix (one allgather) */
    /* The reason this algorithm cannot run on a communicator of these
     * nodes (NULL: it runs on any): rank-invariant, so the policy passes
     * over its rules there (skewshim_algos_unrunnable) and a forced or
     * default choice falls back with it. */
    skewshim_reason (*nodes_check)(const skewshim_topo *t, int size);
    uint64_t (*plan)(skewshim_call *c);
    skewshim_executor run_host;
    skewshim_executor run_device;
    /* Whether it pays off on a communicator of these nodes with nics NICs
     * a node (topology.nics_per_node), as measured, where the linear
     * exchange costs the busiest rank msgs messages of bytes bytes on
     * average and its own inter-node phase at most phase2, run with
     * in_flight requests in flight (NULL: on any): where not, the policy
     * passes over its rules too, but a forced or default choice runs it. */
    int (*nodes_pay)(const skewshim_topo *t, int size, int nics, uint64_t msgs, uint64_t phase2,
                     double bytes, int in_flight);
} skewshim_algo;

#define SKEWSHIM_BUFBIT(b) (1u << (b))
/* plan() results that are not sizes: the arguments are inconsistent
 * across ranks (MPI must judge them), this rank alone could not allocate
 * (its peers may be past a collective it skipped: the error handler runs,
 * no fallback), or the algorithm failed to prepare (UINT64_MAX: alike on
 * every rank, a fallback). */
#define SKEWSHIM_TEMP_INVALID (UINT64_MAX - 1)
#define SKEWSHIM_TEMP_NOMEM (UINT64_MAX - 2)
/* ... or planning a matrix not seen lately would cost more than the
 * schedule gains (agreed figures only: a fallback on every rank). */
#define SKEWSHIM_TEMP_NOT_PAID (UINT64_MAX - 3)

const skewshim_algo *skewshim_algo_get(skewshim_algo_id id);
/* The algorithms whose rules the policy passes over on a communicator of
 * these nodes with nics NICs a node (bit per skewshim_algo_id;
 * rank-invariant): those that cannot run there (nodes_check) or do not pay
 * off there (nodes_pay) run with in_flight requests in flight. */
unsigned skewshim_algos_unrunnable(const skewshim_topo *t, int size, int nics, int in_flight);
/* Of those, the ones that cannot run there at all (nodes_check): the only
 * ones a rule that skips the pay checks (tuna_hier.pay_check) is passed
 * over for. */
unsigned skewshim_algos_cannot_run(const skewshim_topo *t, int size);
/* Those that do not pay off, run with in_flight requests in flight, on a
 * call whose blocks leave the linear exchange msgs messages on its busiest
 * rank and tuna_hier's inter-node phase phase2, of nonempty_bytes bytes a
 * non-empty block on average (agreed, so rank-invariant): the policy
 * passes over its rules that match on agreed facts. */
unsigned skewshim_algos_unpaid(const skewshim_topo *t, int size, int nics, uint64_t msgs,
                               uint64_t phase2, double nonempty_bytes, int in_flight);

/* The pipeline: returns what PMPI_Alltoallv would have returned. */
int skewshim_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);


#endif
