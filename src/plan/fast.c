#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* FAST (paper 004, section 4): a global schedule every rank derives from the
 * same size matrix.
 *
 * 1. Sender balancing.  For every ordered pair of nodes (A, B) the tile of
 *    blocks A -> B is spread over L = min(|A|, |B|) lanes; lane l is the rank
 *    with local id l in A and sends only to the rank with local id l in B (the
 *    peer), so no receiver NIC is shared (no incast) and every lane carries
 *    V/L bytes (+-1): the tile becomes its scalar form.  A rank keeps as much
 *    of its own row as its lane quota allows; only the excess moves to lanes
 *    short of their quota (stage 0, intra-node, into the lane's temp).
 * 2. The N x N server matrix of tile volumes is embedded and Birkhoff
 *    decomposed (birkhoff.c); each stage is a one-to-one pairing of nodes and
 *    carries, for each paired tile, the next r bytes of it (real data first,
 *    the auxiliary part is never sent), split over the lanes by the same
 *    +-1 rule, so the per-stage lane shares stay balanced.
 * 3. Redistribution.  Bytes whose final rank is not the peer land in the
 *    peer's temp and are forwarded inside B one stage later, i.e. alongside
 *    the next inter-node stage (pipeline), as in the paper's Fig. 11.
 * Intra-node blocks go directly, alongside the first inter-node stage when
 * fast_pipeline is set, otherwise in a stage of their own before it, and
 * redistribution then gets its own stage after each inter-node stage.
 */
#include <stdlib.h>
#include <string.h>

#include "birkhoff.h"
#include "plan.h"

#define OWN UINT64_MAX  /* piece still in the sender's user block */

/* A run of one user block assigned to a lane. */
typedef struct piece {
    int src, dst;       /* origin and final rank */
    uint64_t off, len;  /* within block (src -> dst) */
    uint64_t tmp;       /* offset in the lane rank's temp, or OWN */
    int lane;
} piece;

typedef struct ctx {
    const skewshim_matrix *m;
    const skewshim_topo *t;
    skewshim_sched *out;
    uint64_t *tmp_next;     /* [P] next free temp byte of each rank */
    piece *pc, *pc2;        /* pieces of the current tile, unsorted / by lane */
    int *lane_start;        /* [Q+1] */
    uint64_t *deficit;      /* [Q] bytes a lane still lacks while balancing */
    uint64_t *cur_off;      /* [Q] bytes of the current piece already sent */
    int *cur_idx;           /* [Q] current piece of each lane */
    int pipeline;
} ctx;

static uint64_t lane_cut(uint64_t c, int L, int l)
{
    return c / (uint64_t)L + ((uint64_t)l < c % (uint64_t)L ? 1u : 0u);
}

static uint64_t blk(const ctx *c, int i, int j)
{
    return c->m->b[(size_t)i * c->m->nranks + j];
}

/* Stage numbers of inter-node stage s and of its redistribution. */
static int inter_stage(const ctx *c, int s) { return c->pipeline ? 1 + s : 2 + 2 * s; }
static int redist_stage(const ctx *c, int s) { return inter_stage(c, s) + 1; }
static int intra_stage(const ctx *c) { (void)c; return 1; }

/* Split tile A -> B into lane pieces and emit the balancing moves. */
static int build_lanes(ctx *c, int A, int B, int *npieces)
{
    const skewshim_topo *t = c->t;
    int qa = t->node_size[A], qb = t->node_size[B];
    int L = qa < qb ? qa : qb;
    const int *ra = t->node_ranks + t->node_first[A];
    const int *rb = t->node_ranks + t->node_first[B];
    uint64_t V = 0;
    for (int x = 0; x < qa; x++)
        for (int y = 0; y < qb; y++)
            V += blk(c, ra[x], rb[y]);
    int n = 0;
    uint64_t *deficit = c->deficit;
    /* Own data first: lane l keeps the head of its own row up to its quota. */
    for (int l = 0; l < L; l++) {
        uint64_t keep = lane_cut(V, L, l);
        for (int y = 0; y < qb && keep; y++) {
            uint64_t b = blk(c, ra[l], rb[y]), take = b < keep ? b : keep;
            if (!take) continue;
            c->pc[n++] = (piece){ ra[l], rb[y], 0, take, OWN, l };
            keep -= take;
        }
        deficit[l] = keep;
    }
    /* The rest of every row fills the lanes that are short, in lane order. */
    int l = 0;
    for (int x = 0; x < qa; x++) {
        uint64_t skip = x < L ? lane_cut(V, L, x) : 0;
        for (int y = 0; y < qb; y++) {
            uint64_t b = blk(c, ra[x], rb[y]);
            uint64_t off = skip < b ? skip : b;
            skip -= off;
            while (off < b) {
                while (!deficit[l]) l++;       /* quotas sum to V: never runs off */
                uint64_t take = b - off < deficit[l] ? b - off : deficit[l];
                int lr = ra[l];
                uint64_t tmp = c->tmp_next[lr];
                c->tmp_next[lr] += take;
                c->pc[n++] = (piece){ ra[x], rb[y], off, take, tmp, l };
                if (skewshim_sched_move(c->out, 0, ra[x], SKEWSHIM_LOC_SEND, rb[y], off,
                                        lr, SKEWSHIM_LOC_TMP, -1, tmp, take, 0u))
                    return -1;
                off += take;
                deficit[l] -= take;
            }
        }
    }
    /* Stable counting sort by lane: own pieces stay ahead of donated ones. */
    memset(c->lane_start, 0, (size_t)(L + 1) * sizeof(int));
    for (int k = 0; k < n; k++)
        c->lane_start[c->pc[k].lane + 1]++;
    for (int k = 0; k < L; k++)
        c->lane_start[k + 1] += c->lane_start[k];
    for (int k = 0; k < n; k++)
        c->pc2[c->lane_start[c->pc[k].lane]++] = c->pc[k];
    for (int k = L; k > 0; k--)
        c->lane_start[k] = c->lane_start[k - 1];
    c->lane_start[0] = 0;
    *npieces = n;
    return L;
}

static int flush(ctx *c, skewshim_move *run, int *have)
{
    if (!*have)
        return 0;
    *have = 0;
    return skewshim_sched_add(c->out, run);
}

/* Send `len` more bytes of lane l of tile A -> B in inter-node stage s. */
static int send_segment(ctx *c, int A, int B, int l, uint64_t len, int s)
{
    const skewshim_topo *t = c->t;
    int src = skewshim_topo_rank(t, A, l), dst = skewshim_topo_rank(t, B, l);
    /* Temp-to-temp slices that continue each other become one message. */
    skewshim_move run;
    int have = 0;
    while (len) {
        const piece *p = &c->pc2[c->cur_idx[l]];
        uint64_t at = c->cur_off[l], take = p->len - at < len ? p->len - at : len;
        skewshim_move mv = {
            .src = src, .dst = dst, .stage = (uint16_t)inter_stage(c, s),
            .flags = SKEWSHIM_MOVE_INTER, .bytes = take,
        };
        if (p->tmp == OWN) {
            mv.src_loc = SKEWSHIM_LOC_SEND;
            mv.src_blk = p->dst;
            mv.src_off = p->off + at;
        } else {
            mv.src_loc = SKEWSHIM_LOC_TMP;
            mv.src_blk = -1;
            mv.src_off = p->tmp + at;
        }
        if (p->dst == dst) {
            mv.dst_loc = SKEWSHIM_LOC_RECV;
            mv.dst_blk = p->src;
            mv.dst_off = p->off + at;
        } else {
            /* Lands at the peer, the wrong rank of the right node: forward
             * it inside B one stage later (redistribution). */
            mv.dst_loc = SKEWSHIM_LOC_TMP;
            mv.dst_blk = -1;
            mv.dst_off = c->tmp_next[dst];
            c->tmp_next[dst] += take;
            if (skewshim_sched_move(c->out, redist_stage(c, s), dst, SKEWSHIM_LOC_TMP, -1,
                                    mv.dst_off, p->dst, SKEWSHIM_LOC_RECV, p->src,
                                    p->off + at, take, 0u))
                return -1;
        }
        if (have && mv.src_loc == SKEWSHIM_LOC_TMP && run.src_loc == SKEWSHIM_LOC_TMP &&
            mv.dst_loc == SKEWSHIM_LOC_TMP && run.dst_loc == SKEWSHIM_LOC_TMP &&
            run.src_off + run.bytes == mv.src_off && run.dst_off + run.bytes == mv.dst_off) {
            run.bytes += take;
        } else {
            if (flush(c, &run, &have))
                return -1;
            run = mv;
            have = 1;
        }
        len -= take;
        c->cur_off[l] += take;
        if (c->cur_off[l] == p->len) {
            c->cur_idx[l]++;
            c->cur_off[l] = 0;
        }
    }
    return flush(c, &run, &have);
}

/* Drop stage numbers no move uses (no balancing needed, no intra traffic),
 * keeping the order, so the executor does not wait on empty stages. */
static int compact_stages(skewshim_sched *s)
{
    int maxst = 0;
    for (size_t k = 0; k < s->nmoves; k++)
        if (s->moves[k].stage > maxst)
            maxst = s->moves[k].stage;
    int *map = calloc((size_t)maxst + 1, sizeof *map);
    if (!map)
        return -1;
    for (size_t k = 0; k < s->nmoves; k++)
        map[s->moves[k].stage] = 1;
    for (int st = 0, next = 0; st <= maxst; st++)
        map[st] = map[st] ? next++ : -1;
    for (size_t k = 0; k < s->nmoves; k++)
        s->moves[k].stage = (uint16_t)map[s->moves[k].stage];
    free(map);
    return 0;
}

int skewshim_plan_fast(const skewshim_matrix *m, const skewshim_topo *t,
                       const skewshim_params *p, int nics,
                       skewshim_sched *out, skewshim_plan_report *rep)
{
    (void)nics;     /* lanes are ranks: FAST assumes one NIC per GPU */
    int P = m->nranks, N = t->nnodes, Q = t->max_per_node;
    if (P != t->nranks || P < 1)
        return -1;
    size_t NN = (size_t)N * N;
    int rc = -1;
    ctx c = { .m = m, .t = t, .out = out, .pipeline = p ? p->fast_pipeline : 1 };
    skewshim_bvn bvn = { 0 };
    uint64_t *D = calloc(NN, sizeof *D), *rem = calloc(NN, sizeof *rem);
    int *cnt = calloc(NN + 1, sizeof *cnt);
    c.tmp_next = calloc((size_t)P, sizeof *c.tmp_next);
    size_t maxpc = 2 * (size_t)Q * Q + (size_t)Q + 1;
    c.pc = malloc(maxpc * sizeof *c.pc);
    c.pc2 = malloc(maxpc * sizeof *c.pc2);
    c.lane_start = calloc((size_t)Q + 2, sizeof *c.lane_start);
    c.deficit = calloc((size_t)Q + 1, sizeof *c.deficit);
    c.cur_off = calloc((size_t)Q + 1, sizeof *c.cur_off);
    c.cur_idx = calloc((size_t)Q + 1, sizeof *c.cur_idx);
    int *ks = NULL, *ent_stage = NULL;
    uint64_t *ent_bytes = NULL;
    if (!D || !rem || !cnt || !c.tmp_next || !c.pc || !c.pc2 || !c.lane_start ||
        !c.deficit || !c.cur_off || !c.cur_idx)
        goto done;

    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            int a = t->node_of[i], b = t->node_of[j];
            if (a != b)
                D[(size_t)a * N + b] += m->b[(size_t)i * P + j];
        }
    if (skewshim_bvn_decompose(D, N, &bvn))
        goto done;

    /* Which tile moves how much in which stage: real data first, so the
     * auxiliary (virtual) part is what gets left out of the late stages.
     * Two passes (count, fill) give per-tile lists in stage order. */
    ks = malloc(((size_t)bvn.nstages + 1) * sizeof *ks);
    if (!ks)
        goto done;
    /* A stage whose largest tile moves in less time than one latency costs
     * more in synchronisation than it carries (long tails of tiny stages on
     * sparse or very skewed matrices).  Such light stages are merged into
     * one last stage: still peer lanes, no longer one-to-one between nodes,
     * which is harmless at that size.  Off when the model is unset. */
    double light_bytes = 0.0;
    if (p && p->model_latency > 0 && p->model_inter_bw > 0)
        light_bytes = p->model_latency * p->model_inter_bw * (double)Q;
    int nreal = 0, nlight = 0;
    size_t nent = 0;
    memcpy(rem, D, NN * sizeof *rem);
    for (int k = 0; k < bvn.nstages; k++) {
        int real = 0;
        uint64_t biggest = 0;
        for (int a = 0; a < N; a++) {
            int b = bvn.perm[(size_t)k * N + a];
            size_t e = (size_t)a * N + b;
            if (a == b || !rem[e])
                continue;
            uint64_t r = rem[e] < bvn.weight[k] ? rem[e] : bvn.weight[k];
            rem[e] -= r;
            if (r > biggest) biggest = r;
            cnt[e + 1]++;
            nent++;
            real = 1;
        }
        if (real && (double)biggest < light_bytes) {
            ks[k] = -2;
            nlight++;
        } else {
            ks[k] = real ? nreal++ : -1;
        }
    }
    for (int k = 0; k < bvn.nstages; k++)
        if (ks[k] == -2)
            ks[k] = nreal;
    if (nlight)
        nreal++;
    if (redist_stage(&c, nreal) > 65535)
        goto done;
    for (size_t e = 0; e < NN; e++)
        cnt[e + 1] += cnt[e];
    ent_stage = malloc((nent + 1) * sizeof *ent_stage);
    ent_bytes = malloc((nent + 1) * sizeof *ent_bytes);
    if (!ent_stage || !ent_bytes)
        goto done;
    memcpy(rem, D, NN * sizeof *rem);
    for (int k = 0; k < bvn.nstages; k++)
        for (int a = 0; a < N; a++) {
            int b = bvn.perm[(size_t)k * N + a];
            size_t e = (size_t)a * N + b;
            if (a == b || !rem[e])
                continue;
            uint64_t r = rem[e] < bvn.weight[k] ? rem[e] : bvn.weight[k];
            rem[e] -= r;
            ent_stage[cnt[e]] = ks[k];
            ent_bytes[cnt[e]] = r;
            cnt[e]++;
        }
    /* cnt[e] now ends tile e's list; cnt[e - 1] (or 0) starts it. */

    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            size_t e = (size_t)a * N + b;
            if (a == b || !D[e])
                continue;
            int np;
            int L = build_lanes(&c, a, b, &np);
            if (L < 0)
                goto done;
            for (int l = 0; l < L; l++) {
                c.cur_idx[l] = c.lane_start[l];
                c.cur_off[l] = 0;
            }
            uint64_t done_bytes = 0;
            for (int x = e ? cnt[e - 1] : 0; x < cnt[e]; x++) {
                uint64_t next = done_bytes + ent_bytes[x];
                for (int l = 0; l < L; l++) {
                    uint64_t len = lane_cut(next, L, l) - lane_cut(done_bytes, L, l);
                    if (len && send_segment(&c, a, b, l, len, ent_stage[x]))
                        goto done;
                }
                done_bytes = next;
            }
        }

    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            if (t->node_of[i] == t->node_of[j] &&
                skewshim_sched_move(out, intra_stage(&c), i, SKEWSHIM_LOC_SEND, j, 0,
                                    j, SKEWSHIM_LOC_RECV, i, 0, m->b[(size_t)i * P + j], 0u))
                goto done;
    if (compact_stages(out) || skewshim_sched_finish(out))
        goto done;
    if (rep) {
        rep->regime = -1;
        rep->stages = nreal;
        rep->mtm = 0.0;
    }
    rc = 0;
done:
    skewshim_bvn_free(&bvn);
    free(D);
    free(rem);
    free(cnt);
    free(ks);
    free(ent_stage);
    free(ent_bytes);
    free(c.tmp_next);
    free(c.pc);
    free(c.pc2);
    free(c.lane_start);
    free(c.deficit);
    free(c.cur_off);
    free(c.cur_idx);
    return rc;
}
