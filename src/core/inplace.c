/* MPI_IN_PLACE.  The send side of an in-place alltoallv is the receive
 * buffer as recvcounts, rdispls and recvtype describe it: what a rank sends
 * to j is its receive block j, which the exchange then overwrites.  A
 * schedule writes receive blocks while it still has blocks to send (and
 * forwards through them), so the blocks are copied out first, densely, into
 * a staging buffer that becomes the call's send side; from there on the
 * call is an ordinary one and runs any host schedule unchanged.
 *
 * Memory: the staging takes this rank's receive total, which differs
 * between ranks.  The cap is therefore checked against the largest receive
 * total of any rank, a figure of the agreement (skewshim_agreed.max_recv),
 * so every rank reaches the same verdict: all stage and run the schedule,
 * or all hand the call to MPI (reason memory_cap). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "core/internal.h"

void skewshim_inplace_describe(skewshim_call *c)
{
    c->in_place = 1;
    c->sendbuf = c->recvbuf;
    c->scounts = c->rcounts;
    c->sdispls = c->rdispls;
    c->stype = c->rtype;
}

uint64_t skewshim_inplace_bytes(const skewshim_call *c)
{
    if (!c->in_place)
        return 0;
    /* the staged blocks and their offsets */
    return c->ag.max_recv + (uint64_t)c->size * sizeof(uint64_t);
}

/* Receive block j of a rank whose type is not one ordered run: packed, in
 * pieces whose byte count fits MPI_Pack's int. */
static int pack_one(skewshim_call *c, int j, char *dense)
{
    int size = c->rtype_size, count = c->rcounts[j];
    int per = size > 0 && count > INT_MAX / size ? INT_MAX / size : count;
    if (per < 1)
        per = 1;
    const char *user = (const char *)c->recvbuf + (MPI_Aint)c->rdispls[j] * c->rextent;
    for (int k = 0; k < count; k += per) {
        int n = count - k < per ? count - k : per, pos = 0, bytes = n * size;
        int rc = PMPI_Pack(user + (MPI_Aint)k * c->rextent, n, c->rtype,
                           dense + (size_t)k * (size_t)size, bytes, &pos, c->cs->pcomm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (pos != bytes)
            return MPI_ERR_INTERN;
    }
    return MPI_SUCCESS;
}

int skewshim_inplace_stage(skewshim_call *c)
{
    skewshim_comm *cs = c->cs;
    int P = c->size;
    uint64_t total = 0;
    for (int j = 0; j < P; j++)
        total += c->rbytes[j];
    uint64_t need = (uint64_t)P * sizeof(uint64_t) + total;
    if (skewshim_scratch_grow(&cs->stage, &cs->stage_cap, need) != MPI_SUCCESS)
        return MPI_ERR_NO_MEM;
    uint64_t *off = cs->stage;
    char *dense = (char *)(off + P);
    uint64_t pos = 0;
    for (int j = 0; j < P; j++) {
        off[j] = pos;
        if (!c->rbytes[j])
            continue;
        if (c->rpack) {
            int rc = pack_one(c, j, dense + pos);
            if (rc != MPI_SUCCESS)
                return rc;
        } else {
            memcpy(dense + pos, (const char *)c->recvbuf + c->roff[j], (size_t)c->rbytes[j]);
        }
        pos += c->rbytes[j];
    }
    /* Dense bytes now, whatever the receive type's layout. */
    c->sendbuf = dense;
    c->soff = off;
    c->spack = 0;
    return MPI_SUCCESS;
}
