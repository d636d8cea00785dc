#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Host staging: device buffers through pinned host copies and the host
 * path.  The way device buffers stay correct when NCCL is missing or its
 * set-up failed, whatever the MPI library knows about CUDA. */

#define SKEWSHIM_DEVICE_INTERNAL 1
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "device.h"
#include "exec.h"

/* Messages are cut at 1 GiB so byte counts fit MPI's int. */
#define CHUNK ((uint64_t)1 << 30)

/* Pairwise exchange (round k: to me+k, from me-k), a chunk pair at a time:
 * needs no allocation, so it cannot fail on one rank alone, and each
 * ordered pair talks in exactly one round, so chunks match in order. */
int skewshim_device_host_fanout(const void *plan, skewshim_xargs *c)
{
    (void)plan;
    MPI_Comm pcomm = c->pcomm;
    int me = c->rank, P = c->size, rc = MPI_SUCCESS;
    const char *sb = c->sendbuf;
    char *rb = c->recvbuf;
    memset(&c->stats, 0, sizeof c->stats);
    c->tmp_bytes = 0;
    uint64_t self = c->sbytes[me] < c->rbytes[me] ? c->sbytes[me] : c->rbytes[me];
    if (self) {
        memmove(rb + c->roff[me], sb + c->soff[me], (size_t)self);
        c->stats.bytes_copied = self;
    }
    for (int k = 1; k < P; k++) {
        int to = (me + k) % P, from = (me - k + P) % P;
        uint64_t sn = c->sbytes[to], rn = c->rbytes[from];
        uint64_t schunks = (sn + CHUNK - 1) / CHUNK, rchunks = (rn + CHUNK - 1) / CHUNK;
        uint64_t n = schunks > rchunks ? schunks : rchunks;
        for (uint64_t i = 0; i < n; i++) {
            MPI_Request req[2];
            MPI_Status sts[2];   /* not MPI_STATUSES_IGNORE: gcc misreads it */
            int nr = 0;
            if (i < rchunks) {
                uint64_t len = rn - i * CHUNK < CHUNK ? rn - i * CHUNK : CHUNK;
                int e = PMPI_Irecv(rb + c->roff[from] + i * CHUNK, (int)len, MPI_BYTE, from,
                                   SKEWSHIM_TAG, pcomm, &req[nr]);
                if (e == MPI_SUCCESS)
                    nr++;
                else if (rc == MPI_SUCCESS)
                    rc = e;
            }
            if (i < schunks) {
                uint64_t len = sn - i * CHUNK < CHUNK ? sn - i * CHUNK : CHUNK;
                int e = PMPI_Isend(sb + c->soff[to] + i * CHUNK, (int)len, MPI_BYTE, to,
                                   SKEWSHIM_TAG, pcomm, &req[nr]);
                if (e == MPI_SUCCESS)
                    nr++;
                else if (rc == MPI_SUCCESS)
                    rc = e;
                c->stats.messages++;
                c->stats.bytes_sent += len;
            }
            int e = PMPI_Waitall(nr, req, sts);
            if (e != MPI_SUCCESS && rc == MPI_SUCCESS)
                rc = e;
        }
        if (n)
            c->stats.rounds++;
    }
    return rc;
}

#ifdef SKEWSHIM_HAVE_CUDA

/* Copy P blocks between the user's layout and the packed one, merging
 * neighbours that are adjacent on both sides (the common dense layout
 * becomes one copy). */
static int copy_blocks(char *dst, const uint64_t *doff, const char *src, const uint64_t *soff,
                       const uint64_t *bytes, int P, cudaStream_t s, int rank)
{
    int rc = MPI_SUCCESS;
    int j = 0;
    while (j < P) {
        if (bytes[j] == 0) {
            j++;
            continue;
        }
        uint64_t d0 = doff[j], s0 = soff[j], len = bytes[j];
        int k = j + 1;
        while (k < P && (bytes[k] == 0 || (doff[k] == d0 + len && soff[k] == s0 + len))) {
            len += bytes[k];
            k++;
        }
        int e = skewshim_cuda_check(cudaMemcpyAsync(dst + d0, src + s0, (size_t)len,
                                                    cudaMemcpyDefault, s),
                                    "cudaMemcpyAsync(staging)", rank);
        if (rc == MPI_SUCCESS)
            rc = e;
        j = k;
    }
    return rc;
}

/* Pinned buffer of at least want bytes: kept in the device state when there
 * is one (grown, never shrunk), else allocated for this call. */
static void *pinned(void **keep, uint64_t *cap, uint64_t want, int rank)
{
    if (want == 0)
        return NULL;
    if (keep && *keep && *cap >= want)
        return *keep;
    if (keep && *keep) {
        (void)skewshim_cuda_check(cudaFreeHost(*keep), "cudaFreeHost", rank);
        *keep = NULL;
        *cap = 0;
    }
    void *p = NULL;
    if (skewshim_cuda_check(cudaMallocHost(&p, (size_t)want), "cudaMallocHost", rank) != MPI_SUCCESS)
        return NULL;
    if (keep) {
        *keep = p;
        *cap = want;
    }
    return p;
}

int skewshim_exec_staged(skewshim_xargs *c, skewshim_executor run, const void *plan)
{
    int me = c->rank, P = c->size;
    skewshim_device_state *st = skewshim_device_state_get(c->device, c->size);
    int saved = -1, entered = 0;
    int ok = 1, rc = MPI_SUCCESS;

    uint64_t *psoff = malloc(2 * (size_t)P * sizeof *psoff);
    uint64_t *proff = psoff ? psoff + P : NULL;
    uint64_t S = 0, R = 0;
    if (!psoff) {
        ok = 0;
    } else {
        for (int j = 0; j < P; j++) {
            psoff[j] = S;
            S += c->sbytes[j];
            proff[j] = R;
            R += c->rbytes[j];
        }
    }
    if (ok && st) {
        entered = 1;
        ok = skewshim_device_enter(st, c, -1, &saved) == MPI_SUCCESS;
    }
    /* Without a device state (out of memory) the legacy default stream. */
    cudaStream_t s = st && st->cuda_dev >= 0 ? st->stream : 0;
    char *hs = NULL, *hr = NULL;
    if (ok) {
        hs = pinned(st ? &st->hsend : NULL, st ? &st->hsend_cap : NULL, S, me);
        hr = pinned(st ? &st->hrecv : NULL, st ? &st->hrecv_cap : NULL, R, me);
        ok = (S == 0 || hs) && (R == 0 || hr);
    }
    if (ok && S) {
        ok = copy_blocks(hs, psoff, c->sendbuf, c->soff, c->sbytes, P, s, me) == MPI_SUCCESS;
        ok = skewshim_cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize", me)
             == MPI_SUCCESS && ok;
    }
    /* One agreement: a rank that could not stage must not leave the others
     * waiting in the host exchange. */
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c->pcomm);
    if (!ok) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }

    skewshim_xargs h = *c;
    h.sendbuf = hs;
    h.recvbuf = hr;
    h.soff = psoff;
    h.roff = proff;
    rc = run(plan, &h);
    c->stats = h.stats;
    c->meta_bytes = h.meta_bytes;
    c->tmp_bytes = h.tmp_bytes;
    if (rc == MPI_SUCCESS && R) {
        rc = copy_blocks(c->recvbuf, c->roff, hr, proff, c->rbytes, P, s, me);
        int e = skewshim_cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize", me);
        if (rc == MPI_SUCCESS)
            rc = e;
    }
    SKEWSHIM_DEVICE_COUNT(staged_calls, 1);
    SKEWSHIM_DEVICE_COUNT(staged_bytes, S + R);
out:
    if (!st) {
        if (hs)
            cudaFreeHost(hs);
        if (hr)
            cudaFreeHost(hr);
    }
    if (entered)
        skewshim_device_leave(saved);
    free(psoff);
    return rc;
}

#else /* no CUDA */

int skewshim_exec_staged(skewshim_xargs *c, skewshim_executor run, const void *plan)
{
    (void)c;
    (void)run;
    (void)plan;
    return MPI_ERR_OTHER;
}

#endif
