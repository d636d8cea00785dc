#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The two-tier simulator (model in sim.h and doc/simulator.md).  One pass
 * collects the temp writes, a second walks the stages in order and places
 * each stage's intra and inter phase on its tier's timeline. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef struct twrite {
    int rank;
    uint64_t off, end;
    size_t move;        /* index of the writing move */
} twrite;

enum { TIER_INTRA = 0, TIER_INTER = 1 };

static int cmp_write(const void *a, const void *b)
{
    const twrite *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    return 0;
}

typedef struct simstate {
    const skewshim_sched *s;
    const skewshim_topo *t;
    const skewshim_sim_model *mo;
    int m;
    twrite *w;
    size_t nw;
    uint64_t *maxend;   /* [nw] running max of w[].end within each rank */
    size_t *first;      /* [P+1] first write of each rank */
    double *done;       /* [nmoves] completion time of each move */
    /* Resources: a send and a receive side per rank (intra tier), then per
     * node and rail an out and an in NIC group (inter tier). */
    size_t nres_intra, nres;
    double *bw;         /* [nres] bytes/s */
    double *load;       /* [nres] bytes of the current phase, 0 when idle */
    double *rready;     /* [nres] when the data of its moves exist */
    double *fin;        /* [nres] when its share of the phase ends */
    size_t *touched;    /* resources with load in the current stage */
    size_t ntouch;
    double *mready;     /* [nmoves] when a move's source data exist */
    size_t *mres;       /* [2 per move of the stage] its resources, SIZE_MAX for a copy */
} simstate;

static int tier_of(const simstate *st, const skewshim_move *mv)
{
    return st->t->node_of[mv->src] != st->t->node_of[mv->dst] ? TIER_INTER : TIER_INTRA;
}

/* Latest end of a phase that wrote any byte of temp [off, off+len) of rank. */
static double ready_time(const simstate *st, int rank, uint64_t off, uint64_t len)
{
    size_t lo = st->first[rank], hi = st->first[rank + 1];
    /* last write starting before off + len */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->w[mid].off < off + len) lo = mid + 1;
        else hi = mid;
    }
    double r = 0.0;
    for (size_t k = lo; k-- > st->first[rank] && st->maxend[k] > off;)
        if (st->w[k].end > off && st->done[st->w[k].move] > r)
            r = st->done[st->w[k].move];
    return r;
}

/* Rail (NIC group) of a rank within its node, and that group's bandwidth. */
static int rail_of(const skewshim_topo *t, int m, int rank)
{
    int q = t->node_size[t->node_of[rank]], l = t->local_of[rank];
    return q >= m ? l % m : l;
}

static double rail_bw(const skewshim_topo *t, int m, double B2, int node, int g)
{
    int q = t->node_size[node];
    if (q >= m)
        return B2;
    return B2 * (double)(m / q + (g < m % q ? 1 : 0));
}

static int sim_alloc(simstate *st)
{
    size_t nmoves = st->s->nmoves, P = (size_t)st->t->nranks;
    st->nres_intra = 2 * P;
    st->nres = st->nres_intra + 2 * (size_t)st->t->nnodes * st->m;
    st->w = malloc((nmoves + 1) * sizeof *st->w);
    st->maxend = malloc((nmoves + 1) * sizeof *st->maxend);
    st->first = calloc(P + 2, sizeof *st->first);
    st->done = calloc(nmoves + 1, sizeof *st->done);
    st->load = calloc(st->nres + 1, sizeof *st->load);
    st->rready = calloc(st->nres + 1, sizeof *st->rready);
    st->fin = calloc(st->nres + 1, sizeof *st->fin);
    st->mready = malloc((nmoves + 1) * sizeof *st->mready);
    st->mres = malloc((2 * nmoves + 1) * sizeof *st->mres);
    st->bw = malloc((st->nres + 1) * sizeof *st->bw);
    st->touched = malloc((2 * nmoves + 1) * sizeof *st->touched);
    return st->w && st->maxend && st->first && st->done && st->load && st->bw &&
           st->touched && st->rready && st->fin && st->mready && st->mres ? 0 : -1;
}

static void sim_free(simstate *st)
{
    free(st->w);
    free(st->maxend);
    free(st->first);
    free(st->done);
    free(st->rready);
    free(st->fin);
    free(st->mready);
    free(st->mres);
    free(st->load);
    free(st->bw);
    free(st->touched);
}

/* Sort the temp writes by rank and offset, with a running max of their
 * ends, so ready_time finds the writers of a range by bisection. */
static void index_temp_writes(simstate *st)
{
    const skewshim_sched *s = st->s;
    for (size_t k = 0; k < s->nmoves; k++) {
        const skewshim_move *mv = &s->moves[k];
        if (mv->dst_loc == SKEWSHIM_LOC_TMP && mv->bytes)
            st->w[st->nw++] = (twrite){ mv->dst, mv->dst_off, mv->dst_off + mv->bytes, k };
    }
    qsort(st->w, st->nw, sizeof *st->w, cmp_write);
    for (size_t k = 0; k < st->nw; k++) {
        st->first[st->w[k].rank + 1]++;
        st->maxend[k] = st->w[k].end;
        if (k && st->w[k - 1].rank == st->w[k].rank && st->maxend[k - 1] > st->maxend[k])
            st->maxend[k] = st->maxend[k - 1];
    }
    for (int r = 0; r < st->t->nranks; r++)
        st->first[r + 1] += st->first[r];
}

static void resource_bandwidths(simstate *st)
{
    const skewshim_topo *t = st->t;
    int N = t->nnodes, m = st->m;
    for (size_t r = 0; r < st->nres_intra; r++)
        st->bw[r] = st->mo->B1;
    for (int n = 0; n < N; n++)
        for (int g = 0; g < m; g++) {
            double b = rail_bw(t, m, st->mo->B2, n, g);
            st->bw[st->nres_intra + (size_t)n * m + g] = b;
            st->bw[st->nres_intra + (size_t)(N + n) * m + g] = b;
        }
}

/* Put the bytes of moves [a, b) (one stage) on the resources they use and
 * note when each resource's data exist; counts traffic into d. */
static void load_stage(simstate *st, size_t a, size_t b, int active[2], int sends[2],
                       skewshim_sim_detail *d)
{
    const skewshim_topo *t = st->t;
    int P = t->nranks, N = t->nnodes, m = st->m;
    st->ntouch = 0;
    for (size_t k = a; k < b; k++) {
        const skewshim_move *mv = &st->s->moves[k];
        int tier = tier_of(st, mv);
        active[tier] = 1;
        st->mready[k] = mv->src_loc == SKEWSHIM_LOC_TMP
                            ? ready_time(st, mv->src, mv->src_off, mv->bytes) : 0.0;
        if (mv->src == mv->dst) {
            d->copy_bytes += mv->bytes;
            st->mres[2 * (k - a)] = st->mres[2 * (k - a) + 1] = SIZE_MAX;
            continue;
        }
        sends[tier] = 1;
        d->messages++;
        size_t ro, ri;
        if (tier == TIER_INTRA) {
            d->intra_bytes += mv->bytes;
            ro = (size_t)mv->src;
            ri = (size_t)P + mv->dst;
        } else {
            d->inter_bytes += mv->bytes;
            ro = st->nres_intra + (size_t)t->node_of[mv->src] * m + rail_of(t, m, mv->src);
            ri = st->nres_intra + (size_t)(N + t->node_of[mv->dst]) * m + rail_of(t, m, mv->dst);
        }
        st->mres[2 * (k - a)] = ro;
        st->mres[2 * (k - a) + 1] = ri;
        for (int side = 0; side < 2; side++) {
            size_t r = side ? ri : ro;
            if (st->load[r] == 0.0) {
                st->touched[st->ntouch++] = r;
                st->rready[r] = 0.0;
            }
            st->load[r] += (double)mv->bytes;
            if (st->mready[k] > st->rready[r]) st->rready[r] = st->mready[k];
        }
    }
}

/* Each resource starts its share of the phase once the phase may begin
 * (base) and the data of its own moves exist; the phase ends (pend) with
 * its slowest resource, and a move completes when both its ends have,
 * plus a latency. */
static void time_stage(simstate *st, size_t a, size_t b, const double base[2],
                       double pend[2])
{
    for (int tier = 0; tier < 2; tier++)
        pend[tier] = base[tier];
    for (size_t x = 0; x < st->ntouch; x++) {
        size_t r = st->touched[x];
        int tier = r < st->nres_intra ? TIER_INTRA : TIER_INTER;
        double start = st->rready[r] > base[tier] ? st->rready[r] : base[tier];
        st->fin[r] = start + st->load[r] / st->bw[r];
        if (st->fin[r] > pend[tier]) pend[tier] = st->fin[r];
    }
    for (size_t k = a; k < b; k++) {
        int tier = tier_of(st, &st->s->moves[k]);
        size_t ro = st->mres[2 * (k - a)], ri = st->mres[2 * (k - a) + 1];
        double c = base[tier] > st->mready[k] ? base[tier] : st->mready[k];
        if (ro != SIZE_MAX) {
            c = st->fin[ro] > st->fin[ri] ? st->fin[ro] : st->fin[ri];
            c += st->mo->latency;
        }
        st->done[k] = c;
        if (c > pend[tier] && ro == SIZE_MAX) pend[tier] = c;
    }
    for (size_t x = 0; x < st->ntouch; x++)
        st->load[st->touched[x]] = 0.0;
}

double skewshim_sim_time(const skewshim_sched *s, const skewshim_topo *t,
                         const skewshim_sim_model *mo, skewshim_sim_detail *opt)
{
    skewshim_sim_detail d;
    memset(&d, 0, sizeof d);
    if (!s || !t || !mo || s->rank >= 0 || s->nranks != t->nranks || mo->m < 1 ||
        !(mo->B1 > 0) || !(mo->B2 > 0) || mo->latency < 0)
        return -1.0;
    for (size_t k = 1; k < s->nmoves; k++)
        if (s->moves[k].stage < s->moves[k - 1].stage)
            return -1.0;        /* not finished: stages out of order */
    if (s->nmoves && s->moves[s->nmoves - 1].stage >= s->nstages)
        return -1.0;

    simstate st = { .s = s, .t = t, .mo = mo, .m = mo->m };
    double result = -1.0;
    if (sim_alloc(&st))
        goto done;
    index_temp_writes(&st);
    resource_bandwidths(&st);

    double tier_free[2] = { 0.0, 0.0 }, prev_stage_end = 0.0, finish = 0.0;
    size_t a = 0;
    while (a < s->nmoves) {
        int stage = s->moves[a].stage;
        size_t b = a;
        while (b < s->nmoves && s->moves[b].stage == stage)
            b++;
        int active[2] = { 0, 0 }, sends[2] = { 0, 0 };
        load_stage(&st, a, b, active, sends, &d);
        double base[2], pend[2];
        for (int tier = 0; tier < 2; tier++) {
            base[tier] = tier_free[tier];
            if (mo->barrier && prev_stage_end > base[tier]) base[tier] = prev_stage_end;
        }
        time_stage(&st, a, b, base, pend);
        double stage_end = prev_stage_end;
        for (int tier = 0; tier < 2; tier++) {
            if (!active[tier])
                continue;
            double end = pend[tier] + (sends[tier] ? mo->latency : 0.0);
            double dur = end - base[tier];
            tier_free[tier] = end;
            if (tier == TIER_INTRA) { d.intra_busy += dur; d.intra_phases += sends[tier]; }
            else { d.inter_busy += dur; d.inter_phases += sends[tier]; }
            if (end > stage_end) stage_end = end;
            if (end > finish) finish = end;
        }
        prev_stage_end = stage_end;
        a = b;
    }
    d.time = finish;
    result = finish;
done:
    sim_free(&st);
    if (opt)
        *opt = d;
    return result;
}

/* Native: a rank's inter-node bytes go out at its fair share of the
 * node's NICs, b = min(B2, m B2 / per_node), and the node's NICs carry at
 * least the mean node volume; P - 1 messages posted per rank, overlapping
 * (one latency).  The balanced schedule: at best every rank's inter-node
 * volume comes down to the mean per rank (SABRE's relays, FLASH's
 * balanced stages), plus the intra-node redistribution of a rank's data at
 * B1, two latencies, and msg_factor times native's messages.  The matrix
 * exchange: an allgather of P rows of (P + 4) words: a node receives
 * per_node (P - per_node) rows through its m NICs and a rank the rest at
 * B1, in the ceil(log2 P) rounds of the shim's Bruck allgather
 * (src/core/allgather.c). */
int skewshim_predict(const skewshim_predict_in *in, skewshim_predict_out *out)
{
    memset(out, 0, sizeof *out);
    if (in->P < 1 || in->nodes < 1 || in->per_node < 1 || in->m < 1 || !(in->B1 > 0) ||
        !(in->B2 > 0) || in->latency < 0 || in->overhead < 0 || in->plan_entry < 0 ||
        in->plan_factor < 0)
        return -1;
    double P = in->P, Q = in->per_node, m = in->m;
    double hot = (double)(in->max_isend > in->max_irecv ? in->max_isend : in->max_irecv);
    double mean_rank = (double)in->sum_isend / P;
    double node_mean = (double)in->sum_isend / in->nodes;
    double all = (double)(in->max_send > in->max_recv ? in->max_send : in->max_recv);
    double nodebw = m * in->B2;
    double b = nodebw / Q < in->B2 ? nodebw / Q : in->B2;
    double t = hot / b;
    if (node_mean / nodebw > t)
        t = node_mean / nodebw;
    out->t_native = t + in->latency + (P - 1) * in->overhead;
    double u = mean_rank / b;
    if (node_mean / nodebw > u)
        u = node_mean / nodebw;
    out->t_sched = u + all / in->B1 + 2 * in->latency + in->msg_factor * (P - 1) * in->overhead;
    double rowb = (P + 4) * 8.0;
    double inter_rows = Q * (in->nodes > 1 ? P - Q : 0) * rowb;
    double rounds = 0;
    for (double k = 1; k < P; k *= 2)
        rounds++;
    out->t_meta = inter_rows / nodebw + (Q - 1) * rowb / in->B1 + rounds * in->latency +
                  (P - 1) * in->overhead;
    out->t_plan = P * P * in->plan_entry * in->plan_factor;
    return 0;
}
