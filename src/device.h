/* Device buffers: where a buffer lives, and the device executors (NCCL,
 * CUDA IPC, host staging).  Everything here compiles without CUDA / NCCL
 * (SKEWSHIM_HAVE_CUDA, SKEWSHIM_HAVE_NCCL unset): locate then answers HOST
 * and the run functions return MPI_ERR_OTHER.
 *
 * Collective rules.  Every function that takes a skewshim_call may run
 * collectives on the call's private communicator (NCCL set-up on the first
 * device call of a communicator, agreement on allocations, the IPC handle
 * exchange on the node), so every rank of the communicator must call the
 * same function for the same MPI_Alltoallv, which the core's agreement
 * guarantees.  None of them falls back to PMPI_Alltoallv on its own: when
 * NCCL is missing or its set-up failed (agreed by all ranks) they run the
 * same algorithm through host staging instead, so the answer is correct and
 * every rank takes the same path.
 */
#ifndef SKEWSHIM_DEVICE_H
#define SKEWSHIM_DEVICE_H

#include <stdint.h>
#include "call.h"
#include "schedule/sched.h"

struct skewshim_comm;

/* SKEWSHIM_BUF_DEVICE for memory of a CUDA device, SKEWSHIM_BUF_HOST for
 * everything else: NULL, unregistered or pinned host memory, managed memory
 * (the host can touch it, so the host path is correct for it).  Never leaves
 * a CUDA error behind.  Does not create a CUDA context in a process that has
 * none (a host-only application on a GPU node stays off the GPU).
 * SKEWSHIM_DEVICE=0 in the environment turns detection off (always HOST). */
int skewshim_device_locate(const void *p);
/* Whether this process has a CUDA context, so that any buffer of it can be
 * device memory; 0 in builds without CUDA or with SKEWSHIM_DEVICE=0. */
int skewshim_device_in_use(void);

/* Free cs->device (NCCL communicator, streams, temp, staging buffers, node
 * communicators).  Called by the core when the communicator state is freed
 * and at finalize; collective like MPI_Comm_free.  Safe on a NULL device. */
void skewshim_device_comm_free(struct skewshim_comm *cs);

/* 1 when this communicator has a working NCCL communicator, else 0; the
 * same answer on every rank.  The first call on a communicator sets NCCL up
 * (collective over the private communicator); a failure is warned about
 * once (rank 0) and remembered, never retried. */
int skewshim_device_nccl_ready(skewshim_call *c);

/* nccl_fanout: every pair in one ncclGroupStart/End (what PyTorch's
 * all_to_all_single does); the own block by a device copy.  Staged through
 * the host when NCCL is not ready. */
int skewshim_run_nccl_fanout(skewshim_call *c);

/* Run this rank's moves of a schedule on device buffers: per stage one
 * NCCL group for inter-rank moves, CUDA IPC pushes for moves within a node
 * when every rank of the node could map its peers' buffers, device copies
 * for local moves.  s is a global schedule (rank -1) or this rank's slice
 * (skewshim_sched_slice).  A global schedule costs no extra collective: the
 * temp growth and the node's barrier stages are derived from it alike on
 * every rank; a slice adds one tiny reduction over the private
 * communicator (temp allocation agreed) and, when IPC is in play, two over
 * the node.  Sets c->tmp_bytes, and c->stats for a global schedule (a
 * slice carries this rank's stats already).  Staged through the host
 * (skewshim_exec_host) when NCCL is not ready. */
int skewshim_exec_device(const skewshim_sched *s, skewshim_call *c);

/* Host staging: copy the send blocks to pinned host memory, run host_run on
 * a copy of *c whose buffers are the staged ones (packed: soff / roff and,
 * where they fit, sdispls / rdispls describe the packed layout), copy the
 * receive blocks back.  host_run must use sbytes/soff/rbytes/roff (or the
 * counts and displacements) of the call it is given, never the original's. */
int skewshim_exec_staged(skewshim_call *c, int (*host_run)(skewshim_call *));
/* The same with skewshim_exec_host of a schedule (global or this rank's
 * slice) as the host run. */
int skewshim_exec_staged_sched(const skewshim_sched *s, skewshim_call *c);
/* Host fan-out on the private communicator (every pair directly, messages
 * cut at 1 GiB): the host run behind a staged nccl_fanout. */
int skewshim_device_host_fanout(skewshim_call *c);

/* Process-wide counters of the device paths, for the job summary. */
typedef struct skewshim_device_counters {
    uint64_t nccl_inits, nccl_init_failures;
    uint64_t nccl_calls;          /* calls run with NCCL */
    uint64_t staged_calls;        /* calls run through host staging */
    uint64_t staged_bytes;        /* bytes copied device<->host by staging */
    uint64_t ipc_calls;           /* calls that pushed with CUDA IPC */
    uint64_t ipc_opens, ipc_open_failures, ipc_cache_hits, ipc_closes;
    double ipc_open_seconds;      /* time spent in cudaIpcOpenMemHandle */
    uint64_t errors;              /* CUDA / NCCL errors reported */
} skewshim_device_counters;
void skewshim_device_get_counters(skewshim_device_counters *out);

/* ---- shared by src/exec/device*.c only ---------------------------------- */
#if defined(SKEWSHIM_DEVICE_INTERNAL) && defined(SKEWSHIM_HAVE_CUDA)
#include <mpi.h>
#include <cuda_runtime_api.h>

struct ncclComm;
struct skewshim_ipc_state;

typedef struct skewshim_device_state {
    int cuda_dev;                 /* device of streams / NCCL; -1 until bound */
    cudaStream_t stream;          /* NCCL and local copies */
    cudaStream_t copy_stream;     /* IPC pushes, to overlap with NCCL */
    cudaEvent_t ev_main, ev_copy; /* stage joins between the two streams */
    int nccl_state;               /* 0 not tried, 1 ready, -1 failed (agreed) */
    struct ncclComm *nccl;
    MPI_Comm shm;                 /* physical node split of pcomm */
    void *dtmp;                   /* device temp for LOC_TMP */
    uint64_t dtmp_cap;
    uint64_t *tmp_hw;             /* [P] high-water temp of every rank seen */
    void *hsend, *hrecv;          /* pinned staging buffers */
    uint64_t hsend_cap, hrecv_cap;
    struct skewshim_ipc_state *ipc;
} skewshim_device_state;

extern skewshim_device_counters skewshim_device_ctr;

/* cs->device, created on first use (no CUDA, no MPI); NULL when out of
 * memory.  Then cs->device holds one of two markers instead, so that the
 * NCCL set-up still runs (and fails, agreed) exactly once on every rank. */
skewshim_device_state *skewshim_device_state_get(struct skewshim_comm *cs);
extern char skewshim_device_nomem_untried, skewshim_device_nomem_failed;
/* Make st's device current (choosing it on first use: pref when >= 0, else
 * the device of the call's buffers, else the current one) and create the
 * streams.  *saved receives the caller's device for skewshim_device_leave. */
int skewshim_device_enter(skewshim_device_state *st, const skewshim_call *c,
                          int pref, int *saved);
void skewshim_device_leave(int saved);
/* Device of p, or -1 when p is not device memory. */
int skewshim_device_of(const void *p);
/* Report a CUDA error (stderr, rank-tagged), clear it, count it.  Returns
 * MPI_SUCCESS for cudaSuccess, else MPI_ERR_OTHER. */
int skewshim_cuda_check(cudaError_t e, const char *what, int rank);
void skewshim_device_report(int rank, const char *what, const char *msg);
/* Grow the pinned staging buffers / the device temp (st owned). */
int skewshim_device_tmp_reserve(skewshim_device_state *st, uint64_t bytes, int rank);
double skewshim_device_now(void);

/* CUDA IPC (src/exec/device_ipc.c).  prepare is collective over the node
 * communicator of the call (built on first use); the schedule is a global
 * one or this rank's slice.  It returns 1 when pushes within the node are
 * possible this call, 0 when not (then inter-rank moves within the node go
 * through NCCL), the same on every rank of the node. */
int skewshim_ipc_prepare(skewshim_device_state *st, skewshim_call *c,
                         const skewshim_sched *global, int *rc);
/* Whether the move (src, dst both != each other) is an IPC push this call;
 * identical on both ends and on every rank of the node. */
int skewshim_ipc_move(const skewshim_device_state *st, const skewshim_move *m);
/* Address in the peer's mapped receive block / temp for a push. */
void *skewshim_ipc_target(const skewshim_device_state *st, const skewshim_move *m);
/* Stages of this call (agreed over the node) and which of them push inside
 * the node (those take node barriers); 0 when IPC is off this call. */
int skewshim_ipc_stages(const skewshim_device_state *st, const unsigned char **stage_ipc);
MPI_Comm skewshim_ipc_node_comm(const skewshim_device_state *st);
void skewshim_ipc_free(skewshim_device_state *st);
/* NCCL (src/exec/device_nccl.c): destroy st's communicator. */
void skewshim_nccl_free(skewshim_device_state *st);
#endif

#endif
