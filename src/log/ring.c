#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The ring of call records of one communicator and the reductions that
 * merge it over ranks (src/log.h).  Collective behaviour here depends only on
 * rank-invariant things (the policy's level, the ring's call count), never
 * on whether this rank could allocate: a rank that cannot log still takes
 * part in every reduction, or the other ranks would hang. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "log_internal.h"
#include "policy.h"

#define RING_DEFAULT_CAP 256
/* A preset cap is clamped to this on every rank alike, so the degraded
 * (allocation failed) path below can always take part with static buffers. */
#define RING_MAX_CAP 1024

/* One allocation: cap records, then the reduction buffers, so the
 * non-blocking flush has buffers that live until its finish without any
 * field beyond those of skewshim_ring.  What is merged how:
 *   MAX (double): time, rounds, meta_time, tmp_bytes (busiest rank),
 *                 t_pred, t_lb (identical on every rank, max is a no-op)
 *   SUM (uint64): messages, bytes_sent, bytes_forwarded, meta_bytes,
 *                 the traffic (send, recv, isend, irecv, non-empty blocks)
 *                 and the number of ranks that know theirs
 *   MAX (uint64): the traffic (largest block, send, recv, isend, irecv)
 * The call's figures (total, largest block, MTMs) follow from the traffic
 * sums and maxima as they did from the agreement collective.  The other
 * fields are rank-invariant (choice, plan); rank 0's copy is written.
 */
enum { KD = 6, KU = 10, KM = 7 };
_Static_assert(sizeof(skewshim_record) % sizeof(double) == 0,
               "the reduction arrays follow the records in one allocation");

typedef struct ring_ws {
    double *dsend, *drecv;
    uint64_t *usend, *urecv;
    uint64_t *msend, *mrecv;
} ring_ws;

/* Bytes of one record's reduction buffers, one direction. */
#define RING_WS_BYTES (KD * sizeof(double) + (KU + KM) * sizeof(uint64_t))

/* For a rank whose ring could not be allocated: zeros are neutral for MAX
 * of non-negative values and for SUM, so it joins the reductions without
 * changing anything.  Only read, so every degraded ring of every thread may
 * send from them at once.  The receive side matters at rank 0 alone, which
 * gets scratch of its own per flush, else the last resort below: its
 * content is never read, but MPI writes it, so it is per thread (threads
 * flushing at once under MPI_THREAD_MULTIPLE would otherwise write one
 * buffer together).  A lock could not replace that: a thread waiting for
 * it inside one communicator's flush can hold up a collective that the
 * holder's flush waits on.  Finalize's flushes, started together from one
 * thread, share it; no thread is writing anything else then. */
static const double zeros_d[RING_MAX_CAP * KD];
static const uint64_t zeros_u[RING_MAX_CAP * (KU + KM)];
static _Thread_local double last_resort_d[RING_MAX_CAP * KD];
static _Thread_local uint64_t last_resort_u[RING_MAX_CAP * (KU + KM)];

/* MPI writes the receive side in code ThreadSanitizer does not see: say
 * so, so that two flushes writing one buffer at once are reported. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SKEWSHIM_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(SKEWSHIM_TSAN)
#define SKEWSHIM_TSAN 1
#endif
#ifdef SKEWSHIM_TSAN
void __tsan_write_range(void *addr, unsigned long size);
#define MPI_WRITES(p, n) do { if (p) __tsan_write_range((p), (n)); } while (0)
#else
#define MPI_WRITES(p, n) ((void)0)
#endif

#ifdef SKEWSHIM_FAULT_INJECTION
/* Test builds only (the ThreadSanitizer build of scripts/tsan): with
 * SKEWSHIM_FAULT_RING=1 every allocation here fails, so the degraded paths
 * above run, from several threads at once in tests/mpi/threads. */
static void *ring_malloc(size_t n)
{
    const char *e = getenv("SKEWSHIM_FAULT_RING");
    return e && !strcmp(e, "1") ? NULL : malloc(n);
}
#else
#define ring_malloc malloc
#endif

static int ring_cap_of(const skewshim_ring *ring)
{
    int cap = ring->cap < 0 ? -ring->cap : ring->cap;
    if (cap == 0) cap = RING_DEFAULT_CAP;
    if (cap > RING_MAX_CAP) cap = RING_MAX_CAP;
    return cap;
}

static void ring_ws_of(skewshim_ring *ring, int rank, ring_ws *ws)
{
    if (!ring->r) {
        int cap = ring_cap_of(ring);
        ws->dsend = (double *)zeros_d;
        ws->usend = (uint64_t *)zeros_u;
        ws->msend = (uint64_t *)zeros_u + (size_t)cap * KU;
        ws->drecv = NULL;
        ws->urecv = ws->mrecv = NULL;
        if (rank == 0) {
            if (!ring->scratch)
                ring->scratch = ring_malloc((size_t)cap * RING_WS_BYTES);
            ws->drecv = ring->scratch ? (double *)ring->scratch : last_resort_d;
            ws->urecv = ring->scratch ? (uint64_t *)(void *)(ws->drecv + (size_t)cap * KD)
                                      : last_resort_u;
            ws->mrecv = ws->urecv + (size_t)cap * KU;
        }
        return;
    }
    /* sizeof(skewshim_record) is a multiple of 8: the arrays stay aligned */
    double *d = (double *)(void *)(ring->r + ring->cap);
    ws->dsend = d;
    ws->drecv = d + (size_t)ring->cap * KD;
    uint64_t *u = (uint64_t *)(void *)(ws->drecv + (size_t)ring->cap * KD);
    ws->usend = u;
    ws->urecv = u + (size_t)ring->cap * KU;
    ws->msend = ws->urecv + (size_t)ring->cap * KU;
    ws->mrecv = ws->msend + (size_t)ring->cap * KM;
}

/* First push: allocate.  A failure keeps counting (cap < 0, r NULL) so the
 * flushes still happen at the same call on every rank. */
static void ring_alloc(skewshim_ring *ring)
{
    int cap = ring_cap_of(ring);
    size_t bytes = (size_t)cap * (sizeof(skewshim_record) + 2 * RING_WS_BYTES);
    ring->r = ring_malloc(bytes);
    ring->cap = ring->r ? cap : -cap;
    ring->n = 0;
}

int skewshim_ring_push(skewshim_ring *ring, const skewshim_record *rec, MPI_Comm pcomm, int rank)
{
    if (skewshim_log_level() < SKEWSHIM_LOG_CALLS || !ring || !rec) return 0;
    if (!ring->r && ring->cap >= 0) ring_alloc(ring);
    int cap = ring_cap_of(ring);
    if (ring->n >= cap) {
        int rc = skewshim_ring_flush(ring, pcomm, rank);
        if (rc) return rc;
    }
    if (ring->r) ring->r[ring->n] = *rec;
    ring->n++;
    if (ring->n >= cap) return skewshim_ring_flush(ring, pcomm, rank);
    return 0;
}

/* This rank's share of a record, as the reductions take it. */
static void record_pack(const skewshim_record *r, double *d, uint64_t *u, uint64_t *m)
{
    const skewshim_rank_traffic *t = &r->traffic;
    d[0] = r->time;
    d[1] = (double)r->rounds;
    d[2] = r->meta_time;
    d[3] = (double)r->tmp_bytes;
    d[4] = r->t_pred;
    d[5] = r->t_lb;
    u[0] = r->messages;
    u[1] = r->bytes_sent;
    u[2] = r->bytes_forwarded;
    u[3] = r->meta_bytes;
    u[4] = t->send;
    u[5] = t->recv;
    u[6] = t->isend;
    u[7] = t->irecv;
    u[8] = r->traffic_known != 0;
    u[9] = t->nonempty;
    m[0] = t->max_block;
    m[1] = t->send;
    m[2] = t->recv;
    m[3] = t->isend;
    m[4] = t->irecv;
    m[5] = t->msgs;
    m[6] = r->phase2;
}

/* Rank 0's record with the merged values.  The call's figures need every
 * rank's traffic: a call that was not described (in place), or a flush in
 * which some rank could not keep its records, has none (MTMs null, as for
 * a call that never reached the agreement). */
static void record_unpack(skewshim_record *r, const double *d, const uint64_t *u,
                          const uint64_t *m)
{
    r->time = d[0];
    r->rounds = (uint64_t)d[1];
    r->meta_time = d[2];
    r->tmp_bytes = (uint64_t)d[3];
    r->t_pred = d[4];
    r->t_lb = d[5];
    r->messages = u[0];
    r->bytes_sent = u[1];
    r->bytes_forwarded = u[2];
    r->meta_bytes = u[3];
    int P = r->comm_size;
    r->total_bytes = r->max_block_bytes = 0;
    r->mean_block_bytes = r->mean_nonempty_bytes = 0;
    r->max_msgs = 0;
    r->max_phase2 = 0;
    r->send_mtm_all = r->recv_mtm_all = r->send_mtm_inter = r->recv_mtm_inter = 0;
    if (P <= 0 || u[8] != (uint64_t)P)
        return;
    r->total_bytes = u[4];
    r->max_block_bytes = m[0];
    r->mean_block_bytes = (double)u[4] / ((double)P * P);
    r->mean_nonempty_bytes = skewshim_mean_nonempty(u[4], u[9]);
    r->max_msgs = m[5];
    r->max_phase2 = m[6];
    r->send_mtm_all = skewshim_mtm(m[1], u[4], P);
    r->recv_mtm_all = skewshim_mtm(m[2], u[5], P);
    r->send_mtm_inter = skewshim_mtm(m[3], u[6], P);
    r->recv_mtm_inter = skewshim_mtm(m[4], u[7], P);
}

int skewshim_ring_flush_start(skewshim_ring *ring, MPI_Comm pcomm, int rank,
                              MPI_Request reqs[SKEWSHIM_RING_NREQ])
{
    for (int k = 0; k < SKEWSHIM_RING_NREQ; k++) reqs[k] = MPI_REQUEST_NULL;
    if (!ring || ring->n <= 0) return 0;
    ring_ws ws;
    ring_ws_of(ring, rank, &ws);
    int n = ring->n;
    if (ring->r)
        for (int i = 0; i < n; i++)
            record_pack(&ring->r[i], ws.dsend + (size_t)i * KD, ws.usend + (size_t)i * KU,
                        ws.msend + (size_t)i * KM);
    MPI_WRITES(ws.drecv, (unsigned long)n * KD * sizeof(double));
    MPI_WRITES(ws.urecv, (unsigned long)n * KU * sizeof(uint64_t));
    MPI_WRITES(ws.mrecv, (unsigned long)n * KM * sizeof(uint64_t));
    int rc = PMPI_Ireduce(ws.dsend, ws.drecv, n * KD, MPI_DOUBLE, MPI_MAX, 0, pcomm, &reqs[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Ireduce(ws.usend, ws.urecv, n * KU, MPI_UINT64_T, MPI_SUM, 0, pcomm, &reqs[1]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Ireduce(ws.msend, ws.mrecv, n * KM, MPI_UINT64_T, MPI_MAX, 0, pcomm, &reqs[2]);
    if (rc != MPI_SUCCESS) {
        /* Errors are fatal by default; with a non-fatal handler, drop the
         * buffered records rather than write half-merged figures. */
        for (int k = 0; k < SKEWSHIM_RING_NREQ; k++)
            if (reqs[k] != MPI_REQUEST_NULL) PMPI_Wait(&reqs[k], MPI_STATUS_IGNORE);
        for (int k = 0; k < SKEWSHIM_RING_NREQ; k++) reqs[k] = MPI_REQUEST_NULL;
        ring->n = 0;
        free(ring->scratch);
        ring->scratch = NULL;
        return rc;
    }
    return 0;
}

int skewshim_ring_flush_finish(skewshim_ring *ring, int rank)
{
    if (!ring || ring->n <= 0) return 0;
    free(ring->scratch);
    ring->scratch = NULL;
    if (rank == 0 && ring->r) {
        ring_ws ws;
        ring_ws_of(ring, rank, &ws);
        char stack[4096];
        sbuf b;
        skewshim_sb_init(&b, stack, sizeof stack);
        for (int i = 0; i < ring->n; i++) {
            skewshim_record r = ring->r[i];
            record_unpack(&r, ws.drecv + (size_t)i * KD, ws.urecv + (size_t)i * KU,
                          ws.mrecv + (size_t)i * KM);
            skewshim_record_to(&b, &r);
        }
        skewshim_log_write_lines(&b);
        skewshim_sb_free(&b);
    }
    ring->n = 0;
    return 0;
}

int skewshim_ring_flush(skewshim_ring *ring, MPI_Comm pcomm, int rank)
{
    /* Built on the non-blocking pair so every flush of a ring is the same
     * kind of collective: MPI never matches a blocking reduction with a
     * non-blocking one, and finalize uses the non-blocking form. */
    MPI_Request reqs[SKEWSHIM_RING_NREQ];
    int rc = skewshim_ring_flush_start(ring, pcomm, rank, reqs);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Status st[SKEWSHIM_RING_NREQ]; /* not MPI_STATUSES_IGNORE: gcc 12 warns on it (false positive) */
    rc = PMPI_Waitall(SKEWSHIM_RING_NREQ, reqs, st);
    if (rc != MPI_SUCCESS) {
        ring->n = 0;
        free(ring->scratch);
        ring->scratch = NULL;
        return rc;
    }
    return skewshim_ring_flush_finish(ring, rank);
}

void skewshim_ring_free(skewshim_ring *ring)
{
    if (!ring) return;
    free(ring->r);
    free(ring->scratch);
    ring->r = NULL;
    ring->scratch = NULL;
    ring->n = 0;
    ring->cap = 0;
}
