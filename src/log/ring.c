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
 *   SUM (uint64): messages, bytes_sent, bytes_forwarded, meta_bytes
 * The other fields are rank-invariant (agreed figures, choice, plan); rank
 * 0's copy is written.
 */
enum { KD = 6, KU = 4 };
_Static_assert(sizeof(skewshim_record) % sizeof(double) == 0,
               "the reduction arrays follow the records in one allocation");

typedef struct ring_ws {
    double *dsend, *drecv;
    uint64_t *usend, *urecv;
} ring_ws;

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
static const uint64_t zeros_u[RING_MAX_CAP * KU];
static _Thread_local double last_resort_d[RING_MAX_CAP * KD];
static _Thread_local uint64_t last_resort_u[RING_MAX_CAP * KU];

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
        ws->dsend = (double *)zeros_d;
        ws->usend = (uint64_t *)zeros_u;
        ws->drecv = NULL;
        ws->urecv = NULL;
        if (rank == 0) {
            int cap = ring_cap_of(ring);
            if (!ring->scratch)
                ring->scratch = ring_malloc((size_t)cap * (KD * sizeof(double) + KU * sizeof(uint64_t)));
            ws->drecv = ring->scratch ? (double *)ring->scratch : last_resort_d;
            ws->urecv = ring->scratch ? (uint64_t *)(void *)(ws->drecv + (size_t)cap * KD)
                                      : last_resort_u;
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
}

/* First push: allocate.  A failure keeps counting (cap < 0, r NULL) so the
 * flushes still happen at the same call on every rank. */
static void ring_alloc(skewshim_ring *ring)
{
    int cap = ring_cap_of(ring);
    size_t bytes = (size_t)cap * (sizeof(skewshim_record) + 2 * KD * sizeof(double) +
                                  2 * KU * sizeof(uint64_t));
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

int skewshim_ring_flush_start(skewshim_ring *ring, MPI_Comm pcomm, int rank, MPI_Request reqs[2])
{
    reqs[0] = reqs[1] = MPI_REQUEST_NULL;
    if (!ring || ring->n <= 0) return 0;
    ring_ws ws;
    ring_ws_of(ring, rank, &ws);
    int n = ring->n;
    if (ring->r) {
        for (int i = 0; i < n; i++) {
            const skewshim_record *r = &ring->r[i];
            double *d = ws.dsend + (size_t)i * KD;
            uint64_t *u = ws.usend + (size_t)i * KU;
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
        }
    }
    MPI_WRITES(ws.drecv, (unsigned long)n * KD * sizeof(double));
    MPI_WRITES(ws.urecv, (unsigned long)n * KU * sizeof(uint64_t));
    int rc = PMPI_Ireduce(ws.dsend, ws.drecv, n * KD, MPI_DOUBLE, MPI_MAX, 0, pcomm, &reqs[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Ireduce(ws.usend, ws.urecv, n * KU, MPI_UINT64_T, MPI_SUM, 0, pcomm, &reqs[1]);
    if (rc != MPI_SUCCESS) {
        /* Errors are fatal by default; with a non-fatal handler, drop the
         * buffered records rather than write half-merged figures. */
        if (reqs[0] != MPI_REQUEST_NULL) PMPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        reqs[0] = reqs[1] = MPI_REQUEST_NULL;
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
            const double *d = ws.drecv + (size_t)i * KD;
            const uint64_t *u = ws.urecv + (size_t)i * KU;
            r.time = d[0];
            r.rounds = (uint64_t)d[1];
            r.meta_time = d[2];
            r.tmp_bytes = (uint64_t)d[3];
            r.t_pred = d[4];
            r.t_lb = d[5];
            r.messages = u[0];
            r.bytes_sent = u[1];
            r.bytes_forwarded = u[2];
            r.meta_bytes = u[3];
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
    MPI_Request reqs[2];
    int rc = skewshim_ring_flush_start(ring, pcomm, rank, reqs);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: gcc 12 warns on it (false positive) */
    rc = PMPI_Waitall(2, reqs, st);
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
