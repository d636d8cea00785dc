#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The buffers of one point and their check: recognisable data, gaps and
 * permuted displacements, host or device memory, and the byte-for-byte
 * verification of every algorithm against PMPI_Alltoallv before it is
 * timed. */

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SKEWSHIM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench.h"

#define SENTINEL 0xA5   /* receive bytes nobody should write */

/* ---- buffers: recognisable data, gaps, permuted displacements ---- */

/* The content of byte b of the block rank src sends rank dst.  A hash of
 * all three, so a block delivered to the wrong place or shifted by any
 * amount is caught, not only a missing one. */
static uint64_t pat_word(int src, int dst, uint64_t w)
{
    uint64_t z = (uint64_t)src * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dst * 0xc2b2ae3d27d4eb4fULL ^
                 (w + 1) * 0x165667b19e3779f9ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void pat_fill(unsigned char *p, int src, int dst, size_t nbytes)
{
    for (size_t b = 0; b < nbytes; b += 8) {
        uint64_t w = pat_word(src, dst, b / 8);
        for (size_t k = 0; k < 8 && b + k < nbytes; k++)
            p[b + k] = (unsigned char)(w >> (8 * k));
    }
}

/* Block order in the buffer is a seeded permutation of the ranks, with a
 * gap of 1..3 elements before each block: a schedule that assumes blocks
 * are contiguous and in rank order writes the wrong place or a gap. */
static int place_blocks(const int *count, int *displ, int *order, int P, uint64_t seed,
                        size_t *total)
{
    for (int j = 0; j < P; j++)
        order[j] = j;
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (int j = P - 1; j > 0; j--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int r = (int)(x % (uint64_t)(j + 1));
        int t = order[j];
        order[j] = order[r];
        order[r] = t;
    }
    uint64_t off = 0;
    for (int k = 0; k < P; k++) {
        int j = order[k];
        off += 1 + (uint64_t)(j + k) % 3;
        displ[j] = (int)(off > INT_MAX ? INT_MAX : off);
        off += (uint64_t)count[j];
        if (off > INT_MAX)
            return -2;   /* MPI_Alltoallv displacements are int */
    }
    *total = (size_t)off + 1;
    return 0;
}

/* The first byte of buf (nbytes, blocks placed by place_blocks in `order`)
 * that differs from the pattern: block j holds pat(me, j) when sending,
 * pat(j, me) when receiving; gaps hold SENTINEL.  *want: the byte that
 * belongs there.  The same check as a comparison with a filled copy,
 * without the copy: under --reference pattern that copy was 3 of the 5
 * buffers of every rank, the bound of the lab's large points.  With dmg
 * the scan goes on past the first wrong byte and counts the damage, which
 * tells a lost block from a stray write when a large run fails once. */
typedef struct damage { size_t bytes, last; int blocks, gaps; } damage;

/* One wrong byte: the first one is remembered with the byte it should have
 * been; 1 tells the caller to stop when it wants only the first. */
static int note_wrong(size_t at, unsigned char expect, size_t nbytes, size_t *first,
                      unsigned char *want, damage *dmg)
{
    if (*first == nbytes) {
        *want = expect;
        *first = at;
    }
    if (!dmg)
        return 1;
    dmg->bytes++;
    dmg->last = at;
    return 0;
}

static size_t first_off_pattern(const unsigned char *buf, size_t nbytes, const int *count,
                                const int *displ, const int *order, int P, size_t ts, int me,
                                int recv, unsigned char *want, damage *dmg)
{
    size_t pos = 0, first = nbytes;
    for (int k = 0; k <= P; k++) {
        size_t lo = k < P ? (size_t)displ[order[k]] * ts : nbytes;
        int hit = 0;
        for (; pos < lo; pos++)
            if (buf[pos] != SENTINEL) {
                if (note_wrong(pos, SENTINEL, nbytes, &first, want, dmg))
                    return first;
                hit = 1;
            }
        if (dmg && hit)
            dmg->gaps++;
        if (k == P)
            break;
        int j = order[k];
        size_t n = (size_t)count[j] * ts;
        hit = 0;
        for (size_t b = 0; b < n; b += 8) {
            uint64_t w = recv ? pat_word(j, me, b / 8) : pat_word(me, j, b / 8);
            for (size_t x = 0; x < 8 && b + x < n; x++) {
                unsigned char e = (unsigned char)(w >> (8 * x));
                if (buf[lo + b + x] != e) {
                    if (note_wrong(lo + b + x, e, nbytes, &first, want, dmg))
                        return first;
                    hit = 1;
                }
            }
        }
        if (dmg && hit)
            dmg->blocks++;
        pos = lo + n;
    }
    return first;
}

/* The send and receive buffers.  Under SMPI with --reference none (the
 * lab's timing-only runs, doc/lab.md) every rank's buffer is folded onto
 * one physical copy (SMPI_SHARED_MALLOC), so that a point of gigabytes per
 * rank fits in the one simulation process: SimGrid's simulated time does
 * not depend on the bytes, and no result is checked.  The shim folds the
 * data part of its own temporary memory (src/labfold.h): SMPI's automatic
 * fold of every large allocation took the metadata of its forwarding
 * rounds too, and bruck2 and tuna_hier deadlocked. */
static void *data_alloc(const opts *o, size_t n)
{
#ifdef SKEWSHIM_SMPI
    if (o->reference == REF_NONE)
        return SMPI_SHARED_MALLOC(n ? n : 1);
#else
    (void)o;
#endif
    return malloc(n);
}

static void data_free(void *p)
{
#ifdef SKEWSHIM_SMPI
    SMPI_SHARED_FREE(p);    /* a plain free for what did not fold */
#else
    free(p);
#endif
}

void skewshim_bench_layout_free(layout *L)
{
    free(L->scount); free(L->sdispl); free(L->rcount); free(L->rdispl);
    free(L->sorder); free(L->rorder);
    data_free(L->sbuf); free(L->spristine); data_free(L->rbuf); free(L->rref); free(L->rexp);
#ifdef SKEWSHIM_HAVE_CUDA
    if (L->dsbuf && L->scratch)
        cudaFree(L->scratch);
    else
        free(L->scratch);
    if (L->dsbuf)
        cudaFree(L->dsbuf);
    if (L->drbuf)
        cudaFree(L->drbuf);
#else
    free(L->scratch);
#endif
    memset(L, 0, sizeof *L);
}

/* Returns 0, -1 out of memory, -2 counts beyond int. */
int skewshim_bench_layout_build(layout *L, const opts *o, const uint64_t *row,
                                const uint64_t *col, int P, int me)
{
    memset(L, 0, sizeof *L);
    L->scount = malloc((size_t)P * sizeof(int));
    L->sdispl = malloc((size_t)P * sizeof(int));
    L->rcount = malloc((size_t)P * sizeof(int));
    L->rdispl = malloc((size_t)P * sizeof(int));
    L->sorder = malloc((size_t)P * sizeof(int));
    L->rorder = malloc((size_t)P * sizeof(int));
    if (!L->scount || !L->sdispl || !L->rcount || !L->rdispl || !L->sorder || !L->rorder)
        return -1;
    for (int j = 0; j < P; j++) {
        uint64_t s = row[j], r = col[j];
        if (s > INT_MAX || r > INT_MAX)
            return -2;
        L->scount[j] = (int)s;
        L->rcount[j] = (int)r;
        L->payload += (size_t)s * (size_t)o->tsize;
    }
    size_t se, re;
    int rc = place_blocks(L->scount, L->sdispl, L->sorder, P, o->seed ^ (uint64_t)me << 20, &se);
    if (rc == 0)
        rc = place_blocks(L->rcount, L->rdispl, L->rorder, P,
                          o->seed ^ (uint64_t)me << 20 ^ 0x5bd1e995, &re);
    if (rc)
        return rc;
    size_t ts = (size_t)o->tsize;
    L->me = me;
    L->sbytes = se * ts;
    L->rbytes = re * ts;
    L->sbuf = data_alloc(o, L->sbytes);
    L->rbuf = data_alloc(o, L->rbytes);
    if (!L->sbuf || !L->rbuf)
        return -1;
    /* --reference pattern holds both buffers to the pattern itself; the
     * MPI reference needs its own output, the pattern it is held to, and
     * the send buffer's pristine copy. */
    if (o->reference == REF_MPI) {
        L->spristine = malloc(L->sbytes);
        L->rref = malloc(L->rbytes);
        L->rexp = malloc(L->rbytes);
        if (!L->spristine || !L->rref || !L->rexp)
            return -1;
    }
    /* Timing only (data_alloc): filling buffers that may be folded would
     * cost CPU and mean nothing. */
    if (o->reference != REF_NONE) {
        memset(L->sbuf, SENTINEL, L->sbytes);
        if (L->rexp)
            memset(L->rexp, SENTINEL, L->rbytes);
        for (int j = 0; j < P; j++) {
            pat_fill(L->sbuf + (size_t)L->sdispl[j] * ts, me, j, (size_t)L->scount[j] * ts);
            if (L->rexp)
                pat_fill(L->rexp + (size_t)L->rdispl[j] * ts, j, me,
                         (size_t)L->rcount[j] * ts);
        }
    }
    if (L->spristine)
        memcpy(L->spristine, L->sbuf, L->sbytes);
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device) {
        if (cudaMalloc(&L->dsbuf, L->sbytes) != cudaSuccess ||
            cudaMalloc(&L->drbuf, L->rbytes) != cudaSuccess)
            return -1;
        cudaMemcpy(L->dsbuf, L->sbuf, L->sbytes, cudaMemcpyHostToDevice);
    }
#endif
    return 0;
}

void *skewshim_bench_send_ptr(const opts *o, layout *L)
{
    return o->device ? L->dsbuf : L->sbuf;
}

void *skewshim_bench_recv_ptr(const opts *o, layout *L)
{
    return o->device ? L->drbuf : L->rbuf;
}

int skewshim_bench_copy_payload(const opts *o, layout *L)
{
    size_t n = L->payload ? L->payload : 1;
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device) {
        if (!L->scratch && cudaMalloc(&L->scratch, n) != cudaSuccess) {
            L->scratch = NULL;
            return -1;
        }
        return cudaMemcpy(L->scratch, L->dsbuf, L->payload, cudaMemcpyDeviceToDevice) ==
               cudaSuccess ? 0 : -1;
    }
#else
    (void)o;
#endif
    if (!L->scratch && !(L->scratch = malloc(n)))
        return -1;
    memcpy(L->scratch, L->sbuf, L->payload);
    return 0;
}

void skewshim_bench_device_sync(const opts *o)
{
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device)
        cudaDeviceSynchronize();
#else
    (void)o;
#endif
}

int skewshim_bench_device_setup(const opts *o, MPI_Comm comm)
{
    if (!o->device)
        return 0;
#ifdef SKEWSHIM_HAVE_CUDA
    MPI_Comm local;
    int lrank = 0, ndev = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_free(&local);
    int ok = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0 &&
             cudaSetDevice(lrank % ndev) == cudaSuccess;
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all && skewshim_bench_rank == 0)
        fprintf(stderr, "skewshim-bench: --device: no usable CUDA device on some rank\n");
    return all ? 0 : -1;
#else
    (void)comm;
    if (skewshim_bench_rank == 0)
        fprintf(stderr, "skewshim-bench: --device needs a build with CUDA (configure found "
                "no CUDA runtime); this build times host buffers only\n");
    return -1;
#endif
}

/* ---- verification ---- */

static void describe_offset(const layout *L, const opts *o, int P, size_t off,
                            char *out, size_t len)
{
    size_t ts = (size_t)o->tsize;
    for (int s = 0; s < P; s++) {
        size_t lo = (size_t)L->rdispl[s] * ts, hi = lo + (size_t)L->rcount[s] * ts;
        if (off >= lo && off < hi) {
            snprintf(out, len, "in the block from rank %d, element %zu of %d", s,
                     (off - lo) / ts, L->rcount[s]);
            return;
        }
    }
    snprintf(out, len, "in a gap between blocks (written where nothing was sent)");
}

static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (a[k] != b[k])
            return k;
    return n;
}

/* What a failed check found, worst last: the max over ranks decides
 * whether the call may be repeated on the same inputs. */
enum { CHECK_RIGHT = 0, CHECK_RECV_WRONG = 1, CHECK_SEND_CHANGED = 2 };

/* Collective over comm: every rank that sees a mismatch prints it (prefix
 * before its label), and all return the worst finding over the ranks.
 * what: the item's label, or NULL for the reference itself.  want: the
 * receive buffer got must equal, or NULL for the pattern (--reference
 * pattern). */
static int verify(const opts *o, layout *L, const unsigned char *got,
                  const unsigned char *want, const char *what, const char *prefix,
                  const char *wl, uint64_t S, MPI_Comm comm)
{
    if (o->reference == REF_NONE)
        return CHECK_RIGHT;  /* the same on every rank: no rank waits in the allreduce */
    int P = skewshim_bench_size;
    size_t ts = (size_t)o->tsize;
    int bad = CHECK_RIGHT;
    char where[160], msg[720];
    unsigned char wb = 0;
    size_t off = want ? first_diff(got, want, L->rbytes)
                      : first_off_pattern(got, L->rbytes, L->rcount, L->rdispl, L->rorder, P,
                                          ts, L->me, 1, &wb, NULL);
    if (off < L->rbytes) {
        bad = CHECK_RECV_WRONG;
        describe_offset(L, o, P, off, where, sizeof where);
        char extent[320] = "";
        if (!want) {
            damage d = {0, 0, 0, 0};
            first_off_pattern(got, L->rbytes, L->rcount, L->rdispl, L->rorder, P, ts, L->me, 1,
                              &wb, &d);
            size_t k = off + 8 < L->rbytes ? 8 : L->rbytes - off;
            int m = snprintf(extent, sizeof extent, "; %zu bytes wrong in %d blocks and %d gaps; got",
                             d.bytes, d.blocks, d.gaps);
            for (size_t i = 0; i < k && m > 0 && (size_t)m < sizeof extent; i++)
                m += snprintf(extent + m, sizeof extent - (size_t)m, " %02x", got[off + i]);
            /* Where the damage lies in memory: a stretch that starts or ends
             * on a page boundary points at memory lost below the program. */
            uintptr_t a = (uintptr_t)(got + off), z = (uintptr_t)(got + d.last) + 1;
            uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
            if (m > 0 && (size_t)m < sizeof extent)
                snprintf(extent + m, sizeof extent - (size_t)m,
                         "; bytes %zu-%zu wrong, at %#jx-%#jx (page offsets %ju-%ju)", off,
                         d.last, (uintmax_t)a, (uintmax_t)z, (uintmax_t)(a % pg),
                         (uintmax_t)(z % pg));
        }
        snprintf(msg, sizeof msg, "receive buffer byte %zu %s: got 0x%02x, want 0x%02x%s",
                 off, where, got[off], want ? want[off] : wb, extent);
    } else if (what && (off = L->spristine ? first_diff(L->sbuf, L->spristine, L->sbytes)
                                           : first_off_pattern(L->sbuf, L->sbytes, L->scount,
                                                               L->sdispl, L->sorder, P, ts,
                                                               L->me, 0, &wb, NULL)) < L->sbytes) {
        bad = CHECK_SEND_CHANGED;
        snprintf(msg, sizeof msg, "the send buffer was modified at byte %zu", off);
    }
    int any = 0;
    PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    if (bad)
        fprintf(stderr, "skewshim-bench: rank %d: %s%s, %s, S=%llu: %s\n", skewshim_bench_rank,
                prefix, what ? what : "reference PMPI_Alltoallv", wl, (unsigned long long)S, msg);
    fflush(stderr);
    return any;
}

/* Collective: rank 0 says what failed, and the job ends with exit code 3. */
static void abort_failed(const char *what, const char *wl, uint64_t S, MPI_Comm comm)
{
    PMPI_Barrier(comm);
    if (skewshim_bench_rank == 0)
        fprintf(stderr, "skewshim-bench: VERIFICATION FAILED: %s on %s, S=%llu bytes: "
                "%s (per-rank details above); aborting, a wrong result is never timed\n",
                what ? what : "PMPI_Alltoallv", wl, (unsigned long long)S,
                what ? "result differs from PMPI_Alltoallv on the same inputs, or the "
                       "send buffer was modified"
                     : "the reference differs from the pattern the bench sent");
    fflush(stderr);
    MPI_Abort(comm, 3);
}

/* The reference: PMPI_Alltoallv on host buffers, held to the pattern the
 * bench itself computed (this catches a layout bug in the bench).  With
 * --reference pattern the items are held to the pattern alone: at P = 4096
 * in the lab the PMPI reference is 16.7 M simulated messages, and the
 * pattern is what it must equal anyway. */
void skewshim_bench_run_reference(const opts *o, layout *L, const char *wl, uint64_t S,
                                  MPI_Comm comm)
{
    if (o->reference != REF_MPI)
        return;     /* L->rref stays NULL: the items are held to the pattern */
    memset(L->rref, SENTINEL, L->rbytes);
    PMPI_Alltoallv(L->sbuf, L->scount, L->sdispl, o->type, L->rref, L->rcount, L->rdispl,
                   o->type, comm);
    if (verify(o, L, L->rref, L->rexp, NULL, "", wl, S, comm))
        abort_failed(NULL, wl, S, comm);
}

static void flip_byte(const opts *o, layout *L, const char *how)
{
    int send = !strcmp(how, "send");
    const int *count = send ? L->scount : L->rcount, *displ = send ? L->sdispl : L->rdispl;
    unsigned char *buf = send ? L->sbuf : L->rbuf;
    if (!send && strcmp(how, "block")) {
        if (L->rbytes)
            buf[0] ^= 1;
        return;
    }
    int big = 0;
    for (int j = 1; j < skewshim_bench_size; j++)
        if (count[j] > count[big])
            big = j;
    size_t n = (size_t)count[big] * (size_t)o->tsize;
    if (n)
        buf[(size_t)displ[big] * (size_t)o->tsize + n / 2] ^= 1;
}

/* One call of the item on the bench's inputs, its receive buffer poisoned
 * first.  flip: a test's injected wrong byte (tests/mpi/bench.sh), or NULL. */
static void call_item(const opts *o, item *it, layout *L, const char *flip, MPI_Comm comm)
{
    if (o->reference != REF_NONE)
        memset(L->rbuf, SENTINEL, L->rbytes);
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device)
        cudaMemset(L->drbuf, SENTINEL, L->rbytes);
#endif
    skewshim_bench_item_apply(it);
    MPI_Alltoallv(skewshim_bench_send_ptr(o, L), L->scount, L->sdispl, o->type,
                  skewshim_bench_recv_ptr(o, L), L->rcount, L->rdispl, o->type, comm);
    skewshim_bench_device_sync(o);
    skewshim_bench_note_last(it);
    skewshim_bench_item_restore(o, it);
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device) {
        cudaMemcpy(L->rbuf, L->drbuf, L->rbytes, cudaMemcpyDeviceToHost);
        cudaMemcpy(L->sbuf, L->dsbuf, L->sbytes, cudaMemcpyDeviceToHost);
    }
#endif
    if (flip && skewshim_bench_rank == 0)
        flip_byte(o, L, flip);
}

void skewshim_bench_run_item_checked(const opts *o, item *it, layout *L, const char *wl, uint64_t S,
                                     MPI_Comm comm)
{
    /* The tests' proof that a wrong byte stops the run under either
     * reference (tests/mpi/bench.sh): in a gap, inside the largest received
     * block ("block"), in the send buffer ("send"); "timed": in the --vary
     * loop instead; a "-twice" suffix: in the repeat below too. */
    char flip[16] = "";
    const char *env = getenv("SKEWSHIM_BENCH_TEST_FLIP");
    if (env && strcmp(env, "timed"))
        snprintf(flip, sizeof flip, "%.*s", (int)strcspn(env, "-"), env);
    int twice = env && strstr(env, "-twice") != NULL;
    call_item(o, it, L, flip[0] ? flip : NULL, comm);
    int found = verify(o, L, L->rbuf, L->rref, it->label, "", wl, S, comm);
    if (found == CHECK_RIGHT)
        return;
    /* The shim and the simulation are deterministic: the same call on the
     * same inputs tells a fault that repeats from one that does not (a
     * lost write below the program, doc/lab.md).  Either way the run
     * aborts.  A modified send buffer changed the inputs: no repeat. */
    if (found == CHECK_RECV_WRONG) {
        call_item(o, it, L, twice && flip[0] ? flip : NULL, comm);
        int again = verify(o, L, L->rbuf, L->rref, it->label, "repeat: ", wl, S, comm);
        if (skewshim_bench_rank == 0)
            fprintf(stderr, "skewshim-bench: %s on %s, S=%llu: the same call repeated on the "
                    "same inputs came out %s\n", it->label, wl, (unsigned long long)S,
                    again == CHECK_RIGHT ? "right on every rank (the damage did not repeat)"
                                         : "wrong again (per-rank details above, \"repeat:\")");
    } else if (skewshim_bench_rank == 0) {
        fprintf(stderr, "skewshim-bench: %s on %s, S=%llu: not repeated, the send buffer "
                "was modified\n", it->label, wl, (unsigned long long)S);
    }
    fflush(stderr);
    abort_failed(it->label, wl, S, comm);
}

void skewshim_bench_check_result(const opts *o, const item *it, layout *L, const char *wl,
                                 uint64_t S, MPI_Comm comm)
{
    const char *flip = getenv("SKEWSHIM_BENCH_TEST_FLIP");
    if (flip && !strcmp(flip, "timed") && skewshim_bench_rank == 0 && L->rbytes)
        L->rbuf[L->rbytes - 1] ^= 1;
    if (verify(o, L, L->rbuf, L->rref, it->label, "", wl, S, comm))
        abort_failed(it->label, wl, S, comm);
}

void skewshim_bench_clear_recv(layout *L)
{
    memset(L->rbuf, SENTINEL, L->rbytes);
}
