/* Executors: run a plan over a transport.  The host executor uses PMPI
 * point-to-point on the shim's private communicator; the forwarding
 * executor (src/exec/forward.c) runs the Bruck family's plans; the device
 * executors (NCCL, CUDA IPC, host staging) live in src/exec/device_*.c.
 *
 * An executor sees only what the core hands it in a skewshim_xargs: the
 * buffers and this rank's block sizes and byte offsets, the private
 * communicator, the topology, temporary memory sized by the plan's bound,
 * and the slot of the communicator's device state.  It never sees the call
 * or the communicator state and calls nothing of src/core: the flow runs
 * one way (describe -> agree -> choose -> plan -> execute -> log).
 */
#ifndef SKEWSHIM_EXEC_H
#define SKEWSHIM_EXEC_H

#include <mpi.h>
#include <stdint.h>
#include "schedule/sched.h"
#include "topology/topo.h"

/* Tag of every message the shim sends on its private communicator. */
#define SKEWSHIM_TAG 0x5eed

typedef struct skewshim_xargs {
    int rank, size;
    const void *sendbuf;
    const uint64_t *sbytes, *soff;  /* [size] this rank's send blocks: bytes, byte offsets */
    void *recvbuf;
    const uint64_t *rbytes, *roff;  /* [size] receive blocks */
    uint64_t max_block;             /* agreed largest block (forwarding layouts) */
    MPI_Comm pcomm;                 /* the private communicator */
    const skewshim_topo *topo;
    int topo_q;                     /* ranks_per_node the topology was built with */
    int world_rank;
    void *tmp;                      /* host temp of at least the plan's bound */
    uint64_t tmp_cap;
    void **device;                  /* the communicator's device state (device.h) */
    /* reported by the executor */
    skewshim_sched_stats stats;
    uint64_t meta_bytes;            /* metadata (block sizes) this rank sent */
    uint64_t tmp_bytes;             /* temp used */
} skewshim_xargs;

/* An executor of one plan (what the plan is depends on the executor):
 * what host staging wraps.  Returns MPI_SUCCESS or an MPI error code; never
 * falls back on its own (a fallback decided on one rank alone would hang
 * the others). */
typedef int (*skewshim_executor)(const void *plan, skewshim_xargs *x);

/* Run one rank's slice (or a global schedule: moves of other ranks are
 * skipped) stage by stage: post every receive of the stage, then every send,
 * do the local copies, wait.  soff / roff are this rank's byte displacements
 * of its send / receive blocks (what LOC_SEND / LOC_RECV offsets are
 * relative to).  Moves between the same pair within a stage are posted in
 * list order on both sides, so MPI's ordering matches them.  Returns
 * MPI_SUCCESS or the first MPI error. */
int skewshim_exec_host(const skewshim_sched *s, int rank,
                       const void *sendbuf, const uint64_t *soff,
                       void *recvbuf, const uint64_t *roff,
                       void *tmp, MPI_Comm pcomm);
/* The same as an executor: plan is a skewshim_sched (a slice or global),
 * temp from x->tmp; reports x->tmp_bytes and, for a global schedule, this
 * rank's x->stats (a slice's stats are its own). */
int skewshim_exec_sched(const void *plan, skewshim_xargs *x);

#endif
