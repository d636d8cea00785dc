/* Device buffers: where a buffer lives, and the device executors (NCCL,
 * CUDA IPC, host staging).  Everything here compiles without CUDA / NCCL
 * (SKEWSHIM_HAVE_CUDA, SKEWSHIM_HAVE_NCCL unset): locate then answers HOST
 * and the run functions return MPI_ERR_OTHER.  Like every executor they see
 * only a skewshim_xargs (exec.h); the communicator's device state lives in
 * the slot x->device, which the core owns and frees through
 * skewshim_device_comm_free.
 *
 * Collective rules.  Every function that takes a skewshim_xargs may run
 * collectives on the private communicator (NCCL set-up on the first device
 * call of a communicator, agreement on allocations, the IPC handle exchange
 * on the node), so every rank of the communicator must call the same
 * function for the same MPI_Alltoallv, which the core's agreement
 * guarantees.  None of them falls back to PMPI_Alltoallv on its own: when
 * NCCL is missing or its set-up failed (agreed by all ranks) they run the
 * same algorithm through host staging instead, so the answer is correct and
 * every rank takes the same path.
 */
#ifndef SKEWSHIM_DEVICE_H
#define SKEWSHIM_DEVICE_H

#include <stdint.h>
#include "exec.h"
#include "schedule/sched.h"

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

/* Free the device state in *device (NCCL communicator, streams, temp,
 * staging buffers, node communicators) and clear the slot.  Called by the
 * core when the communicator state is freed and at finalize; collective
 * like MPI_Comm_free.  Safe on an empty slot. */
void skewshim_device_comm_free(void **device, int rank);

/* 1 when this communicator has a working NCCL communicator, else 0; the
 * same answer on every rank.  The first call on a communicator sets NCCL up
 * (collective over the private communicator); a failure is warned about
 * once (rank 0) and remembered, never retried. */
int skewshim_device_nccl_ready(skewshim_xargs *c);

/* nccl_fanout (an executor; plan unused): every pair in one
 * ncclGroupStart/End (what PyTorch's all_to_all_single does); the own block
 * by a device copy.  Staged through the host when NCCL is not ready. */
int skewshim_run_nccl_fanout(const void *plan, skewshim_xargs *c);

/* Run this rank's moves of a schedule on device buffers: per stage one
 * NCCL group for inter-rank moves, CUDA IPC pushes for moves within a node
 * when every rank of the node could map its peers' buffers, device copies
 * for local moves.  s is a global schedule (rank -1) or this rank's slice
 * (skewshim_sched_slice).  A global schedule costs no extra collective: the
 * temp growth and the node's barrier stages are derived from it alike on
 * every rank; a slice adds one tiny reduction over the private
 * communicator (temp allocation agreed) and, when IPC is in play, two over
 * the node.  Sets c->tmp_bytes and c->stats.  Staged through the host
 * (skewshim_exec_sched) when NCCL is not ready; then c->tmp must hold the
 * schedule's host temp. */
int skewshim_exec_device(const skewshim_sched *s, skewshim_xargs *c);
/* The same as an executor (plan: a skewshim_sched). */
int skewshim_exec_device_sched(const void *plan, skewshim_xargs *c);

/* Host staging, which wraps an executor: copy the send blocks to pinned
 * host memory, run the executor on a copy of *c whose buffers are the
 * staged ones (packed: soff / roff describe the packed layout), copy the
 * receive blocks back; stats, metadata and temp come back into *c. */
int skewshim_exec_staged(skewshim_xargs *c, skewshim_executor run, const void *plan);
/* Host fan-out on the private communicator (every pair directly, messages
 * cut at 1 GiB): the executor behind a staged nccl_fanout (plan unused). */
int skewshim_device_host_fanout(const void *plan, skewshim_xargs *c);

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
#include <pthread.h>
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
/* The counters are bumped by every thread that runs a device call
 * (MPI_THREAD_MULTIPLE), and read at finalize: under this lock. */
extern pthread_mutex_t skewshim_device_ctr_lock;
#define SKEWSHIM_DEVICE_COUNT(field, v)                 \
    do {                                                \
        pthread_mutex_lock(&skewshim_device_ctr_lock);  \
        skewshim_device_ctr.field += (v);               \
        pthread_mutex_unlock(&skewshim_device_ctr_lock);\
    } while (0)

/* The state in *slot, created on first use (no CUDA, no MPI) for a
 * communicator of size ranks; NULL when out of memory.  Then *slot holds
 * one of two markers instead, so that the NCCL set-up still runs (and
 * fails, agreed) exactly once on every rank. */
skewshim_device_state *skewshim_device_state_get(void **slot, int size);
extern char skewshim_device_nomem_untried, skewshim_device_nomem_failed;
/* Make st's device current (choosing it on first use: pref when >= 0, else
 * the device of the call's buffers, else the current one) and create the
 * streams.  *saved receives the caller's device for skewshim_device_leave. */
int skewshim_device_enter(skewshim_device_state *st, const skewshim_xargs *c,
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
int skewshim_ipc_prepare(skewshim_device_state *st, skewshim_xargs *c,
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
