/* Per-communicator state, cached on an MPI attribute of the user's
 * communicator and freed by the attribute's delete callback (MPI_Comm_free,
 * and MPI_Finalize for the communicators still alive).
 */
#ifndef SKEWSHIM_COMM_H
#define SKEWSHIM_COMM_H

#include <mpi.h>
#include <stdint.h>
#include "call.h"
#include "policy/reuse.h"
#include "schedule/plan_cache.h"
#include "topology/topo.h"
#include "log.h"

typedef struct skewshim_comm {
    MPI_Comm user;          /* not owned */
    MPI_Comm pcomm;         /* private dup: all of the shim's own messages */
    int id;                 /* job-wide id: same on every member */
    int rank, size;
    int world_rank;
    int topo_q;             /* ranks_per_node the topology was built with (0 = shared split) */
    int topo_nics;          /* nics_per_node the choice below was fixed with */
    skewshim_topo topo;
    int *shm_keys;          /* [P] node key of each rank from the shared-memory split */
    int *world_of;          /* [P] world rank of each rank (emulated nodes) */
    uint64_t ncalls;        /* MPI_Alltoallv calls seen on this communicator */
    /* Agreed at creation: some member had a CUDA context then.  Device
     * rules of the policy count on this communicator only if so. */
    int device_possible;
    /* The policy's choice when no fact of a call can change it (rule index,
     * -1 the default), or -2 when the choice needs the agreement. */
    int fixed_rule;
    int fixed_native;       /* that choice is native */
    /* Algorithms that cannot run or do not pay off on these nodes: the
     * rules choosing them are passed over (skewshim_algos_unrunnable), and
     * whether the job summary has counted this communicator for it. */
    unsigned unrunnable;
    unsigned cannot_run;    /* of those, the ones that cannot run at all */
    /* The same for a rule that runs tuna_hier with fewer requests in
     * flight than its line was drawn with (SKEWSHIM_HIER_LINE_FLIGHT). */
    unsigned unrunnable_few;
    int passed_counted;
    /* Every algorithm the policy can choose here but native gathers the
     * whole size matrix (SABRE, FAST): the matrix exchange is then the
     * call's agreement, and no allreduce runs before it. */
    int matrix_first;
    /* ... or some algorithm the policy can choose here gathers it: the
     * agreement then also says whether every rank holds the call's matrix
     * in its current plan (core/global.c). */
    int matrix_possible;
    /* The outcome the last agreed calls settled on, and how many calls may
     * still take it without agreeing (policy/reuse.h). */
    skewshim_reuse reuse;
    /* scratch for the call description, grown with the comm size */
    uint64_t *scratch;      /* 4*P */
    void *tmp;              /* temp buffer for schedules */
    uint64_t tmp_cap;
    uint64_t tmp_data;      /* the lab's fold: where tmp's folded data starts */
    void *pack;             /* dense copies of data whose datatype is not one run */
    uint64_t pack_cap;
    void *stage;            /* MPI_IN_PLACE: the blocks to send, copied out */
    uint64_t stage_cap;
    skewshim_ring ring;     /* per-call records awaiting the max-over-ranks merge */
    void *plan_cache;       /* owned by src/schedule/plan_cache.c */
    /* The latest agreed matrices' plan hashes, kept apart from the cache
     * so that the predicted miss is rank-invariant (plan_cache.h). */
    skewshim_plan_seen plan_seen;
    /* The repeat check (core/global.c): whether the next matrix call runs
     * it (agreed, so never from the key: a tool thread may change a
     * parameter on one rank first), and the agreed figures of each cache
     * entry's matrix with the topology they were taken on, which a check
     * that stands for the agreement gives its call. */
    int repeat_armed;
    uint64_t repeat_last;   /* hash of the last planned matrix, without the key */
    int repeat_last_valid;
    skewshim_agreed slot_ag[SKEWSHIM_PLAN_CACHE_SLOTS];
    int slot_topo_q[SKEWSHIM_PLAN_CACHE_SLOTS];
    /* The agreed repeat count (core/agree.c): this rank's row and column
     * of sizes at the last agreed or reused call, calls in a row (agreed
     * or reused) since the matrix last changed, and the reused calls since
     * the last agreement with whether this rank's sizes changed in one. */
    uint64_t *prev_sr;      /* [2P]: send sizes, then receive sizes */
    int prev_p;             /* P of prev_sr; 0 when none is kept */
    int prev_stale;         /* an agreed call since was not compared */
    uint32_t repeat_unread; /* agreed calls in a row whose outcome could not read the count */
    uint64_t repeat_run;
    uint64_t repeat_pending_calls;
    uint64_t repeat_pending_changed;
    void *device;           /* owned by the device executors */
    struct skewshim_comm *next, *prev; /* list of live states, for finalize */
} skewshim_comm;

/* The state of comm, created on first use (collective over comm: every rank
 * reaches its first MPI_Alltoallv on comm together).  NULL on failure. */
skewshim_comm *skewshim_comm_get(MPI_Comm comm);
/* The state of comm if it has one already, else NULL; never collective. */
skewshim_comm *skewshim_comm_peek(MPI_Comm comm);
/* Free every live state (called from MPI_Finalize, before PMPI_Finalize). */
void skewshim_comm_free_all(void);
int skewshim_comm_setup(void);     /* keyval; called at init */
int skewshim_comm_live(void);      /* states alive, for the leak test */
/* Rebuild the topology when the ranks_per_node in force changed (local). */
int skewshim_comm_topo_update(skewshim_comm *cs);
/* Merge every live ring (collective over all live communicators at once). */
void skewshim_comm_flush_all(void);

#endif
