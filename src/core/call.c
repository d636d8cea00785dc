/* The pipeline of one call: describe -> agree -> choose -> plan/execute ->
 * log, with PMPI_Alltoallv as the way out at every step.  A decision that
 * sends a call to PMPI_Alltoallv is taken either from rank-invariant facts
 * or after the agreement collective, never from one rank's facts alone. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "comm.h"
#include "core/internal.h"
#include "device.h"
#include "exec.h"

static const char *const reason_names[SKEWSHIM_REASON_COUNT] = {
    [SKEWSHIM_REASON_NONE] = "none",
    [SKEWSHIM_REASON_DISABLED] = "disabled",
    [SKEWSHIM_REASON_NOT_INITIALIZED] = "not_initialized",
    [SKEWSHIM_REASON_IN_PLACE] = "in_place",
    [SKEWSHIM_REASON_NONCONTIG] = "noncontiguous_type",
    [SKEWSHIM_REASON_INTERCOMM] = "intercommunicator",
    [SKEWSHIM_REASON_TYPE_SIZE] = "type_size",
    [SKEWSHIM_REASON_INVALID_ARGS] = "invalid_args",
    [SKEWSHIM_REASON_MIXED_BUFFERS] = "mixed_buffers",
    [SKEWSHIM_REASON_NO_DEVICE_PATH] = "no_device_path",
    [SKEWSHIM_REASON_NO_HOST_PATH] = "no_host_path",
    [SKEWSHIM_REASON_MEMORY_CAP] = "memory_cap",
    [SKEWSHIM_REASON_NOT_IMPLEMENTED] = "not_implemented",
    [SKEWSHIM_REASON_NCCL_UNAVAILABLE] = "nccl_unavailable",
    [SKEWSHIM_REASON_UNEVEN_NODES] = "uneven_nodes",
    [SKEWSHIM_REASON_LARGE_COUNT] = "large_count",
    [SKEWSHIM_REASON_INTERNAL] = "internal_error",
};

const char *skewshim_reason_name(skewshim_reason r)
{
    if ((int)r < 0 || r >= SKEWSHIM_REASON_COUNT || !reason_names[r])
        return "unknown";
    return reason_names[r];
}

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

void *skewshim_call_tmp(skewshim_call *c, uint64_t bytes)
{
    skewshim_comm *cs = c->cs;
    if (bytes == 0)
        bytes = 1;
    if (bytes > cs->tmp_cap) {
        void *p = realloc(cs->tmp, bytes);
        if (!p)
            return NULL;
        cs->tmp = p;
        cs->tmp_cap = bytes;
    }
    if (bytes > c->tmp_bytes)
        c->tmp_bytes = bytes;
    return cs->tmp;
}

MPI_Comm skewshim_call_pcomm(const skewshim_call *c) { return c->cs->pcomm; }
const skewshim_topo *skewshim_call_topo(const skewshim_call *c) { return &c->cs->topo; }

/* Arguments MPI itself must judge: the user gets MPI's own error. */
static int obviously_invalid(MPI_Datatype st, MPI_Datatype rt, MPI_Comm comm)
{
    return comm == MPI_COMM_NULL || st == MPI_DATATYPE_NULL || rt == MPI_DATATYPE_NULL;
}

/* A datatype the byte-moving schedules can handle: its data is one dense
 * run of bytes per element and consecutive elements touch. */
static int contiguous(MPI_Datatype t, int *size, MPI_Aint *extent, MPI_Aint *true_lb)
{
    MPI_Aint lb, tlb, text;
    if (PMPI_Type_size(t, size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(t, &lb, extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS)
        return 0;
    *true_lb = tlb;
    return *size == 0 || ((MPI_Aint)*size == text && text == *extent);
}

static skewshim_reason describe(skewshim_call *c)
{
    int P = c->size, ssize, rsize;
    MPI_Aint sext, rext, slb, rlb;
    skewshim_reason why = SKEWSHIM_REASON_NONE;
    uint64_t *v = c->cs->scratch;
    c->sbytes = v;
    c->soff = v + P;
    c->rbytes = v + 2 * P;
    c->roff = v + 3 * P;
    int sc = contiguous(c->stype, &ssize, &sext, &slb);
    int rc = contiguous(c->rtype, &rsize, &rext, &rlb);
    if (!sc || !rc)
        why = SKEWSHIM_REASON_NONCONTIG;
    c->type_size = ssize;
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
    int sloc = skewshim_device_locate(c->sendbuf);
    int rloc = skewshim_device_locate(c->recvbuf);
    c->buffers = rtot || !stot ? (c->recvbuf || !c->sendbuf ? rloc : sloc) : sloc;
    if (stot && rtot && sloc != rloc && why == SKEWSHIM_REASON_NONE)
        why = SKEWSHIM_REASON_MIXED_BUFFERS;
    return why;
}

static int staging_available(void)
{
#ifdef SKEWSHIM_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
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
        if (!a->run_device && !(a->run_host && staging_available()))
            return SKEWSHIM_REASON_NO_DEVICE_PATH;
    } else if (!a->run_host) {
        return a->run_device ? SKEWSHIM_REASON_NO_HOST_PATH : SKEWSHIM_REASON_NOT_IMPLEMENTED;
    }
    if (a->check) {
        skewshim_reason r = a->check(c);
        if (r != SKEWSHIM_REASON_NONE)
            return r;
    }
    if (a->temp_bytes) {
        uint64_t need = a->temp_bytes(c);
        if (need == UINT64_MAX)
            return SKEWSHIM_REASON_INTERNAL;
        if (need == SKEWSHIM_TEMP_INVALID)
            return SKEWSHIM_REASON_INVALID_ARGS;
        if (need > c->params->max_temp_bytes)
            return SKEWSHIM_REASON_MEMORY_CAP;
    }
    return SKEWSHIM_REASON_NONE;
}

static int run_algorithm(skewshim_call *c, const skewshim_algo *a)
{
    int device = c->ag.valid ? c->ag.any_device != 0 : c->buffers == SKEWSHIM_BUF_DEVICE;
    if (device && a->run_device)
        return a->run_device(c);
    if (device)
        return skewshim_exec_staged(c, a->run_host);
    return a->run_host(c);
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
    r.rule = c->rule;
    r.reason = reason;
    r.buffers = c->ag.valid ? (c->ag.any_device ? SKEWSHIM_BUF_DEVICE : SKEWSHIM_BUF_HOST)
                            : c->buffers;
    r.total_bytes = c->ag.sum_send;
    r.max_block_bytes = c->ag.max_block_bytes;
    r.mean_block_bytes = (double)c->ag.sum_send / ((double)c->size * c->size);
    r.send_mtm_inter = c->ag.skew.send_mtm_inter;
    r.recv_mtm_inter = c->ag.skew.recv_mtm_inter;
    r.send_mtm_all = c->ag.skew.send_mtm_all;
    r.recv_mtm_all = c->ag.skew.recv_mtm_all;
    r.time = t;
    r.rounds = c->stats.rounds;
    r.messages = c->stats.messages;
    r.bytes_sent = c->stats.bytes_sent;
    r.bytes_forwarded = c->stats.bytes_forwarded;
    r.regime = c->info.regime;
    r.stages = c->info.stages;
    r.cache_hit = c->info.cache_hit;
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
    if (c->rank == 0 && skewshim_matrix_alloc(&m, P))
        return;
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
    int rc = PMPI_Alltoallv(c->sendbuf, c->scounts, c->sdispls, c->stype, c->recvbuf, c->rcounts,
                            c->rdispls, c->rtype, c->comm);
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
        /* valid arguments, since MPI accepted them */
        int tsize = 0, P = 0;
        PMPI_Comm_rank(c->comm, &c->rank);
        PMPI_Comm_size(c->comm, &P);
        PMPI_Type_size(c->stype, &tsize);
        for (int j = 0; j < P; j++)
            bytes += (uint64_t)(c->scounts[j] > 0 ? c->scounts[j] : 0);
        bytes *= (uint64_t)tsize;
    }
    pthread_mutex_lock(&skewshim_g.lock);
    skewshim_g.totals.calls[SKEWSHIM_ALGO_NATIVE] += (uint64_t)(c->rank == 0);
    skewshim_g.totals.time[SKEWSHIM_ALGO_NATIVE] += t;
    skewshim_g.totals.bytes[SKEWSHIM_ALGO_NATIVE] += bytes;
    pthread_mutex_unlock(&skewshim_g.lock);
    skewshim_set_last(c, SKEWSHIM_REASON_NONE);
    return rc;
}

int skewshim_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    skewshim_call c;
    memset(&c, 0, sizeof c);
    c.sendbuf = sendbuf;
    c.recvbuf = recvbuf;
    c.scounts = sendcounts;
    c.sdispls = sdispls;
    c.rcounts = recvcounts;
    c.rdispls = rdispls;
    c.stype = sendtype;
    c.rtype = recvtype;
    c.comm = comm;
    c.rule = -1;
    c.info.regime = -1;
    c.info.cache_hit = -1;

    if (!skewshim_g.initialized)
        skewshim_init_lazy();
    if (skewshim_g.disabled || skewshim_g.finalized)
        return pass_through(&c, skewshim_g.finalized ? SKEWSHIM_REASON_NOT_INITIALIZED
                                                     : skewshim_g.disabled_reason);
    if (__atomic_load_n(&skewshim_g.tool_disabled, __ATOMIC_RELAXED))
        return pass_through(&c, SKEWSHIM_REASON_DISABLED);
    int pick = chosen_algorithm();
    if (skewshim_log_level() < SKEWSHIM_LOG_CALLS && pick == SKEWSHIM_ALGO_NATIVE)
        return forced_native(&c);
    if (skewshim_log_level() < SKEWSHIM_LOG_CALLS && pick < 0) {
        /* A communicator on which the policy can only say native (decided
         * at its first call, below) takes the same short path. */
        skewshim_comm *known = skewshim_comm_peek(comm);
        if (known && known->fixed_native) {
            known->ncalls++;
            return forced_native(&c);
        }
    }
    if (obviously_invalid(sendtype, recvtype, comm))
        return pass_through(&c, SKEWSHIM_REASON_INVALID_ARGS);
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return pass_through(&c, SKEWSHIM_REASON_INVALID_ARGS);
    if (inter)
        return pass_through(&c, SKEWSHIM_REASON_INTERCOMM);
    /* MPI requires MPI_IN_PLACE on all ranks or none: rank-invariant. */
    if (sendbuf == MPI_IN_PLACE)
        return pass_through(&c, SKEWSHIM_REASON_IN_PLACE);
    if (!sendcounts || !sdispls || !recvcounts || !rdispls)
        return pass_through(&c, SKEWSHIM_REASON_INVALID_ARGS);

    double t0 = PMPI_Wtime();
    int forced = chosen_algorithm();
    int level = skewshim_log_level();
    skewshim_comm *cs = skewshim_comm_get(comm);
    if (!cs)
        return pass_through(&c, SKEWSHIM_REASON_INTERNAL);
    c.cs = cs;
    c.rank = cs->rank;
    c.size = cs->size;
    const skewshim_policy *pol = &skewshim_g.policy;
    int sample = skewshim_log_sample();
    int logged = level >= SKEWSHIM_LOG_CALLS && cs->ncalls % (uint64_t)sample == 0;
    if (forced < 0 && !logged && cs->fixed_native) {
        /* The first call on a communicator where the policy can only say
         * native: from the next one on, the check above catches it. */
        cs->ncalls++;
        return forced_native(&c);
    }
    skewshim_comm_topo_update(cs);
    c.local_reason = describe(&c);

    const skewshim_algo *fa = forced >= 0 ? skewshim_algo_get((skewshim_algo_id)forced) : NULL;
    /* The choice needs the agreement only when some fact of the call can
     * change it (worked out once per communicator, skewshim_comm_get). */
    int fixed = forced < 0 && cs->fixed_rule != -2;
    int need = logged || (forced < 0 && !fixed) || (fa && fa->needs_agreement);
    int rc;
    if (need && (rc = skewshim_agree(&c)) != MPI_SUCCESS)
        return rc;
    if (!need && c.local_reason != SKEWSHIM_REASON_NONE) {
        /* No agreement ran: every rank is trusted to see the same layout
         * (documented).  Counted under its reason. */
        cs->ncalls++;
        return pass_through(&c, c.local_reason);
    }

    skewshim_params params;
    const skewshim_params *chosen = &pol->params;
    if (forced >= 0) {
        c.algo = (skewshim_algo_id)forced;
        c.why = SKEWSHIM_WHY_FORCED;
    } else if (fixed) {
        /* The same outcome whether or not a per-call log made the
         * agreement run; and without it, local facts (c.buffers) must not
         * reach the rules: a device rule could match on one rank only. */
        c.rule = cs->fixed_rule;
        c.algo = c.rule >= 0 ? pol->rules[c.rule].use : pol->fallback;
        chosen = c.rule >= 0 ? &pol->rules[c.rule].params : &pol->params;
        c.why = c.rule >= 0 ? SKEWSHIM_WHY_RULE : SKEWSHIM_WHY_DEFAULT;
    } else {
        skewshim_facts f = {
            .comm_size = c.size,
            .max_block_bytes = (double)c.ag.max_block_bytes,
            .avg_block_bytes = (double)c.ag.sum_send / ((double)c.size * c.size),
            .mtm = c.ag.valid ? c.ag.skew.mtm_inter : 1.0,
            .buffers = c.ag.valid ? (c.ag.any_device ? SKEWSHIM_BUF_DEVICE : SKEWSHIM_BUF_HOST)
                                  : c.buffers,
        };
        skewshim_algo_id id;
        c.rule = skewshim_policy_choose(pol, &f, &id, &chosen);
        c.algo = id;
        c.why = c.rule >= 0 ? SKEWSHIM_WHY_RULE : SKEWSHIM_WHY_DEFAULT;
    }
    params = *chosen;
    skewshim_apply_overrides(&params);
    c.params = &params;

    const skewshim_algo *a = skewshim_algo_get(c.algo);
    skewshim_reason reason = check_algorithm(&c, a);
    if (reason != SKEWSHIM_REASON_NONE || c.algo == SKEWSHIM_ALGO_NATIVE) {
        rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm);
        if (reason != SKEWSHIM_REASON_NONE) {
            c.algo = SKEWSHIM_ALGO_NATIVE;
            c.why = SKEWSHIM_WHY_FALLBACK;
        }
    } else {
        rc = run_algorithm(&c, a);
    }
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
