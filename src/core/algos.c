/* The algorithm table: one row per policy name, which drives the pipeline's
 * choose -> plan -> execute dispatch (as MPICH's coll_algorithms.txt and
 * UCC's {id, name, desc} tables do): buffers supported, whether it needs the
 * agreement even when forced and whether it gathers the size matrix, its
 * check of the nodes, its plan step (temp bound for the memory cap), and
 * its host and device executors. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "comm.h"
#include "core/internal.h"
#include "device.h"
#include "exec.h"
#include "exec/forward.h"
#include "labcharge.h"
#include "schedule/forwarding.h"
#include "plan.h"

/* ---- local planners: this rank's slice, no communication ---------------- */

static uint64_t plan_local(skewshim_call *c, int scattered)
{
    skewshim_local l = {c->rank, c->size, c->sbytes, c->rbytes};
    if (skewshim_sched_init(&c->local, c->size, c->rank))
        return SKEWSHIM_TEMP_NOMEM;
    c->local_planned = 1;
    int rc = scattered ? skewshim_plan_scattered(&l, c->params->scattered_block_count, &c->local)
                       : skewshim_plan_pairwise(&l, &c->local);
    /* Planning from this rank's own sizes can fail only here (memory): a
     * local failure, never a fallback alone. */
    if (rc)
        return SKEWSHIM_TEMP_NOMEM;
    skewshim_lab_plan(c->local.nmoves, 0, 0);
    c->plan = &c->local;
    c->plan_tmp = c->local.tmp_bytes ? c->local.tmp_bytes[0] : 0;
    c->stats = c->local.stats;
    /* Their temp is this rank's alone; they declare none to the cap. */
    return 0;
}

static uint64_t plan_scattered(skewshim_call *c) { return plan_local(c, 1); }
static uint64_t plan_pairwise(skewshim_call *c) { return plan_local(c, 0); }

/* ---- forwarding plans: from rank-invariant facts only -------------------- */

static uint64_t fwd_done(skewshim_call *c)
{
    c->plan = &c->fwd;
    c->plan_tmp = c->fwd.L.total;
    return c->fwd.L.total;
}

static uint64_t plan_flat(skewshim_call *c, int kind)
{
    skewshim_fwd *f = &c->fwd.flat;
    uint64_t M = c->ag.max_block_bytes;
    int rc = kind == SKEWSHIM_ALGO_BRUCK2         ? skewshim_fwd_plan_bruck2(f, c->size)
             : kind == SKEWSHIM_ALGO_PADDED_BRUCK ? skewshim_fwd_plan_padded_bruck(f, c->size)
                                                  : skewshim_fwd_plan_tuna(f, c->size,
                                                                           c->params->tuna_radix, M);
    if (rc != 0)
        return UINT64_MAX;          /* alike on every rank */
    c->fwd.hier = 0;
    skewshim_fwd_layout_flat(f, M, &c->fwd.L);
    return fwd_done(c);
}

static uint64_t plan_bruck2(skewshim_call *c) { return plan_flat(c, SKEWSHIM_ALGO_BRUCK2); }
static uint64_t plan_padded(skewshim_call *c) { return plan_flat(c, SKEWSHIM_ALGO_PADDED_BRUCK); }
static uint64_t plan_tuna(skewshim_call *c) { return plan_flat(c, SKEWSHIM_ALGO_TUNA); }

/* TuNA_l^g runs on any nodes the topology describes for this communicator. */
static skewshim_reason nodes_fit_tuna_hier(const skewshim_topo *t, int size)
{
    if (t->nranks != size || t->nnodes < 1)
        return SKEWSHIM_REASON_INTERNAL;
    return SKEWSHIM_REASON_NONE;
}

/* This rank's plan is for its own node's size; the bound is the largest
 * any node's needs, so the memory cap is decided alike everywhere. */
static uint64_t plan_tuna_hier(skewshim_call *c)
{
    const skewshim_topo *t = &c->cs->topo;
    const skewshim_params *p = c->params;
    uint64_t M = c->ag.max_block_bytes;
    int q = t->node_size[t->node_of[c->rank]];
    if (skewshim_fwd_hier_init(&c->fwd.h, t->nnodes, q, t->max_per_node, p->tuna_hier_radix,
                               p->tuna_hier_block_count, p->tuna_hier_variant, M) != 0)
        return UINT64_MAX;
    c->fwd.hier = 1;
    skewshim_fwd_layout_hier(&c->fwd.h, M, &c->fwd.L);
    fwd_done(c);
    return skewshim_fwd_hier_bound(t->nnodes, t->node_size, p->tuna_hier_radix,
                                   p->tuna_hier_block_count, p->tuna_hier_variant, M);
}

/* ---- the table ------------------------------------------------------------ */

#define HOST SKEWSHIM_BUFBIT(SKEWSHIM_BUF_HOST)
#define DEVICE SKEWSHIM_BUFBIT(SKEWSHIM_BUF_DEVICE)

#ifdef SKEWSHIM_HAVE_NCCL
#define GLOBAL_DEVICE skewshim_exec_device_sched
#define FANOUT_DEVICE skewshim_run_nccl_fanout
#else
#define GLOBAL_DEVICE NULL
#define FANOUT_DEVICE NULL
#endif

static const skewshim_algo table[SKEWSHIM_ALGO_COUNT] = {
    [SKEWSHIM_ALGO_NATIVE] = {SKEWSHIM_ALGO_NATIVE, "the MPI library's MPI_Alltoallv",
                              HOST | DEVICE, 0, 0, NULL, NULL, NULL, NULL},
    [SKEWSHIM_ALGO_SCATTERED] = {SKEWSHIM_ALGO_SCATTERED, "MPICH's batched Isend/Irecv", HOST, 0,
                                 0, NULL, plan_scattered, skewshim_exec_sched, NULL},
    [SKEWSHIM_ALGO_PAIRWISE] = {SKEWSHIM_ALGO_PAIRWISE, "Open MPI's pairwise exchange", HOST, 0,
                                0, NULL, plan_pairwise, skewshim_exec_sched, NULL},
    [SKEWSHIM_ALGO_BRUCK2] = {SKEWSHIM_ALGO_BRUCK2, "two-phase Bruck", HOST, 1, 0, NULL,
                              plan_bruck2, skewshim_exec_forward, NULL},
    [SKEWSHIM_ALGO_PADDED_BRUCK] = {SKEWSHIM_ALGO_PADDED_BRUCK, "padded Bruck", HOST, 1, 0, NULL,
                                    plan_padded, skewshim_exec_forward, NULL},
    [SKEWSHIM_ALGO_TUNA] = {SKEWSHIM_ALGO_TUNA, "TuNA: radix-r Bruck-like rounds", HOST, 1, 0,
                            NULL, plan_tuna, skewshim_exec_forward, NULL},
    [SKEWSHIM_ALGO_TUNA_HIER] = {SKEWSHIM_ALGO_TUNA_HIER, "TuNA_l^g: intra- then inter-node",
                                 HOST, 1, 0, nodes_fit_tuna_hier, plan_tuna_hier,
                                 skewshim_exec_forward, NULL, skewshim_topo_hier_pays},
    [SKEWSHIM_ALGO_SABRE] = {SKEWSHIM_ALGO_SABRE, "SABRE: skew-balanced relay over NICs",
                             HOST | DEVICE, 0, 1, NULL, skewshim_global_plan,
                             skewshim_exec_sched, GLOBAL_DEVICE},
    [SKEWSHIM_ALGO_FAST] = {SKEWSHIM_ALGO_FAST, "FAST/FLASH: balanced two-tier schedule",
                            HOST | DEVICE, 0, 1, NULL, skewshim_global_plan, skewshim_exec_sched,
                            GLOBAL_DEVICE},
    [SKEWSHIM_ALGO_NCCL_FANOUT] = {SKEWSHIM_ALGO_NCCL_FANOUT, "NCCL grouped send/recv", DEVICE,
                                   0, 0, NULL, NULL, NULL, FANOUT_DEVICE},
};

unsigned skewshim_algos_cannot_run(const skewshim_topo *t, int size)
{
    unsigned mask = 0;
    for (int a = 0; a < SKEWSHIM_ALGO_COUNT; a++)
        if (table[a].nodes_check && table[a].nodes_check(t, size) != SKEWSHIM_REASON_NONE)
            mask |= 1u << a;
    return mask;
}

/* Every block full and no bytes counted: the most any call could save, so
 * an algorithm that does not pay here pays on no call. */
unsigned skewshim_algos_unrunnable(const skewshim_topo *t, int size, int nics, int in_flight)
{
    uint64_t dense = size > 0 ? (uint64_t)size - 1 : 0;
    return skewshim_algos_cannot_run(t, size) |
           skewshim_algos_unpaid(t, size, nics, dense, UINT64_MAX, 0.0, in_flight);
}

unsigned skewshim_algos_unpaid(const skewshim_topo *t, int size, int nics, uint64_t msgs,
                               uint64_t phase2, double nonempty_bytes, int in_flight)
{
    unsigned mask = 0;
    for (int a = 0; a < SKEWSHIM_ALGO_COUNT; a++)
        if (table[a].nodes_pay &&
            !table[a].nodes_pay(t, size, nics, msgs, phase2, nonempty_bytes, in_flight))
            mask |= 1u << a;
    return mask;
}

const skewshim_algo *skewshim_algo_get(skewshim_algo_id id)
{
    if ((int)id < 0 || id >= SKEWSHIM_ALGO_AUTO)
        return NULL;
    return &table[id];
}
