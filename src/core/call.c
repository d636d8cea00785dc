/* The pipeline of one call: describe -> agree -> choose -> plan/execute ->
 * log, with PMPI_Alltoallv as the way out at every step.  A decision that
 * sends a call down one path or another is taken from rank-invariant facts
 * or after the agreement collective, never from one rank's facts alone,
 * unless every way a rank can go is safe whatever its peers chose (packing).
 * doc/decisions.md lists every such decision and the fact it rests on. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "comm.h"
#include "core/internal.h"
#include "device.h"
#include "sim.h"

void skewshim_count_fallback(skewshim_reason r, MPI_Comm comm)
{
    int rank = 0;
    if (comm != MPI_COMM_NULL && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank != 0)
        return;
    pthread_mutex_lock(&skewshim_g.lock);
    if (r == SKEWSHIM_REASON_LARGE_COUNT)
        skewshim_g.totals.large_count_calls++;
    skewshim_g.totals.fallbacks[r]++;
    pthread_mutex_unlock(&skewshim_g.lock);
}

/* Arguments MPI itself must judge: the user gets MPI's own error. */
static int obviously_invalid(MPI_Datatype st, MPI_Datatype rt, MPI_Comm comm)
{
    return comm == MPI_COMM_NULL || st == MPI_DATATYPE_NULL || rt == MPI_DATATYPE_NULL;
}

/* An error of the call, reported as MPI reports its own: through the
 * user's communicator's error handler as it is now (the private
 * communicator returns errors, so a handler the user set after the shim
 * duplicated the communicator is honoured).  This covers failures of the
 * shim's own making on one rank alone (memory for a schedule or a pack):
 * the peers may already be exchanging and no rank can fall back alone; the
 * default handler aborts the job rather than leave the others waiting. */
static int local_failure(const skewshim_call *c, int code)
{
    PMPI_Comm_call_errhandler(c->comm, code);
    return code;
}

static int staging_available(void)
{
#ifdef SKEWSHIM_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

static int gathers_matrix(int a)
{
    return a == SKEWSHIM_ALGO_SABRE || a == SKEWSHIM_ALGO_FAST;
}

/* The pay-back guard (doc/policy.md): a rule chose a schedule that gathers
 * the whole size matrix; it runs only when its predicted time, with the
 * matrix exchange still to pay (not when the exchange already ran as the
 * agreement) and its extra messages, beats the direct exchange's.  From
 * agreed figures, the policy's model and the topology: rank-invariant.
 * What is left of the gain bounds the planning, which only the gathered
 * matrix can tell is needed (global.c). */
static int pays_back(skewshim_call *c, const skewshim_params *p)
{
    const skewshim_topo *t = &c->cs->topo;
    skewshim_predict_in in = {
        .P = c->size,
        .nodes = t->nnodes,
        .per_node = t->max_per_node,
        .m = skewshim_nics_per_node(),
        .B1 = p->model_intra_bw,
        .B2 = p->model_inter_bw,
        .latency = p->model_latency,
        .overhead = p->model_overhead,
        .max_isend = c->ag.max_isend,
        .max_irecv = c->ag.max_irecv,
        .sum_isend = c->ag.sum_isend,
        .max_send = c->ag.max_send,
        .max_recv = c->ag.max_recv,
        .msg_factor = c->algo == SKEWSHIM_ALGO_FAST ? SKEWSHIM_FAST_MSG_FACTOR
                                                    : SKEWSHIM_SABRE_MSG_FACTOR,
        .plan_entry = p->model_plan_entry,
        .plan_factor = c->algo == SKEWSHIM_ALGO_FAST ? SKEWSHIM_FAST_PLAN_FACTOR
                                                     : SKEWSHIM_SABRE_PLAN_FACTOR,
    };
    skewshim_predict_out o;
    if (skewshim_predict(&in, &o) != 0)
        return 1;
    /* A repeated matrix is gathered once and then checked (global.c):
     * the exchange is paid by the calls that repeat it, or was already
     * paid when the agreement found the current plan's matrix. */
    double meta = c->matrix_ready || c->ag.held || c->ag.repeats ? 0.0 : o.t_meta;
    c->plan_guarded = 1;
    c->plan_budget = o.t_native - o.t_sched;
    c->plan_cost = o.t_plan;
    return o.t_sched + meta < o.t_native;
}

static int chosen_algorithm(void)
{
    int t = __atomic_load_n(&skewshim_g.tool_forced, __ATOMIC_RELAXED);
    return t >= 0 ? t : skewshim_g.env_forced;
}

/* The reason the chosen algorithm cannot run this call, decided from agreed
 * or rank-invariant facts only. */
static skewshim_reason check_algorithm(skewshim_call *c, const skewshim_algo *a)
{
    if (!a)
        return SKEWSHIM_REASON_NOT_IMPLEMENTED;
    if (c->ag.valid && c->ag.any_unsupported)
        return (skewshim_reason)c->ag.any_unsupported;
    if (c->ag.valid && c->ag.any_device && c->ag.any_host)
        return SKEWSHIM_REASON_MIXED_BUFFERS;
    if (a->id == SKEWSHIM_ALGO_NATIVE)
        return SKEWSHIM_REASON_NONE;
    int device = c->ag.valid ? c->ag.any_device != 0 : c->buffers == SKEWSHIM_BUF_DEVICE;
    if (device) {
        /* Staging an in-place call's blocks is a host copy (agreed). */
        if (c->in_place)
            return SKEWSHIM_REASON_IN_PLACE;
        if (!a->run_device && !(a->run_host && staging_available()))
            return SKEWSHIM_REASON_NO_DEVICE_PATH;
    } else if (!a->run_host) {
        return a->run_device ? SKEWSHIM_REASON_NO_HOST_PATH : SKEWSHIM_REASON_NOT_IMPLEMENTED;
    }
    return a->nodes_check ? a->nodes_check(&c->cs->topo, c->size) : SKEWSHIM_REASON_NONE;
}

/* The plan step, after the choice: the algorithm plans this call (SABRE
 * and FAST gather the matrix here unless the agreement already did) and
 * reports its temp bound, which every rank knows alike; the memory cap
 * reads it, so no rank falls back alone and no extra collective is needed
 * to agree on the cap. */
static skewshim_reason plan_algorithm(skewshim_call *c, const skewshim_algo *a)
{
    if (a->id == SKEWSHIM_ALGO_NATIVE)
        return SKEWSHIM_REASON_NONE;
    uint64_t need = 0;
    if (a->plan) {
        need = a->plan(c);
        if (need == UINT64_MAX)
            return SKEWSHIM_REASON_INTERNAL;
        if (need == SKEWSHIM_TEMP_INVALID)
            return SKEWSHIM_REASON_INVALID_ARGS;
        if (need == SKEWSHIM_TEMP_NOMEM) {
            c->nomem = 1;
            return SKEWSHIM_REASON_INTERNAL;
        }
        if (need == SKEWSHIM_TEMP_NOT_PAID)
            return SKEWSHIM_REASON_NOT_PAID_BACK;
    }
    /* Both terms rank-invariant: the staging's is the agreed bound. */
    need += skewshim_inplace_bytes(c);
    if (need > c->params->max_temp_bytes)
        return SKEWSHIM_REASON_MEMORY_CAP;
    return SKEWSHIM_REASON_NONE;
}

static void log_call(skewshim_call *c, skewshim_reason reason, double t)
{
    skewshim_comm *cs = c->cs;
    skewshim_record r;
    memset(&r, 0, sizeof r);
    r.index = cs->ncalls;
    r.comm_id = cs->id;
    r.comm_size = c->size;
    r.nnodes = cs->topo.nnodes;
    r.algo = c->algo;
    r.why = c->why;
    r.decided = c->decided;
    r.rule = c->rule;
    r.reason = reason;
    r.buffers = c->ag.valid ? (c->ag.any_device ? SKEWSHIM_BUF_DEVICE : SKEWSHIM_BUF_HOST)
                            : c->buffers;
    /* This rank's figures; the ring's merge makes the call's of them. */
    r.traffic_known = c->sbytes != NULL;
    if (r.traffic_known) {
        skewshim_rank_traffic_of(&cs->topo, c->rank, c->sbytes, c->rbytes, &r.traffic);
        r.phase2 = skewshim_topo_phase2_msgs(&cs->topo, c->rank, c->sbytes, c->rbytes, 1);
    }
    r.time = t;
    r.rounds = c->stats.rounds;
    r.messages = c->stats.messages;
    r.bytes_sent = c->stats.bytes_sent;
    r.bytes_forwarded = c->stats.bytes_forwarded;
    r.regime = c->info.regime;
    r.nics = c->info.nics;
    r.stages = c->info.stages;
    r.cache_hit = c->info.cache_hit;
    r.repeats = c->ag.valid ? (int64_t)c->ag.repeats : -1;
    r.t_pred = c->info.t_pred;
    r.t_lb = c->info.t_lb;
    r.meta_bytes = c->info.meta_bytes;
    r.meta_time = c->info.meta_time;
    r.tmp_bytes = c->tmp_bytes;
    skewshim_ring_push(&cs->ring, &r, cs->pcomm, cs->rank);
}

/* Level matrix: the whole size matrix of a sampled call, gathered to the
 * communicator's rank 0 (a collective, only at this level). */
static void log_matrix(skewshim_call *c)
{
    skewshim_matrix m = {0};
    int P = c->size;
    /* Rank 0 cannot take part in the gather without the memory, and the
     * others are already in it. */
    if (c->rank == 0 && skewshim_matrix_alloc(&m, P)) {
        local_failure(c, MPI_ERR_NO_MEM);
        return;
    }
    PMPI_Gather(c->sbytes, P, MPI_UINT64_T, m.b, P, MPI_UINT64_T, 0, c->cs->pcomm);
    if (c->rank == 0) {
        skewshim_log_matrix(c->cs->id, c->cs->ncalls, &m, &c->cs->topo);
        skewshim_matrix_free(&m);
    }
}

static void account(skewshim_call *c, skewshim_reason reason, double t)
{
    uint64_t sent = 0;
    if (c->sbytes)
        for (int j = 0; j < c->size; j++)
            sent += c->sbytes[j];
    /* Calls are counted once per communicator (by its rank 0), since the
     * summary sums over ranks; bytes sum and time maxes are per rank. */
    int counter = c->rank == 0;
    pthread_mutex_lock(&skewshim_g.lock);
    skewshim_g.totals.calls[c->algo] += (uint64_t)counter;
    skewshim_g.totals.decided[c->decided] += (uint64_t)counter;
    skewshim_g.totals.time[c->algo] += t;
    skewshim_g.totals.bytes[c->algo] += sent;
    if (reason != SKEWSHIM_REASON_NONE)
        skewshim_g.totals.fallbacks[reason] += (uint64_t)counter;
    if (counter && c->info.cache_hit >= 0) {
        skewshim_g.totals.plan_cache_lookups++;
        skewshim_g.totals.plan_cache_hits += (uint64_t)c->info.cache_hit;
    }
    pthread_mutex_unlock(&skewshim_g.lock);
    skewshim_set_last(c, reason);
}

static int pass_through(skewshim_call *c, skewshim_reason reason)
{
    if (!c->cs && c->comm != MPI_COMM_NULL && PMPI_Comm_rank(c->comm, &c->rank) != MPI_SUCCESS)
        c->rank = 0;
    int rc = PMPI_Alltoallv(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->scounts, c->sdispls,
                            c->stype, c->recvbuf, c->rcounts, c->rdispls, c->rtype, c->comm);
    c->algo = SKEWSHIM_ALGO_NATIVE;
    c->why = SKEWSHIM_WHY_FALLBACK;
    account(c, reason, 0.0);
    return rc;
}

/* Forced native with no per-call log: nothing to decide, nothing to agree,
 * nothing to log.  The shim's cost is two clock reads and one locked update
 * of the summary's counters (measured by tools/overhead). */
static int forced_native(skewshim_call *c)
{
    double t0 = PMPI_Wtime();
    int rc = PMPI_Alltoallv(c->sendbuf, c->scounts, c->sdispls, c->stype, c->recvbuf, c->rcounts,
                            c->rdispls, c->rtype, c->comm);
    double t = PMPI_Wtime() - t0;
    uint64_t bytes = 0;
    c->algo = SKEWSHIM_ALGO_NATIVE;
    c->why = SKEWSHIM_WHY_FORCED;
    if (rc == MPI_SUCCESS) {
        /* Valid arguments, since MPI accepted them; but in place, the send
         * arguments are ignored (counts may be NULL, the type
         * MPI_DATATYPE_NULL) and what a rank sends is its receive side.  On
         * an inter-communicator the arrays have the remote group's size. */
        int in_place = c->sendbuf == MPI_IN_PLACE, inter = 0, tsize = 0, P = 0;
        const int *counts = in_place ? c->rcounts : c->scounts;
        MPI_Datatype t = in_place ? c->rtype : c->stype;
        if (c->cs) {
            /* A communicator with a state is an intra-communicator whose
             * rank and size the state holds: three queries fewer on the
             * path every call of a fixed-native communicator takes. */
            c->rank = c->cs->rank;
            P = c->cs->size;
        } else {
            PMPI_Comm_rank(c->comm, &c->rank);
            PMPI_Comm_test_inter(c->comm, &inter);
            if (inter)
                PMPI_Comm_remote_size(c->comm, &P);
            else
                PMPI_Comm_size(c->comm, &P);
        }
        if (counts && t != MPI_DATATYPE_NULL && PMPI_Type_size(t, &tsize) == MPI_SUCCESS) {
            for (int j = 0; j < P; j++)
                bytes += (uint64_t)(counts[j] > 0 ? counts[j] : 0);
            bytes *= (uint64_t)tsize;
        }
    }
    pthread_mutex_lock(&skewshim_g.lock);
    skewshim_g.totals.calls[SKEWSHIM_ALGO_NATIVE] += (uint64_t)(c->rank == 0);
    skewshim_g.totals.decided[c->decided] += (uint64_t)(c->rank == 0);
    skewshim_g.totals.time[SKEWSHIM_ALGO_NATIVE] += t;
    skewshim_g.totals.bytes[SKEWSHIM_ALGO_NATIVE] += bytes;
    pthread_mutex_unlock(&skewshim_g.lock);
    skewshim_set_last(c, SKEWSHIM_REASON_NONE);
    return rc;
}

/* What an agreed call ended as, for the calls after it.  Native is safe to
 * reuse whatever a rank's own arguments are (MPI judges them).  So, in a
 * host-only build, is a schedule planned from the rank's own sizes alone
 * (scattered, pairwise): a rank that sees a local reason hands its call to
 * MPI, which is an erroneous program either way, as when the policy fixes
 * the choice for a communicator size.  Where buffers live is a local fact
 * in a CUDA build, and every other schedule reads agreed figures. */
static void note_outcome(const skewshim_call *c, const skewshim_algo *a, skewshim_reason reason)
{
    int ran_native = reason != SKEWSHIM_REASON_NONE || c->algo == SKEWSHIM_ALGO_NATIVE;
    int reusable = ran_native;
#ifndef SKEWSHIM_HAVE_CUDA
    if (!ran_native && a && a->run_host && !a->needs_agreement && !c->in_place &&
        !gathers_matrix(c->algo))
        reusable = 1;
#else
    (void)a;
#endif
    skewshim_reuse_outcome o = {
        .rule = c->rule, .algo = ran_native ? SKEWSHIM_ALGO_NATIVE : c->algo, .reason = reason,
        .counts = c->repeats_decide, .horizon = c->repeats_horizon,
    };
    skewshim_reuse_note(&c->cs->reuse, o, reusable, (uint32_t)skewshim_g.policy.reuse_agreement);
}

/* The calls that never reach a communicator's state: the shim off, native
 * forced or fixed with no per-call log, arguments only MPI may judge, and
 * inter-communicators.  1 when the call was handled (*rc its result). */
static int handled_early(skewshim_call *c, int *rc)
{
    if (!skewshim_g.initialized)
        skewshim_init_lazy();
    if (skewshim_g.disabled || skewshim_g.finalized) {
        *rc = pass_through(c, skewshim_g.finalized ? SKEWSHIM_REASON_NOT_INITIALIZED
                                                  : skewshim_g.disabled_reason);
        return 1;
    }
    if (__atomic_load_n(&skewshim_g.tool_disabled, __ATOMIC_RELAXED)) {
        *rc = pass_through(c, SKEWSHIM_REASON_DISABLED);
        return 1;
    }
    int pick = chosen_algorithm();
    if (skewshim_log_level() < SKEWSHIM_LOG_CALLS && pick == SKEWSHIM_ALGO_NATIVE) {
        c->decided = SKEWSHIM_DECIDED_FORCED;
        *rc = forced_native(c);
        return 1;
    }
    /* In place, MPI ignores the send arguments, so they are not judged. */
    if (obviously_invalid(c->in_place ? c->rtype : c->stype, c->rtype, c->comm)) {
        *rc = pass_through(c, SKEWSHIM_REASON_INVALID_ARGS);
        return 1;
    }
    if (skewshim_log_level() < SKEWSHIM_LOG_CALLS && pick < 0) {
        /* A communicator on which the policy can only say native (decided
         * at its first call) takes the same short path.  Only an
         * intra-communicator has a state. */
        skewshim_comm *known = skewshim_comm_peek(c->comm);
        /* The nodes it was decided on must still be the nodes: a rule can
         * match on them, and topology.ranks_per_node (or nics_per_node)
         * may change at run time. */
        if (known && known->fixed_native && known->topo_q == skewshim_ranks_per_node() &&
            known->topo_nics == skewshim_nics_per_node()) {
            known->ncalls++;
            c->cs = known;
            c->decided = SKEWSHIM_DECIDED_FIXED;
            *rc = forced_native(c);
            return 1;
        }
    }
    int inter = 0;
    skewshim_reason why = SKEWSHIM_REASON_NONE;
    if (PMPI_Comm_test_inter(c->comm, &inter) != MPI_SUCCESS)
        why = SKEWSHIM_REASON_INVALID_ARGS;
    else if (inter)
        why = SKEWSHIM_REASON_INTERCOMM;
    else if (!c->rcounts || !c->rdispls || (!c->in_place && (!c->scounts || !c->sdispls)))
        why = SKEWSHIM_REASON_INVALID_ARGS;
    if (why == SKEWSHIM_REASON_NONE)
        return 0;
    *rc = pass_through(c, why);
    return 1;
}

/* How a call's choice is made: the user's word (forced), once per
 * communicator (fixed), an earlier agreed outcome (reused), or the
 * agreement now (need), which is the matrix exchange when matrix_first. */
typedef struct route {
    int forced;
    int fixed, fixed_algo;
    int reused, reused_reason;
    int need, matrix_first;
} route;

static void route_call(skewshim_call *c, int forced, route *r)
{
    const skewshim_comm *cs = c->cs;
    const skewshim_policy *pol = &skewshim_g.policy;
    memset(r, 0, sizeof *r);
    r->forced = forced;
    const skewshim_algo *fa = forced >= 0 ? skewshim_algo_get((skewshim_algo_id)forced) : NULL;
#ifdef SKEWSHIM_HAVE_CUDA
    /* Where buffers live is a local fact, and the device paths (NCCL, IPC,
     * staging with its own collective) are not wire-compatible with the host
     * path: a CUDA build agrees on every call it does not forward to MPI
     * untouched.  A host-only build sees host memory only. */
    const int local_location = 1;
#else
    const int local_location = 0;
#endif
    /* The choice needs the agreement only when some fact of the call can
     * change it (worked out once per communicator, skewshim_comm_get).  The
     * per-call log needs none: each rank logs its own row and column, and
     * the ring's merge reduces them with the times (src/log/ring.c). */
    r->fixed = forced < 0 && cs->fixed_rule != -2;
    r->fixed_algo = !r->fixed              ? -1
                    : cs->fixed_rule >= 0 ? (int)pol->rules[cs->fixed_rule].use
                                          : (int)pol->fallback;
    const skewshim_algo *xa = r->fixed ? skewshim_algo_get((skewshim_algo_id)r->fixed_algo) : NULL;
    /* A call that goes to MPI untouched (native, forced or fixed) needs no
     * agreement on where its buffers live, nor on an in-place staging cap;
     * in place otherwise, the cap rests on the agreed largest receive total. */
    int native = forced == SKEWSHIM_ALGO_NATIVE || (r->fixed && cs->fixed_native);
    r->need = (forced < 0 && !r->fixed) || (fa && fa->needs_agreement) ||
              (xa && xa->needs_agreement) || ((local_location || c->in_place) && !native);
    /* When every way this call can go but native needs the whole size
     * matrix, the matrix exchange is the agreement: one collective before
     * the schedule, never an allreduce and then an allgather. */
    r->matrix_first = forced >= 0 ? gathers_matrix(forced)
                      : r->fixed  ? gathers_matrix(r->fixed_algo)
                                  : cs->matrix_first;
    /* A job that repeats its exchanges reuses what the agreement settled
     * on (policy/reuse.h).  In place, only native is reused: the staging
     * cap rests on an agreed figure. */
    if (r->need && forced < 0 && !r->fixed) {
        skewshim_reuse_outcome o;
        r->reused = skewshim_reuse_take(&c->cs->reuse, c->in_place, &o);
        if (r->reused) {
            r->need = 0;
            r->reused_reason = o.reason;
            c->rule = o.rule;
            c->algo = (skewshim_algo_id)o.algo;
            skewshim_repeat_reused(c, o.counts);
        }
    }
}

/* The summary says when the blocks, not the nodes, passed a rule over:
 * the rule the call would have taken without the unpaid mask. */
static void count_unpaid(const skewshim_call *c, const skewshim_policy *pol,
                         const skewshim_facts *f)
{
    if (c->rank != 0)
        return;     /* the summary sums ranks */
    skewshim_facts all = *f;
    all.unpaid = 0;
    all.unpaid_few = 0;
    skewshim_algo_id id;
    const skewshim_params *pp;
    if (skewshim_policy_choose(pol, &all, &id, &pp) == c->rule)
        return;
    pthread_mutex_lock(&skewshim_g.lock);
    skewshim_g.totals.passed_over_calls[id]++;
    pthread_mutex_unlock(&skewshim_g.lock);
}

/* The algorithm and the parameters it runs with. */
static const skewshim_params *choose(skewshim_call *c, const route *r)
{
    const skewshim_policy *pol = &skewshim_g.policy;
    const skewshim_params *chosen = &pol->params;
    if (r->forced >= 0) {
        c->algo = (skewshim_algo_id)r->forced;
        c->why = SKEWSHIM_WHY_FORCED;
        if (c->ag.valid)
            skewshim_repeat_note_outcome(c, gathers_matrix(c->algo));
        return chosen;
    }
    /* A reused call keeps the rule and algorithm route_call took from the
     * agreed calls (never fixed as well); judge() repeats their fallback
     * without planning. */
    if (r->fixed) {
        /* The same outcome whether or not a per-call log made the
         * agreement run; and without it, local facts (c->buffers) must not
         * reach the rules: a device rule could match on one rank only. */
        c->rule = c->cs->fixed_rule;
        c->algo = c->rule >= 0 ? pol->rules[c->rule].use : pol->fallback;
    } else if (!r->reused) {
        const skewshim_agreed *ag = &c->ag;
        skewshim_facts f = {
            .comm_size = c->size,
            .nodes = c->cs->topo.nnodes,
            .nic_per_rank = skewshim_topo_nic_per_rank(&c->cs->topo, c->cs->topo_nics),
            .unrunnable = c->cs->unrunnable,
            .cannot_run = c->cs->cannot_run,
            .unrunnable_few = c->cs->unrunnable_few,
            .max_block_bytes = (double)ag->max_block_bytes,
            .avg_block_bytes = (double)ag->sum_send / ((double)c->size * c->size),
            .avg_nonempty_bytes = skewshim_mean_nonempty(ag->sum_send, ag->sum_nonempty),
            .mtm = ag->valid ? ag->skew.mtm_inter : 1.0,
            .send_mtm = ag->valid ? ag->skew.send_mtm_inter : 1.0,
            .recv_mtm = ag->valid ? ag->skew.recv_mtm_inter : 1.0,
            .repeats = ag->valid ? (double)ag->repeats : 0.0,
            .buffers = ag->valid ? (ag->any_device ? SKEWSHIM_BUF_DEVICE : SKEWSHIM_BUF_HOST)
                                 : c->buffers,
        };
        /* Only agreed facts tell the blocks; without them the rule-matching
         * is the communicator's and the unpaid mask stays clear. */
        if (ag->valid) {
            uint64_t phase2 = skewshim_topo_phase2_counted(ag->max_phase2, f.mtm);
            f.unpaid = skewshim_algos_unpaid(&c->cs->topo, c->size, c->cs->topo_nics,
                                             ag->max_msgs, phase2,
                                             f.avg_nonempty_bytes, SKEWSHIM_HIER_LINE_FLIGHT) &
                       ~f.unrunnable;
            /* The lines differ only with a NIC per rank: elsewhere the
             * second pass of the table would find the same bits. */
            if (f.nic_per_rank)
                f.unpaid_few = skewshim_algos_unpaid(&c->cs->topo, c->size, c->cs->topo_nics,
                                                     ag->max_msgs, phase2, f.avg_nonempty_bytes,
                                                     SKEWSHIM_HIER_FEW_FLIGHT) &
                               ~(f.unrunnable | f.unrunnable_few);
        }
        skewshim_algo_id id;
        c->rule = skewshim_policy_choose(pol, &f, &id, &chosen);
        c->algo = id;
        if (f.unpaid | f.unpaid_few)
            count_unpaid(c, pol, &f);
        /* For the calls that reuse this outcome (core/agree.c): while the
         * matrix stays the same so do these facts, and the count changes
         * the choice only through a rule that reads it, or through a
         * schedule that gathers the matrix (the pay-back guard and the
         * planning budget read it). */
        c->repeats_decide =
            skewshim_policy_repeats_decide(pol, &f, c->rule, &c->repeats_horizon) ||
            gathers_matrix(c->algo);
        if (ag->valid)
            skewshim_repeat_note_outcome(c, c->repeats_decide);
    }
    if (c->rule >= 0)
        chosen = &pol->rules[c->rule].params;
    c->why = c->rule >= 0 ? SKEWSHIM_WHY_RULE : SKEWSHIM_WHY_DEFAULT;
    return chosen;
}

/* Whether the chosen algorithm takes the call, and its plan: the reason it
 * does not, or none. */
static skewshim_reason judge(skewshim_call *c, const skewshim_algo *a, const route *r)
{
    if (r->reused)
        return (skewshim_reason)r->reused_reason == SKEWSHIM_REASON_NONE
                   ? plan_algorithm(c, a)
                   : (skewshim_reason)r->reused_reason;
    skewshim_reason reason = check_algorithm(c, a);
    /* A rule that matched on agreed facts (block sizes, skew) and would
     * gather the matrix must pay it back; a forced algorithm, the default
     * and a rule on the communicator alone are the user's explicit word,
     * and so is a rule that asks for a repeated matrix: the exchange is
     * paid once for the calls that repeat it, and the rule stands on
     * measurements of those (the model's direct exchange knows nothing of
     * the MPI library's throttle, which decides the large skewed case).
     * Decided before the plan, which is where the exchange would run. */
    const skewshim_rule *rule = c->rule >= 0 ? &skewshim_g.policy.rules[c->rule] : NULL;
    if (reason == SKEWSHIM_REASON_NONE && r->forced < 0 && rule &&
        skewshim_rule_uses_facts(rule) && !(rule->repeats.set && rule->repeats.lo >= 1) &&
        gathers_matrix(c->algo) && c->ag.valid && !pays_back(c, c->params))
        reason = SKEWSHIM_REASON_NOT_PAID_BACK;
    if (reason == SKEWSHIM_REASON_NONE)
        reason = plan_algorithm(c, a);
    return reason;
}

/* Runs the call as decided: MPI for native and every fallback (with the
 * user's arguments: in place, the send side is MPI_IN_PLACE again), else
 * the schedule, in place from a staged copy of the blocks it sends. */
static int execute(skewshim_call *c, const skewshim_algo *a, skewshim_reason reason)
{
    int rc;
    if (reason != SKEWSHIM_REASON_NONE || c->algo == SKEWSHIM_ALGO_NATIVE) {
        rc = PMPI_Alltoallv(c->in_place ? MPI_IN_PLACE : c->sendbuf, c->scounts, c->sdispls,
                            c->stype, c->recvbuf, c->rcounts, c->rdispls, c->rtype, c->comm);
        if (reason != SKEWSHIM_REASON_NONE) {
            c->algo = SKEWSHIM_ALGO_NATIVE;
            c->why = SKEWSHIM_WHY_FALLBACK;
        }
    } else if (c->in_place && (rc = skewshim_inplace_stage(c)) != MPI_SUCCESS) {
        local_failure(c, rc);
    } else if ((rc = skewshim_call_run(c, a)) != MPI_SUCCESS) {
        local_failure(c, rc);
    }
    if (c->local_planned)
        skewshim_sched_free(&c->local);
    return rc;
}

int skewshim_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    skewshim_call c = {
        .sendbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .stype = sendtype,
        .recvbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rtype = recvtype,
        .comm = comm, .in_place = sendbuf == MPI_IN_PLACE, .rule = -1, .repeats_decide = 1,
        .info = {.regime = -1, .cache_hit = -1},
    };
    int rc;
    if (handled_early(&c, &rc))
        return rc;

    double t0 = PMPI_Wtime();
    int forced = chosen_algorithm();
    int level = skewshim_log_level();
    skewshim_comm *cs = skewshim_comm_get(comm);
    if (!cs)
        return pass_through(&c, SKEWSHIM_REASON_INTERNAL);
    c.cs = cs;
    c.rank = cs->rank;
    c.size = cs->size;
    int logged = level >= SKEWSHIM_LOG_CALLS && cs->ncalls % (uint64_t)skewshim_log_sample() == 0;
    /* First, since the fixed choice rests on the nodes. */
    if (skewshim_comm_topo_update(cs))
        return local_failure(&c, MPI_ERR_NO_MEM);
    if (forced < 0 && !logged && cs->fixed_native) {
        /* The first call on a communicator where the policy can only say
         * native: from the next one on, handled_early catches it. */
        cs->ncalls++;
        c.decided = SKEWSHIM_DECIDED_FIXED;
        return forced_native(&c);
    }
    /* MPI requires MPI_IN_PLACE on all ranks or none: rank-invariant. */
    if (c.in_place)
        skewshim_inplace_describe(&c);
    c.local_reason = skewshim_call_describe(&c);

    route r;
    route_call(&c, forced, &r);
    c.decided = r.need     ? SKEWSHIM_DECIDED_AGREED
                : r.reused ? SKEWSHIM_DECIDED_REUSED
                : r.fixed  ? SKEWSHIM_DECIDED_FIXED
                           : SKEWSHIM_DECIDED_FORCED;
    if (r.need && (rc = r.matrix_first ? skewshim_global_exchange(&c) : skewshim_agree(&c))
                      != MPI_SUCCESS)
        return local_failure(&c, rc);
    if (!r.need && c.local_reason != SKEWSHIM_REASON_NONE) {
        /* No agreement ran, and in a host-only build the only local reason
         * left is an invalid argument (a negative count): an erroneous
         * program, which MPI reports on this rank as it would without the
         * shim. */
        rc = pass_through(&c, c.local_reason);
        if (logged)
            log_call(&c, c.local_reason, 0.0);
        cs->ncalls++;
        return rc;
    }

    skewshim_params params = *choose(&c, &r);
    skewshim_apply_overrides(&params);
    c.params = &params;
    const skewshim_algo *a = skewshim_algo_get(c.algo);
    skewshim_reason reason = judge(&c, a, &r);
    if (c.nomem) {
        if (c.local_planned)
            skewshim_sched_free(&c.local);
        return local_failure(&c, MPI_ERR_NO_MEM);
    }
    rc = execute(&c, a, reason);
    if (c.ag.valid && forced < 0 && !r.fixed)
        note_outcome(&c, a, reason);
    double t = PMPI_Wtime() - t0;
    if (logged) {
        log_call(&c, reason, t);
        if (level >= SKEWSHIM_LOG_MATRIX)
            log_matrix(&c);
    }
    cs->ncalls++;
    account(&c, reason, t);
    return rc;
}
