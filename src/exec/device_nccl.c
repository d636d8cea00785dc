#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* NCCL executors: the nccl_fanout algorithm and the stage-by-stage device
 * executor of global schedules (SABRE, FAST).  One NCCL communicator per MPI
 * communicator, set up on the first device call and kept in the device slot the core hands over. */

#define SKEWSHIM_DEVICE_INTERNAL 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "device.h"
#include "exec.h"

#if defined(SKEWSHIM_HAVE_CUDA) && defined(SKEWSHIM_HAVE_NCCL)

#include <nccl.h>

static int nccl_warned;

void skewshim_nccl_free(skewshim_device_state *st)
{
    if (!st->nccl)
        return;
    /* Collective like MPI_Comm_free, which is where we are called from. */
    ncclResult_t r = ncclCommDestroy(st->nccl);
    if (r != ncclSuccess)
        skewshim_device_report(-1, "ncclCommDestroy", ncclGetErrorString(r));
    st->nccl = NULL;
}

static void nccl_why(char *why, size_t len, const char *what, ncclResult_t r)
{
    const char *last = ncclGetLastError(NULL);
    snprintf(why, len, "%s: %s%s%s", what, ncclGetErrorString(r),
             last && *last ? ": " : "", last ? last : "");
}

/* The CUDA device of this rank for NCCL: its buffers decide
 * (skewshim_device_enter); only when they cannot, the node-local rank
 * modulo the device count does.  Returns whether it could be entered;
 * *entered says whether skewshim_device_leave(*saved) is owed. */
static int enter_device(skewshim_xargs *c, skewshim_device_state *st, MPI_Comm shm,
                        int *entered, int *saved)
{
    int pref = -1;
    if (skewshim_device_of(c->recvbuf) < 0 && skewshim_device_of(c->sendbuf) < 0) {
        int ndev = 0, lrank = 0;
        if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev <= 0) {
            (void)cudaGetLastError();
            ndev = 1;
        }
        PMPI_Comm_rank(shm, &lrank);
        pref = lrank % ndev;
    }
    *entered = 1;
    return skewshim_device_enter(st, c, pref, saved) == MPI_SUCCESS;
}

/* Rank 0's unique id to every rank, then ncclCommInitRank only if every
 * rank got that far (it would hang waiting for a rank that cannot call
 * it), and the outcome agreed again.  Every rank takes part in every
 * collective whatever happened locally.  The communicator, or NULL. */
static ncclComm_t create_comm(skewshim_xargs *c, int ok, char *why, size_t len)
{
    MPI_Comm pcomm = c->pcomm;
    struct { int ok; ncclUniqueId id; } root;
    memset(&root, 0, sizeof root);
    if (c->rank == 0 && ok) {
        ncclResult_t r = ncclGetUniqueId(&root.id);
        if (r != ncclSuccess) {
            nccl_why(why, len, "ncclGetUniqueId", r);
            ok = 0;
        }
    }
    root.ok = ok;
    PMPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, pcomm);
    int all = ok && root.ok;
    PMPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, pcomm);
    if (!all)
        return NULL;
    ncclComm_t comm = NULL;
    ncclResult_t r = ncclCommInitRank(&comm, c->size, root.id, c->rank);
    if (r != ncclSuccess) {
        nccl_why(why, len, "ncclCommInitRank", r);
        comm = NULL;
        ok = 0;
    }
    all = ok;
    PMPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, pcomm);
    if (!all && comm) {
        /* Local and non-blocking: the ranks that failed are gone. */
        ncclCommAbort(comm);
        comm = NULL;
    }
    return all ? comm : NULL;
}

/* Set NCCL up, the same way on every rank (create_comm says how). */
static void nccl_init(skewshim_xargs *c, skewshim_device_state *st)
{
    int ok = st != NULL;
    char why[384] = "";
    if (!ok)
        snprintf(why, sizeof why, "out of memory");

    MPI_Comm shm = MPI_COMM_NULL;
    if (PMPI_Comm_split_type(c->pcomm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &shm) !=
        MPI_SUCCESS) {
        shm = MPI_COMM_NULL;
        if (ok)
            snprintf(why, sizeof why, "MPI_Comm_split_type failed");
        ok = 0;
    }
    int saved = -1, entered = 0;
    if (ok && !enter_device(c, st, shm, &entered, &saved)) {
        snprintf(why, sizeof why, "CUDA device set-up failed");
        ok = 0;
    }
    ncclComm_t comm = create_comm(c, ok, why, sizeof why);
    int all = comm != NULL;
    if (entered)
        skewshim_device_leave(saved);

    SKEWSHIM_DEVICE_COUNT(nccl_inits, 1);
    if (!all) {
        SKEWSHIM_DEVICE_COUNT(nccl_init_failures, 1);
        if (c->rank == 0 && !nccl_warned) {
            nccl_warned = 1;
            fprintf(stderr, "skewshim: NCCL unavailable on a communicator of %d ranks (%s); "
                    "device buffers go through host staging\n",
                    c->size, why[0] ? why : "failed on another rank");
            fflush(stderr);
        }
    }
    if (st) {
        st->nccl = comm;
        st->nccl_state = all ? 1 : -1;
        st->shm = shm;
    } else {
        if (shm != MPI_COMM_NULL)
            PMPI_Comm_free(&shm);
        *c->device = &skewshim_device_nomem_failed;
    }
}

int skewshim_device_nccl_ready(skewshim_xargs *c)
{
    if (!c->device || *c->device == &skewshim_device_nomem_failed)
        return 0;
    skewshim_device_state *st = skewshim_device_state_get(c->device, c->size);
    if (st && st->nccl_state != 0)
        return st->nccl_state > 0;
    nccl_init(c, st);
    return st && st->nccl_state > 0;
}

static int nccl_check(ncclResult_t r, const char *what, int rank)
{
    if (r == ncclSuccess)
        return MPI_SUCCESS;
    skewshim_device_report(rank, what, ncclGetErrorString(r));
    return MPI_ERR_OTHER;
}

#define KEEP_FIRST(rc, expr) do { int rc_ = (expr); if ((rc) == MPI_SUCCESS) (rc) = rc_; } while (0)

int skewshim_run_nccl_fanout(const void *plan, skewshim_xargs *c)
{
    (void)plan;
    if (!skewshim_device_nccl_ready(c))
        return skewshim_exec_staged(c, skewshim_device_host_fanout, NULL);
    skewshim_device_state *st = skewshim_device_state_get(c->device, c->size);
    int me = c->rank, P = c->size, saved;
    int rc = skewshim_device_enter(st, c, -1, &saved);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *sb = c->sendbuf;
    char *rb = c->recvbuf;
    memset(&c->stats, 0, sizeof c->stats);
    c->tmp_bytes = 0;

    uint64_t self = c->sbytes[me] < c->rbytes[me] ? c->sbytes[me] : c->rbytes[me];
    if (self) {
        KEEP_FIRST(rc, skewshim_cuda_check(cudaMemcpyAsync(rb + c->roff[me], sb + c->soff[me],
                                                           (size_t)self, cudaMemcpyDefault,
                                                           st->stream),
                                           "cudaMemcpyAsync", me));
        c->stats.bytes_copied = self;
    }
    /* Every op is posted even after an error, so the peers do not wait for
     * a message that never comes. */
    KEEP_FIRST(rc, nccl_check(ncclGroupStart(), "ncclGroupStart", me));
    for (int k = 1; k < P; k++) {
        int to = (me + k) % P, from = (me - k + P) % P;
        if (c->rbytes[from])
            KEEP_FIRST(rc, nccl_check(ncclRecv(rb + c->roff[from], (size_t)c->rbytes[from],
                                               ncclInt8, from, st->nccl, st->stream),
                                      "ncclRecv", me));
        if (c->sbytes[to]) {
            KEEP_FIRST(rc, nccl_check(ncclSend(sb + c->soff[to], (size_t)c->sbytes[to],
                                               ncclInt8, to, st->nccl, st->stream),
                                      "ncclSend", me));
            c->stats.messages++;
            c->stats.bytes_sent += c->sbytes[to];
        }
    }
    KEEP_FIRST(rc, nccl_check(ncclGroupEnd(), "ncclGroupEnd", me));
    KEEP_FIRST(rc, skewshim_cuda_check(cudaStreamSynchronize(st->stream),
                                       "cudaStreamSynchronize", me));
    c->stats.rounds = P > 1 ? 1 : 0;
    SKEWSHIM_DEVICE_COUNT(nccl_calls, 1);
    skewshim_device_leave(saved);
    return rc;
}

/* Address of one end of a move on this rank; NULL for a bad block index
 * (a planner bug, caught by the schedule verifier in the tests). */
static char *end_ptr(const skewshim_xargs *c, const skewshim_device_state *st,
                     int loc, int blk, uint64_t off)
{
    switch (loc) {
    case SKEWSHIM_LOC_SEND:
        if (blk < 0 || blk >= c->size || !c->sendbuf)
            return NULL;
        return (char *)c->sendbuf + c->soff[blk] + off;
    case SKEWSHIM_LOC_RECV:
        if (blk < 0 || blk >= c->size || !c->recvbuf)
            return NULL;
        return (char *)c->recvbuf + c->roff[blk] + off;
    case SKEWSHIM_LOC_TMP:
        return st->dtmp ? (char *)st->dtmp + off : NULL;
    default:
        return NULL;
    }
}

/* This rank's temp need. */
static uint64_t own_tmp(const skewshim_sched *g, int me)
{
    if (!g->tmp_bytes)
        return 0;
    return g->rank < 0 ? g->tmp_bytes[me] : g->tmp_bytes[0];
}

/* Temp growth is agreed: a rank that fails to allocate must not leave its
 * peers waiting in NCCL.  With a global schedule every rank sees every
 * rank's need, so all know when any rank's need rises above what it had
 * before and all take part in the one agreement then (and only then).  A
 * slice shows only our own need, so it is agreed every call. */
static int reserve_agreed(skewshim_device_state *st, const skewshim_sched *g, skewshim_xargs *c)
{
    int me = c->rank;
    if (g->rank >= 0) {
        int ok = skewshim_device_tmp_reserve(st, own_tmp(g, me), me) == MPI_SUCCESS;
        PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c->pcomm);
        return ok ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    }
    int grow = 0;
    for (int r = 0; r < c->size; r++) {
        uint64_t t = g->tmp_bytes ? g->tmp_bytes[r] : 0;
        if (t > st->tmp_hw[r]) {
            st->tmp_hw[r] = t;
            grow = 1;
        }
    }
    if (!grow)
        return st->dtmp_cap >= st->tmp_hw[me] ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    int ok = skewshim_device_tmp_reserve(st, st->tmp_hw[me], me) == MPI_SUCCESS;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c->pcomm);
    if (ok)
        return MPI_SUCCESS;
    /* Forget the marks so the next call agrees again. */
    memset(st->tmp_hw, 0, (size_t)c->size * sizeof *st->tmp_hw);
    return MPI_ERR_NO_MEM;
}

/* Make each stream wait for the other's work so far: the next stage may
 * read what either stream wrote in this one. */
static int join_streams(skewshim_device_state *st, int me)
{
    int rc = MPI_SUCCESS;
    KEEP_FIRST(rc, skewshim_cuda_check(cudaEventRecord(st->ev_copy, st->copy_stream), "cudaEventRecord", me));
    KEEP_FIRST(rc, skewshim_cuda_check(cudaStreamWaitEvent(st->stream, st->ev_copy, 0), "cudaStreamWaitEvent", me));
    KEEP_FIRST(rc, skewshim_cuda_check(cudaEventRecord(st->ev_main, st->stream), "cudaEventRecord", me));
    KEEP_FIRST(rc, skewshim_cuda_check(cudaStreamWaitEvent(st->copy_stream, st->ev_main, 0), "cudaStreamWaitEvent", me));
    return rc;
}

static int sync_both(skewshim_device_state *st, int me)
{
    int rc = MPI_SUCCESS;
    KEEP_FIRST(rc, skewshim_cuda_check(cudaStreamSynchronize(st->stream), "cudaStreamSynchronize", me));
    KEEP_FIRST(rc, skewshim_cuda_check(cudaStreamSynchronize(st->copy_stream), "cudaStreamSynchronize", me));
    return rc;
}

/* Post this rank's part of one stage [lo, hi). */
static int run_stage(const skewshim_sched *g, size_t lo, size_t hi, skewshim_xargs *c,
                     skewshim_device_state *st, int ipc)
{
    int me = c->rank, rc = MPI_SUCCESS;
    /* Local copies and IPC pushes first: they do not wait for anyone. */
    for (size_t k = lo; k < hi; k++) {
        const skewshim_move *m = &g->moves[k];
        if (m->src != me || m->bytes == 0)
            continue;
        char *src = end_ptr(c, st, m->src_loc, m->src_blk, m->src_off);
        if (m->dst == me) {
            char *dst = end_ptr(c, st, m->dst_loc, m->dst_blk, m->dst_off);
            if (!src || !dst) {
                KEEP_FIRST(rc, MPI_ERR_INTERN);
                continue;
            }
            KEEP_FIRST(rc, skewshim_cuda_check(cudaMemcpyAsync(dst, src, (size_t)m->bytes,
                                                               cudaMemcpyDefault, st->stream),
                                               "cudaMemcpyAsync", me));
        } else if (ipc && skewshim_ipc_move(st, m)) {
            char *dst = skewshim_ipc_target(st, m);
            if (!src || !dst) {
                KEEP_FIRST(rc, MPI_ERR_INTERN);
                continue;
            }
            KEEP_FIRST(rc, skewshim_cuda_check(cudaMemcpyAsync(dst, src, (size_t)m->bytes,
                                                               cudaMemcpyDefault, st->copy_stream),
                                               "cudaMemcpyAsync(ipc)", me));
        }
    }
    /* One NCCL group for the rest.  Sends and receives between a pair are
     * posted in list order on both ends, and NCCL matches a pair's p2p
     * operations in order. */
    int grouped = 0;
    for (size_t k = lo; k < hi; k++) {
        const skewshim_move *m = &g->moves[k];
        if (m->src == m->dst || m->bytes == 0 || (m->src != me && m->dst != me))
            continue;
        if (ipc && skewshim_ipc_move(st, m))
            continue;
        if (!grouped) {
            KEEP_FIRST(rc, nccl_check(ncclGroupStart(), "ncclGroupStart", me));
            grouped = 1;
        }
        /* A bad address still posts the operation (on a NULL buffer with
         * the same size would fault): instead post nothing and report; the
         * schedule verifier makes this unreachable. */
        if (m->src == me) {
            char *p = end_ptr(c, st, m->src_loc, m->src_blk, m->src_off);
            if (!p) {
                KEEP_FIRST(rc, MPI_ERR_INTERN);
                continue;
            }
            KEEP_FIRST(rc, nccl_check(ncclSend(p, (size_t)m->bytes, ncclInt8, m->dst, st->nccl,
                                               st->stream), "ncclSend", me));
        } else {
            char *p = end_ptr(c, st, m->dst_loc, m->dst_blk, m->dst_off);
            if (!p) {
                KEEP_FIRST(rc, MPI_ERR_INTERN);
                continue;
            }
            KEEP_FIRST(rc, nccl_check(ncclRecv(p, (size_t)m->bytes, ncclInt8, m->src, st->nccl,
                                               st->stream), "ncclRecv", me));
        }
    }
    if (grouped)
        KEEP_FIRST(rc, nccl_check(ncclGroupEnd(), "ncclGroupEnd", me));
    KEEP_FIRST(rc, join_streams(st, me));
    return rc;
}

/* The schedule's stages in order.  With IPC on, every stage index up to the
 * node's agreed count (nst_ipc) is visited, even one without moves of
 * ours, so every rank of the node takes the same barriers. */
static int run_stages(const skewshim_sched *g, skewshim_xargs *c, skewshim_device_state *st,
                      int ipc, const unsigned char *stage_ipc, int nst_ipc, MPI_Comm node)
{
    int me = c->rank, rc = MPI_SUCCESS;
    int nst = nst_ipc;
    for (size_t k = 0; k < g->nmoves; k++) {
        if (k && g->moves[k].stage < g->moves[k - 1].stage)
            KEEP_FIRST(rc, MPI_ERR_INTERN);   /* unsorted: a planner bug */
        if (g->moves[k].stage + 1 > nst)
            nst = g->moves[k].stage + 1;
    }
    /* The handle exchange in prepare was a node-wide rendezvous inside this
     * call, after the application's earlier work and with nothing of ours
     * queued: peers may write into us. */
    int fenced = 1;
    size_t lo = 0;
    for (int s = 0; s < nst; s++) {
        size_t hi = lo;
        while (hi < g->nmoves && g->moves[hi].stage == s)
            hi++;
        int has_ipc = s < nst_ipc && stage_ipc[s];
        if (hi == lo && !has_ipc)
            continue;
        if (has_ipc && !fenced) {
            /* Peers may only write into our temp once we stopped reading
             * what earlier stages put there. */
            KEEP_FIRST(rc, sync_both(st, me));
            PMPI_Barrier(node);
        }
        KEEP_FIRST(rc, run_stage(g, lo, hi, c, st, ipc));
        if (has_ipc) {
            /* Our pushes landed; after the barrier, so did everyone's. */
            KEEP_FIRST(rc, sync_both(st, me));
            PMPI_Barrier(node);
            fenced = 1;
        } else {
            fenced = 0;
        }
        lo = hi;
    }
    return rc;
}

int skewshim_exec_device(const skewshim_sched *g, skewshim_xargs *c)
{
    if (g->nranks != c->size)
        return MPI_ERR_INTERN;           /* same on every rank */
    if (!skewshim_device_nccl_ready(c))
        return skewshim_exec_staged(c, skewshim_exec_sched, g);
    skewshim_device_state *st = skewshim_device_state_get(c->device, c->size);
    int me = c->rank, saved;
    if (g->rank < 0)
        skewshim_sched_rank_stats(g, me, &c->stats);
    else
        c->stats = g->stats;
    c->tmp_bytes = own_tmp(g, me);

    int rc = skewshim_device_enter(st, c, -1, &saved);
    if (rc != MPI_SUCCESS)
        return rc;
    int trc = reserve_agreed(st, g, c);
    if (trc != MPI_SUCCESS) {
        /* Agreed: nothing was posted anywhere. */
        skewshim_device_leave(saved);
        return trc;
    }
    /* Peers will write into our receive blocks and temp by IPC once the
     * node's rendezvous in prepare is over, behind the back of the streams
     * the application used: what it queued on the legacy default stream
     * before the call (a memset of the receive buffer, say) must be done
     * by then, or it lands on top of their data (seen on an H100 with 4 MiB
     * blocks).  An event on our blocking stream waits for that work, and
     * only for it. */
    KEEP_FIRST(rc, skewshim_cuda_check(cudaEventRecord(st->ev_main, st->stream),
                                       "cudaEventRecord", me));
    KEEP_FIRST(rc, skewshim_cuda_check(cudaEventSynchronize(st->ev_main),
                                       "cudaEventSynchronize", me));
    /* Collective over the node; the same answer on every rank of it. */
    int ipc = skewshim_ipc_prepare(st, c, g, &rc);
    const unsigned char *stage_ipc = NULL;
    int nst_ipc = ipc ? skewshim_ipc_stages(st, &stage_ipc) : 0;
    MPI_Comm node = ipc ? skewshim_ipc_node_comm(st) : MPI_COMM_NULL;

    KEEP_FIRST(rc, run_stages(g, c, st, ipc, stage_ipc, nst_ipc, node));
    KEEP_FIRST(rc, sync_both(st, me));
    SKEWSHIM_DEVICE_COUNT(nccl_calls, 1);
    if (ipc)
        SKEWSHIM_DEVICE_COUNT(ipc_calls, 1);
    skewshim_device_leave(saved);
    return rc;
}

#elif defined(SKEWSHIM_HAVE_CUDA) /* CUDA without NCCL: staging only */

void skewshim_nccl_free(skewshim_device_state *st)
{
    (void)st;
}

int skewshim_device_nccl_ready(skewshim_xargs *c)
{
    (void)c;
    return 0;
}

int skewshim_run_nccl_fanout(const void *plan, skewshim_xargs *c)
{
    (void)plan;
    return skewshim_exec_staged(c, skewshim_device_host_fanout, NULL);
}

int skewshim_exec_device(const skewshim_sched *g, skewshim_xargs *c)
{
    if (g->nranks != c->size)
        return MPI_ERR_INTERN;
    return skewshim_exec_staged(c, skewshim_exec_sched, g);
}

#else /* no CUDA */

int skewshim_device_nccl_ready(skewshim_xargs *c)
{
    (void)c;
    return 0;
}

int skewshim_run_nccl_fanout(const void *plan, skewshim_xargs *c)
{
    (void)plan;
    (void)c;
    return MPI_ERR_OTHER;
}

int skewshim_exec_device(const skewshim_sched *g, skewshim_xargs *c)
{
    (void)g;
    (void)c;
    return MPI_ERR_OTHER;
}

#endif

int skewshim_exec_device_sched(const void *plan, skewshim_xargs *c)
{
    return skewshim_exec_device(plan, c);
}
