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

/* In phase 2 the busiest rank sends skewshim_topo_hier_phase2() messages
 * where the linear exchange sends msgs, P - 1 on dense blocks.  The lab
 * (doc/performance.md, "Nodes of unequal size") has tuna_hier behind
 * scattered wherever that is more than half of P - 1 (a rank alone on its
 * node beside nodes of 32: 1.03-1.73x scattered's time) and mostly ahead
 * from half down (2 ranks beside nodes of 32: 0.68-1.07x at P = 162,
 * 0.94-1.05x at P = 66, 16-64 B).
 * Where every rank has a NIC of its own (nics >= Q), no NIC queues a
 * node's messages, and what tuna_hier saves is the cost of each message it
 * does not send, msgs - phase 2 of them, against the agreement and its
 * intra-node rounds.  The lab's two-tier clusters (4 and 8 ranks a node,
 * "Small blocks with a NIC per rank") have it behind scattered up to 112
 * saved (1.02-1.69x; 0.91x once, dense 16 B blocks at P = 128), and from
 * 168 ahead on dense 16 B blocks (0.65-0.87x at 192 and 256 ranks) and
 * level at 256 B (0.84-1.03x); on power-law blocks, which leave the
 * linear exchange 68-122 messages at 192-256 ranks (37-99 saved), behind
 * (1.00-1.44x).  msgs is P - 1 for the communicator's check and the
 * agreed busiest rank's count for a call's. */
#define SAVED_WITH_NIC_PER_RANK 128
static int nodes_pay_tuna_hier(const skewshim_topo *t, int size, int nics, uint64_t msgs)
{
    int64_t phase2 = skewshim_topo_hier_phase2(t);
    if (phase2 < 0)
        return 0;
    if (2 * phase2 > (int64_t)size - 1)
        return 0;
    if (nics >= t->max_per_node && (int64_t)msgs - phase2 < SAVED_WITH_NIC_PER_RANK)
        return 0;
    return 1;
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
                                 skewshim_exec_forward, NULL, nodes_pay_tuna_hier},
    [SKEWSHIM_ALGO_SABRE] = {SKEWSHIM_ALGO_SABRE, "SABRE: skew-balanced relay over NICs",
                             HOST | DEVICE, 0, 1, NULL, skewshim_global_plan,
                             skewshim_exec_sched, GLOBAL_DEVICE},
    [SKEWSHIM_ALGO_FAST] = {SKEWSHIM_ALGO_FAST, "FAST/FLASH: balanced two-tier schedule",
                            HOST | DEVICE, 0, 1, NULL, skewshim_global_plan, skewshim_exec_sched,
                            GLOBAL_DEVICE},
    [SKEWSHIM_ALGO_NCCL_FANOUT] = {SKEWSHIM_ALGO_NCCL_FANOUT, "NCCL grouped send/recv", DEVICE,
                                   0, 0, NULL, NULL, NULL, FANOUT_DEVICE},
};

unsigned skewshim_algos_unrunnable(const skewshim_topo *t, int size, int nics)
{
    unsigned mask = 0;
    uint64_t dense = size > 0 ? (uint64_t)size - 1 : 0;
    for (int a = 0; a < SKEWSHIM_ALGO_COUNT; a++)
        if ((table[a].nodes_check && table[a].nodes_check(t, size) != SKEWSHIM_REASON_NONE) ||
            (table[a].nodes_pay && !table[a].nodes_pay(t, size, nics, dense)))
            mask |= 1u << a;
    return mask;
}

unsigned skewshim_algos_unpaid(const skewshim_topo *t, int size, int nics, uint64_t msgs)
{
    unsigned mask = 0;
    for (int a = 0; a < SKEWSHIM_ALGO_COUNT; a++)
        if (table[a].nodes_pay && !table[a].nodes_pay(t, size, nics, msgs))
            mask |= 1u << a;
    return mask;
}

const skewshim_algo *skewshim_algo_get(skewshim_algo_id id)
{
    if ((int)id < 0 || id >= SKEWSHIM_ALGO_AUTO)
        return NULL;
    return &table[id];
}
