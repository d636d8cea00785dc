/* SABRE and FAST on the MPI side.  Both planners need the whole size
 * matrix; the cheapest exchange that lets every rank compute the identical
 * plan on its own is one allgather of each rank's row of send sizes (P
 * values of 8 bytes from each rank, P^2 * 8 bytes received; in log2 P
 * rounds, allgather.c): no plan is broadcast and no metadata rounds
 * follow, only one allreduce of a word after a plan is made
 * (plan_failed_anywhere).  Its cost is logged per call. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "core/internal.h"
#include "schedule/plan_cache.h"
#include "labcharge.h"
#include "log.h"
#include "plan.h"
#include "schedule/digest.h"
#include "sim.h"

static skewshim_plan_cache *cache_of(skewshim_comm *cs)
{
    if (!cs->plan_cache)
        cs->plan_cache = calloc(1, sizeof(skewshim_plan_cache));
    return cs->plan_cache;
}

/* Each rank contributes its row of send sizes, a digest of its receive
 * sizes, and the three local facts the agreement carries (its reason,
 * where its buffers live, whether its sizes changed), so that this one
 * exchange is also the call's agreement when it runs first
 * (skewshim_global_exchange).  A receiver
 * whose counts disagree with what is sent to it (an erroneous program)
 * would make the plan write past its receive blocks; with the digests every
 * rank sees such a mismatch, so all of them hand the call to MPI together,
 * which reports it.  Returns 0, 1 on a mismatch, -1 on error, -2 when this
 * rank could not allocate (and skipped the allgather). */
#define ROW_EXTRA 4
static int gather_matrix(const skewshim_call *c, skewshim_plan_cache *pc, uint64_t changed)
{
    int P = c->size;
    size_t row = (size_t)P + ROW_EXTRA;
    if (pc->matrix_p != P) {
        free(pc->gathered);
        free(pc->digest);
        pc->gathered = NULL;
        pc->digest = malloc((size_t)P * sizeof(uint64_t));
        pc->matrix_p = pc->digest ? P : 0;
        if (!pc->matrix_p)
            return -2;
    }
    /* NULL after a miss handed the last one to the plan cache. */
    if (!pc->gathered && !(pc->gathered = malloc((size_t)P * row * sizeof(uint64_t))))
        return -2;
    uint64_t *mine = malloc(row * sizeof *mine);
    if (!mine)
        return -2;
    memcpy(mine, c->sbytes, (size_t)P * sizeof *mine);
    mine[P] = skewshim_digest_vec(c->rbytes, P);
    skewshim_agree_local_tail(c, changed, mine + P + 1);
    double t0 = PMPI_Wtime();
    int rc = skewshim_allgather_rows(mine, pc->gathered, row, c->rank, P, c->cs->pcomm);
    pc->meta_time += PMPI_Wtime() - t0;
    pc->meta_bytes += row * sizeof(uint64_t);
    free(mine);
    if (rc != MPI_SUCCESS)
        return -1;
    skewshim_digest_columns(pc->gathered, P, row, pc->digest);
    for (int j = 0; j < P; j++)
        if (pc->digest[j] != pc->gathered[(size_t)j * row + P])
            return 1;
    return 0;
}

/* The repeat check.  A job that repeats its exchange hands every call the
 * matrix of the one before, and gathering it again costs each rank P^2
 * words received and a digest and compare of them all (at P = 512 in the
 * lab, 315 us of charged CPU a call besides the allgather).  Instead each
 * rank compares its own row and column with the matrix of a cached plan
 * (the latest under the call's key; without a key, the current one), in
 * O(P), and one allreduce of a few words tells every rank whether all of
 * them matched.  Every row equal is the whole matrix equal, entry for
 * entry: the hit rests on no digest.  The hashes only show that every rank
 * holds the same entry, which differs only after an allocation failed on
 * one rank or a tool thread changed a parameter on one rank first.  The
 * check runs when it is armed, from agreed facts alone (the last planned
 * call's matrix was the one before it too, or its check hit), so every
 * rank runs it or none, and a job whose matrix changes every call (MoE
 * routing) does not pay it after the first change; a miss disarms it.
 * Without a key (the check stands for the agreement, before the algorithm
 * is chosen) a hit also gives the call its agreed figures: those taken
 * when the entry was made, with this call's reason and buffer location,
 * and its repeat count from changed (skewshim_repeat_local's word).
 * Where an allreduce agrees anyway, it carries the same compare against
 * the current plan (skewshim_global_held) and no check runs.
 * Returns 1 on a hit, 0 on a miss, -1 on error; *found is the entry, and
 * *any_changed the max of changed over ranks. */
enum { R_HASH, R_NHASH, R_MISS, R_REASON, R_DEVICE, R_HOST, R_CHANGED, R_COUNT };

static int repeat_check(skewshim_call *c, skewshim_plan_cache *pc, const skewshim_plan_key *k,
                        uint64_t changed, skewshim_plan_entry **found, uint64_t *any_changed)
{
    skewshim_comm *cs = c->cs;
    skewshim_plan_entry *e = pc->cur;
    int P = c->size, me = c->rank;
    /* With a key, its latest plan: a job may alternate schedules on one
     * matrix (the bench does, item by item). */
    if (k) {
        e = NULL;
        for (int i = 0; i < SKEWSHIM_PLAN_CACHE_SLOTS; i++) {
            skewshim_plan_entry *x = &pc->slot[i];
            if (x->used && !memcmp(&x->key, k, sizeof *k) && (!e || x->last_use > e->last_use))
                e = x;
        }
    }
    *found = e;
    int slot = e ? (int)(e - pc->slot) : 0;
    int miss = !e || !e->used || e->n != (size_t)P * P;
    if (!miss && !k)
        miss = !cs->slot_ag[slot].valid || cs->slot_topo_q[slot] != cs->topo_q;
    if (!miss) {
        const uint64_t *m = e->matrix;
        miss = memcmp(m + (size_t)me * P, c->sbytes, (size_t)P * sizeof *m) != 0;
        for (int i = 0; !miss && i < P; i++)
            miss = m[(size_t)i * P + (size_t)me] != c->rbytes[i];
    }
    uint64_t in[R_COUNT], out[R_COUNT];
    in[R_HASH] = e ? e->hash : 0;
    in[R_NHASH] = ~in[R_HASH];
    in[R_MISS] = (uint64_t)miss;
    in[R_REASON] = (uint64_t)c->local_reason;
    in[R_DEVICE] = c->buffers == SKEWSHIM_BUF_DEVICE;
    in[R_HOST] = c->buffers == SKEWSHIM_BUF_HOST;
    in[R_CHANGED] = changed;
    skewshim_lab_plan(0, 2 * (uint64_t)P, 0);   /* a row and a column compared */
    double t0 = PMPI_Wtime();
    int rc = PMPI_Allreduce(in, out, R_COUNT, MPI_UINT64_T, MPI_MAX, cs->pcomm);
    pc->meta_time += PMPI_Wtime() - t0;
    pc->meta_bytes += sizeof in;
    if (rc != MPI_SUCCESS)
        return -1;
    int hit = !out[R_MISS] && out[R_HASH] == ~out[R_NHASH];
    cs->repeat_armed = hit;
    *any_changed = out[R_CHANGED];
    if (hit && !k) {
        c->ag = cs->slot_ag[slot];
        c->ag.any_unsupported = out[R_REASON];
        c->ag.any_device = out[R_DEVICE];
        c->ag.any_host = out[R_HOST];
    }
    return hit;
}

/* The same compare for the agreement allreduce, against the current plan,
 * so that a call whose allreduce agrees anyway pays no check of its own:
 * where the rules choose by block sizes and skew, a matrix schedule on a
 * repeated matrix then costs the one allreduce that scattered would. */
void skewshim_global_held(const skewshim_call *c, uint64_t *miss, uint64_t *hash)
{
    const skewshim_plan_cache *pc = c->cs->plan_cache;
    const skewshim_plan_entry *e = pc ? pc->cur : NULL;
    int P = c->size, me = c->rank;
    *miss = 1;
    *hash = 0;
    if (!e || !e->used || e->n != (size_t)P * P)
        return;
    const uint64_t *m = e->matrix;
    skewshim_lab_plan(0, 2 * (uint64_t)P, 0);
    if (memcmp(m + (size_t)me * P, c->sbytes, (size_t)P * sizeof *m))
        return;
    for (int i = 0; i < P; i++)
        if (m[(size_t)i * P + (size_t)me] != c->rbytes[i])
            return;
    *miss = 0;
    *hash = e->hash;
}

int skewshim_global_exchange(skewshim_call *c)
{
    skewshim_plan_cache *pc = cache_of(c->cs);
    if (pc)
        pc->meta_bytes = 0, pc->meta_time = 0;   /* a check and a gather add up */
    uint64_t changed = skewshim_repeat_local(c, 1), any = 0;
    if (pc && c->cs->repeat_armed) {
        skewshim_plan_entry *e;
        int hit = repeat_check(c, pc, NULL, changed, &e, &any);
        if (hit < 0)
            return MPI_ERR_OTHER;
        if (hit) {
            c->matrix_ready = c->matrix_repeat = 1;
            skewshim_repeat_agreed(c, any);
            return MPI_SUCCESS;
        }
    }
    int g = pc ? gather_matrix(c, pc, changed) : -2;
    if (g == -2)
        return MPI_ERR_NO_MEM;
    if (g < 0)
        return MPI_ERR_OTHER;
    size_t row = (size_t)c->size + ROW_EXTRA;
    skewshim_agree_matrix(c, pc->gathered, row, g);
    any = 0;
    for (int i = 0; i < c->size; i++)
        any |= pc->gathered[(size_t)i * row + (size_t)c->size + 3];
    skewshim_repeat_agreed(c, any);
    c->matrix_ready = 1;
    return MPI_SUCCESS;
}

#ifdef SKEWSHIM_FAULT_INJECTION
/* Test builds only (scripts/tsan): SKEWSHIM_FAULT_PLAN=R[:N] makes the
 * first N plans (all, without N) of rank R of the call's communicator
 * fail, as the planner's own allocations failing on that rank alone
 * would (tests/mpi/planfail.sh). */
static int plan_fault(const skewshim_call *c)
{
    static int failed;
    const char *e = getenv("SKEWSHIM_FAULT_PLAN");
    if (!e || !*e || atoi(e) != c->rank)
        return 0;
    const char *n = strchr(e, ':');
    if (n && failed >= atoi(n + 1))
        return 0;
    failed++;
    return 1;
}
#else
#define plan_fault(c) 0
#endif

/* Each rank plans only its own slice (the slice planners give exactly the
 * slice of the global plan, and the largest temp of any rank); the global
 * plan is built only when per-call logging wants its simulated time. */
/* nics is the plan key's: read once a call, so the plan and its key agree
 * even if a tool changes the count meanwhile. */
static int make_plan(const skewshim_call *c, skewshim_plan_entry *e, const skewshim_matrix *m,
                     int nics)
{
    const skewshim_topo *t = &c->cs->topo;
    int sabre = c->algo == SKEWSHIM_ALGO_SABRE;
    memset(&e->rep, 0, sizeof e->rep);
    e->rep.regime = -1;
    if (skewshim_sched_init(&e->slice, c->size, c->rank))
        return -1;
    int rc = sabre ? skewshim_plan_sabre_slice(m, t, c->params, nics, c->rank, &e->slice,
                                               &e->max_tmp, &e->rep)
                   : skewshim_plan_fast_slice(m, t, c->params, nics, c->rank, &e->slice,
                                              &e->max_tmp, &e->rep);
    if (rc || plan_fault(c))
        return -1;
    skewshim_lab_plan(e->slice.nmoves, 0, (uint64_t)c->size * (uint64_t)c->size);
    e->t_lb = skewshim_lower_bound(m, t, nics, c->params->model_inter_bw);
    e->t_pred = 0;
    if (skewshim_log_level() >= SKEWSHIM_LOG_CALLS) {
        skewshim_sched g;
        if (skewshim_sched_init(&g, c->size, -1))
            return -1;
        skewshim_global_planner plan = sabre ? skewshim_plan_sabre : skewshim_plan_fast;
        if (plan(m, t, c->params, nics, &g, NULL) == 0) {
            skewshim_sim_model mo = {
                .B1 = c->params->model_intra_bw,
                .B2 = c->params->model_inter_bw,
                .m = nics,
                .latency = c->params->model_latency,
                .barrier = 0,
            };
            skewshim_sim_detail d;
            e->t_pred = skewshim_sim_time(&g, t, &mo, &d);
            if (e->t_pred < 0) {
                e->t_pred = 0;
            } else {
                /* What the schedule costs before and besides its bytes:
                 * the matrix exchange (the model's figure, so that the
                 * prediction does not depend on this call's timing) and
                 * the posting of its messages, a rank's share. */
                skewshim_predict_in in = {
                    .P = c->size, .nodes = t->nnodes, .per_node = t->max_per_node,
                    .m = nics, .B1 = mo.B1, .B2 = mo.B2, .latency = mo.latency,
                    .overhead = c->params->model_overhead, .msg_factor = 1,
                };
                skewshim_predict_out o;
                if (skewshim_predict(&in, &o) == 0)
                    e->t_pred += o.t_meta + (double)d.messages / c->size * in.overhead;
            }
        }
        skewshim_sched_free(&g);
    }
    return 0;
}

static void report(skewshim_call *c, const skewshim_plan_cache *pc)
{
    const skewshim_plan_entry *e = pc->cur;
    c->stats = e->slice.stats;
    c->info.regime = e->rep.regime;
    /* With one NIC a node SABRE's relay has one lane and sends every block
     * straight: the record says which it planned for. */
    c->info.nics = e->key.algo == SKEWSHIM_ALGO_SABRE ? e->key.nics : 0;
    c->info.stages = e->rep.stages;
    c->info.cache_hit = pc->cur_hit;
    c->info.t_pred = e->t_pred;
    c->info.t_lb = e->t_lb;
    c->info.meta_bytes = pc->meta_bytes;
    c->info.meta_time = pc->meta_time;
}

/* A planner is deterministic on the agreed matrix, so a plan it cannot
 * make fails alike everywhere, except where its own allocations fail on
 * one rank: then that rank alone would hand the call to MPI while the
 * others run the schedule, and both wait forever.  So every plan made is
 * followed by one allreduce of "mine failed", and a failure anywhere sends
 * the call to MPI on every rank.  It is paid only where a plan is made,
 * beside the matrix exchange and the planning.  Returns 1 when some rank
 * failed, 0 when none did, -1 on error. */
static int plan_failed_anywhere(const skewshim_call *c, skewshim_plan_cache *pc, int failed)
{
    int any = 0;
    double t0 = PMPI_Wtime();
    int rc = PMPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, c->cs->pcomm);
    pc->meta_time += PMPI_Wtime() - t0;
    pc->meta_bytes += sizeof failed;
    return rc != MPI_SUCCESS ? -1 : any != 0;
}

/* A miss keeps the gathered buffer as the entry's matrix, its rows closed
 * up to P wide in place, instead of copying it into a second allocation:
 * one P x P matrix per rank at the peak of a new matrix's call, not two
 * (8 MB at P = 1024, and every rank of a node holds its own).  The planners
 * want it dense, hence the move.  The next call gathers into a new buffer;
 * a hit keeps reusing the same one. */
static uint64_t *take_matrix(skewshim_plan_cache *pc, int P, size_t row)
{
    uint64_t *m = pc->gathered;
    for (int i = 1; i < P; i++)   /* rows move left: each lands before its source */
        memmove(m + (size_t)i * P, m + (size_t)i * row, (size_t)P * sizeof *m);
    pc->gathered = NULL;
    return m;
}

/* The call runs entry e's plan. */
static uint64_t use(skewshim_call *c, skewshim_plan_cache *pc, skewshim_plan_entry *e)
{
    pc->cur = e;
    c->plan = &e->slice;
    c->plan_tmp = e->slice.tmp_bytes ? e->slice.tmp_bytes[0] : 0;
    report(c, pc);
    return e->max_tmp;
}

/* Gathers the matrix (or finds by the repeat check that it is a cached
 * plan's) and plans (or finds the cached plan); the largest temp of any
 * rank is the same number everywhere, so the memory cap is decided
 * identically.  UINT64_MAX reports a failure (every rank fails alike: same
 * matrix, same planner, and a plan that failed on one rank only is agreed
 * on), which the pipeline turns into a fallback. */
uint64_t skewshim_global_plan(skewshim_call *c)
{
    skewshim_comm *cs = c->cs;
    skewshim_plan_cache *pc = cache_of(cs);
    if (!pc)
        return SKEWSHIM_TEMP_NOMEM;
    skewshim_plan_key k;
    memset(&k, 0, sizeof k);
    k.algo = c->algo;
    k.nranks = c->size;
    k.ranks_per_node = cs->topo_q;
    k.nnodes = cs->topo.nnodes;
    k.nics = skewshim_nics_per_node();
    if (c->algo == SKEWSHIM_ALGO_SABRE) {
        k.alpha = c->params->sabre_alpha;
        k.mtm_threshold = c->params->sabre_mtm_threshold;
    } else {
        k.pipeline = c->params->fast_pipeline;
    }
    int P = c->size;
    size_t n = (size_t)P * P, row = (size_t)P + ROW_EXTRA;
    /* This call's matrix is a cached entry's: checked now (the latest under
     * this key), or by the check that stood for the agreement, or by the
     * agreement allreduce (the current entry for both). */
    int repeat = c->matrix_repeat;
    skewshim_plan_entry *e = pc->cur;
    if (!c->matrix_ready)
        pc->meta_bytes = 0, pc->meta_time = 0;
    uint64_t unused;
    if (!c->matrix_ready && c->ag.valid)
        repeat = c->ag.held;   /* the agreement checked against pc->cur */
    else if (!c->matrix_ready && cs->repeat_armed &&
             (repeat = repeat_check(c, pc, &k, 0, &e, &unused)) < 0)
        return UINT64_MAX;
    if (repeat && !memcmp(&e->key, &k, sizeof k)) {
        skewshim_plan_seen_note(&cs->plan_seen, e->hash);
        e->last_use = ++pc->clock;
        pc->cur_hit = 1;
        cs->repeat_armed = 1;
        return use(c, pc, e);
    }
    /* Gathered already when the exchange was the call's agreement (a
     * mismatch then reached every rank as an agreed reason); the current
     * entry's under another key. */
    const uint64_t *rows;
    size_t stride;
    if (repeat) {
        rows = e->matrix;
        stride = (size_t)P;
        skewshim_digest_columns(rows, P, stride, pc->digest);
    } else {
        int g = c->matrix_ready ? 0 : gather_matrix(c, pc, 0);
        if (g)
            return g > 0 ? SKEWSHIM_TEMP_INVALID : g == -2 ? SKEWSHIM_TEMP_NOMEM : UINT64_MAX;
        rows = pc->gathered;   /* allocated by the gather after a miss took the last */
        stride = row;
    }
    uint64_t h = skewshim_plan_hash(pc->digest, P, &k);
    /* Armed for the next call when this planned matrix was the last one's
     * too, or came from the check: from the matrix alone, which every rank
     * has gathered alike, never from the key. */
    skewshim_plan_key none;
    memset(&none, 0, sizeof none);
    uint64_t mh = skewshim_plan_hash(pc->digest, P, &none);
    int again = repeat || (cs->repeat_last == mh && cs->repeat_last_valid);
    cs->repeat_last = mh;
    cs->repeat_last_valid = 1;
    /* A matrix not seen lately is planned only while the schedule's gain
     * still covers it (the exchange is paid by now); seen again, or agreed
     * to repeat, it is planned whatever it costs, as a job that repeats it
     * will hit.  Noted alike on every rank, before the lookup, which is
     * this rank's own. */
    int seen = skewshim_plan_seen_note(&cs->plan_seen, h);
    cs->repeat_armed = again;
    if (!seen && !c->ag.repeats && c->plan_guarded && c->plan_cost >= c->plan_budget)
        return SKEWSHIM_TEMP_NOT_PAID;
    skewshim_lab_plan(0, n, 0);    /* the gathered matrix: digested and compared */
    e = skewshim_plan_lookup(pc, h, &k, rows, P, stride);
    pc->cur_hit = e != NULL;
    if (!e) {
        /* The current entry's matrix is copied before a victim is freed,
         * which may be that entry.  A copy this rank cannot allocate fails
         * its plan, agreed below like any other; the victim goes on every
         * rank all the same. */
        uint64_t *mine = NULL;
        int failed = repeat && !(mine = malloc(n * sizeof *mine));
        if (mine)
            memcpy(mine, rows, n * sizeof *mine);
        e = skewshim_plan_victim(pc);
        if (!failed) {
            e->matrix = mine ? mine : take_matrix(pc, P, row);
            skewshim_matrix m = {P, e->matrix};
            failed = make_plan(c, e, &m, k.nics) != 0;
        }
        if (plan_failed_anywhere(c, pc, failed) != 0) {
            /* Every rank drops the entry, made or not, so that the caches
             * stay alike and the next call of this matrix misses (and
             * agrees) on every rank. */
            skewshim_plan_entry_clear(e);
            pc->cur = NULL;
            return UINT64_MAX;
        }
        e->n = n;
        e->key = k;
        e->hash = h;
        e->used = 1;
        e->last_use = ++pc->clock;
        cs->slot_ag[e - pc->slot] = c->ag;
        cs->slot_topo_q[e - pc->slot] = cs->topo_q;
    } else if (c->ag.valid && !cs->slot_ag[e - pc->slot].valid) {
        cs->slot_ag[e - pc->slot] = c->ag;
        cs->slot_topo_q[e - pc->slot] = cs->topo_q;
    }
    return use(c, pc, e);
}
