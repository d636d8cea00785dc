/* What a call is, from its own arguments alone: the bytes and offsets of
 * every block, where its buffers live, and the checks the MPI library's
 * own MPI_Alltoallv makes before moving a byte, which the shim must not
 * skip (a schedule would run on such memory and report success); and the
 * packing of data whose datatype is not one ordered run.  Local facts
 * only: what they decide is agreed or safe whichever way a rank goes
 * (src/core/call.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "call.h"
#include "comm.h"
#include "core/internal.h"
#include "device.h"

/* The byte span [lo, hi) the non-empty blocks of one side touch. */
static void span(const char *base, const uint64_t *off, const uint64_t *bytes, int P,
                 uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int j = 0; j < P; j++) {
        if (!bytes[j])
            continue;
        uintptr_t a = (uintptr_t)base + (uintptr_t)off[j], b = a + (uintptr_t)bytes[j];
        *lo = a < *lo ? a : *lo;
        *hi = b > *hi ? b : *hi;
    }
}

typedef struct ival { uintptr_t a, b; } ival;

static int ival_cmp(const void *x, const void *y)
{
    uintptr_t p = ((const ival *)x)->a, q = ((const ival *)y)->a;
    return (p > q) - (p < q);
}

/* The non-empty blocks of one side as sorted, disjoint runs. */
static int ivals(const char *base, const uint64_t *off, const uint64_t *bytes, int P, ival *out)
{
    int n = 0;
    for (int j = 0; j < P; j++)
        if (bytes[j]) {
            out[n].a = (uintptr_t)base + (uintptr_t)off[j];
            out[n].b = out[n].a + (uintptr_t)bytes[j];
            n++;
        }
    qsort(out, (size_t)n, sizeof *out, ival_cmp);
    /* Send blocks may overlap one another (MPI reads them only): merge, so
     * the sweep below walks disjoint runs. */
    int m = 0;
    for (int k = 0; k < n; k++) {
        if (m && out[k].a <= out[m - 1].b) {
            if (out[k].b > out[m - 1].b)
                out[m - 1].b = out[k].b;
        } else {
            out[m++] = out[k];
        }
    }
    return m;
}

/* Whether any sent byte lies where a received byte goes.  Spans first
 * (one pass each), which settles separate buffers; when they overlap,
 * both sides' blocks sorted and swept (P log P). */
static int overlap(const skewshim_call *c)
{
    int P = c->size;
    uintptr_t slo, shi, rlo, rhi;
    span(c->sendbuf, c->soff, c->sbytes, P, &slo, &shi);
    span(c->recvbuf, c->roff, c->rbytes, P, &rlo, &rhi);
    if (slo >= shi || rlo >= rhi || shi <= rlo || rhi <= slo)
        return 0;
    /* Packed types span more than they touch; MPI decides those. */
    if (c->spack || c->rpack)
        return c->sendbuf == c->recvbuf;
    ival *v = malloc(2 * (size_t)P * sizeof *v);
    if (!v)
        return c->sendbuf == c->recvbuf;
    int ns = ivals(c->sendbuf, c->soff, c->sbytes, P, v);
    int nr = ivals(c->recvbuf, c->roff, c->rbytes, P, v + P);
    const ival *sv = v, *rv = v + P;
    int hit = 0;
    for (int i = 0, j = 0; i < ns && j < nr && !hit;) {
        if (sv[i].a < rv[j].b && rv[j].a < sv[i].b)
            hit = 1;
        else if (sv[i].b <= rv[j].b)
            i++;
        else
            j++;
    }
    free(v);
    return hit;
}

skewshim_reason skewshim_call_describe(skewshim_call *c)
{
    int P = c->size, ssize, rsize;
    MPI_Aint sext, rext, slb, rlb;
    skewshim_reason why = SKEWSHIM_REASON_NONE;
    uint64_t *v = c->cs->scratch;
    c->sbytes = v;
    c->soff = v + P;
    c->rbytes = v + 2 * P;
    c->roff = v + 3 * P;
    c->spack = !skewshim_type_layout(c->stype, &ssize, &sext, &slb);
    c->rpack = !skewshim_type_layout(c->rtype, &rsize, &rext, &rlb);
    c->type_size = ssize;
    c->rtype_size = rsize;
    c->sextent = sext;
    c->rextent = rext;
    for (int j = 0; j < P; j++) {
        if (c->scounts[j] < 0 || c->rcounts[j] < 0) {
            why = SKEWSHIM_REASON_INVALID_ARGS;
            c->sbytes[j] = c->rbytes[j] = 0;
            continue;
        }
        c->sbytes[j] = (uint64_t)c->scounts[j] * (uint64_t)ssize;
        c->rbytes[j] = (uint64_t)c->rcounts[j] * (uint64_t)rsize;
        c->soff[j] = (uint64_t)((MPI_Aint)c->sdispls[j] * sext + slb);
        c->roff[j] = (uint64_t)((MPI_Aint)c->rdispls[j] * rext + rlb);
    }
    /* A rank that sends (or receives) nothing may pass any pointer there,
     * NULL or host memory next to device memory: only used buffers are
     * compared, and an unused one still tells where the rank's data lives. */
    uint64_t stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        stot += c->sbytes[j];
        rtot += c->rbytes[j];
    }
    /* The MPI library's own argument checks, which its MPI_Alltoallv would
     * make before moving a byte: a buffer that is NULL while it has data,
     * and send and receive data that overlap (MPICH: MPI_ERR_BUFFER).  A
     * schedule would run on such memory and report success; MPI reports
     * the error, so the call goes to it (doc/decisions.md). */
    if (why == SKEWSHIM_REASON_NONE &&
        ((stot && !c->sendbuf) || (rtot && !c->recvbuf) || (!c->in_place && overlap(c))))
        why = SKEWSHIM_REASON_INVALID_ARGS;
    int sloc = skewshim_device_locate(c->sendbuf);
    int rloc = skewshim_device_locate(c->recvbuf);
    c->buffers = rtot || !stot ? (c->recvbuf || !c->sendbuf ? rloc : sloc) : sloc;
    if (stot && rtot && sloc != rloc && why == SKEWSHIM_REASON_NONE)
        why = SKEWSHIM_REASON_MIXED_BUFFERS;
    /* Packing works on host memory; device data must be one ordered run.
     * (Only CUDA builds see device buffers, and they always agree, so this
     * local reason reaches every rank.) */
    if (((c->spack && sloc == SKEWSHIM_BUF_DEVICE) || (c->rpack && rloc == SKEWSHIM_BUF_DEVICE)) &&
        why == SKEWSHIM_REASON_NONE)
        why = SKEWSHIM_REASON_NONCONTIG;
    return why;
}

/* Packing.  A rank whose own send (receive) datatype is not one ordered run
 * packs its blocks into a dense buffer before the schedule (unpacks them
 * after it).  On the homogeneous systems the shim assumes throughout, packed
 * data is the type signature's bytes in order, which is exactly what a peer
 * whose datatype is one run sends or expects; so whether a rank packs is its
 * own business, safe whatever its peers do, and no agreement is needed. */
static int pack_block(int unpack, char *user, MPI_Aint extent, int count, MPI_Datatype t,
                      int size, char *dense, MPI_Comm comm)
{
    /* MPI_Pack counts bytes in an int: pieces of whole elements below that */
    int per = size > 0 && count > INT_MAX / size ? INT_MAX / size : count;
    if (per < 1)
        per = 1;
    for (int k = 0; k < count; k += per) {
        int n = count - k < per ? count - k : per, pos = 0, bytes = n * size;
        char *u = user + (MPI_Aint)k * extent;
        char *d = dense + (size_t)k * (size_t)size;
        int rc = unpack ? PMPI_Unpack(d, bytes, &pos, u, n, t, comm)
                        : PMPI_Pack(u, n, t, d, bytes, &pos, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (pos != bytes)       /* not the plain bytes this relies on */
            return MPI_ERR_INTERN;
    }
    return MPI_SUCCESS;
}

int skewshim_call_pack(skewshim_call *c, void **user_recv)
{
    skewshim_comm *cs = c->cs;
    int P = c->size;
    uint64_t S = 0, R = 0;
    for (int j = 0; j < P; j++) {
        S += c->spack ? c->sbytes[j] : 0;
        R += c->rpack ? c->rbytes[j] : 0;
    }
    uint64_t need = 2 * (uint64_t)P * sizeof(uint64_t) + S + R;
    if (skewshim_scratch_grow(&cs->pack, &cs->pack_cap, need) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    uint64_t *psoff = cs->pack, *proff = psoff + P;
    char *sdense = (char *)(proff + P), *rdense = sdense + S;
    *user_recv = c->recvbuf;
    if (c->spack) {
        uint64_t pos = 0;
        for (int j = 0; j < P; j++) {
            psoff[j] = pos;
            if (c->sbytes[j]) {
                int rc = pack_block(0, (char *)c->sendbuf + (MPI_Aint)c->sdispls[j] * c->sextent,
                                    c->sextent, c->scounts[j], c->stype, c->type_size,
                                    sdense + pos, cs->pcomm);
                if (rc != MPI_SUCCESS)
                    return rc;
            }
            pos += c->sbytes[j];
        }
        c->sendbuf = sdense;
        c->soff = psoff;
    }
    if (c->rpack) {
        uint64_t pos = 0;
        for (int j = 0; j < P; j++) {
            proff[j] = pos;
            pos += c->rbytes[j];
        }
        c->recvbuf = rdense;
        c->roff = proff;
    }
    return MPI_SUCCESS;
}

int skewshim_call_unpack(skewshim_call *c, void *user_recv)
{
    for (int j = 0; j < c->size; j++) {
        if (!c->rbytes[j])
            continue;
        int rc = pack_block(1, (char *)user_recv + (MPI_Aint)c->rdispls[j] * c->rextent,
                            c->rextent, c->rcounts[j], c->rtype, c->rtype_size,
                            (char *)c->recvbuf + c->roff[j], c->cs->pcomm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
