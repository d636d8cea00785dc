/* The algorithm table: what each policy name runs on host and device
 * buffers, what it needs agreed, and how much temporary memory it declares. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "call.h"
#include "comm.h"
#include "core/internal.h"
#include "device.h"
#include "exec.h"
#include "exec/forward.h"
#include "labcharge.h"
#include "plan.h"

typedef int (*local_planner)(const skewshim_call *c, skewshim_sched *out);

static int plan_scattered(const skewshim_call *c, skewshim_sched *out)
{
    skewshim_local l = {c->rank, c->size, c->sbytes, c->rbytes};
    return skewshim_plan_scattered(&l, c->params->scattered_block_count, out);
}

static int plan_pairwise(const skewshim_call *c, skewshim_sched *out)
{
    skewshim_local l = {c->rank, c->size, c->sbytes, c->rbytes};
    return skewshim_plan_pairwise(&l, out);
}

/* Local planners build this rank's slice only: they need no one else's
 * sizes, so they run with no extra communication at all. */
static int run_local(skewshim_call *c, local_planner plan)
{
    skewshim_sched s;
    if (skewshim_sched_init(&s, c->size, c->rank))
        return MPI_ERR_NO_MEM;
    int rc = MPI_ERR_NO_MEM;
    if (plan(c, &s) == 0) {
        skewshim_lab_plan(s.nmoves, 0, 0);
        void *tmp = s.tmp_bytes[0] ? skewshim_call_tmp(c, s.tmp_bytes[0]) : NULL;
        if (!s.tmp_bytes[0] || tmp)
            rc = skewshim_exec_host(&s, c->rank, c->sendbuf, c->soff, c->recvbuf, c->roff, tmp,
                                    c->cs->pcomm);
        c->stats = s.stats;
    }
    skewshim_sched_free(&s);
    return rc;
}

static int run_scattered(skewshim_call *c) { return run_local(c, plan_scattered); }
static int run_pairwise(skewshim_call *c) { return run_local(c, plan_pairwise); }

static skewshim_reason check_tuna_hier(const skewshim_call *c)
{
    return skewshim_tuna_hier_check(c);
}

#define HOST SKEWSHIM_BUFBIT(SKEWSHIM_BUF_HOST)
#define DEVICE SKEWSHIM_BUFBIT(SKEWSHIM_BUF_DEVICE)

#ifdef SKEWSHIM_HAVE_NCCL
#define GLOBAL_DEVICE skewshim_global_run_device
#define FANOUT_DEVICE skewshim_run_nccl_fanout
#else
#define GLOBAL_DEVICE NULL
#define FANOUT_DEVICE NULL
#endif

static const skewshim_algo table[SKEWSHIM_ALGO_COUNT] = {
    [SKEWSHIM_ALGO_NATIVE] = {SKEWSHIM_ALGO_NATIVE, HOST | DEVICE, 0, NULL, NULL, NULL, NULL},
    [SKEWSHIM_ALGO_SCATTERED] = {SKEWSHIM_ALGO_SCATTERED, HOST, 0, NULL, NULL, run_scattered, NULL},
    [SKEWSHIM_ALGO_PAIRWISE] = {SKEWSHIM_ALGO_PAIRWISE, HOST, 0, NULL, NULL, run_pairwise, NULL},
    [SKEWSHIM_ALGO_BRUCK2] = {SKEWSHIM_ALGO_BRUCK2, HOST, 1, skewshim_temp_bruck2, NULL,
                              skewshim_run_bruck2, NULL},
    [SKEWSHIM_ALGO_PADDED_BRUCK] = {SKEWSHIM_ALGO_PADDED_BRUCK, HOST, 1,
                                    skewshim_temp_padded_bruck, NULL, skewshim_run_padded_bruck,
                                    NULL},
    [SKEWSHIM_ALGO_TUNA] = {SKEWSHIM_ALGO_TUNA, HOST, 1, skewshim_temp_tuna, NULL,
                            skewshim_run_tuna, NULL},
    [SKEWSHIM_ALGO_TUNA_HIER] = {SKEWSHIM_ALGO_TUNA_HIER, HOST, 1, skewshim_temp_tuna_hier,
                                 check_tuna_hier, skewshim_run_tuna_hier, NULL},
    [SKEWSHIM_ALGO_SABRE] = {SKEWSHIM_ALGO_SABRE, HOST | DEVICE, 0, skewshim_global_temp, NULL,
                             skewshim_global_run, GLOBAL_DEVICE},
    [SKEWSHIM_ALGO_FAST] = {SKEWSHIM_ALGO_FAST, HOST | DEVICE, 0, skewshim_global_temp, NULL,
                            skewshim_global_run, GLOBAL_DEVICE},
    [SKEWSHIM_ALGO_NCCL_FANOUT] = {SKEWSHIM_ALGO_NCCL_FANOUT, DEVICE, 0, NULL, NULL, NULL,
                                   FANOUT_DEVICE},
};

const skewshim_algo *skewshim_algo_get(skewshim_algo_id id)
{
    if ((int)id < 0 || id >= SKEWSHIM_ALGO_AUTO)
        return NULL;
    return &table[id];
}
