/* Executors: run a planner's schedule over a transport.  The host executor
 * uses PMPI point-to-point on the shim's private communicator; the device
 * executors (NCCL, CUDA IPC, host staging) live in src/exec/device_*.c.
 */
#ifndef SKEWSHIM_EXEC_H
#define SKEWSHIM_EXEC_H

#include <mpi.h>
#include "schedule/sched.h"

/* Tag of every message the shim sends on its private communicator. */
#define SKEWSHIM_TAG 0x5eed

/* Run one rank's slice (or a global schedule: moves of other ranks are
 * skipped) stage by stage: post every receive of the stage, then every send,
 * do the local copies, wait.  soff / roff are this rank's byte displacements
 * of its send / receive blocks (what LOC_SEND / LOC_RECV offsets are relative to).  Moves between the same pair within a stage are
 * posted in list order on both sides, so MPI's ordering matches them.
 * Returns MPI_SUCCESS or the first MPI error. */
int skewshim_exec_host(const skewshim_sched *s, int rank,
                       const void *sendbuf, const uint64_t *soff,
                       void *recvbuf, const uint64_t *roff,
                       void *tmp, MPI_Comm pcomm);

#endif
