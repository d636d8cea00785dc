/* Running the chosen schedule: the executors' view of the call, the
 * plan's temporary memory (kept by the communicator between calls, or the
 * lab's folded copy), packing around a host schedule, and what the
 * executor reports back for the log. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "comm.h"
#include "core/internal.h"
#include "device.h"
#include "exec.h"
#include "labfold.h"

/* Where data alone starts in the temp of the plan the call runs, for the
 * lab's fold (src/labfold.h): a forwarding layout puts the metadata that
 * steers its rounds first (a padded one has none: from 0); no other plan's
 * temp folds. */
static uint64_t tmp_data_from(const skewshim_call *c)
{
    return c->plan == &c->fwd ? c->fwd.L.t : UINT64_MAX;
}

/* Temporary memory of the communicator state, grown to the plan's need. */
static void *call_tmp(skewshim_call *c, uint64_t bytes)
{
    skewshim_comm *cs = c->cs;
    if (bytes == 0)
        bytes = 1;
    if (skewshim_lab_folding()) {
        /* A temp serves again only where its data starts at the same offset. */
        uint64_t from = tmp_data_from(c);
        if (bytes <= cs->tmp_cap && from == cs->tmp_data)
            return cs->tmp;
        skewshim_lab_tmp_free(cs->tmp);
        cs->tmp = skewshim_lab_tmp_alloc(bytes, from);
        cs->tmp_cap = cs->tmp ? bytes : 0;
        cs->tmp_data = from;
        return cs->tmp;
    }
    if (bytes > cs->tmp_cap) {
        void *p = realloc(cs->tmp, bytes);
        if (!p)
            return NULL;
        cs->tmp = p;
        cs->tmp_cap = bytes;
    }
    return cs->tmp;
}

/* The executors' view of the call: buffers and offsets as they stand now
 * (packed or not), the private communicator, the topology, the temp the
 * plan asked for. */
static void xargs_of(skewshim_call *c, skewshim_xargs *x)
{
    memset(x, 0, sizeof *x);
    x->rank = c->rank;
    x->size = c->size;
    x->sendbuf = c->sendbuf;
    x->sbytes = c->sbytes;
    x->soff = c->soff;
    x->recvbuf = c->recvbuf;
    x->rbytes = c->rbytes;
    x->roff = c->roff;
    x->max_block = c->ag.max_block_bytes;
    x->pcomm = c->cs->pcomm;
    x->topo = &c->cs->topo;
    x->topo_q = c->cs->topo_q;
    x->world_rank = c->cs->world_rank;
    x->device = &c->cs->device;
}

static int with_tmp(skewshim_call *c, skewshim_xargs *x)
{
    if (!c->plan_tmp)
        return MPI_SUCCESS;
    x->tmp = call_tmp(c, c->plan_tmp);
    x->tmp_cap = x->tmp ? c->plan_tmp : 0;
    return x->tmp ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void reported(skewshim_call *c, const skewshim_algo *a, const skewshim_xargs *x)
{
    /* A matrix schedule's stats and metadata come from its plan (the
     * plan step reported them); the others count as they run. */
    if (!a->needs_matrix) {
        c->stats = x->stats;
        c->info.meta_bytes = x->meta_bytes;
    }
    c->tmp_bytes = x->tmp_bytes;
}

static int run_on_host(skewshim_call *c, const skewshim_algo *a)
{
    skewshim_xargs x;
    void *user_recv = NULL;
    int rc = MPI_SUCCESS;
    if (c->spack || c->rpack)
        rc = skewshim_call_pack(c, &user_recv);
    xargs_of(c, &x);
    if (rc == MPI_SUCCESS)
        rc = with_tmp(c, &x);
    if (rc == MPI_SUCCESS)
        rc = a->run_host(c->plan, &x);
    reported(c, a, &x);
    if (rc == MPI_SUCCESS && c->rpack)
        rc = skewshim_call_unpack(c, user_recv);
    return rc;
}

/* Device buffers: the algorithm's device executor, else its host executor
 * behind host staging (which wraps executors only).  Host temp is needed
 * only where the host runs the plan. */
static int run_on_device(skewshim_call *c, const skewshim_algo *a)
{
    skewshim_xargs x;
    xargs_of(c, &x);
    int staged = !a->run_device || !skewshim_device_nccl_ready(&x);
    int rc = staged && a->run_host ? with_tmp(c, &x) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = a->run_device ? a->run_device(c->plan, &x)
                           : skewshim_exec_staged(&x, a->run_host, c->plan);
    reported(c, a, &x);
    return rc;
}

int skewshim_call_run(skewshim_call *c, const skewshim_algo *a)
{
    int device = c->ag.valid ? c->ag.any_device != 0 : c->buffers == SKEWSHIM_BUF_DEVICE;
    return device ? run_on_device(c, a) : run_on_host(c, a);
}
